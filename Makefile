# The two commands of the README: `make run` and `make test`; `make serve` for the real mode.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# What serving needs (requirements.txt), then what testing and benchmarking add.
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
APP_VAR_DIR ?= $(CURDIR)/var

# The services suite runs against real PostgreSQL, Redis and RabbitMQ (these defaults match the machines'
# local services); a missing service skips it, or fails it with REQUIRE_SERVICES=1.
SERVICES_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/govctx
SERVICES_REDIS_URL ?= redis://127.0.0.1:6379/15
SERVICES_RABBITMQ_URL ?= amqp://guest:guest@127.0.0.1:5672//

.PHONY: run serve release test test-fast test-services lint format bench bench-quick bench-instructions bench-injection litellm-venv fuzz screenshots coding-agents clean

$(RUN_STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@echo "Installing what serving needs (requirements.txt) into $(VENV) ..."
	$(PY) -m pip install --disable-pip-version-check --progress-bar on -r requirements.txt
	touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) requirements-dev.txt requirements-bench.txt
	@echo "Installing the test, lint and benchmark tools into $(VENV) ..."
	$(PY) -m pip install --disable-pip-version-check --progress-bar on -r requirements-dev.txt -r requirements-bench.txt
	touch $(STAMP)

# Embedded default: SQLite, in-process tasks, the offline local provider.
run: $(RUN_STAMP)
	mkdir -p $(APP_VAR_DIR)/static
	DJANGO_DEBUG=1 $(PY) manage.py migrate --noinput
	# The demo's first runs end inside the seed (steps in-process, not on the server's pool), so the
	# dashboard has them when it opens.
	DJANGO_DEBUG=1 AGENT_RUNS_IN_BACKGROUND=0 $(PY) manage.py seed_demo
	@echo "Serving admin on http://$(HOST):$(PORT)/admin/ and the API on http://$(HOST):$(PORT)/api/v1/"
	DJANGO_DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# The real mode (README, "Deploying"): the services named by DATABASE_URL, REDIS_URL and, optionally,
# CELERY_BROKER_URL. The release step (the Procfile's), then web, worker and beat as one process group
# under honcho: their lines on one terminal, Ctrl-C stops them all. Every process counts its metrics
# into one directory, emptied here before any starts, so /metrics sums them all.
PROMETHEUS_MULTIPROC_DIR ?= $(APP_VAR_DIR)/prometheus
# Only these two targets set it: a process started with it counts into that directory. Every process
# reads the settings file (.env, or ENV_FILE) itself, the environment overriding it; honcho is started
# through config.envexec, which reads it the same way, and told to read none of its own (it would let
# the file override the environment). HOST, PORT and APP_VAR_DIR are make's: `make serve PORT=9000`.
SERVE_ENV := PATH="$(abspath $(VENV))/bin:$(PATH)" APP_VAR_DIR="$(APP_VAR_DIR)" \
	PROMETHEUS_MULTIPROC_DIR="$(PROMETHEUS_MULTIPROC_DIR)"

# As root, SERVE_USER=name runs the release step and every process as that user (Celery warns
# against running as root, and nothing here needs it); it must be able to write APP_VAR_DIR.
SERVE_USER ?=
AS_SERVE_USER := $(if $(SERVE_USER),runuser -u $(SERVE_USER) --)

release: $(RUN_STAMP)
	$(AS_SERVE_USER) rm -rf "$(PROMETHEUS_MULTIPROC_DIR)"
	$(AS_SERVE_USER) mkdir -p "$(PROMETHEUS_MULTIPROC_DIR)"
	$(AS_SERVE_USER) env $(SERVE_ENV) sh -c "$$(sed -n 's/^release: //p' Procfile)"

serve: release
	@echo "Serving on http://$(HOST):$(PORT)/ (admin /admin/, API /api/v1/, docs /api/docs/, health /healthz); Ctrl-C stops web, worker and beat"
	$(AS_SERVE_USER) env $(SERVE_ENV) HOST=$(HOST) PORT=$(PORT) $(PY) -m config.envexec honcho start --no-colour -e /dev/null -f Procfile web worker beat

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy config governance context_assembly snippets skills catalog providers tools agents gateway evaluations editors
	$(VENV)/bin/lint-imports --no-cache --no-logo

