"""Every process reads the settings file (``.env``, or the file ``ENV_FILE`` names) the same way, and
the environment overrides it (config/env.py, config/__init__.py).

Each process here is started with its settings only in a temporary file, so what it shows was read
from there: ``manage.py`` migrates the database the file names, and the Celery app, the web server's
module and the test settings see the file's values as ``manage.py`` does.
"""

from __future__ import annotations

import os
import secrets
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from config import env as config_env

ROOT = Path(__file__).resolve().parents[2]
# Variables of the test's own process that would otherwise reach the child beside the file's.
_OWN = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "GOVERNANCE_", "APP_VAR_DIR", "ENV_FILE", "LOG_")


def child(args: list[str], *, env_file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    inherited = {name: value for name, value in os.environ.items() if not name.startswith(_OWN)}
    inherited.update({"DJANGO_SETTINGS_MODULE": "config.settings.base", "ENV_FILE": str(env_file), **env})
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=inherited, capture_output=True, text=True, timeout=120
    )


def env_file_write(path: Path, **values: str) -> Path:
    path.write_text("".join(f"{name}={value}\n" for name, value in values.items()))
    return path


def test_manage_py_migrates_the_database_the_env_file_names(tmp_path):
    chosen = tmp_path / "chosen.sqlite3"
    env_file = env_file_write(
        tmp_path / "settings.env",
        DATABASE_URL=f"sqlite:///{chosen}",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        GOVERNANCE_LOG_KEY=secrets.token_urlsafe(32),
    )
    var = tmp_path / "var"
    result = child(["manage.py", "migrate", "--noinput"], env_file=env_file, APP_VAR_DIR=str(var))
    assert result.returncode == 0, result.stderr
    with sqlite3.connect(chosen) as database:
        applied = set(database.execute("SELECT app, name FROM django_migrations"))
    assert {("governance", "0001_initial"), ("agents", "0001_initial")} <= applied
    # Nothing went to the embedded default's database, and no development key was generated.
    assert not (var / "db.sqlite3").exists()
    assert not (var / "development_secret_key").exists()


def test_the_environment_overrides_the_file_and_every_value_reaches_the_environment(tmp_path):
    # A provider's key variable is read from os.environ (named on its row), not by the settings.
    provider_key = "pk-" + secrets.token_hex(8) + "$HOME${HOME}"
    env_file = env_file_write(
        tmp_path / "settings.env",
        DJANGO_ALLOWED_HOSTS="file.example",
        LOG_LEVEL="WARNING",
        GOVCTX_TEST_PROVIDER_KEY=provider_key,
    )
    script = (
        "import os; from django.conf import settings as s; "
        "print(s.ALLOWED_HOSTS, s.LOGGING['root']['level'], os.environ['GOVCTX_TEST_PROVIDER_KEY'])"
    )
    result = child(
        ["manage.py", "shell", "--no-imports", "-c", script],
        env_file=env_file,
        APP_VAR_DIR=str(tmp_path / "var"),
        DJANGO_ALLOWED_HOSTS="env.example",
    )
    assert result.returncode == 0, result.stderr
    # The environment's host wins; the file's level and key arrive, its "$" unexpanded.
    assert result.stdout.split() == ["['env.example']", "WARNING", provider_key]


# Each entry point loads the settings its own way; each prints the broker the file names.
ENTRY_POINTS = {
    "manage.py": ["manage.py", "shell", "--no-imports", "-c", "from django.conf import settings as s; print(s.CELERY_BROKER_URL)"],
    "celery app": ["-c", "from config.celery import app; print(app.conf.broker_url)"],
    "asgi": ["-c", "import config.asgi; from django.conf import settings as s; print(s.CELERY_BROKER_URL)"],
    "test settings": ["-c", "import django; django.setup(); from django.conf import settings as s; print(s.CELERY_BROKER_URL)"],
}  # fmt: skip


@pytest.mark.parametrize("entry_point", ENTRY_POINTS)
def test_every_entry_point_reads_the_file(entry_point, tmp_path):
    broker = f"redis://cache-{secrets.token_hex(4)}.invalid:6379/3"
    env_file = env_file_write(tmp_path / "settings.env", REDIS_URL=broker)
    module = "config.settings.test" if entry_point == "test settings" else "config.settings.base"
    result = child(
        ENTRY_POINTS[entry_point],
        env_file=env_file,
        APP_VAR_DIR=str(tmp_path / "var"),
        DJANGO_SETTINGS_MODULE=module,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == broker


def test_an_env_file_variable_naming_no_file_stops_start_up(tmp_path):
    result = child(["manage.py", "check"], env_file=tmp_path / "missing.env", APP_VAR_DIR=str(tmp_path))
    assert result.returncode != 0
    assert f"ENV_FILE names '{tmp_path / 'missing.env'}', which is not a file" in result.stderr


def test_without_env_file_the_project_roots_dot_env_is_read_when_it_exists(tmp_path, monkeypatch):
    assert config_env.DEFAULT_ENV_FILE == ROOT / ".env"
    environment: dict[str, str] = {}
    monkeypatch.setattr(os, "environ", environment)
    monkeypatch.setattr(config_env, "DEFAULT_ENV_FILE", tmp_path / ".env")
    assert config_env.env_file_load() is None
    assert environment == {}
    env_file_write(tmp_path / ".env", LOG_LEVEL="DEBUG", BARE="")
    assert config_env.env_file_load() == tmp_path / ".env"
    assert environment == {"LOG_LEVEL": "DEBUG", "BARE": ""}
