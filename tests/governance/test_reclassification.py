"""Declassification is privileged and every classification change is recorded, for every classified row."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from catalog.models import Configuration
from catalog.services import configuration_save
from governance.actors import Actor
from governance.classified import Classification
from governance.errors import ReclassifyForbidden
from governance.models import GovernanceEvent
from governance.services import enforcement_promote
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill
from skills.services import skill_classify
from snippets.models import Snippet
from snippets.services import snippet_create, snippet_save, snippet_update
from tests.factories import configuration_make, skill_make, snippet_make

pytestmark = pytest.mark.django_db

EDITOR = Actor.system("editor-process")
CLASSIFIER = Actor.system("classifier-process", may_declassify=True)


def c(data_class: str, ceiling: str, enforcement: str = "enforce") -> Classification:
    return Classification(data_class=data_class, ceiling=ceiling, enforcement=enforcement)


@pytest.mark.parametrize(
    ("before", "after", "loosened"),
    [
        (c("secret_adjacent", "local"), c("public_content", "external_global"), ("data_class", "ceiling")),
        (c("source_code", "external_eu"), c("public_content", "external_eu"), ("data_class",)),
        (c("public_content", "local"), c("public_content", "external_eu"), ("ceiling",)),
        (c("public_content", "local"), c("public_content", "local", "observe"), ("enforcement",)),
        # Clearing a declaration loosens it; a corrupt stored value reads as the strictest.
        (c("source_code", "local", "observe"), c("", "", "observe"), ("data_class", "ceiling")),
        (c("bogus", "bogus"), c("system_diagnostics", "private_hosted"), ("data_class", "ceiling")),
        # An empty ceiling means the class's own: declaring that same ceiling changes nothing.
        (c("source_code", ""), c("source_code", "external_eu"), ()),
        (c("source_code", ""), c("public_content", "external_global"), ("data_class", "ceiling")),
        # Stricter, or declaring what a legacy observe row never declared, loosens nothing.
        (c("public_content", "external_global"), c("secret_adjacent", "local"), ()),
        (c("public_content", "local", "observe"), c("public_content", "local"), ()),
        (c("", "", "observe"), c("public_content", "external_global", "observe"), ()),
    ],
)
def test_what_loosens_a_classification(before, after, loosened):
    assert before.loosened_by(after) == loosened


def test_a_declassification_without_the_privilege_stores_nothing(tmp_path):
    snippet = snippet_make(
        identifier="runbook", data_class=DataClass.SECRET_ADJACENT, ceiling=TrustZone.LOCAL
    )
    skill = skill_make(tmp_path, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.LOCAL)
    versions = (Snippet.history.count(), Skill.history.count())
    events = GovernanceEvent.objects.count()  # the factory classified the ingested skill

    with pytest.raises(ReclassifyForbidden) as snippet_refusal:
        snippet_update(snippet=snippet, actor=EDITOR, text="New text.", data_class=DataClass.PUBLIC_CONTENT)
    with pytest.raises(ReclassifyForbidden) as skill_refusal:
        skill_classify(
            skill=skill, data_class="source_code", ceiling="local", enforcement="observe", actor=EDITOR
        )

    assert snippet_refusal.value.extra["fields"] == ["data_class"]
    assert skill_refusal.value.extra["fields"] == ["enforcement"]
    assert Snippet.objects.values_list("text", "data_class").get(pk=snippet.pk) == (
        f"Text of snippet {snippet.name.split()[-1]}.",
        "secret_adjacent",
    )
    assert Skill.objects.get(pk=skill.pk).enforcement == Enforcement.ENFORCE
    assert (Snippet.history.count(), Skill.history.count()) == versions
    assert GovernanceEvent.objects.count() == events


def test_a_configuration_prompt_is_guarded_under_its_prefixed_fields():
    configuration = configuration_make(
        identifier="assistant",
        system_prompt_data_class=DataClass.INTERNAL_CONFIGURATION,
        system_prompt_ceiling=TrustZone.EXTERNAL_EU,
    )
    configuration.system_prompt_ceiling = TrustZone.EXTERNAL_GLOBAL
    configuration.system_prompt_data_class = DataClass.EDITOR_CONTENT

    with pytest.raises(ReclassifyForbidden) as refusal:
        configuration_save(configuration=configuration, actor=EDITOR)

    assert refusal.value.extra["fields"] == ["system_prompt_data_class", "system_prompt_ceiling"]
    assert Configuration.objects.values_list("system_prompt_data_class", "system_prompt_ceiling").get() == (
        "internal_configuration",
        "external_eu",
    )
    assert GovernanceEvent.objects.count() == 0

    configuration_save(configuration=configuration, actor=CLASSIFIER)

    event = GovernanceEvent.objects.get()
    assert (
        event.decision,
        event.source_kind,
        event.source_identifier,
        event.configuration,
        event.reason,
    ) == (
        "reclassified",
        "system_prompt",
        "assistant",
        "",
        "internal_configuration/external_eu/enforce -> editor_content/external_global/enforce"
        " by classifier-process",
    )


def test_every_change_of_a_classification_is_an_event_and_promotion_too(tmp_path):
    skill = skill_make(tmp_path, data_class=DataClass.PUBLIC_CONTENT, ceiling=TrustZone.EXTERNAL_GLOBAL)
    legacy = snippet_make(identifier="legacy", enforcement=Enforcement.OBSERVE)
    setup = list(GovernanceEvent.objects.values_list("id", flat=True))  # the factory's own classification

    skill_classify(
        skill=skill, data_class="source_code", ceiling="external_eu", enforcement="enforce", actor=EDITOR
    )
    enforcement_promote(rows=[legacy], actor=EDITOR)

    assert list(
        GovernanceEvent.objects.exclude(id__in=setup)
        .order_by("id")
        .values_list("source_kind", "outcome", "data_class", "ceiling", "reason")
    ) == [
        (
            "skill",
            "enforced",
            "source_code",
            "external_eu",
            "public_content/external_global/enforce -> source_code/external_eu/enforce by editor-process",
        ),
        (
            "snippet",
            "enforced",
            "public_content",
            "external_global",
            "public_content/external_global/observe -> public_content/external_global/enforce by editor-process",
        ),
    ]


def test_a_new_row_always_enforces_whoever_creates_it():
    snippet = Snippet(
        identifier="new", name="New", text="t", data_class="", ceiling="", enforcement=Enforcement.OBSERVE
    )

    with pytest.raises(ValidationError) as refusal:
        snippet_save(snippet=snippet, actor=CLASSIFIER, reason="created")

    assert refusal.value.message_dict == {
        "enforcement": ["A new row enforces: observe is only for rows that predate classification."]
    }
    assert Snippet.objects.count() == 0
    created = snippet_create(
        actor=EDITOR, identifier="other", name="O", text="t", data_class="public_content", ceiling="local"
    )
    assert created.enforcement == Enforcement.ENFORCE
    assert GovernanceEvent.objects.count() == 0
