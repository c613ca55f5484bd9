"""A step's live ``delta`` events: the first piece at once, then at most one per DELTA_INTERVAL with
the text since the last, the rest when the stream ends (agents/runtime/live.py)."""

from __future__ import annotations

import pytest

from agents.runtime import live
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

TEXT = "A reply streamed in many small pieces, as providers stream a token at a time. " * 4


@pytest.fixture(autouse=True)
def _fresh_live_buffer():
    live._LOCAL.clear()
    yield
    live._LOCAL.clear()


def deltas(run_id: str) -> list[str]:
    events = live.live_channel().read(run_id, None, 0)
    return [event.data["text"] for event in events if event.name == "delta"]


def test_pieces_that_arrive_together_are_published_as_the_first_and_the_rest(
    fake_provider, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(live, "DELTA_INTERVAL", 60.0)
    fake_provider.script(Reply(text=TEXT))
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    # The stream's redaction lets text through a word or a few at a time: 35 pieces (the test below).
    assert deltas(str(run.id)) == ["A ", TEXT[2:]]


def test_each_piece_is_published_when_the_interval_has_passed(
    fake_provider, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr(live, "DELTA_INTERVAL", 0.0)
    fake_provider.script(Reply(text=TEXT))
    run = run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))
    published = deltas(str(run.id))
    assert "".join(published) == TEXT
    assert len(published) == 35  # the pieces as the stream's redaction let them through
