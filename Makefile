# leaselab: bootstrap, lint, type-check and test. Needs only python3 (3.11+) and pip.
#
#   make test        create .venv if missing, install leaselab[dev] when pyproject.toml changed,
#                    then ruff, mypy and pytest (xdist, nightly-marked tests excluded)
#   make lint        ruff check .
#   make typecheck   mypy (files and strictness from pyproject.toml)
#   make quick       the tests that start no process, cluster, browser or notebook (pytest -m 'not slow')
#   make notebooks   execute every notebook under notebooks/ with what make test installs (nbclient's
#                    jupyter-execute); the executed copies, figures inline, go to notebooks/out/
#   make clean       caches and build artefacts (keeps .venv); make distclean also removes .venv

PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_ARGS ?= -n auto -m 'not nightly'

.DEFAULT_GOAL := test
.PHONY: test install lint typecheck pytest quick clean distclean notebooks

test: lint typecheck
	$(BIN)/pytest $(PYTEST_ARGS)

install: $(STAMP)

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

pytest: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

quick: $(STAMP)
	$(BIN)/pytest -n auto -m 'not slow and not nightly'

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
# REPORT_SEEDS (paired seeds per cell) is the one knob; what a run costs is measured in benchmarks/PROFILE.md.
REPORT_SEEDS ?= 100
.PHONY: report bench
report: $(STAMP)
	$(BIN)/leaselab report --seeds $(REPORT_SEEDS) --out reports/out --exit-zero

bench: $(STAMP)
	$(BIN)/leaselab bench
