#!/bin/sh
# Install rtbench on the LAVA DUT from the job's repository, into a private directory
# that run-and-report.sh removes when it is done (nothing is left on the device).
#
# Usage: install.sh [SOURCE]
#   SOURCE: what pip installs; default "." (the repository LAVA checked this definition
#   out of), or e.g. git+https://example.org/rtbench.git@v1.2.  pip's build compiles
#   rtprobe, so the DUT needs python3 (with venv), gcc and make.
# The directory is $RTBENCH_LAVA_DIR (default /tmp/rtbench-lava).  Exit 3 when the
# install fails (reported as the lava-test-case rtbench-install).
set -u
source=${1:-.}
dir=${RTBENCH_LAVA_DIR:-/tmp/rtbench-lava}
report() {
	command -v lava-test-case >/dev/null 2>&1 && lava-test-case rtbench-install --result "$1"
	return 0
}
if [ -e "$dir" ] && [ ! -e "$dir/.rtbench-lava" ]; then
	echo "rtbench: $dir exists and was not made by install.sh; set RTBENCH_LAVA_DIR" >&2
	report fail
	exit 3
fi
mkdir -p "$dir" && touch "$dir/.rtbench-lava" || { report fail; exit 3; }
if ! python3 -m venv "$dir/venv"; then
	echo "rtbench: python3 -m venv failed; install python3-venv on the DUT" >&2
	report fail
	exit 3
fi
if ! "$dir/venv/bin/pip" install --quiet "$source"; then
	echo "rtbench: pip install $source failed (see above)" >&2
	report fail
	exit 3
fi
report pass
