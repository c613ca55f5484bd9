"""The egress harness fixture: one fake provider, one skill source and one staff user per test function."""

from __future__ import annotations

import pytest

from tests.egress.build import base_make
from tests.egress.harness import Egress, capture_logs


@pytest.fixture
def egress(fake_provider, caplog, django_capture_on_commit_callbacks) -> Egress:
    capture_logs(caplog)
    return Egress(base=base_make(fake_provider), capture=django_capture_on_commit_callbacks, caplog=caplog)
