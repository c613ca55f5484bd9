# The two commands of the README: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

# The services suite runs against real PostgreSQL and Redis (these defaults match the machines'
# local services); a missing service skips it, or fails it with REQUIRE_SERVICES=1.
SERVICES_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/govctx
SERVICES_REDIS_URL ?= redis://127.0.0.1:6379/15

.PHONY: run test test-fast test-services lint format bench bench-quick fuzz clean

$(STAMP): requirements.txt requirements-dev.txt requirements-bench.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt -r requirements-bench.txt
	touch $(STAMP)

# Embedded default: SQLite, in-process tasks, the offline local provider.
run: $(STAMP)
	DJANGO_DEBUG=1 $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=1 $(PY) manage.py seed_demo
	@echo "Serving admin on http://$(HOST):$(PORT)/admin/ and the API on http://$(HOST):$(PORT)/api/v1/"
	DJANGO_DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy config governance agents context_assembly snippets skills
	$(VENV)/bin/lint-imports --no-cache --no-logo

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

test-fast: $(STAMP)
	$(PY) -m pytest -m "not services"

test-services: $(STAMP)
	DATABASE_URL=$(SERVICES_DATABASE_URL) REDIS_URL=$(SERVICES_REDIS_URL) $(PY) -m pytest -m services

test: lint test-fast test-services

# The egress properties (tests/egress) at 20,000 examples instead of the default suite's 600.
fuzz: $(STAMP)
	EGRESS_PROFILE=fuzz $(PY) -m pytest tests/egress -p no:cacheprovider

BENCHES = $(filter-out bench/_%,$(wildcard bench/[a-z]*.py))

bench: $(STAMP)
	@for script in $(BENCHES); do echo "== $$script"; $(PY) $$script || exit 1; done

bench-quick: $(STAMP)
	@for script in $(BENCHES); do echo "== $$script"; $(PY) $$script --quick || exit 1; done

clean:
	rm -rf $(VENV) var .pytest_cache .ruff_cache .mypy_cache .hypothesis
