# Entry points. The README names exactly two: `make site` and `make test`.
# Both install what they need first (scripts/setup.sh is idempotent and ~1 s when warm).
# `make help` lists every target from the `## ` text on its rule line: a new target without
# one fails tests/unit/test_cli_conventions.py.

PY      := .venv/bin/python
PYTEST  := .venv/bin/pytest
ANTORA  := bash scripts/antora.sh

.PHONY: help setup site site-only test test-full test-fast bench notebook lab-up lab-down lab-status clean

help: ## list every target (this text)
	@awk 'BEGIN {FS = ":[^#]*## "} /^[a-zA-Z_-]+:[^=]*## / {printf "make %-11s %s\n", $$1, $$2}' $(firstword $(MAKEFILE_LIST))

setup: ## install what the project needs (Debian packages, .venv, Node packages, Kafka jars, tools)
	@bash scripts/setup.sh

# The main job: every notebook run on the lab (cached), results embedded, the guide built.
site: setup ## install everything, run the chapters whose inputs changed on the lab, build the guide (CHAPTERS="a b", FORCE=1)
	@bash scripts/site.sh

# Build the site from what is committed/rendered, without running anything.
site-only: setup ## build the guide from the committed results, running nothing
	@$(PY) -m tr4947.runbook --status   # what is current: each result says so on its page
	@$(ANTORA) antora-playbook.yml
	@echo "Site built: open file://$(CURDIR)/build/site/index.html (French: build/site/tr4947/fr/index.html, Japanese: build/site/tr4947/ja/index.html)"

# nbval re-executes only the notebooks whose inputs changed since their committed results.
test: setup ## install everything, run all tests (unit, lab, notebooks, site, browser, linters)
	@$(PYTEST)

# Every notebook re-executed on the lab, whatever changed (drift check on demand).
test-full: setup ## the tests with every notebook re-executed on the lab, whatever changed
	@TR4947_NBVAL=all $(PYTEST)

# Everything but the lab and browser: quick feedback while editing.
test-fast: setup ## the tests without the lab and the browser (quick feedback while editing)
	@$(PYTEST) -m "not lab and not browser"

# Figures only, no assertions (a failed run is reported as failed). The runbook bench runs
# every chapter cold on the lab (about 40 min on 2 cores) into a temporary results root,
# times `make site` on a fresh clone, and prints where the cold run's time goes.
# A failed bench does not stop the others: each one's figures still print, and the list of
# the failed ones comes last (exit 1 if any failed).
BENCHES := site_build lab_bench jvm_start omb_vs_perftest runbook_bench
bench: setup ## print the benchmarks (site build, lab, JVM start, OMB, the whole runbook: about 40 min)
	@failed=""; for b in $(BENCHES); do \
	  echo "== bench/$$b.py"; $(PY) bench/$$b.py || failed="$$failed $$b"; \
	done; \
	if [ -n "$$failed" ]; then echo "bench: failed:$$failed (see its output above)"; exit 1; fi

# JupyterLab on 127.0.0.1 to run a chapter step by step: make notebook CHAPTER=cpu-utilization
notebook: setup ## JupyterLab on 127.0.0.1 to run a chapter step by step (CHAPTER=cpu-utilization)
	@.venv/bin/tr4947 notebook $(CHAPTER)

lab-up: setup ## build the embedded lab by hand (tr4947 lab up)
	@.venv/bin/tr4947 lab up
lab-down: ## stop the embedded lab and remove its state (tr4947 lab down)
	@.venv/bin/tr4947 lab down
lab-status: ## the lab's hosts and their state (tr4947 lab status)
	@.venv/bin/tr4947 lab status

clean: lab-down ## take the lab down and remove build/
	rm -rf build
