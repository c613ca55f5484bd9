"""Fixtures of the services suite: the broker a test runs Celery on (tests/services/brokers.py), and
the new database a ``make serve`` migrates (tests/services/serving.py)."""

from tests.services.brokers import broker
from tests.services.serving import database_url

__all__ = ["broker", "database_url"]
