"""pytest fixtures for the fake provider server (register with ``pytest_plugins``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.provider_server import FakeProvider


@pytest.fixture
def fake_provider() -> Iterator[FakeProvider]:
    """A started :class:`FakeProvider` on 127.0.0.1 with no auth check; closed after the test."""
    with FakeProvider() as fake:
        yield fake
