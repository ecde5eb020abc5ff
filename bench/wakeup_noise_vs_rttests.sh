#!/bin/sh
# wakeup_noise_vs_rttests.sh - compare `rtprobe wakeup` and `rtprobe noise` with
# rt-tests (sigwaittest, pmqtest, ptsematest, oslat) on this machine, interleaved.
#
# Each round runs every pair back to back, alternating which tool goes first,
# with the same settings on both sides: one waker/wakee pair pinned to CPU
# $CPU, SCHED_FIFO $PRIO on both sides, $INTERVAL_US between wake-ups, $LOOPS
# wake-ups, no warm-up; noise and oslat on CPU $CPU at SCHED_FIFO $PRIO for
# $NOISE_S seconds.  rt-tests report min/avg/max per run (integer us, avg with
# two decimals), so the compared statistic is the per-run average (wakeup) and
# the per-run maximum plus the number of gaps above 10 us per second (noise);
# the figure reported is the ratio of their medians over the rounds.
#
# Usage: sudo bench/wakeup_noise_vs_rttests.sh [ROUNDS]   (default 5)
# Prints a Markdown section for BENCHMARKS.md on stdout; raw JSON stays in
# $OUT (default: a temporary directory, printed at the end).
set -eu

ROUNDS=${1:-5}
CPU=${CPU:-1}
PRIO=${PRIO:-80}
INTERVAL_US=${INTERVAL_US:-1000}
LOOPS=${LOOPS:-2000}
NOISE_S=${NOISE_S:-5}
HERE=$(cd "$(dirname "$0")/.." && pwd)
RTPROBE=${RTPROBE:-$HERE/probe/build/rtprobe}
OUT=${OUT:-$(mktemp -d /tmp/rtbench-wakeup-noise.XXXXXX)}

for tool in sigwaittest pmqtest ptsematest oslat python3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "wakeup_noise_vs_rttests: $tool not found; install rt-tests" \
		     "(and python3)" >&2
		exit 3
	}
done
[ -x "$RTPROBE" ] || {
	echo "wakeup_noise_vs_rttests: $RTPROBE missing; run make -C probe" >&2
	exit 3
}
case $ROUNDS in
''|*[!0-9]*|0) echo "wakeup_noise_vs_rttests: ROUNDS '$ROUNDS' must be a" \
		       "positive integer" >&2; exit 2 ;;
esac

# ours MECH ROUND: one rtprobe wakeup run.
ours() {
	"$RTPROBE" wakeup --mechanism "$1" --cpus "$CPU" --placement same \
		--priority "$PRIO" --waker-priority "$PRIO" \
		--wakee-priority "$PRIO" --interval "${INTERVAL_US}us" \
		--loops "$LOOPS" --warmup 0 --output "$OUT/ours-$1-$2.ndjson"
}

