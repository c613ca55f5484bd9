"""Fixtures of the services suite: the broker a test runs Celery on (tests/services/brokers.py)."""

from tests.services.brokers import broker

__all__ = ["broker"]
