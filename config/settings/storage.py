"""Where a process keeps its state: the project's directories and the database, with the PostgreSQL pool
(read by ``config/settings/base.py``; every variable is listed in ``.env.example``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import dj_database_url

from config.db.pool import check_or_sweep
from config.env import env_bool, env_int, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("APP_VAR_DIR", str(BASE_DIR / "var")) or BASE_DIR / "var")
DATABASE_URL = env_url("DATABASE_URL", schemes=("postgres", "postgresql", "sqlite"))

# --- Database -------------------------------------------------------------------------------
if DATABASE_URL is None:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": VAR_DIR / "db.sqlite3"}}
else:
    DATABASES = {"default": dict(dj_database_url.parse(DATABASE_URL))}
# PostgreSQL connections come from a pool per process (psycopg_pool, docs/decisions/0009): a thread takes
# one for each stretch of database work and gives it back before a provider call (config/database.py)
# and after each task, so a worker's connections are bounded by DATABASE_POOL_MAX_SIZE, not by its
# threads. DATABASE_POOL=false keeps one persistent connection per thread instead.
DATABASE_POOL = DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql" and env_bool(
    "DATABASE_POOL", True
)
if DATABASE_POOL:
    DATABASE_POOL_MIN_SIZE = env_int("DATABASE_POOL_MIN_SIZE", 2, minimum=0)
    DATABASE_POOL_MAX_SIZE = env_int(
        "DATABASE_POOL_MAX_SIZE", max(16, DATABASE_POOL_MIN_SIZE), minimum=max(1, DATABASE_POOL_MIN_SIZE)
    )
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections; Django must not
    # The pool then checks a connection (an empty query, one round trip) before handing it out: one
    # that a database restart or failover closed while it sat in the pool is replaced, not used. The
    # check, on its first failure, checks all the idle connections at once (config/db/pool.py), so
    # threads do not meet the dead ones one by one. Django 5.2 cannot take a check from the options
    # (config/db/postgresql/base.py passes it; Django's own backend will once upstream's fix ships).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    DATABASES["default"]["ENGINE"] = "config.db.postgresql"
    DATABASES["default"]["OPTIONS"] = {
        **cast(dict[str, Any], DATABASES["default"].get("OPTIONS") or {}),  # e.g. ?sslmode=require
        "pool": {
            "min_size": DATABASE_POOL_MIN_SIZE,
            "max_size": DATABASE_POOL_MAX_SIZE,
            # A thread waits this long for a free connection, then fails like a dropped connection
            # (the step task retries it).
            "timeout": env_int("DATABASE_POOL_TIMEOUT_SECONDS", 30, minimum=1),
            "check": check_or_sweep,
        },
    }
    # The statements a step runs at every step as SQL text (its claim, its records, its transcript
    # read: catalog/models/sql.py, statement_cursor) are prepared on the server when a connection runs
    # them a second time, so PostgreSQL parses and plans each once per connection instead of at every
    # step (parsing and planning were half of its CPU per step in bench/concurrency.py; after five
    # runs, psycopg's default, a pool's connections prepared them too late for a burst of steps). The
    # ORM's statements are bound on the client as before and never prepared. false: nothing is
    # prepared (a PgBouncer in transaction mode older than 1.21 keeps no prepared statement from one
    # transaction to the next).
    DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
    if DATABASE_PREPARED_STATEMENTS:
        DATABASES["default"]["OPTIONS"] = {
            **cast(dict[str, Any], DATABASES["default"]["OPTIONS"]),
            "prepare_threshold": 1,  # prepared when run a second time
        }
elif DATABASE_URL is not None:
    DATABASES["default"]["CONN_MAX_AGE"] = 60
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {
        # Wait for a competing writer instead of failing at once (runserver + eager tasks), and take
        # the write lock when a transaction begins, so two writers never deadlock upgrading a read.
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        # Write-ahead log: readers never block the writer, and a commit appends to the log without
        # an fsync (the log is synced at checkpoints). A crash of the process loses nothing; a power
        # loss may lose the last commits, never the database's consistency.
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
