"""The settings. Production differs from the embedded default only by environment values. This module
reads the infrastructure's (modes, security, apps, Celery, governance, logging) and takes the API's
(``api.py``), the content's (``content.py``: skills, token badges, retention) and the storage's
(``storage.py``: the project's directories, the database and its pool) from their own.

Run modes:
- embedded default: no ``DATABASE_URL`` (SQLite under ``var/``) and no ``REDIS_URL`` (Celery tasks run
  in-process, eagerly; the cache is local memory);
- real: ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` (cache, locks, live run events, and the
  Celery broker unless ``CELERY_BROKER_URL`` names another, e.g. RabbitMQ).

Every variable read here is listed, with its default, in ``.env.example`` (tests/config/test_env_example.py
checks the two against each other). Before any is read, the settings file (``.env`` at the project's
root, or the file ``ENV_FILE`` names) has been read into the environment, which overrides it: the
``config`` package does that as it is imported (``config/__init__.py``), so every process that loads
these settings sees the same values.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from django.core.exceptions import ImproperlyConfigured

from config.env import (
    development_secret_key,
    env_bool,
    env_choice,
    env_int,
    env_list,
    env_patterns,
    env_str,
    env_url,
)
from config.logs import LOG_FORMATS, logging_config
from config.settings.api import *  # noqa: F403  (the API's settings: limits, proxies, DRF, OpenAPI)
from config.settings.content import *  # noqa: F403  (skills, token badges, retention)
from config.settings.storage import *  # noqa: F403  (the project's directories, the database and its pool)
from config.settings.storage import DATABASE_POOL, DATABASE_URL, VAR_DIR

DEBUG = env_bool("DJANGO_DEBUG", False)
# The real mode: a database named by URL, without DEBUG. There keys must be configured; the embedded
# default (no DATABASE_URL: one machine, its database under var/) needs no variable at all.
REAL_MODE = not DEBUG and DATABASE_URL is not None
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if SECRET_KEY is None:
    # The embedded default keeps a generated key beside its database, so management commands run
    # there as written, without any variable.
    if REAL_MODE:
        raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set when DATABASE_URL is (the real mode)")
    SECRET_KEY = development_secret_key(VAR_DIR / "development_secret_key")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost"])

# --- Behind TLS and a proxy (README.md, "Behind TLS and a proxy") ------------------------------
# All off by default, so that `make serve` answers plain HTTP on a loopback port; a deployment behind
# TLS sets them (`manage.py check --deploy` is clean with the values in .env.example's production block).
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
# Probes and scrapers inside the network reach these over plain HTTP; they are never redirected.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
# The header a TLS-terminating proxy sets to the scheme the client used (e.g. X-Forwarded-Proto). Only
# set it when that proxy always sets or overwrites the header: a client could otherwise claim https.
_PROXY_SSL_HEADER = env_str("DJANGO_SECURE_PROXY_SSL_HEADER")
if _PROXY_SSL_HEADER is not None:
    SECURE_PROXY_SSL_HEADER = ("HTTP_" + _PROXY_SSL_HEADER.upper().replace("-", "_"), "https")
# Origins (scheme and host) whose admin form posts are trusted, e.g. https://govctx.example.com.
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])
for _origin in CSRF_TRUSTED_ORIGINS:
    if not _origin.startswith(("https://", "http://")):
        raise ImproperlyConfigured(
            f"DJANGO_CSRF_TRUSTED_ORIGINS must list origins with a scheme, got {_origin!r}"
        )

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "simple_history",
    "config.login_lockouts.LoginLockoutsConfig",  # django-axes, named for the admin
    "governance",
    "context_assembly",
    "snippets",
    "skills",
    "catalog",
    "tools",
    "agents",
    "gateway",
    "evaluations",
    "editors",
]

MIDDLEWARE = [
    # First, so that every log record of a request carries its request id, and its span is the root.
    "config.logs.RequestLogContextMiddleware",
    "config.tracing.TraceContextMiddleware",
    # Outside the API's error shape: /api/openai/v1 and /api/anthropic/v1 answer every error in
    # OpenAI's and Anthropic's shape instead.
    "gateway.apis.openai_errors.OpenAIErrorShapeMiddleware",
    "gateway.apis.anthropic_errors.AnthropicErrorShapeMiddleware",
    # Outermost after them, so that it sees every response, including Django's own 404 and 500 pages.
    "config.errors.ApiErrorShapeMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's, the API docs'), compressed and under content-hashed names, in every
    # run mode and under any server.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Django's own: its deploy checks of the session cookie look for this name.
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's user and message middleware, skipping the API's requests (config/browser.py).
    "config.browser.BrowserAuthenticationMiddleware",
    "config.browser.BrowserMessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "simple_history.middleware.HistoryRequestMiddleware",
    "config.limits.RequestSizeLimitMiddleware",
    # Last, as django-axes requires: it turns a locked-out admin login into its 429 page.
    "axes.middleware.AxesMiddleware",
]

# --- Admin login lockout (django-axes) ----------------------------------------------------------
# Axes' backend comes first: it refuses a locked-out login before any password is checked. The API
# authenticates by bearer token and never goes through these backends.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# This many failed logins for one username from one address lock that pair out, even with the right
# password, until the cool-off ends or `manage.py axes_reset_username <name>` clears it. Counting the
# pair (not the username alone) keeps a stranger from locking an editor out from elsewhere.
AXES_FAILURE_LIMIT = env_int("ADMIN_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("ADMIN_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The same client address as the API throttles (API_TRUSTED_PROXIES below): a validated address or
# None (stored as NULL: such attempts are counted together per username).
AXES_CLIENT_IP_CALLABLE = "config.client_address.client_address"
# No "AXES: BEGIN" line as each process (every management command) starts.
AXES_VERBOSE = False

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Redis: Celery broker, cache, locks -------------------------------------------------------
REDIS_URL = env_url("REDIS_URL", schemes=("redis", "rediss"))

# The most connections one process's pool of a Redis client opens. redis-py's pool refuses a 101st at
# once (MaxConnectionsError) unless told otherwise; a worker's 256 threads, or a web process's request
# threads, may each hold one, so the process's threads bound it, and the server's own limit
# (maxclients) is 10,000.
REDIS_MAX_CONNECTIONS = 10_000

CACHES: dict[str, dict[str, Any]]
if REDIS_URL is None:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"max_connections": REDIS_MAX_CONNECTIONS},
        }
    }

# --- Celery -----------------------------------------------------------------------------------
# Any broker Celery supports; Redis (REDIS_URL) unless CELERY_BROKER_URL names another. Celery itself
# reads the same variable, and /healthz pings the workers through Celery's connection to it.
_BROKER_URL = env_url("CELERY_BROKER_URL", schemes=("redis", "rediss", "amqp", "amqps", "pyamqp"))
if _BROKER_URL is not None and REDIS_URL is None:
    raise ImproperlyConfigured(
        "CELERY_BROKER_URL needs REDIS_URL: the real mode keeps its cache, locks and live run events in Redis"
    )
CELERY_BROKER_URL = _BROKER_URL or REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None  # results live in our own tables, never in the broker
CELERY_TASK_ALWAYS_EAGER = REDIS_URL is None
CELERY_TASK_EAGER_PROPAGATES = True
# Embedded default only (eager tasks): a run's steps run on a small pool of threads in this process,
# so POST /runs answers 202 at once instead of after the whole loop (agents/runtime/queue.py).
AGENT_RUNS_IN_BACKGROUND = env_bool("AGENT_RUNS_IN_BACKGROUND", True)
AGENT_BACKGROUND_THREADS = env_int("AGENT_BACKGROUND_THREADS", 4, minimum=1)
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fix-up closes every database connection before and after each task unless this is
# set. With the pool that close hands the connection back (cheap), so a thread waiting for its next
# task holds none: unset. Without the pool a close would cost a new PostgreSQL connection (a backend
# process) twice per step, so a worker thread keeps its connection for this many tasks; a broken one
# is dropped by the step task's retry.
CELERY_DB_REUSE_MAX = None if DATABASE_POOL else env_int("CELERY_DB_REUSE_MAX", 1000, minimum=1)
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SOFT_TIME_LIMIT = env_int("CELERY_TASK_SOFT_TIME_LIMIT", 300, minimum=1)
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 360, minimum=1)
if CELERY_TASK_TIME_LIMIT <= CELERY_TASK_SOFT_TIME_LIMIT:
    raise ImproperlyConfigured("CELERY_TASK_TIME_LIMIT must exceed CELERY_TASK_SOFT_TIME_LIMIT")
# With acks_late a message sits unacknowledged for the whole task; the visibility timeout must
# exceed the longest task or a healthy worker's task is delivered twice.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=CELERY_TASK_TIME_LIMIT + 1),
    "unacked_restore_interval": env_int("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1),
    "unacked_restore_throttle": env_int("CELERY_UNACKED_RESTORE_THROTTLE", 10, minimum=1),
}

# A worker's claim on a run step; another worker may take the step over once it expires, and the
# reaper requeues runs past it. The worker renews it every AGENT_STEP_LEASE_RENEW_SECONDS while the
# step runs (agents/runtime/heartbeat.py), so a step may last longer than the lease: the lease is how
# long a dead worker's step waits before another worker resumes it. At most half the lease, so that
# one slow or missed renewal does not cost a live worker its step.
AGENT_STEP_LEASE_SECONDS = env_int("AGENT_STEP_LEASE_SECONDS", 20, minimum=2)
AGENT_STEP_LEASE_RENEW_SECONDS = env_int("AGENT_STEP_LEASE_RENEW_SECONDS", 5, minimum=1)
if AGENT_STEP_LEASE_RENEW_SECONDS * 2 > AGENT_STEP_LEASE_SECONDS:
    raise ImproperlyConfigured(
        "AGENT_STEP_LEASE_RENEW_SECONDS must be at most half of AGENT_STEP_LEASE_SECONDS, got "
        f"{AGENT_STEP_LEASE_RENEW_SECONDS} and {AGENT_STEP_LEASE_SECONDS}"
    )
AGENT_REAPER_INTERVAL_SECONDS = env_int("AGENT_REAPER_INTERVAL_SECONDS", 30, minimum=1)
# A run waiting for a worker this long (queued, or between two steps with no lease) is taken for a
# lost message and requeued. A second copy of a message that was only slow is harmless (the claim
# skips a step done or leased), but counts towards the requeue bound: keep it above the longest
# queue wait you accept.
AGENT_QUEUED_STALE_SECONDS = env_int("AGENT_QUEUED_STALE_SECONDS", 600, minimum=1)
# MCP tool servers (tools/models.py): the URLs a streamable HTTP server may be registered and
# called at (scheme, host and port of an entry, under its path). Empty: no HTTP server at all.
MCP_SERVER_URL_ALLOWLIST = env_list("MCP_SERVER_URL_ALLOWLIST", [])
# How long a worker reuses a server's tool listing before asking the server again.
MCP_TOOL_LISTING_SECONDS = env_int("MCP_TOOL_LISTING_SECONDS", 60, minimum=0)
# A tool call that requires approval waits this long for a decision; the reaper then expires it and
# the model is told the call was not run (agents/runtime/approvals.py).
AGENT_APPROVAL_TIMEOUT_SECONDS = env_int("AGENT_APPROVAL_TIMEOUT_SECONDS", 86400, minimum=1)
CELERY_BEAT_SCHEDULE = {
    "reap-expired-runs": {
        "task": "agents.tasks.reap_runs_task",
        "schedule": AGENT_REAPER_INTERVAL_SECONDS,
    },
}

# --- Health (/healthz, config.health) ---------------------------------------------------------
# How long /healthz waits for a worker to answer its ping (it returns at the first answer).
HEALTH_WORKER_PING_TIMEOUT_MS = env_int("HEALTH_WORKER_PING_TIMEOUT_MS", 1000, minimum=50)
# A run waiting this long for a worker (queued, or between two steps) makes /healthz answer 503.
HEALTH_QUEUE_MAX_WAIT_SECONDS = env_int("HEALTH_QUEUE_MAX_WAIT_SECONDS", 300, minimum=1)
# Checks of apps above config, by dotted path (config imports no app).
HEALTH_CHECKS = {"reaper": "agents.health.reaper_check", "queue": "agents.health.queue_check"}

# --- Serving processes (config.startup) -------------------------------------------------------
# Called once a process serves HTTP (config/wsgi.py, config/asgi.py), by dotted path: the embedded
# default's reaper and governance log anchorer threads (neither starts in the real mode, where Celery
# beat reaps and anchors), then the process's startup objects set aside for the garbage collector
# (config/startup.py).
SERVING_STARTED_HOOKS = [
    "agents.reaper.embedded_reaper_start",
    "governance.chain.embedded.embedded_anchorer_start",
    "config.startup.startup_objects_frozen",
]

# --- Metrics (/metrics, config.metrics) -------------------------------------------------------
# Loopback clients may always scrape; any other client only with "Authorization: Bearer <this>".
METRICS_TOKEN = env_str("METRICS_TOKEN")
# Gauges read from the database at scrape time, by dotted path (config imports no app).
METRICS_COLLECTORS = ["agents.health.RunsCollector"]

# --- Governance -------------------------------------------------------------------------------
# Read through governance.policy.enforcement_mode(), which treats anything unknown as enforce_all.
GOVERNANCE_ENFORCEMENT = env_str("GOVERNANCE_ENFORCEMENT", "per_row")
# The tamper-evident event log (docs/decisions/0017-governance-log-hash-chain.md): how many chains
# writers spread over (changing it later is safe), how often beat (in the embedded default, a thread
# of the serving process) anchors every chain's head, and the keys of the digests
# (docs/decisions/0033-governance-log-keys-have-ids.md): the current key signs, the old keys (comma-
# separated; `secret:<value>` is the key derived from that DJANGO_SECRET_KEY) verify what they
# signed. `manage.py rotate_governance_log_key` prints the next pair. Required in the real mode: a key
# derived from DJANGO_SECRET_KEY would make rotating that key look like every event was edited.
# The embedded default derives its key from its generated secret key.
# Personal data (docs/governance.md, "Personal data"): the operator's own kinds, a JSON object of
# name: regex, found beside the built-in kinds as `custom` (named by their pattern in receipts).
PERSONAL_DATA_PATTERNS = env_patterns("PERSONAL_DATA_PATTERNS")
GOVERNANCE_LOG_CHAINS = env_int("GOVERNANCE_LOG_CHAINS", 16, minimum=1)
GOVERNANCE_LOG_ANCHOR_SECONDS = env_int("GOVERNANCE_LOG_ANCHOR_SECONDS", 60, minimum=1)
GOVERNANCE_LOG_KEY = env_str("GOVERNANCE_LOG_KEY", "")
GOVERNANCE_LOG_OLD_KEYS = env_list("GOVERNANCE_LOG_OLD_KEYS", [])
if REAL_MODE and not GOVERNANCE_LOG_KEY:
    raise ImproperlyConfigured(
        "GOVERNANCE_LOG_KEY must be set when DATABASE_URL is (the real mode); README.md, "
        '"Rotating keys", says how to generate one and keep the log\'s earlier key'
    )
# Every anchor is also appended, one JSON line each, to this file (and written to the log stream), so
# the anchors outlive the deletion of their rows; verify_governance_log reads it by default. Ship it
# (or point it) somewhere the database's owner cannot rewrite: it is only as safe as where it lives.
GOVERNANCE_LOG_ANCHOR_FILE = Path(
    env_str("GOVERNANCE_LOG_ANCHOR_FILE") or VAR_DIR / "governance-anchors.jsonl"
)
CELERY_BEAT_SCHEDULE["anchor-governance-log"] = {
    "task": "governance.tasks.governance_log_anchor_task",
    "schedule": GOVERNANCE_LOG_ANCHOR_SECONDS,
}
CELERY_BEAT_SCHEDULE["purge-expired-content"] = {
    "task": "editors.tasks.purge_expired_task",
    "schedule": RETENTION_PURGE_INTERVAL_SECONDS,  # noqa: F405
}

# --- Static files, i18n, logging --------------------------------------------------------------
STATIC_URL = "static/"
# `manage.py collectstatic` (the release step of `make serve`) writes here; WhiteNoise serves it.
STATIC_ROOT: Path | None = VAR_DIR / "static"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # gzip copies and content-hashed names, cached for a year; with DEBUG (`make run`) the files are
    # served from the apps' folders under their plain names, without collectstatic.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# text (the default) or json: one JSON object per line, with the run, step, client and correlation
# ids of the record (config.logs). Celery workers and beat log the same way (config.celery).
LOG_FORMAT = env_choice("LOG_FORMAT", "text", choices=LOG_FORMATS)
LOGGING = logging_config(log_format=LOG_FORMAT, level=env_str("LOG_LEVEL", "INFO") or "INFO")