# theirs TOOL MECH ROUND: the rt-tests counterpart with the same settings.
theirs() {
	"$1" -q -a "$CPU" -p "$PRIO" -i "$INTERVAL_US" -l "$LOOPS" \
		--json="$OUT/theirs-$2-$3.json" >/dev/null
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
	for pair in sigwait:sigwaittest mq:pmqtest sem:ptsematest; do
		mech=${pair%%:*}
		tool=${pair#*:}
		if [ $((round % 2)) -eq 1 ]; then
			ours "$mech" "$round"; theirs "$tool" "$mech" "$round"
		else
			theirs "$tool" "$mech" "$round"; ours "$mech" "$round"
		fi
	done
	noise_ours() {
		"$RTPROBE" noise --cpus "$CPU" --priority "$PRIO" \
			--duration "${NOISE_S}s" --warmup 0 \
			--output "$OUT/ours-noise-$round.ndjson" 2>/dev/null
	}
	noise_theirs() {
		oslat -q -c "$CPU" -f "$PRIO" -D "$NOISE_S" \
			--json="$OUT/theirs-noise-$round.json" >/dev/null
	}
	if [ $((round % 2)) -eq 1 ]; then
		noise_ours; noise_theirs
	else
		noise_theirs; noise_ours
	fi
	echo "round $round of $ROUNDS done" >&2
	round=$((round + 1))
done

python3 - "$OUT" "$ROUNDS" "$CPU" "$PRIO" "$INTERVAL_US" "$LOOPS" "$NOISE_S" \
	"$RTPROBE" <<'PY'
import json, os, platform, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
cpu, prio, interval, loops, noise_s, rtprobe = sys.argv[3:9]


def result(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()][-1]


def lower(i):
    """Lower bound in ns of loglin7 bucket i (probe/src/lib/hist.h)."""
    if i < 128:
        return i
    k = 7 + (i - 128) // 128
    return (128 + (i - 128) % 128) << (k - 7)


def med(xs):
    return statistics.median(xs)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


print("## wakeup and noise vs rt-tests\n")
print(f"Machine: {cpu_model()}, {os.cpu_count()} CPUs, kernel {platform.release()}; "
      f"{rounds} interleaved rounds (alternating which tool runs first).  Settings: one "
      f"pair pinned to CPU {cpu}, SCHED_FIFO {prio} on both sides, {interval} us interval, "
      f"{loops} wake-ups, no warm-up; noise/oslat on CPU {cpu}, FIFO {prio}, {noise_s} s.\n")
print("| ours | theirs | statistic (median of rounds) | ours | theirs | ratio ours/theirs |")
print("|---|---|---|---|---|---|")
for mech, tool in (("sigwait", "sigwaittest"), ("mq", "pmqtest"), ("sem", "ptsematest")):
    o_avg, t_avg, o_min, t_min, o_max, t_max = [], [], [], [], [], []
    for r in range(1, rounds + 1):
        s = result(f"{out}/ours-{mech}-{r}.ndjson")["series"][0]
        o_avg.append(s["sum_ns"] / s["count"] / 1000)
        o_min.append(s["min_ns"] / 1000)
        o_max.append(s["max_ns"] / 1000)
        with open(f"{out}/theirs-{mech}-{r}.json") as f:
            rec = json.load(f)["thread"]["0"]["receiver"]
        t_avg.append(float(rec["avg"]))
        t_min.append(float(rec["min"]))
        t_max.append(float(rec["max"]))
    for name, o, t in (("avg us", o_avg, t_avg), ("min us", o_min, t_min),
                       ("max us", o_max, t_max)):
        ratio = med(o) / med(t) if med(t) else float("nan")
        print(f"| wakeup --mechanism {mech} | {tool} | {name} | {med(o):.2f} | "
              f"{med(t):.2f} | {ratio:.2f} |")
o_max, t_max, o_10, t_10 = [], [], [], []
for r in range(1, rounds + 1):
    res = result(f"{out}/ours-noise-{r}.ndjson")
    s = res["series"][0]
    o_max.append((s["max_ns"] or 0) / 1000)
    o_10.append(sum(c for i, c in s["hist"] if lower(i) >= 10_000) / int(noise_s))
    with open(f"{out}/theirs-noise-{r}.json") as f:
        th = json.load(f)["thread"]["0"]
    t_max.append(float(th["max"]))
    # oslat bucket b holds loops of (b-1, b] us: above 10 us is b >= 11.
    t_10.append(sum(c for b, c in th["histogram"].items() if int(b) >= 11) /
                float(th["duration"]))
for name, o, t in (("max gap us", o_max, t_max), ("gaps > 10 us per s", o_10, t_10)):
    ratio = med(o) / med(t) if med(t) else float("nan")
    print(f"| noise | oslat | {name} | {med(o):.1f} | {med(t):.1f} | {ratio:.2f} |")
print(f"\nCommand: `sudo bench/wakeup_noise_vs_rttests.sh {rounds}` (raw results: {out}).")
PY
