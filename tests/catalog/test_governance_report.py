"""``governance_report``: which observe rows would be refused under enforce, where."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from catalog.services import answers_declassify
from governance.actors import Actor
from governance.vocabulary import DataClass, Enforcement, TrustZone
from tests.factories import configuration_make, snippet_make

pytestmark = pytest.mark.django_db


def report(*args: str) -> str:
    out = StringIO()
    call_command("governance_report", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def observed_configurations():
    configuration_make(
        identifier="legacy-diagnostics",
        zone=TrustZone.LOCAL,
        fallback_zones=(TrustZone.EXTERNAL_EU,),
        system_prompt_data_class=DataClass.SYSTEM_DIAGNOSTICS,
        system_prompt_ceiling=TrustZone.PRIVATE_HOSTED,
        system_prompt_enforcement=Enforcement.OBSERVE,
    )
    configuration_make(
        identifier="legacy-undeclared",
        zone=TrustZone.LOCAL,
        system_prompt_data_class="",
        system_prompt_ceiling="",
        system_prompt_enforcement=Enforcement.OBSERVE,
    )
    configuration_make(
        identifier="legacy-public",
        zone=TrustZone.EXTERNAL_GLOBAL,
        system_prompt_data_class=DataClass.PUBLIC_CONTENT,
        system_prompt_ceiling=TrustZone.EXTERNAL_GLOBAL,
        system_prompt_enforcement=Enforcement.OBSERVE,
    )
    configuration_make(
        identifier="enforced",
        system_prompt_data_class=DataClass.SECRET_ADJACENT,
        system_prompt_ceiling=TrustZone.LOCAL,
    )


def test_json_report_lists_each_observe_row_with_its_verdict(observed_configurations):
    data = json.loads(report("--json"))
    assert data["summary"] == {"observe_rows": 3, "would_refuse": 1, "personal_data_findings": 0}
    assert [
        (r["identifier"], r["configuration"], r["zone"], r["data_class"], r["would_be"]) for r in data["rows"]
    ] == [
        ("legacy-diagnostics", "legacy-diagnostics", "external_eu", "system_diagnostics", "refused"),
        ("legacy-public", "legacy-public", "external_global", "public_content", "allowed"),
        ("legacy-undeclared", "legacy-undeclared", "local", "", "allowed"),
    ]
    assert data["rows"][0]["reason"] == "external_eu is less trusted than ceiling private_hosted"


def test_text_report_is_a_table_with_a_summary(observed_configurations):
    lines = report().splitlines()
    assert lines[0].split() == [
        "kind",
        "identifier",
        "data_class",
        "ceiling",
        "configuration",
        "zone",
        "would_be",
    ]
    assert lines[2].split() == [
        "system_prompt",
        "legacy-diagnostics",
        "system_diagnostics",
        "private_hosted",
        "legacy-diagnostics",
        "external_eu",
        "refused",
    ]
    assert lines[4].split() == [
        "system_prompt",
        "legacy-undeclared",
        "(undeclared)",
        "(undeclared)",
        "legacy-undeclared",
        "local",
        "allowed",
    ]
    assert lines[-1] == "3 observe row(s); 1 would be refused under enforce."


def test_report_without_observe_rows_says_so():
    configuration_make()
    assert report() == "No observe rows: every classified source is enforced.\n"
    assert json.loads(report("--json")) == {
        "rows": [],
        "summary": {"observe_rows": 0, "would_refuse": 0, "personal_data_findings": 0},
        "declassified_answers": [],
        "personal_data": [],
    }


def test_the_report_names_every_configuration_whose_answers_are_declassified():
    configuration = configuration_make()
    answers_declassify(
        configuration=configuration,
        zone=TrustZone.EXTERNAL_EU,
        actor=Actor.system("test", may_declassify=True),
    )
    text = report()
    assert (
        text.splitlines()[0]
        == f"Declassified: {configuration.identifier}'s answers are deliverable to external_eu."
    )
    assert json.loads(report("--json"))["declassified_answers"] == [
        {"configuration": configuration.identifier, "zone": "external_eu"}
    ]


def test_observe_snippets_are_reported_for_each_configuration_that_selects_them():
    snippet_make(
        identifier="runbook",
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
        enforcement=Enforcement.OBSERVE,
    )
    configuration_make(identifier="internal", zone=TrustZone.PRIVATE_HOSTED, snippet_tags=["ops"])
    configuration_make(identifier="public", zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["OPS"])
    data = json.loads(report("--json"))
    assert [(r["kind"], r["identifier"], r["configuration"], r["would_be"]) for r in data["rows"]] == [
        ("snippet", "runbook", "internal", "allowed"),
        ("snippet", "runbook", "public", "refused"),
    ]
    assert data["summary"] == {"observe_rows": 1, "would_refuse": 1, "personal_data_findings": 0}
