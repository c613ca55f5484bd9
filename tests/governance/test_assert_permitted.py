"""The recording check: events for refused and observed sources, fail-closed when they cannot be written."""

from __future__ import annotations

import pytest

from governance.errors import ContextRefused
from governance.models import GovernanceEvent
from governance.policy import Source
from governance.services import EventContext, assert_permitted
from governance.vocabulary import DataClass, Enforcement, EnforcementMode, SourceKind, TrustZone

pytestmark = pytest.mark.django_db

CONTEXT = EventContext(
    correlation_id="req-1",
    provider="openai",
    model="gpt-4o",
    configuration="support",
    api_client="shop",
    run="r1",
    step=2,
)
PROMPT_TEXT = "the text of the prompt never reaches the log"


def test_allowed_sources_record_nothing():
    decision = assert_permitted(
        sources=[Source(SourceKind.SNIPPET, "tone", DataClass.PUBLIC_CONTENT)],
        zone=TrustZone.EXTERNAL_GLOBAL,
        context=CONTEXT,
        mode=EnforcementMode.PER_ROW,
    )
    assert decision.permitted is True
    assert GovernanceEvent.objects.count() == 0


def test_refusal_raises_naming_the_source_and_records_an_enforced_event():
    with pytest.raises(ContextRefused) as info:
        assert_permitted(
            sources=[
                Source(SourceKind.SYSTEM_PROMPT, "support", DataClass.PUBLIC_CONTENT),
                Source(SourceKind.SNIPPET, "db-runbook", DataClass.SYSTEM_DIAGNOSTICS),
            ],
            zone=TrustZone.EXTERNAL_EU,
            context=CONTEXT,
            mode=EnforcementMode.PER_ROW,
        )
    assert info.value.code == "context_refused"
    assert info.value.message == (
        "snippet 'db-runbook' may not be sent to zone external_eu: "
        "external_eu is less trusted than ceiling private_hosted."
    )
    event = GovernanceEvent.objects.get()
    assert (
        event.correlation_id,
        event.decision,
        event.outcome,
        event.source_kind,
        event.source_identifier,
        event.data_class,
        event.ceiling,
        event.zone,
        event.provider,
        event.model,
        event.configuration,
        event.api_client,
        event.run,
        event.step,
    ) == (
        "req-1",
        "context_blocked",
        "enforced",
        "snippet",
        "db-runbook",
        "system_diagnostics",
        "private_hosted",
        "external_eu",
        "openai",
        "gpt-4o",
        "support",
        "shop",
        "r1",
        2,
    )
    sources = info.value.extra["decision"]["sources"]
    assert [(s["identifier"], s["outcome"]) for s in sources] == [
        ("support", "allowed"),
        ("db-runbook", "refused"),
    ]


def test_observed_source_is_sent_and_recorded():
    decision = assert_permitted(
        sources=[Source(SourceKind.SKILL, "legacy", "", enforcement=Enforcement.OBSERVE)],
        zone=TrustZone.EXTERNAL_GLOBAL,
        context=CONTEXT,
        mode=EnforcementMode.PER_ROW,
    )
    assert decision.permitted is True
    event = GovernanceEvent.objects.get()
    assert (event.outcome, event.source_kind, event.source_identifier, event.data_class, event.reason) == (
        "observed",
        "skill",
        "legacy",
        "",
        "undeclared data class",
    )


def test_mode_defaults_to_the_setting(settings):
    settings.GOVERNANCE_ENFORCEMENT = "enforce-all-typo"
    with pytest.raises(ContextRefused):
        assert_permitted(
            sources=[
                Source(SourceKind.SKILL, "legacy", DataClass.SECRET_ADJACENT, enforcement=Enforcement.OBSERVE)
            ],
            zone=TrustZone.PRIVATE_HOSTED,
            context=CONTEXT,
        )
    assert GovernanceEvent.objects.get().outcome == "enforced"


@pytest.fixture
def broken_event_log(monkeypatch):
    def refuse_to_save(self, *args, **kwargs):
        raise RuntimeError("database is read-only")

    monkeypatch.setattr(GovernanceEvent, "save", refuse_to_save)


def test_refusal_stands_when_its_event_cannot_be_written(broken_event_log, caplog):
    with pytest.raises(ContextRefused):
        assert_permitted(
            sources=[Source(SourceKind.TASK_INPUT, "input", DataClass.SECRET_ADJACENT)],
            zone=TrustZone.EXTERNAL_GLOBAL,
            context=CONTEXT,
            mode=EnforcementMode.PER_ROW,
        )
    assert "governance event for task_input 'input' could not be written" in caplog.text


def test_observed_source_is_refused_when_its_event_cannot_be_written(broken_event_log):
    with pytest.raises(ContextRefused) as info:
        assert_permitted(
            sources=[
                Source(SourceKind.SNIPPET, "legacy", DataClass.SOURCE_CODE, enforcement=Enforcement.OBSERVE)
            ],
            zone=TrustZone.EXTERNAL_GLOBAL,
            context=CONTEXT,
            mode=EnforcementMode.PER_ROW,
        )
    assert info.value.message == "snippet 'legacy' was refused: its observed event could not be recorded."


def test_events_never_hold_content():
    field_names = {field.name for field in GovernanceEvent._meta.get_fields()}
    assert not field_names & {"text", "content", "body", "prompt", "message"}
    with pytest.raises(ContextRefused):
        assert_permitted(
            sources=[Source(SourceKind.CALLER_CONTEXT, "notes", DataClass.SECRET_ADJACENT)],
            zone=TrustZone.EXTERNAL_GLOBAL,
            context=CONTEXT,
            mode=EnforcementMode.PER_ROW,
        )
    row = GovernanceEvent.objects.values().get()
    assert all(PROMPT_TEXT not in str(value) for value in row.values())
