#!/bin/sh
# Run an rtbench suite on this machine (the LAVA DUT), report every result to LAVA,
# push the run to a results server, and leave nothing behind.
#
# Usage: run-and-report.sh [SUITE [rtbench run options...]]
#   SUITE defaults to quick; options go to `rtbench run` (e.g. --scale 0.5).
# Each cell becomes a lava-test-case with its verdict, each figure (min, avg,
# percentiles, max in us; overruns) a lava-test-case with --measurement, through
# `rtbench export --format lava`.  With RTBENCH_SERVER set (and RTBENCH_TOKEN, an
# upload token), the run is pushed there (lava-test-case rtbench-push).  The
# results database lives in a temporary directory removed at the end, and so does
# the rtbench that install.sh put in $RTBENCH_LAVA_DIR.  The rtbench exit code is
# returned.
set -u
suite=${1:-quick}
[ $# -gt 0 ] && shift
lava_dir=${RTBENCH_LAVA_DIR:-/tmp/rtbench-lava}
rtbench=rtbench
[ -x "$lava_dir/venv/bin/rtbench" ] && rtbench="$lava_dir/venv/bin/rtbench"
workdir=$(mktemp -d "${TMPDIR:-/tmp}/rtbench-lava.XXXXXX") || exit 3
cleanup() {
	rm -rf "$workdir"
	# only a directory install.sh made (it holds its marker file)
	[ -e "$lava_dir/.rtbench-lava" ] && rm -rf "$lava_dir"
}
trap cleanup EXIT
db="sqlite:///$workdir/results.db"
"$rtbench" run "$suite" --db "$db" --no-report "$@"
status=$?
case $status in
0|1|4)
	# the run is stored (4: interrupted, partial): report what it holds
	if "$rtbench" export 1 --format lava --db "$db" > "$workdir/report.sh"; then
		sh "$workdir/report.sh"
	else
		lava-test-case rtbench-export --result fail
	fi
	if [ -n "${RTBENCH_SERVER:-}" ]; then
		if "$rtbench" push 1 --server "$RTBENCH_SERVER" --db "$db"; then
			lava-test-case rtbench-push --result pass
		else
			lava-test-case rtbench-push --result fail
		fi
	fi
	;;
*)
	# 2 bad suite or usage, 3 the environment cannot run it: nothing measured
	lava-test-case rtbench-run --result fail
	;;
esac
exit $status
