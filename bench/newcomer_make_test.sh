#!/bin/bash
# A newcomer's first `make test`, measured: a fresh clone of BRANCH (default main) of this
# repository in DIR, every cache cold (XDG_CACHE_HOME an empty directory: pip, Zig,
# rtbench's board probes), plain `make test` (none of CI's variables), timed whole.
#
#   bash bench/newcomer_make_test.sh DIR [BRANCH]
#
# Writes in DIR: out.txt (make test's output, /usr/bin/time's figures and a last line
# `rc=N secs=S`), load.txt (the load average every 15 s: say it beside the time),
# phases.txt (when .venv and pytest began), cpu.*.jsonl (CPU and wall seconds of each
# test: python3 bench/pytest_cpu.py DIR/cpu, or --timeline DIR/cpu) and locks.jsonl
# (the tests' lock waits, docs/testing.md "Where the time goes").  The 8-minute bar of
# docs/testing.md is for this run on a quiet 2-vCPU machine.
set -u
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: bash bench/newcomer_make_test.sh DIR [BRANCH]" >&2
	exit 2
fi
dir=$1
branch=${2:-main}
repo=$(cd "$(dirname "$0")/.." && pwd)
if [ -e "$dir" ]; then
	echo "newcomer_make_test: $dir exists; give a new directory" >&2
	exit 2
fi
mkdir -p "$dir/cold" || exit 3
git clone -q -b "$branch" "$repo" "$dir/fresh" || exit 3
( while true; do echo "$(date +%T) $(cut -d' ' -f1-3 /proc/loadavg)"; sleep 15; done ) \
	>"$dir/load.txt" &
sampler=$!
trap 'kill $sampler 2>/dev/null' EXIT
start=$(date +%s)
echo "start $(date +%T)" >"$dir/phases.txt"
cd "$dir/fresh" || exit 3
# when .venv is ready and when this clone's pytest starts, for the phases of the run
here=$(pwd)
ours() {  # a pytest running in this clone
	for p in $(pgrep -f "python -m pytest"); do
		[ "$(readlink "/proc/$p/cwd")" = "$here" ] && return 0
	done
	return 1
}
( while [ ! -e .venv/.test ] && [ ! -e .venv/.dev ]; do sleep 1; done; echo "venv $(date +%T)" >>"$dir/phases.txt"
  while ! ours; do sleep 1; done; echo "pytest $(date +%T)" >>"$dir/phases.txt" ) &
phases=$!
trap 'kill $sampler $phases 2>/dev/null' EXIT
rc=0
env XDG_CACHE_HOME="$dir/cold" RTBENCH_LOCK_LOG="$dir/locks.jsonl" \
	PYTHONPATH="$repo/bench" PYTEST_CPU_OUT="$dir/cpu" PYTEST_ADDOPTS="-p pytest_cpu" \
	/usr/bin/time -v make test >"$dir/out.txt" 2>&1 || rc=$?
echo "rc=$rc secs=$(($(date +%s) - start))" | tee -a "$dir/out.txt"
exit $rc
