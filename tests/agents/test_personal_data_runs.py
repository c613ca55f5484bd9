"""A run of a pseudonymizing configuration: every step sends the run's placeholders (the same value,
the same placeholder, from step to step, though nothing keeps the mapping), a tool that runs here gets
the values in its arguments, and the run's answer carries them back to its caller. A run of a
configuration that refuses personal data ends ``policy_denied`` with nothing sent."""

from __future__ import annotations

import json

import pytest

from agents.models import RunMessage, ToolCallRecord
from agents.runtime.pseudonyms import PLACEHOLDER, Pseudonyms
from governance.guardrails.personal_data import PersonalDataKind, find_personal_data
from governance.vocabulary import PersonalDataOutcome, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply
from tests.personal_data_corpus import labelled_corpus

pytestmark = pytest.mark.django_db

KEY = b"r" * 32
EMAIL = next(item for item in labelled_corpus(seed=42, per_kind=1) if item.kind == PersonalDataKind.EMAIL)
VALUE = EMAIL.value.lower()  # tags are read in lower case: the tool's answer repeats it so
INPUT = f"Find the snippets tagged {VALUE} and tell me what they say."


def placeholder_of(text: str) -> str:
    sent = Pseudonyms(KEY).replaced(text, find_personal_data(text), restorable=True)
    (placeholder,) = PLACEHOLDER.findall(sent)
    return placeholder


def test_a_runs_steps_share_placeholders_and_its_tool_gets_the_values(
    fake_provider, django_capture_on_commit_callbacks, monkeypatch
):
    monkeypatch.setattr("agents.runtime.screening.run_key", lambda scope: KEY)
    placeholder = placeholder_of(INPUT)
    fake_provider.script(
        Reply.tools(("call_1", "snippets_by_tag", {"tags": [placeholder]})),
        Reply(text=f"Nothing is tagged {placeholder}."),
    )
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, personal_data_outcome=PersonalDataOutcome.PSEUDONYMIZE
    )

    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)

    assert (run.status, run.termination_reason) == ("completed", "completed")
    bodies = [json.dumps(body) for body in fake_provider.bodies()]
    assert len(bodies) == 2
    assert all(VALUE not in body for body in bodies)
    assert all(placeholder in body for body in bodies)  # the same placeholder at both steps
    assert ToolCallRecord.objects.get(run=run).status == "completed"
    tool_result = RunMessage.objects.get(run=run, role="tool").content
    assert VALUE in tool_result  # the tool ran with the value, not the placeholder
    answer = RunMessage.objects.filter(run=run, role="assistant").order_by("-id").first().content
    assert answer == f"Nothing is tagged {VALUE}."


def test_a_run_that_refuses_personal_data_sends_nothing(fake_provider, django_capture_on_commit_callbacks):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)

    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text=INPUT)

    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "policy_denied",
        "context_refused",
    )
    assert fake_provider.requests == []
