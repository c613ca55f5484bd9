"""What a governance change would do (editors/what_if.py): each kind of change, with the exact sends
and runs whose verdict it changes, and nothing saved."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from agents.runtime.pins import configuration_pins_take
from catalog.models import ApiClient, Configuration, Provider
from catalog.services import api_client_create
from editors.what_if import (
    ClientZoneChange,
    DeclassificationChange,
    ModelProviderChange,
    ProviderZoneChange,
    SourceChange,
    WhatIf,
    what_if,
)
from governance.classified import Classification
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, Enforcement, TrustZone
from skills.models import Skill
from snippets.models import Snippet
from snippets.selectors import snippet_select
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    """``newsletter`` is served in external_global, ``handbook`` in external_eu, ``ops`` locally;
    ``crm`` (external_global) may use newsletter and handbook, ``intranet`` (private_hosted) handbook.
    ``tone`` is public and selected by all three; ``runbook`` (internal configuration, at most
    external_eu) by handbook only."""
    eu = factories.provider_make(identifier="eu", trust_zone=TrustZone.EXTERNAL_EU)
    factories.snippet_make(identifier="tone", tags=("tone",))
    factories.snippet_make(
        identifier="runbook", tags=("ops",), data_class=DataClass.INTERNAL_CONFIGURATION,
        ceiling=TrustZone.EXTERNAL_EU,
    )  # fmt: skip
    newsletter = factories.configuration_make(
        identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"]
    )
    handbook = factories.configuration_make(
        identifier="handbook", model=factories.model_make(provider=eu), snippet_tags=["tone", "ops"]
    )
    factories.configuration_make(identifier="ops", zone=TrustZone.LOCAL, snippet_tags=["tone", "ops"])
    api_client_create(
        name="crm",
        scopes=["runs:create"],
        configurations=[newsletter, handbook],
        trust_zone=TrustZone.EXTERNAL_GLOBAL,
    )
    api_client_create(
        name="intranet",
        scopes=["runs:create"],
        configurations=[handbook],
        trust_zone=TrustZone.PRIVATE_HOSTED,
    )
    return eu


def sends(effect: WhatIf) -> list[tuple[str, str, str, str]]:
    return [(e.configuration, e.client, str(e.before), str(e.after)) for e in effect.sends]


def run_of(identifier: str, receiver_zone: str) -> AgentRun:
    configuration = Configuration.objects.get(identifier=identifier)
    pins = configuration_pins_take(
        configuration=configuration,
        snippets=snippet_select(tags=configuration.snippet_tags).snippets,
        request_skills=[],
    )
    return AgentRun.objects.create(
        configuration=configuration, input_text="Go.", input_data_class=DataClass.PUBLIC_CONTENT,
        receiver_zone=receiver_zone, pins=pins,
    )  # fmt: skip


def stricter(snippet: Snippet, data_class: str, ceiling: str) -> SourceChange:
    """The snippet's source with a new classification, on an unsaved copy."""
    changed = Snippet.objects.get(pk=snippet.pk)
    changed.classify(Classification(data_class, ceiling, Enforcement.ENFORCE))
    return SourceChange(changed.as_source())


def test_a_stricter_snippet_class_lists_the_sends_and_runs_it_would_refuse(world):
    newsletter_run = run_of("newsletter", TrustZone.EXTERNAL_GLOBAL)
    run_of("ops", TrustZone.LOCAL)
    tone = Snippet.objects.get(identifier="tone")
    events = GovernanceEvent.objects.count()

    effect = what_if(stricter(tone, DataClass.SOURCE_CODE, TrustZone.EXTERNAL_EU))

    assert sends(effect) == [  # handbook was refused to crm already: the runbook is above its zone
        ("newsletter", "", "allowed", "refused"),
        ("newsletter", "crm", "allowed", "refused"),
    ]
    assert effect.newly_refused == effect.sends
    assert effect.sends[0].after.refused == (
        "snippet:tone: external_global is less trusted than ceiling external_eu",
    )
    assert [(r.run, r.configuration, str(r.before), str(r.after)) for r in effect.runs] == [
        (newsletter_run.pk, "newsletter", "allowed", "refused")
    ]
    assert (effect.runs_examined, effect.runs_unreadable) == (2, 0)
    tone.refresh_from_db()
    assert (tone.data_class, tone.ceiling) == (DataClass.PUBLIC_CONTENT, TrustZone.EXTERNAL_GLOBAL)
    assert GovernanceEvent.objects.count() == events


