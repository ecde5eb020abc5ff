#!/bin/sh
# hackbench_vs_rttests.sh - rtprobe hackbench against rt-tests' hackbench.
#
# Usage: bench/hackbench_vs_rttests.sh [ROUNDS] [GROUPS] [LOOPS]   (defaults 5 4 200)
# For each mode (processes, threads) x transport (socket, pipe), runs both tools
# with identical arguments, interleaved and alternating which goes first, ROUNDS
# times; prints a Markdown table of the median "Time:" of each and the ratio
# ours/theirs (below 1: ours finished faster).  Needs rt-tests' hackbench in PATH
# and probe/build/rtprobe (make -C probe).
set -eu

rounds=${1:-5}
groups=${2:-4}
loops=${3:-200}
here=$(cd "$(dirname "$0")/.." && pwd)
rtprobe=${RTPROBE:-$here/probe/build/rtprobe}
theirs=${HACKBENCH:-hackbench}

if [ ! -x "$rtprobe" ]; then
	echo "hackbench_vs_rttests.sh: $rtprobe not found: run make -C probe" >&2
	exit 3
fi
if ! command -v "$theirs" >/dev/null 2>&1; then
	echo "hackbench_vs_rttests.sh: rt-tests hackbench not found: install rt-tests" >&2
	exit 3
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# time_of TOOL ARGS...: print the seconds of the tool's "Time:" line.
time_of() {
	if [ "$1" = ours ]; then
		shift
		"$rtprobe" hackbench "$@" 2>&1 >/dev/null | awk '/^Time:/ { print $2 }'
	else
		shift
		"$theirs" "$@" 2>&1 | awk '/^Time:/ { print $2 }'
	fi
}

for mode in "" "-T"; do
	for transport in "" "-p"; do
		if [ -n "$mode" ]; then key=T; else key=P; fi
		if [ -n "$transport" ]; then key=${key}p; else key=${key}S; fi
		round=0
		while [ "$round" -lt "$rounds" ]; do
			if [ $((round % 2)) -eq 0 ]; then order="ours theirs"; else order="theirs ours"; fi
			for tool in $order; do
				# shellcheck disable=SC2086 # empty options vanish on purpose
				t=$(time_of "$tool" -g "$groups" -l "$loops" $mode $transport)
				[ -n "$t" ] || { echo "no Time from $tool $key" >&2; exit 3; }
				echo "$t" >>"$tmp/$key.$tool"
			done
			round=$((round + 1))
		done
	done
done

python3 - "$tmp" "$rounds" "$groups" "$loops" <<'PY'
import statistics, sys
from pathlib import Path

tmp, rounds, groups, loops = Path(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
names = {"PS": ("processes", "socket"), "Pp": ("processes", "pipe"),
         "TS": ("threads", "socket"), "Tp": ("threads", "pipe")}
print(f"| mode | transport | rtprobe hackbench s (median of {rounds}) "
      f"| rt-tests hackbench s (median of {rounds}) | ratio ours/theirs |")
print("|---|---|---|---|---|")
for key in ("PS", "Pp", "TS", "Tp"):
    ours = [float(x) for x in (tmp / f"{key}.ours").read_text().split()]
    theirs = [float(x) for x in (tmp / f"{key}.theirs").read_text().split()]
    mo, mt = statistics.median(ours), statistics.median(theirs)
    print(f"| {names[key][0]} | {names[key][1]} | {mo:.3f} | {mt:.3f} | {mo / mt:.2f} |")
print(f"\nArguments: -g {groups} -l {loops} (fds 20, datasize 100); "
      "per-round times ours: " + "; ".join(
          f"{k} " + " ".join((tmp / f'{k}.ours').read_text().split()) for k in names)
      + " | theirs: " + "; ".join(
          f"{k} " + " ".join((tmp / f'{k}.theirs').read_text().split()) for k in names))
PY
