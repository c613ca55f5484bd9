"""Suite-wide fixtures and the services and browser gates.

A ``late_redaction`` governance event (the guard pass over a provider body found a secret the
per-part redaction missed) fails the test that caused it, unless the test is marked
``late_redaction`` because it provokes one on purpose.

Tests marked ``services`` need real PostgreSQL (as the default database), Redis and a Celery worker
binary. Tests marked ``browser`` need Debian's Chromium and chromedriver and the selenium package;
tests marked ``coding_agent`` need node and Claude Code (``make coding-agents``, tests/coding_agents.py).
When one is missing they are skipped with the reason shown, unless ``REQUIRE_SERVICES=1``, which turns
the same condition into a failure (CI sets it).
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.db.backends.signals import connection_created
from django.db.models.signals import post_save
from hypothesis import settings as hypothesis_settings

from agents.runtime.caches import caches_clear
from config import database
from config.celery import app as celery_app
from governance.models import GovernanceEvent
from governance.vocabulary import Decision
from tests.coding_agents import coding_agent_problem
from tests.editor_accounts import editors_group_capture

pytest_plugins = ["tests.fakes.fixtures", "tests.network_guard"]

_services_problem: str | bool | None = False  # False: not checked yet

# Under CI (``CI`` or ``REQUIRE_SERVICES=1`` set) every property test draws the same examples, so a
# run's outcome depends on the commit alone; elsewhere each run draws fresh ones and keeps finding
# new cases (``make fuzz`` explores the egress properties at length). tests/egress/profiles.py does
# the same for its own profiles.
_HYPOTHESIS_PROFILE = "ci" if os.environ.get("CI") or os.environ.get("REQUIRE_SERVICES") == "1" else "default"
hypothesis_settings.register_profile("ci", derandomize=True)
hypothesis_settings.load_profile(_HYPOTHESIS_PROFILE)


def _read_uncommitted_in_shared_cache(sender: object, connection: object, **kwargs: object) -> None:
    """The SQLite test database is Django's in-memory database in shared-cache mode. There a reader
    meets a writer's table lock as ``database table is locked`` at once (no busy wait), where the
    embedded default's file database (WAL) lets readers read beside a writer. Tests whose steps run
    on other threads (the background runner, the live server) read while a step writes: reading
    without table read locks gives them the file database's behaviour; writers still take turns."""
    if getattr(connection, "vendor", None) == "sqlite" and connection.is_in_memory_db():  # type: ignore[attr-defined]
        with connection.cursor() as cursor:  # type: ignore[attr-defined]
            cursor.execute("PRAGMA read_uncommitted = 1")


connection_created.connect(_read_uncommitted_in_shared_cache)
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


@pytest.fixture(autouse=True)
def _empty_process_caches():
    """Every test starts with empty per-process caches (``agents/runtime/caches.py`` lists them): a
    value one test cached under a token or id that a rolled-back transaction reuses cannot leak into
    the next test, and hit and miss counts start at zero."""
    caches_clear()


# The ways pytest-django makes a test transactional (its data committed, no transaction around it).
TRANSACTIONAL_FIXTURES = frozenset({"transactional_db", "live_server", "django_db_reset_sequences"})


@pytest.fixture(autouse=True)
def _waits_inside_the_tests_own_transaction(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):
    """A ``django_db`` test that is not transactional runs inside a transaction pytest-django opens
    and rolls back, so a provider call it makes waits inside that transaction. The transaction is the
    test's, not the code's: there the guard against waiting inside one (``connections_release``)
    reads every transaction as closed. The guard itself is proven by ``transaction=True`` tests."""
    marker = request.node.get_closest_marker("django_db")
    marked = marker is not None and (marker.kwargs.get("transaction") or marker.kwargs.get("reset_sequences"))
    if marked or TRANSACTIONAL_FIXTURES.intersection(request.fixturenames):
        return
    monkeypatch.setattr(database, "transaction_open", lambda wrapper: False)


