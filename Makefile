# leaselab: bootstrap, lint, type-check and test. Needs only python3 (3.11+) and pip.
#
#   make test        create .venv if missing, install leaselab[dev] when pyproject.toml changed,
#                    then ruff, mypy and pytest (xdist, nightly-marked tests excluded)
#   make lint        ruff check .
#   make typecheck   mypy (files and strictness from pyproject.toml)
#   make notebooks   execute every notebook under notebooks/ with what make test installs (nbclient's
#                    jupyter-execute); the executed copies, figures inline, go to notebooks/out/
#   make clean       caches and build artefacts (keeps .venv); make distclean also removes .venv

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n auto -m 'not nightly'

.DEFAULT_GOAL := test
.PHONY: test install lint typecheck pytest clean distclean notebooks

test: lint typecheck
	$(BIN)/pytest $(PYTEST_ARGS)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

$(BIN)/python:
	@$(PY) -c 'import sys; sys.version_info >= (3, 11) or sys.exit("leaselab needs Python 3.11+, but $(PY) is " + sys.version.split()[0] + ": run make PY=python3.11 ...")'
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-installed only when pyproject.toml is newer than the stamp.
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@

notebooks: $(STAMP)
	mkdir -p notebooks/out
	for nb in notebooks/*.ipynb; do \
		$(BIN)/jupyter-execute --timeout=600 --output="out/$$(basename "$$nb" .ipynb)" "$$nb" || exit 1; \
	done
	@echo "executed notebooks (figures inline): notebooks/out/"

clean:
	rm -rf .mypy_cache .ruff_cache .pytest_cache .hypothesis build dist *.egg-info
	find . -path ./$(VENV) -prune -o -type d -name __pycache__ -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)

# The main job: the built-in ADR review on the local cores -> reports/out/index.html (its path is printed).
# --exit-zero: the report is the product here; its verdict for head (exit 1 when an invariant of head
# failed, as `leaselab report` alone exits) is written in the report and printed on stderr.
# REPORT_SEEDS (paired seeds per cell, the one knob) is sized from CPU seconds, not wall time (the machine
# it was sized on was shared): `/usr/bin/time leaselab report --seeds N` measured user+sys of about
# 23 s fixed (start-up, shrinking, exhaustive verification, figures) + 3.3 s per seed (714 simulations:
# 7 policies x 102 cells; reaper_races_heartbeat's 100 ms each is half of it), after the faster world
# of issue 9 (it was 4.4 s per seed at 80 seeds). Issue 18's outcome oracles and liveness costs add
# about 9%, and its grid `deployment` (head on the 14 library scenarios at deployment fault ranges, 28
# simulations per seed) brings 100 seeds to 74,200 simulations, the same seed count as
# sim/review/adr-review.toml. The causality curves of the counterexamples (issue 17) come on top,
# time-boxed at 600,000 world requests each (ReviewOptions.causality_budget_requests).
# Measured after issues 16-18 merged (1400a75): 74,200 simulations and 45 curves (48,732 simulations),
# 729 CPU s (user + sys) in 11 min wall at load average 4-6 from other work, i.e. about 6 minutes on
# 2 idle cores; the curves are a third of it (about 240 CPU s).
# Again on branch i19-speed (fused judging pass) (ac4b5f5, 100 seeds, 74,200 simulations): 725 CPU s
# (user+sys; 722 s wall on a machine shared with other jobs, load 7.4 -> 3.5, the two workers got
# about 45% of a core each): sweep 359 s, evidence 338 s (mostly the causality curves), figures 25 s.
# On 2 idle cores about 6 minutes, not the 3 the budget above was sized for.
# On main after the merge, with causality curves of 4 evenly spaced points (not 8), on 2 idle cores
# (load under 2): 5 min 07 s wall, 604 CPU s (sweep 164 s, evidence 127 s, figures 14 s wall; 45
# curves, 35,991 simulations); a second run 5 min 27 s, 644 CPU s.
# Issue 19 (a world about 5% cheaper, a judge about 1.2x cheaper, liveness walking call records only for
# reaped processes, causality points that stop drawing once their interval is within 10 points), main
# b80f985 on 2 idle cores: 3 min 24 s wall, 400 CPU s (sweep 140 s, evidence 51 s, figures 12 s wall;
# 45 curves, 11,488 simulations; workers: sweep 269 CPU s, curves 64, recognition 28, figures 19); two
# `make report` runs after it (and after liveness skipped the reaper ticks' segments, e6fbb93): 3 min 02 s
# (358 CPU s) and 3 min 07 s (368 CPU s). With head's violations explained in the sweep's workers (no
# re-run of 1,954 simulations to recognise them): 2 min 45 s (323 CPU s; sweep 118 s, evidence 35 s,
# figures 12 s wall) and 2 min 40 s (312 CPU s; 114 / 34 / 11 s). With a reaper tick that finds nothing
# recorded as one record (7f96b64; 57% fewer records over the snapshot's library cases), on a day when
# d742005 took 148 s (289 CPU s): 130 s (253 CPU s; sweep 91 s, evidence 28 s, figures 11 s wall) and
# 121 s (236 CPU s; 84 / 27 / 9 s).
REPORT_SEEDS ?= 100
.PHONY: report bench
report: $(STAMP)
	$(BIN)/leaselab report --seeds $(REPORT_SEEDS) --out reports/out --exit-zero

bench: $(STAMP)
	$(BIN)/leaselab bench
