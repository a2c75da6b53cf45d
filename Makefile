# Two commands on a fresh machine with only Python 3.10+ and pip:
#   make lab    set up .venv and open the notebooks in JupyterLab (LAB_ARGS pass through)
#   make test   set up .venv and run every check: ruff, pytest, nbval, widgets under ipywidgets 7.7
# Also: make bench (speed and accuracy ratios), make clean.

PYTHON ?= python3
VENV ?= .venv
VENV7 ?= .venv-ipyw7
# The constraints file picks the CPU build of torch on the project's machines; empty it elsewhere
# (`make test PIP_CONSTRAINTS=`) to let pip choose torch within pyproject.toml's range.
PIP_CONSTRAINTS ?= constraints.txt
LAB_ARGS ?=
PYTEST_ARGS ?=

BIN := $(VENV)/bin
BIN7 := $(VENV7)/bin
PIP_C := $(if $(PIP_CONSTRAINTS),-c $(PIP_CONSTRAINTS))
PIP_FLAGS := --disable-pip-version-check --quiet

# pytest exits 5 when it collects nothing (no notebook yet): that is a pass, not a failure.
define pytest_allow_empty
$(1) || { rc=$$?; if [ $$rc -eq 5 ]; then echo "(nothing collected: ok)"; else exit $$rc; fi; }
endef

.PHONY: lab test lint unit notebooks widgets7 browser bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# Reinstall only when the declared dependencies change, so a second `make test` starts at once.
$(VENV)/.installed-lab: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) $(PIP_C) -e ".[lab]"
	touch $@

$(VENV)/.installed-test: pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/python -m pip install $(PIP_FLAGS) $(PIP_C) -e ".[lab,test]"
	touch $@

lab: $(VENV)/.installed-lab
	$(BIN)/jupyter lab notebooks/ $(LAB_ARGS)

test: lint unit notebooks widgets7 browser

lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

unit: $(VENV)/.installed-test
	$(BIN)/python -m pytest tests clipkit --doctest-modules --ignore=tests/browser $(PYTEST_ARGS)

notebooks: $(VENV)/.installed-test
	$(call pytest_allow_empty,$(BIN)/python -m pytest --nbval-lax --nbval-current-env notebooks/ $(PYTEST_ARGS))

# The widget tests again under ipywidgets 7.7, the version Colab ships.
$(BIN7)/python:
	$(PYTHON) -m venv $(VENV7)

$(VENV7)/.installed: pyproject.toml constraints.txt | $(BIN7)/python
	$(BIN7)/python -m pip install $(PIP_FLAGS) $(PIP_C) -e . "ipywidgets==7.7.*" "pytest>=7.4" "hypothesis>=6.80"
	touch $@

widgets7: $(VENV7)/.installed
	$(call pytest_allow_empty,$(BIN7)/python -m pytest tests/widgets $(PYTEST_ARGS))

# Real-browser check: skips, saying why, when Chromium is not installed (README: Browser check).
browser: $(VENV)/.installed-test
	$(call pytest_allow_empty,$(BIN)/python -m pytest tests/browser -rs $(PYTEST_ARGS))

bench: $(VENV)/.installed-test
	$(BIN)/python -m clipkit.bench

clean:
	rm -rf $(VENV) $(VENV7) .pytest_cache .ruff_cache .hypothesis