def test_a_stricter_class_on_a_configuration_with_a_trusted_model_routes_instead(world):
    newsletter = Configuration.objects.get(identifier="newsletter")
    newsletter.trusted_model = factories.model_make(zone=TrustZone.LOCAL, model_id="on-premises")
    newsletter.save()

    effect = what_if(stricter(Snippet.objects.get(identifier="tone"), DataClass.SOURCE_CODE, ""))

    assert sends(effect) == [
        ("newsletter", "", "allowed", "allowed on trusted model on-premises"),
        ("newsletter", "crm", "allowed", "refused"),  # the receiver still may not read it
    ]
    assert effect.sends[1].after.refused == (
        "snippet:tone: the receiver (API client 'crm') is in zone external_global: "
        "external_global is less trusted than ceiling external_eu",
    )


HANDBOOK_REFUSED = [("handbook", "", "allowed", "refused"), ("handbook", "intranet", "allowed", "refused")]
NEWSLETTER_REFUSED = [("newsletter", "", "allowed", "refused"), ("newsletter", "crm", "allowed", "refused")]


@pytest.mark.parametrize(
    ("data_class", "ceiling", "sent_by", "expected"),
    [
        (DataClass.PUBLIC_CONTENT, TrustZone.PRIVATE_HOSTED, "newsletter", NEWSLETTER_REFUSED),  # ceiling
        (DataClass.SYSTEM_DIAGNOSTICS, TrustZone.PRIVATE_HOSTED, "handbook", HANDBOOK_REFUSED),  # class
    ],
)
def test_a_stricter_skill_lists_the_configurations_sending_it(
    world, tmp_path, data_class, ceiling, sent_by, expected
):
    skill = factories.skill_make(tmp_path, name="house-style")
    factories.configuration_skills_set(Configuration.objects.get(identifier=sent_by), [skill])
    changed = Skill.objects.get(pk=skill.pk)
    changed.classify(Classification(data_class, ceiling, Enforcement.ENFORCE))

    effect = what_if(SourceChange(changed.as_source()))

    assert sends(effect) == expected  # crm was refused handbook's runbook already, as a receiver
    assert effect.runs == ()
    assert Skill.objects.values_list("data_class", "ceiling").get(pk=skill.pk) == (
        DataClass.PUBLIC_CONTENT,
        TrustZone.EXTERNAL_GLOBAL,
    )


def test_a_stricter_snippet_ceiling_alone_refuses_every_zone_beyond_it(world):
    effect = what_if(
        stricter(Snippet.objects.get(identifier="tone"), DataClass.PUBLIC_CONTENT, "private_hosted")
    )

    assert sends(effect) == HANDBOOK_REFUSED + NEWSLETTER_REFUSED  # ops is local: unchanged


def test_a_provider_moved_to_a_less_trusted_zone_refuses_what_exceeds_it(world):
    handbook_run = run_of("handbook", TrustZone.PRIVATE_HOSTED)

    effect = what_if(ProviderZoneChange(row=world.pk, zone=TrustZone.EXTERNAL_GLOBAL))

    assert sends(effect) == HANDBOOK_REFUSED  # crm was refused the runbook already, as a receiver
    assert [(r.run, str(r.after), r.after.zone) for r in effect.runs] == [
        (handbook_run.pk, "refused", TrustZone.EXTERNAL_GLOBAL)
    ]
    assert Provider.objects.get(pk=world.pk).trust_zone == TrustZone.EXTERNAL_EU


