"""The embedded default anchors too: it has no Celery beat, so a serving process runs an anchorer
thread that anchors as it starts and then on its timer, writing each anchor to the database and to
the anchor file. Only a server starts it, and only in the embedded default."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

import governance.chain.embedded
from config.settings import base
from config.startup import serving_started
from governance.chain.embedded import EmbeddedAnchorer
from governance.chain.verify import governance_log_verify
from governance.models import GovernanceAnchor
from tests.governance.log_tamper import anchor_file, events_write
from tests.services.worker import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def anchorer_threads() -> list[threading.Thread]:
    return [thread for thread in threading.enumerate() if thread.name == "governance-log-anchorer"]


@pytest.fixture
def no_anchorer(monkeypatch):
    """No anchorer started in this process yet; any the test starts is stopped after it."""
    monkeypatch.setattr(governance.chain.embedded, "_started", [])
    yield
    for anchorer in governance.chain.embedded._started:
        anchorer.stop()
        anchorer.join(timeout=30)


def test_the_anchorer_anchors_as_it_starts_and_then_on_its_timer():
    events_write(2)
    anchorer = EmbeddedAnchorer(interval=0.1)
    anchorer.start()
    try:
        wait_for(lambda: GovernanceAnchor.objects.count() == 1, timeout=30, what="the anchor at start-up")
        events_write(1)
        wait_for(lambda: GovernanceAnchor.objects.count() == 2, timeout=30, what="an anchor on the timer")
    finally:
        anchorer.stop()
        anchorer.join(timeout=30)
    assert not anchorer.is_alive()
    assert [anchor.heads[0][1] for anchor in GovernanceAnchor.objects.order_by("seq")] == [2, 3]
    assert len(anchor_file().read_text().splitlines()) == 2
    result = governance_log_verify()
    assert (result.breaks, result.anchors, result.file_anchors) == ([], 2, 2)


def test_serving_starts_one_anchorer_in_the_embedded_default(no_anchorer, settings):
    settings.SERVING_STARTED_HOOKS = ["governance.chain.embedded.embedded_anchorer_start"]
    settings.CELERY_TASK_ALWAYS_EAGER = True  # the embedded default: no beat
    assert anchorer_threads() == []  # importing the apps started none
    serving_started()
    serving_started()  # a second server module in the same process adds none
    assert len(anchorer_threads()) == 1
    assert governance.chain.embedded._started[0].interval == settings.GOVERNANCE_LOG_ANCHOR_SECONDS


def test_serving_starts_no_anchorer_in_the_real_mode(no_anchorer, settings):
    settings.SERVING_STARTED_HOOKS = ["governance.chain.embedded.embedded_anchorer_start"]
    settings.CELERY_TASK_ALWAYS_EAGER = False  # Celery beat anchors
    serving_started()
    assert anchorer_threads() == []


def test_the_anchor_file_lives_under_the_var_dir_unless_configured():
    configured = base.GOVERNANCE_LOG_ANCHOR_FILE
    assert configured == Path(base.VAR_DIR) / "governance-anchors.jsonl"
    assert "governance.chain.embedded.embedded_anchorer_start" in base.SERVING_STARTED_HOOKS