@pytest.fixture(autouse=True)
def _governance_anchor_file(settings, tmp_path):
    """Every test keeps the anchors it takes outside the database in a file of its own: another
    test's anchors would name chains this test's database never had."""
    settings.GOVERNANCE_LOG_ANCHOR_FILE = tmp_path / "governance-anchors.jsonl"


def _find_services_problem() -> str | None:
    database = settings.DATABASES["default"]
    if database["ENGINE"] not in {"django.db.backends.postgresql", "config.db.postgresql"}:
        return "DATABASE_URL does not point at PostgreSQL"
    try:
        import psycopg

        with psycopg.connect(
            host=database.get("HOST") or None,
            port=database.get("PORT") or None,
            user=database.get("USER") or None,
            password=database.get("PASSWORD") or None,
            dbname="postgres",
            connect_timeout=3,
        ):
            pass
    except Exception as exc:
        return f"PostgreSQL unreachable: {type(exc).__name__}"
    if not settings.REDIS_URL:
        return "REDIS_URL is not set"
    try:
        import redis

        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=3).ping()
    except Exception as exc:
        return f"Redis unreachable: {type(exc).__name__}"
    if not celery_executable():
        return "the celery executable is missing"
    return None


def celery_executable() -> str | None:
    beside = Path(sys.executable).with_name("celery")
    return str(beside) if beside.exists() else shutil.which("celery")


def browser_problem() -> str | None:
    for executable in (CHROMIUM, CHROMEDRIVER):
        if not os.access(executable, os.X_OK):
            return f"{executable} is missing (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "the selenium package is not installed"
    return None


def _gate(problem: str | None, what: str) -> None:
    if problem:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"{what} required but unavailable: {problem}", pytrace=False)
        pytest.skip(f"{what} unavailable: {problem}")


def pytest_runtest_setup(item: pytest.Item) -> None:
    global _services_problem
    if item.get_closest_marker("browser") is not None:
        _gate(browser_problem(), "browser")
    if item.get_closest_marker("coding_agent") is not None:
        _gate(coding_agent_problem(), "coding agent")
    if item.get_closest_marker("services") is None:
        return
    if _services_problem is False:
        _services_problem = _find_services_problem()
    if _services_problem:
        if os.environ.get("REQUIRE_SERVICES") == "1":
            pytest.fail(f"services required but unavailable: {_services_problem}", pytrace=False)
        pytest.skip(f"services unavailable: {_services_problem}")


@pytest.fixture
def tasks_in_process(settings):
    """Tasks run eagerly in this process on either database (the services suite brokers them), set on
    the Celery app itself: it reads its configuration once, so a Django setting changed later would
    reach it only if nothing had read it yet."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    yield
    celery_app.conf.task_always_eager = eager


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database as pytest-django sets it up, and the editors group the migrations made in it,
    read once (``tests/editor_accounts.py``)."""
    with django_db_blocker.unblock():
        editors_group_capture()


@pytest.fixture(params=["default", pytest.param("postgresql", marks=pytest.mark.services)])
def on_both_databases(request: pytest.FixtureRequest) -> str:
    """A module that uses it (``pytest.mark.usefixtures("on_both_databases")``) runs each of its tests
    in the default suite (SQLite) and again in the services suite (PostgreSQL, ``DATABASE_URL``)."""
    return request.param


@pytest.fixture(autouse=True)
def _no_late_redaction(request: pytest.FixtureRequest):
    """Fail a test during which a ``late_redaction`` event was written (in this process)."""
    late: list[str] = []

    def seen(sender: type, instance: GovernanceEvent, created: bool, **kwargs: object) -> None:
        if created and instance.decision == Decision.LATE_REDACTION:
            late.append(instance.reason)

    post_save.connect(seen, sender=GovernanceEvent, weak=False)
    try:
        yield late
    finally:
        post_save.disconnect(seen, sender=GovernanceEvent)
    if late and request.node.get_closest_marker("late_redaction") is None:
        pytest.fail(f"a late_redaction event was recorded: {late}", pytrace=False)
