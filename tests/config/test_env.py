"""Settings come from the environment; malformed values stop start-up with the variable's name."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_names, env_patterns, env_rate, env_str, env_url

ROOT = Path(__file__).resolve().parents[2]


def test_env_bool(monkeypatch):
    monkeypatch.setenv("FLAG", "Yes")
    assert env_bool("FLAG", False) is True
    monkeypatch.setenv("FLAG", "0")
    assert env_bool("FLAG", True) is False
    monkeypatch.setenv("FLAG", "  ")
    assert env_bool("FLAG", True) is True
    monkeypatch.setenv("FLAG", "ja")
    with pytest.raises(ImproperlyConfigured, match="FLAG must be one of"):
        env_bool("FLAG", False)


def test_env_patterns(monkeypatch):
    monkeypatch.delenv("PATTERNS", raising=False)
    assert env_patterns("PATTERNS") == {}
    monkeypatch.setenv("PATTERNS", '{"employee_id": "EMP-[0-9]{6}"}')
    assert env_patterns("PATTERNS") == {"employee_id": "EMP-[0-9]{6}"}
    for raw, message in [
        ("EMP-1", "PATTERNS must be a JSON object of name: regex"),
        ('["EMP"]', "PATTERNS must be a JSON object of name: regex"),
        ('{"Employee": "EMP"}', "PATTERNS: 'Employee' must name"),
        ('{"employee": "EMP-[0-9"}', "PATTERNS: 'employee' does not compile"),
        ('{"anything": "x*"}', "PATTERNS: 'anything' matches the empty text"),
    ]:
        monkeypatch.setenv("PATTERNS", raw)
        with pytest.raises(ImproperlyConfigured, match=message.replace("[", "\\[")):
            env_patterns("PATTERNS")


def test_env_int(monkeypatch):
    monkeypatch.delenv("N", raising=False)
    assert env_int("N", 7) == 7
    monkeypatch.setenv("N", "12")
    assert env_int("N", 7, minimum=10) == 12
    monkeypatch.setenv("N", "9")
    with pytest.raises(ImproperlyConfigured, match="N must be at least 10, got 9"):
        env_int("N", 7, minimum=10)
    monkeypatch.setenv("N", "ten")
    with pytest.raises(ImproperlyConfigured, match="N must be an integer, got 'ten'"):
        env_int("N", 7)


def test_env_str_and_list(monkeypatch):
    monkeypatch.setenv("S", " value ")
    assert env_str("S") == "value"
    monkeypatch.setenv("L", "a, b,,c ")
    assert env_list("L", []) == ["a", "b", "c"]


def test_env_url(monkeypatch):
    monkeypatch.setenv("U", "postgres://user@db:5432/app")
    assert env_url("U", schemes=("postgres",)) == "postgres://user@db:5432/app"
    monkeypatch.setenv("U", "mysql://db/app")
    with pytest.raises(ImproperlyConfigured, match="U must use one of the schemes"):
        env_url("U", schemes=("postgres",))
    monkeypatch.setenv("U", "redis://")
    with pytest.raises(ImproperlyConfigured, match="U must name a host"):
        env_url("U", schemes=("redis",))


def start_django(**env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    environment.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "DJANGO_SECRET_KEY": "k", **env})
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "mysql://db/app"}, "DATABASE_URL must use one of the schemes"),
        ({"REDIS_URL": "http://cache"}, "REDIS_URL must use one of the schemes"),
        ({"DJANGO_DEBUG": "maybe"}, "DJANGO_DEBUG must be one of"),
        ({"CELERY_TASK_TIME_LIMIT": "abc"}, "CELERY_TASK_TIME_LIMIT must be an integer"),
        (
            {"AGENT_STEP_LEASE_SECONDS": "20", "AGENT_STEP_LEASE_RENEW_SECONDS": "11"},
            "AGENT_STEP_LEASE_RENEW_SECONDS must be at most half of AGENT_STEP_LEASE_SECONDS, got 11 and 20",
        ),
        ({"AGENT_STEP_LEASE_SECONDS": "1"}, "AGENT_STEP_LEASE_SECONDS must be at least 2, got 1"),
        (
            {"DJANGO_SECRET_KEY": "", "DATABASE_URL": "postgres://u@db.example:5432/app"},
            "DJANGO_SECRET_KEY must be set when DATABASE_URL is (the real mode)",
        ),
        (
            {"GOVERNANCE_LOG_KEY": "", "DATABASE_URL": "postgres://u@db.example:5432/app"},
            "GOVERNANCE_LOG_KEY must be set when DATABASE_URL is (the real mode)",
        ),
        ({"CELERY_BROKER_URL": "kafka://broker:9092"}, "CELERY_BROKER_URL must use one of the schemes"),
        (
            {"CELERY_BROKER_URL": "amqp://guest:guest@mq.example:5672//"},
            "CELERY_BROKER_URL needs REDIS_URL: the real mode keeps its cache, locks and live run events in Redis",
        ),
    ],
)
def test_malformed_environment_fails_start_up(env, message):
    result = start_django(**env)
    assert result.returncode != 0
    assert message in result.stderr


def test_embedded_default_runs_tasks_eagerly_without_redis():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, "
            "s.CACHES['default']['BACKEND'])",
        ],
        cwd=ROOT,
        env={
            **{k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}},
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DJANGO_SECRET_KEY": "k",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "True",
        "django.core.cache.backends.locmem.LocMemCache",
    ]


def test_real_mode_uses_postgres_and_redis_for_broker_and_cache():
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import django; django.setup(); from django.conf import settings as s; "
            "print(s.DATABASES['default']['ENGINE'], s.CELERY_TASK_ALWAYS_EAGER, s.CELERY_BROKER_URL, "
            "s.CACHES['default']['BACKEND'], s.CACHES['default']['OPTIONS']['max_connections'])",
        ],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DJANGO_SECRET_KEY": "k",
            "DATABASE_URL": "postgres://u@db.example:5432/app",
            "REDIS_URL": "redis://cache.example:6379/0",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        "config.db.postgresql",  # Django's PostgreSQL backend, with the pool (config/db/postgresql)
        "False",
        "redis://cache.example:6379/0",
        "django.core.cache.backends.redis.RedisCache",
        "10000",  # redis-py's default pool refuses a 101st connection; a worker has 256 threads
    ]


def test_a_rabbitmq_broker_url_is_the_brokers_for_celery_and_the_settings_alike():
    script = (
        "import django; django.setup(); from django.conf import settings as s; from config.celery import app; "
        "print(s.CELERY_BROKER_URL, app.conf.broker_url, s.CACHES['default']['LOCATION'], s.CELERY_TASK_ALWAYS_EAGER)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.base",
            "DJANGO_SECRET_KEY": "k",
            "DATABASE_URL": "postgres://u@db.example:5432/app",
            "REDIS_URL": "redis://cache.example:6379/0",
            "CELERY_BROKER_URL": "amqp://guest:guest@mq.example:5672/govctx",
        },
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.split() == [
        "amqp://guest:guest@mq.example:5672/govctx",
        "amqp://guest:guest@mq.example:5672/govctx",
        "redis://cache.example:6379/0",
        "False",
    ], result.stderr


def test_the_embedded_default_keeps_a_generated_key_under_its_var_dir(tmp_path):
    environment = {
        k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_", "REDIS_"))
    }
    environment["APP_VAR_DIR"] = str(tmp_path)
    keys = []
    for _ in range(2):
        result = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "shell",
                "--no-imports",
                "-c",
                "from django.conf import settings as s; print(s.SECRET_KEY)",
            ],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (result.returncode, result.stderr) == (0, "")
        keys.append(result.stdout.strip())
    assert keys[0] == keys[1] == (tmp_path / "development_secret_key").read_text().strip()
    assert len(keys[0]) >= 50


def test_development_secret_key_is_created_once_and_kept(tmp_path):
    from config.env import development_secret_key

    path = tmp_path / "var" / "key"
    first = development_secret_key(path)
    assert len(first) >= 50
    assert development_secret_key(path) == first
    assert oct(path.stat().st_mode & 0o777) == "0o600"


def test_env_rate(monkeypatch):
    monkeypatch.delenv("RATE", raising=False)
    assert env_rate("RATE", "60/min") == "60/min"
    monkeypatch.setenv("RATE", " 5/s ")
    assert env_rate("RATE", "60/min") == "5/s"
    monkeypatch.setenv("RATE", "0/min")
    with pytest.raises(
        ImproperlyConfigured, match=r"RATE must look like 600/min \(count/s\|min\|h\|day\), got '0/min'"
    ):
        env_rate("RATE", "60/min")


def test_env_names(monkeypatch):
    monkeypatch.delenv("NAMES", raising=False)
    assert env_names("NAMES", ["GITHUB_TOKEN"]) == ["GITHUB_TOKEN"]
    monkeypatch.setenv("NAMES", "GITHUB_TOKEN, TEAM_GITHUB_TOKEN,")
    assert env_names("NAMES", []) == ["GITHUB_TOKEN", "TEAM_GITHUB_TOKEN"]
    monkeypatch.setenv("NAMES", "GITHUB_TOKEN,team token")
    with pytest.raises(
        ImproperlyConfigured, match="NAMES must list variable names \\(A-Z, 0-9, _\\), got 'team token'"
    ):
        env_names("NAMES", [])
