# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test lint clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall only when the pins change. The library's ranges (pyproject.toml) are narrowed to the
# workflow's exact pins (constraints.txt).
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/snakemake --cores all

test: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

clean:
	rm -rf results logs .snakemake
