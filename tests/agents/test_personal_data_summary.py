"""A compaction's summary is a send too: the turns it summarises are screened as every part is, so a
turn holding personal data is raised and the summary model's zone decides it (decision 0039)."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from agents.runtime.request import TranscriptEntry
from agents.runtime.summary import summary_plan
from context_assembly.messages import Message
from governance.guardrails.personal_data import PersonalDataKind
from governance.vocabulary import DataClass, TrustZone
from tests import factories
from tests.personal_data_corpus import labelled_corpus

pytestmark = pytest.mark.django_db

SSN = next(item for item in labelled_corpus(seed=45, per_kind=1) if item.kind == PersonalDataKind.US_SSN)


def test_a_summarised_turn_holding_personal_data_is_raised():
    configuration = factories.configuration_make(identifier="support", zone=TrustZone.EXTERNAL_GLOBAL)
    run = AgentRun.objects.create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT,
        receiver_zone=TrustZone.EXTERNAL_GLOBAL,
    )  # fmt: skip
    entries = [
        TranscriptEntry(Message(role="assistant", content=SSN.text), DataClass.PUBLIC_CONTENT),
        TranscriptEntry(Message(role="assistant", content="Nothing personal."), DataClass.PUBLIC_CONTENT),
    ]

    plan = summary_plan(run=run, configuration=configuration, entries=entries)

    turns = [s for s in plan.sources if s.kind == "assistant_turn"]
    assert [(s.data_class, s.declared_class) for s in turns] == [
        ("personal_data", "public_content"),
        ("public_content", None),
    ]
    task = next(s for s in plan.sources if s.kind == "task_input")
    assert (task.data_class, task.personal_data) == ("personal_data", (("us_ssn", 1),))
