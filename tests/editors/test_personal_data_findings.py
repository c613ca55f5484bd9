"""The readiness report and the what-if count the personal data editors' sources hold, and decide each
such source as a send decides it: raised to ``personal_data`` (decision 0039). Values are generated
at test time (tests/personal_data_corpus)."""

from __future__ import annotations

import json

import pytest

from catalog.readiness import readiness_report
from editors.what_if import ProviderZoneChange, what_if
from governance.guardrails.personal_data import PersonalDataKind
from governance.vocabulary import DataClass, TrustZone
from tests import factories
from tests.personal_data_corpus import labelled_corpus

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("on_both_databases")]

IBAN = next(item for item in labelled_corpus(seed=43, per_kind=1) if item.kind == PersonalDataKind.IBAN)


@pytest.fixture
def newsletter():
    factories.snippet_make(identifier="tone", tags=("tone",), text="Warm and brief.")
    factories.snippet_make(
        identifier="billing",
        tags=("tone",),
        text=f"Refunds go to {IBAN.text}",
        data_class=DataClass.EDITOR_CONTENT,
        personal_data_override=True,  # an editor kept the class over the finding
    )
    return factories.configuration_make(
        identifier="newsletter", zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"]
    )


def test_the_readiness_report_counts_findings_and_decides_them_raised(newsletter):
    report = readiness_report(configurations=[newsletter]).as_dict()

    assert report["summary"]["personal_data_findings"] == 1
    assert report["personal_data"] == [
        {
            "kind": "snippet",
            "identifier": "billing",
            "data_class": "editor_content",
            "configuration": "newsletter",
            "zone": "external_global",
            "found": {"iban": 1},
            "would_be": "refused",
        }
    ]
    assert IBAN.value not in json.dumps(report)


def test_the_what_if_counts_findings_and_decides_sends_raised(newsletter):
    newsletter.model.provider.trust_zone = TrustZone.EXTERNAL_EU
    newsletter.model.provider.save()

    effect = what_if(ProviderZoneChange(row=newsletter.model.provider_id, zone=TrustZone.EXTERNAL_GLOBAL))

    assert effect.personal_data_findings == 1
    # editor_content may go to external_global; the IBAN it holds may not.
    assert [(e.configuration, str(e.before), str(e.after)) for e in effect.sends] == [
        ("newsletter", "allowed", "refused")
    ]


def test_the_what_if_counts_a_snippet_two_configurations_send_once(newsletter):
    factories.configuration_make(identifier="digest", zone=TrustZone.EXTERNAL_EU, snippet_tags=["tone"])

    effect = what_if(ProviderZoneChange(row=newsletter.model.provider_id, zone=TrustZone.EXTERNAL_EU))

    assert effect.personal_data_findings == 1  # one IBAN, in the one billing snippet both send
