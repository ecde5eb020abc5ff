#!/bin/sh
# Run an rtbench suite on this machine (the LAVA DUT) and report every result to LAVA.
#
# Usage: run-and-report.sh [SUITE [rtbench run options...]]
#   SUITE defaults to quick; options go to `rtbench run` (e.g. --scale 0.5).
# Each cell becomes a lava-test-case with its verdict, each figure (min, avg,
# percentiles, max in us; overruns) a lava-test-case with --measurement, through
# `rtbench export --format lava`.  The rtbench exit code is returned.
set -u
suite=${1:-quick}
[ $# -gt 0 ] && shift
workdir=$(mktemp -d "${TMPDIR:-/tmp}/rtbench-lava.XXXXXX") || exit 3
db="sqlite:///$workdir/results.db"
rtbench run "$suite" --db "$db" --no-report "$@"
status=$?
case $status in
0|1|4)
	# the run is stored (4: interrupted, partial): report what it holds
	if rtbench export 1 --format lava --db "$db" > "$workdir/report.sh"; then
		sh "$workdir/report.sh"
	else
		lava-test-case rtbench-export --result fail
	fi
	;;
*)
	# 2 bad suite or usage, 3 the environment cannot run it: nothing measured
	lava-test-case rtbench-run --result fail
	;;
esac
echo "rtbench: results kept in $workdir/results.db"
exit $status
