# Two commands on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WHEELS := $(VENV)/wheels

.PHONY: install demo test check lint clean demo-table check-claims lowest

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

# Reinstall only when the pins change. The library's ranges (pyproject.toml) are narrowed to the
# workflow's exact pins (constraints.txt). pyspark is published as source only, and building its
# wheel (copying 400 MB of jars) takes half a minute on a fresh machine: it is built beside the
# install of the other pins instead of after them.
$(STAMP): pyproject.toml constraints.txt | $(BIN)/python
	$(BIN)/pip wheel --quiet --no-deps -c constraints.txt -w $(WHEELS) pyspark & pyspark=$$!; \
	grep -v -e '^#' -e '^pyspark=' constraints.txt > $(VENV)/others.txt \
	&& $(BIN)/pip install --quiet -c constraints.txt -r $(VENV)/others.txt \
	&& wait $$pyspark \
	&& $(BIN)/pip install --quiet -c constraints.txt --find-links $(WHEELS) -e '.[dev]'
	touch $@

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/snakemake --cores all

# Two workers: most tests wait on a JVM or a workflow run with one core idle (tests/conftest.py
# says which tests go together). The real data samples come from $PELT_TEST_DATA or ../shared/data,
# else are fetched once into ~/.cache/pelt/test-data (tests/real_data.py, docs/testing.md#test-data).
test: $(STAMP)
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest -n 2

# The quick loop: lint, then the tests that need neither the demo's full run nor Spark.
check: lint
	PATH=$(abspath $(BIN)):$$PATH $(BIN)/pytest -n 2 -m "not slow" -q

lint: $(STAMP)
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check Snakefile workflow
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# The README's table of the demo's results, from a run's summaries (pelt.report.demo_table).
SUMMARY ?= results/eval/summary
demo-table: $(STAMP)
	$(BIN)/python -m pelt.report.demo_table $(SUMMARY)

# The paper's claims on a run's summaries, by the pre-registered rule (benchmarks/preregistered/PLAN.md):
# exit 1 when a measured claim fails.
check-claims: $(STAMP)
	$(BIN)/python benchmarks/preregistered/check_claims.py $(SUMMARY)

# The library's ranges at their lower bounds (constraints-lowest.txt) in a fresh venv: .ci/lowest.
lowest:
	.ci/lowest

clean:
	rm -rf results logs runs .snakemake
