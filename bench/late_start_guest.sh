#!/bin/sh
# late_start_guest.sh - on a zoo board: short cyclic-100us and ipc fifo cells
# under loongson2f's `find` load, an old and a new rtprobe side by side.
#
# Runs on the board, not the host.  Put it, `rtprobe` and a second build
# `rtprobe-old` into the initramfs and boot the board, e.g.
#   tools/zoo.py amd64-rt --dir DIR --cpus 2 --add bench/late_start_guest.sh \
#       --add NEW/rtprobe --add OLD/rtprobe-old
# then type `late_start_guest.sh` on its console.  Starts 50
# `while :; do find / -xdev; done` loops (they keep running: reboot after),
# then three times each: `cyclic --interval 100us --duration 100ms --warmup
# 10ms` and `ipc --transport fifo --duration 200ms --warmup 20ms`, both at
# FIFO 80, one thread.  Prints per run the result record's status,
# elapsed_ns, measured_ns, then in this order the series' count, its warm-up
# count, the warm-up's gap_ns, the series' gap_ns and (new probes) start_ns.
# BENCHMARKS.md, "A late thread measures the duration asked for".
i=0
while [ $i -lt 50 ]; do
	( while :; do find / -xdev > /dev/null 2>&1; done ) &
	i=$((i + 1))
done
sleep 5
pick() {
	grep '"type":"result"' "$1" | grep -o '"status":"[a-z]*"\|"elapsed_ns":[0-9]*\|"measured_ns":[0-9]*\|"count":[0-9]*\|"gap_ns":[0-9]*\|"start_ns":[0-9]*' | tr '\n' ' '
}
for n in 1 2 3; do
	for p in rtprobe-old rtprobe; do
		$p cyclic --priority 80 --threads 1 --mode abs --interval 100us \
			--duration 100ms --warmup 10ms > /tmp/c.$p.$n 2>&1
		echo "CYCLIC $p $n rc=$? $(pick /tmp/c.$p.$n)"
		$p ipc --transport fifo --fifo-dir /tmp --priority 80 --threads 1 \
			--duration 200ms --warmup 20ms > /tmp/i.$p.$n 2>&1
		echo "IPC $p $n rc=$? $(pick /tmp/i.$p.$n)"
	done
done
echo DONE
