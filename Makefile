# Entry points. The README names exactly two: `make site` and `make test`.
# Both install what they need first (scripts/setup.sh is idempotent and ~1 s when warm).

PY      := .venv/bin/python
PYTEST  := .venv/bin/pytest
ANTORA  := npx --no-install antora

.PHONY: help setup site site-only test test-full test-fast bench notebook lab-up lab-down lab-status clean

help:
	@echo "make site    install everything, run the runbook on the lab, build the guide"
	@echo "make test    install everything, run all tests (unit, lab, notebooks, site, browser)"
	@echo "make bench   print the benchmarks (site build, lab)"
	@echo "make notebook CHAPTER=NAME   JupyterLab on 127.0.0.1, to run a chapter step by step"
	@echo "make lab-up | lab-down | lab-status   manage the embedded lab by hand"

setup:
	@bash scripts/setup.sh

# The main job: every notebook run on the lab (cached), results embedded, the guide built.
site: setup
	@bash scripts/site.sh

# Build the site from what is committed/rendered, without running anything.
site-only: setup
	@$(ANTORA) antora-playbook.yml
	@echo "Site built: open file://$(CURDIR)/build/site/index.html (French: build/site/tr4947/fr/index.html, Japanese: build/site/tr4947/ja/index.html)"

# nbval re-executes only the notebooks whose inputs changed since their committed results.
test: setup
	@$(PYTEST)

# Every notebook re-executed on the lab, whatever changed (drift check on demand).
test-full: setup
	@TR4947_NBVAL=all $(PYTEST)

# Everything but the lab and browser: quick feedback while editing.
test-fast: setup
	@$(PYTEST) -m "not lab and not browser"

# Figures only, no assertions (a failed run is reported as failed). The runbook bench runs
# every chapter cold on the lab (about 40 min on 2 cores) into a temporary results root,
# times `make site` on a fresh clone, and prints where the cold run's time goes.
bench: setup
	@$(PY) bench/site_build.py
	@$(PY) bench/lab_bench.py
	@$(PY) bench/jvm_start.py
	@$(PY) bench/omb_vs_perftest.py
	@$(PY) bench/runbook_bench.py

# JupyterLab on 127.0.0.1 to run a chapter step by step: make notebook CHAPTER=cpu-utilization
notebook: setup
	@.venv/bin/tr4947 notebook $(CHAPTER)

lab-up: setup
	@.venv/bin/tr4947 lab up
lab-down:
	@.venv/bin/tr4947 lab down
lab-status:
	@.venv/bin/tr4947 lab status

clean: lab-down
	rm -rf build