def test_a_model_moved_to_a_provider_in_a_less_trusted_zone_refuses_the_same(world):
    handbook = Configuration.objects.get(identifier="handbook")
    elsewhere = factories.provider_make(identifier="global", trust_zone=TrustZone.EXTERNAL_GLOBAL)

    effect = what_if(ModelProviderChange(model=handbook.model_id, provider=elsewhere.pk))

    assert sends(effect) == HANDBOOK_REFUSED
    assert Configuration.objects.get(pk=handbook.pk).model.provider_id == world.pk


def test_a_provider_moved_to_a_more_trusted_zone_newly_allows(world):
    newsletter = Configuration.objects.get(identifier="newsletter")
    newsletter.snippet_tags = ["tone", "ops"]
    newsletter.save()

    effect = what_if(ProviderZoneChange(row=newsletter.model.provider_id, zone=TrustZone.EXTERNAL_EU))

    assert sends(effect) == [("newsletter", "", "refused", "allowed")]  # crm still may not read it


def test_a_client_moved_to_a_more_trusted_zone_newly_receives(world):
    crm = ApiClient.objects.get(name="crm")

    effect = what_if(ClientZoneChange(row=crm.pk, zone=TrustZone.EXTERNAL_EU))

    assert sends(effect) == [("handbook", "crm", "refused", "allowed")]
    assert [e.client_zone for e in effect.sends] == [TrustZone.EXTERNAL_EU]
    assert ApiClient.objects.get(pk=crm.pk).trust_zone == TrustZone.EXTERNAL_GLOBAL


def test_a_client_moved_to_a_less_trusted_zone_is_refused_and_stored_runs_keep_their_zone(world):
    intranet = ApiClient.objects.get(name="intranet")
    run_of("handbook", TrustZone.PRIVATE_HOSTED)

    effect = what_if(ClientZoneChange(row=intranet.pk, zone=TrustZone.EXTERNAL_GLOBAL))

    assert sends(effect) == [("handbook", "intranet", "allowed", "refused")]
    assert (effect.runs, effect.runs_examined) == ((), 1)


def test_declassifying_answers_newly_allows_and_clearing_it_refuses_again(world):
    handbook = Configuration.objects.get(identifier="handbook")

    declassified = what_if(DeclassificationChange(configuration=handbook.pk, zone=TrustZone.EXTERNAL_GLOBAL))
    assert sends(declassified) == [("handbook", "crm", "refused", "allowed")]
    Configuration.objects.filter(pk=handbook.pk).update(answers_deliverable_to=TrustZone.EXTERNAL_GLOBAL)
    cleared = what_if(DeclassificationChange(configuration=handbook.pk, zone=None))
    assert sends(cleared) == [("handbook", "crm", "allowed", "refused")]
    assert Configuration.objects.get(pk=handbook.pk).answers_deliverable_to == TrustZone.EXTERNAL_GLOBAL


def test_a_change_nobody_sends_has_no_effect_and_the_same_digest_twice(world):
    unused = factories.snippet_make(identifier="unused", tags=("elsewhere",))

    effect = what_if(stricter(unused, DataClass.SECRET_ADJACENT, TrustZone.LOCAL))

    assert (effect.sends, effect.runs, effect.has_effect) == ((), (), False)
    tone = stricter(Snippet.objects.get(identifier="tone"), DataClass.SOURCE_CODE, "")
    assert what_if(tone).digest == what_if(tone).digest != effect.digest


def test_recent_runs_are_bounded_newest_first(world):
    runs = [run_of("newsletter", TrustZone.EXTERNAL_GLOBAL) for _ in range(3)]

    effect = what_if(stricter(Snippet.objects.get(identifier="tone"), DataClass.SOURCE_CODE, ""), run_limit=2)

    assert [r.run for r in effect.runs] == [runs[2].pk, runs[1].pk]
    assert (effect.runs_examined, effect.run_limit) == (2, 2)
