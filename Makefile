# rtbench - top-level targets.  `make run` and `make test` are all most people need.
#   make run     create .venv, install rtbench (which builds probe/), run the quick suite
#   make test    C unit tests (make -C probe check) and pytest over tests/ (sets up .venv
#                with the test tools first, so it works in a fresh clone); leaves the
#                heaviest tests to CI unless RTBENCH_TEST_ALL=1 (docs/testing.md)
#   make test-boards  the board zoo: Debian's kernels for other CPUs booted in qemu, each
#                measured and traced over its serial console (root; tests/boards/)
#   make test-fast  the same without the slow tests (qemu guests, the browser, cross
#                builds, board stand-ins, live servers, tests/slow_tests.txt): what to run
#                while working (docs/testing.md)
#   make test-arches  the board probes of all nine arches (Zig, qemu-user; left to CI by
#                a plain make test)
#   make bench   rtprobe vs cyclictest, injected interference, host statistics and report
#                benchmarks (root, quiet machine)
#   make lint    ruff and mypy
#   make dev     editable install with the dev tools into .venv (what CI uses)
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
SUITE ?= quick
RUN_ARGS ?=
# pytest-xdist workers for make test / test-fast.  Much of the suite waits, not on the
# CPU: the emulated guests' consoles run at their baud rate, real measurements sleep
# between wake-ups and wait for the machine-wide realtime lock, servers wait on sockets.
# A fourth worker keeps both CPUs busier (BENCHMARKS.md, "make test: four workers, the
# realtime lock held only while measuring"), but with it two tests that need CPU time
# of their own failed in fresh clones (the PREEMPT_RT guest's console, the traced
# injector): three until they hold with four.
TEST_WORKERS ?= 3
# Jobs for the C unit tests' build.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
# Tests marked qemu, browser, cross or slow (pyproject.toml, tests/conftest.py) are the
# slow real-part ones.
FAST_TESTS := not qemu and not browser and not cross and not slow
# What a plain make test leaves to CI, to keep a newcomer's first run (cold caches) within
# its 8 minutes on 2 vCPUs (docs/testing.md): the tests marked ci (CI_ONLY in
# tests/conftest.py).  RTBENCH_TEST_ALL=1 (.ci/run sets it) runs them all.
LEFT_TO_CI := $(if $(filter 1,$(RTBENCH_TEST_ALL)),,-m "not ci")
CI_WORDS := the tests marked ci: the import memory bounds on files of 3-8 MiB, the \
	qemu-system guests, the API fuzzers, the wheel in a fresh venv and the Zig-built \
	board probes (make test-arches)

# Use the virtual environment when there is one.
ifneq ($(wildcard $(VPY)),)
PY := $(VPY)
else
PY := $(PYTHON)
endif

.PHONY: all probe run test test-fast test-arches test-boards check-c bench lint dev clean prereqs prereqs-cc

all: probe

# The compiler probe/ builds with (its Makefile: CC ?= $(CROSS_COMPILE)gcc).
PROBE_CC := $(if $(filter default,$(origin CC)),$(CROSS_COMPILE)gcc,$(CC))

# What a build needs, checked before pip prints a page of output: one line each, naming
# the fix.  probe/ needs only the compiler; the venv module is only needed while .venv
# does not exist yet.
prereqs-cc:
	@command -v $(firstword $(PROBE_CC)) >/dev/null 2>&1 || { echo "make: no C compiler \
	'$(PROBE_CC)' to build probe/: install one (Debian/Ubuntu: apt-get install \
	build-essential) or name it with CC=..." >&2; exit 1; }

