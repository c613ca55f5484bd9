"""Database connections: the PostgreSQL pool's settings, and no connection held across a provider call
inside a transaction (the wait itself on PostgreSQL: tests/services/test_connection_pool.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection, transaction

from config.database import TransactionOpenAcrossWait, connections_release
from context_assembly.messages import Message
from governance.models import GovernanceEvent
from providers.dispatch import complete_with_fallbacks
from providers.values import ProviderCall, ProviderConfig
from tests.fakes.provider_server import FakeProvider

ROOT = Path(__file__).resolve().parents[2]
POSTGRES_URL = "postgres://u@db.example:5432/app"


def database_settings(**env: str) -> dict[str, object]:
    """The database and Celery settings a process starts with under ``env`` (nothing connects)."""
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import json, django; django.setup(); from django.conf import settings as s; "
            "d = s.DATABASES['default']; print(json.dumps({'engine': d['ENGINE'], "
            "'conn_max_age': d.get('CONN_MAX_AGE'), "
            "'health_checks': d.get('CONN_HEALTH_CHECKS'), 'options': d.get('OPTIONS', {}), "
            "'db_reuse_max': s.CELERY_DB_REUSE_MAX}, default=lambda f: f.__module__ + '.' + f.__name__))",
        ],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_", "CELERY_DB_"))},
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DJANGO_SECRET_KEY": "k",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_postgres_connections_come_from_a_pool_by_default():
    assert database_settings(DATABASE_URL=POSTGRES_URL) == {
        "engine": "config.db.postgresql",
        "conn_max_age": 0,
        "health_checks": True,
        "options": {
            "pool": {"min_size": 2, "max_size": 16, "timeout": 30, "check": "config.db.pool.check_or_sweep"},
            "prepare_threshold": 1,
        },
        "db_reuse_max": None,
    }


def test_pool_sizes_and_timeout_come_from_the_environment():
    settings = database_settings(
        DATABASE_URL=POSTGRES_URL,
        DATABASE_POOL_MIN_SIZE="4",
        DATABASE_POOL_MAX_SIZE="24",
        DATABASE_POOL_TIMEOUT_SECONDS="5",
    )
    assert settings["options"] == {
        "pool": {"min_size": 4, "max_size": 24, "timeout": 5, "check": "config.db.pool.check_or_sweep"},
        "prepare_threshold": 1,
    }


def test_options_the_url_carries_are_kept_beside_the_pool():
    settings = database_settings(DATABASE_URL=POSTGRES_URL + "?sslmode=require")
    assert settings["options"] == {
        "sslmode": "require",
        "pool": {"min_size": 2, "max_size": 16, "timeout": 30, "check": "config.db.pool.check_or_sweep"},
        "prepare_threshold": 1,
    }


def test_without_the_pool_each_thread_keeps_a_persistent_connection():
    assert database_settings(DATABASE_URL=POSTGRES_URL, DATABASE_POOL="false") == {
        "engine": "django.db.backends.postgresql",
        "conn_max_age": 60,
        "health_checks": False,
        "options": {},
        "db_reuse_max": 1000,
    }


def test_the_pools_connections_prepare_the_steps_statements_unless_turned_off():
    """The step's statements (catalog/models/sql.py, statement_cursor) are prepared when a pooled
    connection runs them a second time; DATABASE_PREPARED_STATEMENTS=false (a PgBouncer in
    transaction mode before 1.21) prepares nothing."""
    kept = database_settings(DATABASE_URL=POSTGRES_URL)
    off = database_settings(DATABASE_URL=POSTGRES_URL, DATABASE_PREPARED_STATEMENTS="false")
    assert kept["options"]["prepare_threshold"] == 1
    assert {**off["options"], "prepare_threshold": 1} == kept["options"]


def test_sqlite_has_no_pool():
    settings = database_settings(DATABASE_POOL="true")
    assert settings["engine"] == "django.db.backends.sqlite3"
    assert "pool" not in settings["options"]  # type: ignore[operator]
    assert settings["db_reuse_max"] == 1000


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"DATABASE_POOL_MIN_SIZE": "8", "DATABASE_POOL_MAX_SIZE": "4"},
            "DATABASE_POOL_MAX_SIZE must be at least 8",
        ),
        ({"DATABASE_POOL_MAX_SIZE": "0"}, "DATABASE_POOL_MAX_SIZE must be at least 2"),
        ({"DATABASE_POOL_TIMEOUT_SECONDS": "soon"}, "DATABASE_POOL_TIMEOUT_SECONDS must be an integer"),
        ({"DATABASE_POOL": "sometimes"}, "DATABASE_POOL must be one of"),
    ],
)
def test_a_malformed_pool_setting_stops_start_up(env, message):
    result = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DJANGO_SECRET_KEY": "k",
            "DATABASE_URL": POSTGRES_URL,
            **env,
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.django_db(transaction=True)
def test_a_connection_that_is_not_pooled_stays_open_across_the_wait():
    GovernanceEvent.objects.count()
    held = connection.connection
    assert connections_release(waiting_for="a test") == 0
    assert connection.connection is held


@pytest.mark.django_db(transaction=True)
def test_a_provider_call_inside_a_transaction_is_refused_before_anything_is_sent(fake_provider: FakeProvider):
    config = ProviderConfig(
        identifier="fake", kind="openai_compatible", base_url=fake_provider.openai_base_url
    )
    call = ProviderCall(model_id="gpt-4o", messages=(Message(role="user", content="Hello."),), max_tokens=16)
    with transaction.atomic(), pytest.raises(TransactionOpenAcrossWait) as refused:
        GovernanceEvent.objects.count()
        complete_with_fallbacks([(config, "gpt-4o")], call)
    assert str(refused.value) == (
        "a transaction is open on database 'default' while waiting for provider 'fake': "
        "commit before the wait, so that no lock or snapshot is held through it"
    )
    assert fake_provider.requests == []
    # Outside the transaction the same call goes out.
    assert complete_with_fallbacks([(config, "gpt-4o")], call).answer.text == "ok"
    assert len(fake_provider.requests) == 1
