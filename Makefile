# rtbench - top-level targets.  `make run` and `make test` are all most people need.
#   make run     create .venv, install rtbench (which builds probe/), run the quick suite
#   make test    C unit tests (make -C probe check) and pytest over tests/
#   make bench   rtprobe vs cyclictest, injected interference, host statistics and report
#                benchmarks (root, quiet machine)
#   make lint    ruff and mypy
#   make dev     editable install with the dev tools into .venv (what CI uses)
PYTHON ?= python3
VENV ?= .venv
VPY := $(VENV)/bin/python
SUITE ?= quick
RUN_ARGS ?=

# Use the virtual environment when there is one.
ifneq ($(wildcard $(VPY)),)
PY := $(VPY)
else
PY := $(PYTHON)
endif

.PHONY: all probe run test bench lint dev clean

all: probe

probe:
	$(MAKE) -C probe

# --system-site-packages reuses numpy/scipy/matplotlib already on the machine, which keeps
# a fresh `make run` well inside its 3 minutes; anything missing comes from PyPI.
$(VENV)/.installed: pyproject.toml setup.py $(wildcard probe/src/*.[ch] probe/src/*/*.[ch]) $(wildcard suites/*.toml)
	test -x $(VPY) || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check .
	touch $@

# Exit 1 means a latency threshold was crossed: a result, not a broken run.
run: $(VENV)/.installed
	@rc=0; $(VENV)/bin/rtbench run $(SUITE) $(RUN_ARGS) || rc=$$?; \
	if [ $$rc -eq 1 ]; then \
		echo "make run: thresholds were crossed on this machine (rtbench exit 1); see above"; \
		rc=0; \
	fi; exit $$rc

$(VENV)/.dev: pyproject.toml setup.py
	test -x $(VPY) || $(PYTHON) -m venv --system-site-packages $(VENV)
	$(VPY) -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@

dev: $(VENV)/.dev

test:
	$(MAKE) -C probe check
	@if [ -x $(VPY) ]; then $(MAKE) --no-print-directory $(VENV)/.dev; fi
	$(PY) -m pytest tests

bench: probe
	$(PY) bench/cyclic_vs_cyclictest.py
	$(PY) bench/host_stats.py
	$(PY) bench/injected_interference.py
	$(PY) bench/report_49.py

lint:
	$(PY) -m ruff check rtbench tests setup.py
	$(PY) -m mypy rtbench

clean:
	$(MAKE) -C probe clean
	rm -rf build dist *.egg-info rtbench/_bin rtbench/_suites