prereqs: prereqs-cc
	@command -v $(PYTHON) >/dev/null 2>&1 || { echo "make: no '$(PYTHON)': install \
	Python 3.10 or newer (Debian/Ubuntu: apt-get install python3) or name it with \
	PYTHON=..." >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null || { echo "make: \
	$(PYTHON) is Python `$(PYTHON) -c 'import platform; print(platform.python_version())' 2>/dev/null || echo unknown`; \
	rtbench needs 3.10 or newer: install it and run make PYTHON=python3.X" >&2; exit 1; }
	@test -x $(VPY) || $(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || { echo "make: \
	$(PYTHON) has no venv/ensurepip module to create $(VENV): install it (Debian/Ubuntu: \
	apt-get install python3-venv)" >&2; exit 1; }

probe: prereqs-cc
	$(MAKE) -C probe

# --no-compile: pip would compile every module of every package (SciPy's, Matplotlib's,
# mypy's, ...) to bytecode, a third of a cold install's CPU; Python compiles each module
# that is imported, once, when it is first imported.
PIP_INSTALL = $(VPY) -m pip install --quiet --disable-pip-version-check --no-compile

# --system-site-packages reuses numpy/scipy/matplotlib already on the machine, which keeps
# a fresh `make run` well inside its 3 minutes; anything missing comes from PyPI.
$(VENV)/.installed: pyproject.toml setup.py $(wildcard probe/src/*.[ch] probe/src/*/*.[ch] probe/port/*.c probe/Makefile) $(wildcard suites/*.toml) \
		| prereqs
	test -x $(VPY) || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(PIP_INSTALL) .
	touch $@

# Exit 1 means a latency threshold was crossed, exit 6 that a scenario did not happen as
# defined (a busy machine): results, not a broken run.
run: $(VENV)/.installed
	@rc=0; $(VENV)/bin/rtbench run $(SUITE) $(RUN_ARGS) || rc=$$?; \
	if [ $$rc -eq 1 ]; then \
		echo "make run: thresholds were crossed on this machine (rtbench exit 1); see above"; \
		rc=0; \
	elif [ $$rc -eq 6 ]; then \
		echo "make run: a scenario did not happen as defined on this machine (rtbench" \
			"exit 6: a load short of its target or a busy idle; see above)"; \
		rc=0; \
	elif [ $$rc -eq 3 ]; then \
		echo "make run: rtbench cannot run here (exit 3, see above); options such as" \
			"--policy other go in RUN_ARGS=\"...\""; \
	fi; exit $$rc

# .venv/.dev: the dev extra (make dev, make lint, CI); .venv/.test: the test extra alone,
# what a plain make test needs (pyproject.toml).
$(VENV)/.dev $(VENV)/.test: $(VENV)/.%: pyproject.toml setup.py | prereqs
	test -x $(VPY) || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(PIP_INSTALL) -e '.[$*]'
	touch $@

# The venv of make test and test-fast: the test extra, so that a newcomer's first run
# does not install the linters, the API fuzzer and Zig (a third of pip's time) for tests
# it leaves to CI; the dev one where make dev made it, or where RTBENCH_TEST_ALL=1 runs
# those tests too.
TEST_VENV := $(if $(or $(wildcard $(VENV)/.dev),$(filter 1,$(RTBENCH_TEST_ALL))),$(VENV)/.dev,$(VENV)/.test)

dev: $(VENV)/.dev

# pytest over tests/ in TEST_WORKERS processes; tests of one xdist_group share a worker
# (and so one booted guest or build); the ten slowest tests are listed at the end.  Exit 5
# (no tests collected) is said in one line and fails the target: nothing was tested.
# Python's bytecode caches are written even where PYTHONDONTWRITEBYTECODE is set (under
# __pycache__/, ignored by git): without them every worker and every CLI child compiles rtbench and the tests
# from source again, which doubles the collection of the tests.  NumPy's BLAS runs one
# thread per worker: with a thread per CPU in each of TEST_WORKERS workers, the statistics
# tests took three to four times as long as alone.
define pytest
	@rc=0; env -u PYTHONDONTWRITEBYTECODE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 \
		$(VPY) -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=10 $(1) tests \
		|| rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make: pytest collected no tests (exit 5): nothing was tested"; fi; \
	exit $$rc
endef

# The C unit tests, against glibc and (where musl-gcc exists) musl.
# One parallel make for all of them (each build's output kept together: -Orecurse).
MUSL_GCC := $(shell command -v musl-gcc 2>/dev/null)
check-c: prereqs-cc
	@test -n "$(MUSL_GCC)" || echo "make test: no musl-gcc, probe unit tests not run against musl"
	$(MAKE) -C probe -j$(TEST_JOBS) -Orecurse check $(if $(MUSL_GCC),check-musl) $(CHECK_SANITIZE)

# The set-up of make test and test-fast: .venv (TEST_VENV: pip, mostly downloading and
# unpacking, one CPU at most) and check-c's C builds and unit tests at the same time, so a
# fresh clone's set-up takes about as long as pip alone.  probe/'s own build comes
# first: pip's build step runs `make -C probe` and the unit tests link its objects, and two
# makes building the same objects at once would race.  $(1): check-c's CHECK_SANITIZE.
# (+: recursive makes, which make -n runs too, as make does not see $(MAKE) in a call)
define setup
	+$(MAKE) -C probe -j$(TEST_JOBS)
	+@rc=0; $(MAKE) --no-print-directory $(TEST_VENV) & dev=$$!; \
	$(MAKE) --no-print-directory check-c CHECK_SANITIZE="$(1)" || rc=$$?; \
	wait $$dev || rc=$$?; exit $$rc
endef

# The tests import rtbench and its dependencies: they run in .venv, set up here if needed.
# make test also builds rtprobe and the unit tests with ASan and UBSan and runs the unit
# tests so (probe/Makefile's `sanitize`), in check-c's parallel make before pytest starts:
# the sanitized rtprobe that tests/host/test_faults.py runs is then built already.
test: prereqs-cc
	$(call setup,sanitize)
	@test -z '$(LEFT_TO_CI)' || echo "make test: left to CI, as RTBENCH_TEST_ALL=1 make test \
	runs them: $(CI_WORDS) (docs/testing.md, \"What make test leaves to CI\")"
	$(call pytest,$(LEFT_TO_CI))

# Everything but the slow real-part tests (markers in pyproject.toml).
test-fast: prereqs-cc
	$(call setup,)
	$(call pytest,-m "$(FAST_TESTS)")

# The board probes of all nine arches built with Zig and run under qemu-user (make test
# leaves them to CI; .ci/run sets RTBENCH_TEST_ALL=1, which builds the nine).
test-arches: $(VENV)/.dev
	@rc=0; env -u PYTHONDONTWRITEBYTECODE RTBENCH_TEST_ARCHES=all OPENBLAS_NUM_THREADS=1 \
		$(VPY) -m pytest -n $(TEST_WORKERS) --dist loadgroup tests/probe/test_arches.py \
		|| rc=$$?; exit $$rc

# The board zoo (tools/zoo.py): every emulated board booted once, smoke and a traced run
# next to an injected SCHED_FIFO thread over its serial console (tests/boards/).  Root:
# assembling a board adds its Debian architecture and downloads its kernel and busybox
# (kept in ~/.cache/rtbench/zoo, or RTBENCH_ZOO_DIR).  One worker per emulated CPU.
# RTBENCH_ZOO_BOARDS=arm64,ppc64el: those boards alone, each of them required to run
# (.ci/run sets it).
BOARD_WORKERS ?= 2
test-boards: $(VENV)/.dev
	env -u PYTHONDONTWRITEBYTECODE RTBENCH_TEST_BOARDS=1 OPENBLAS_NUM_THREADS=1 \
		$(VPY) -m pytest -n $(BOARD_WORKERS) --dist loadgroup --durations=20 tests/boards

bench: probe
	$(PY) bench/cyclic_vs_cyclictest.py
	$(PY) bench/host_stats.py
	$(PY) bench/injected_interference.py
	$(PY) bench/report_49.py

lint: $(VENV)/.dev
	$(VPY) -m ruff check rtbench tests setup.py
	$(VPY) -m mypy rtbench

clean:
	$(MAKE) -C probe clean
	rm -rf build dist *.egg-info rtbench/_bin rtbench/_suites rtbench/_probe