format: $(STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# The default suite on every core (pytest-xdist; each worker has its own in-memory database). The
# services suite stays in one process: its Celery workers share one broker and one database.
TEST_WORKERS ?= auto
test-fast: $(STAMP)
	$(PY) -m pytest -m "not services" -n $(TEST_WORKERS)

test-services: $(STAMP)
	DATABASE_URL=$(SERVICES_DATABASE_URL) REDIS_URL=$(SERVICES_REDIS_URL) SERVICES_RABBITMQ_URL=$(SERVICES_RABBITMQ_URL) $(PY) -m pytest -m services

test: lint test-fast test-services

# The egress properties (tests/egress) at 20,000 examples instead of the default suite's 600.
fuzz: $(STAMP)
	EGRESS_PROFILE=fuzz $(PY) -m pytest tests/egress -p no:cacheprovider

# bench/instructions.py counts instructions under valgrind (minutes per run): only bench-instructions;
# bench/injection.py runs AgentDojo from a virtualenv of its own: `make bench-injection`.
BENCHES = $(filter-out bench/_% bench/instructions.py bench/injection.py,$(wildcard bench/[a-z]*.py))

bench: $(STAMP)
	@for script in $(BENCHES); do echo "== $$script"; $(PY) $$script || exit 1; done

bench-quick: $(STAMP)
	@for script in $(BENCHES); do echo "== $$script"; $(PY) $$script --quick || exit 1; done

# Instructions per step and per gateway request, counted by callgrind (needs valgrind).
bench-instructions: $(STAMP)
	$(PY) bench/instructions.py

# The agent-injection benchmark (AgentDojo's banking and slack suites through the runtime). AgentDojo
# pins other versions of the providers' SDKs than the service, so it gets a virtualenv of its own.
AGENTDOJO_VENV = var/agentdojo-venv
AGENTDOJO_VERSION ?= 0.1.35

$(AGENTDOJO_VENV)/bin/python:
	$(PYTHON) -m venv $(AGENTDOJO_VENV)
	$(AGENTDOJO_VENV)/bin/pip install --disable-pip-version-check agentdojo==$(AGENTDOJO_VERSION)

bench-injection: $(STAMP) $(AGENTDOJO_VENV)/bin/python
	$(PY) bench/injection.py

# LiteLLM's proxy, a peer of bench/gateway.py and bench/streams.py (they measure it when this virtualenv
# exists and say so when it does not). It pins other versions than the service, so it has its own.
LITELLM_VENV = var/litellm-venv

$(LITELLM_VENV)/bin/litellm: bench/litellm-requirements.txt
	$(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/pip install --disable-pip-version-check -r bench/litellm-requirements.txt

litellm-venv: $(LITELLM_VENV)/bin/litellm

# The admin screenshots in docs/screenshots/, taken by the browser tests (needs Chromium).
screenshots: $(STAMP)
	DOCS_SCREENSHOTS=1 $(PY) -m pytest tests/browser -q -p no:cacheprovider -k "refused or refusal or window_fill or draft_until or changed_words or counts_are_its_rows or test_plain_admin"

# The coding agents the Anthropic API is proved with (tests/gateway/test_claude_code.py), from the npm
# registry into .cache/coding-agents; the tests skip without them (fail under REQUIRE_SERVICES=1).
CODING_AGENTS_DIR ?= $(CURDIR)/.cache/coding-agents
CLAUDE_CODE_VERSION ?= 2.1.197
CODEX_VERSION ?= 0.171.0

coding-agents:
	npm install --prefix $(CODING_AGENTS_DIR) --no-audit --no-fund --foreground-scripts \
		@anthropic-ai/claude-code@$(CLAUDE_CODE_VERSION) @openai/codex@$(CODEX_VERSION)
	$(CODING_AGENTS_DIR)/node_modules/.bin/claude --version
	$(CODING_AGENTS_DIR)/node_modules/.bin/codex --version

clean:
	rm -rf $(VENV) var .cache .pytest_cache .ruff_cache .mypy_cache .hypothesis
