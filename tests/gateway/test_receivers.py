"""API clients are receivers with a zone: previews, snippet and skill reads and run transcripts show a
part's text only when its class is within the client's trust zone, and never a part the send would
refuse. Skills named in a request must be enabled and visible; anything else answers like an
unknown id."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from agents.models import AgentRun
from catalog.models import ApiClient
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.factories import configuration_skills_set, skill_make, snippet_make
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error
from tools.registry import REGISTRY, Tool, ToolEffect

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/context/preview"
BODY = "Rotate the vault master key with the break-glass procedure."
RUNBOOK = "Restart the queue workers before paging the on-call engineer."


def parts_of(preview: dict) -> dict[str, dict]:
    return {part["identifier"]: part for message in preview["messages"] for part in message["parts"]}


def request_body(configuration, **fields):
    return {"configuration": configuration.identifier, "input": "Draft the note.", **fields}


@pytest.fixture
def secret_skill(tmp_path):
    return skill_make(
        tmp_path,
        name="vault-ops",
        description="Vault operations.",
        body=BODY,
        data_class=DataClass.SECRET_ADJACENT,
        ceiling=TrustZone.LOCAL,
    )


def test_a_client_without_skills_read_naming_a_secret_skill_gets_the_unknown_id_answer(
    fake_provider, make_caller, secret_skill
):
    configuration = fake_configuration(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,), trust_zone=TrustZone.LOCAL)

    hidden = caller.post(PREVIEW, request_body(configuration, skills=[secret_skill.pk]))
    unknown = caller.post(PREVIEW, request_body(configuration, skills=[secret_skill.pk + 1000]))

    assert BODY not in hidden.content.decode()
    error = assert_error(hidden, 400, "unknown_skills")
    other = assert_error(unknown, 400, "unknown_skills")
    assert error == {
        "code": "unknown_skills",
        "message": f"Unknown skills: {secret_skill.pk}.",
        "extra": {"skills": [secret_skill.pk]},
    }
    assert other["message"].replace(str(secret_skill.pk + 1000), "N") == error["message"].replace(
        str(secret_skill.pk), "N"
    )
    assert fake_provider.requests == []


@pytest.mark.parametrize(
    ("scopes", "zone", "enabled"),
    [
        (("configurations:use", "skills:read"), TrustZone.EXTERNAL_GLOBAL, True),  # above the zone
        (("configurations:use", "skills:read"), TrustZone.LOCAL, False),  # disabled
    ],
)
def test_invisible_or_disabled_named_skills_answer_like_unknown_ids_on_every_path(
    fake_provider, make_caller, tmp_path, scopes, zone, enabled
):
    skill = skill_make(
        tmp_path, body=BODY, data_class=DataClass.SOURCE_CODE, ceiling=TrustZone.LOCAL, enabled=enabled
    )
    configuration = fake_configuration(fake_provider)
    caller = make_caller(*scopes, "runs:create", configurations=(configuration,), trust_zone=zone)
    events = GovernanceEvent.objects.count()  # the skill's classification was recorded
    for path in (PREVIEW, "/api/v1/completions", "/api/v1/runs"):
        error = assert_error(
            caller.post(path, request_body(configuration, skills=[skill.pk])), 400, "unknown_skills"
        )
        assert error["extra"] == {"skills": [skill.pk]}
    assert (fake_provider.requests, AgentRun.objects.count(), GovernanceEvent.objects.count()) == (
        [],
        0,
        events,
    )


def test_a_visible_enabled_skill_may_be_named_and_is_shown_to_a_client_in_its_zone(
    fake_provider, make_caller, secret_skill
):
    configuration = fake_configuration(fake_provider)
    caller = make_caller(
        "configurations:use", "skills:read", configurations=(configuration,), trust_zone=TrustZone.LOCAL
    )
    preview = caller.post(PREVIEW, request_body(configuration, skills=[secret_skill.pk])).json()
    part = parts_of(preview)[secret_skill.identifier]
    assert (part["kind"], part["data_class"], part["withheld"]) == ("skill", "secret_adjacent", False)
    assert part["text"].endswith(BODY)


def test_the_preview_withholds_parts_above_the_clients_zone(fake_provider, make_caller, secret_skill):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL)
    configuration_skills_set(configuration, [secret_skill])
    outside = make_caller("configurations:use", configurations=(configuration,))
    context = [{"name": "ticket", "text": "Disk full on db-2.", "data_class": "system_diagnostics"}]

    preview = outside.post(PREVIEW, request_body(configuration, context=context)).json()

    # The reply would be derived from the secret skill, and its receiver is this external client.
    assert preview["would_send"] is False
    refused = [s for s in preview["decision"]["sources"] if s["outcome"] == "refused"]
    assert [(s["identifier"], s["by_receiver"]) for s in refused] == [(secret_skill.identifier, True)]
    assert BODY not in str(preview) and "Vault operations" not in str(preview)
    assert "Disk full" not in str(preview)
    parts = parts_of(preview)
    assert parts[secret_skill.identifier] == {
        "kind": "skill",
        "identifier": secret_skill.identifier,
        "data_class": "secret_adjacent",
        "withheld": True,
    }
    assert parts["context[0]"] == {
        "kind": "caller_context",
        "identifier": "context[0]",
        "data_class": "system_diagnostics",
        "withheld": True,
    }
    assert parts["task_input"]["text"] == "Draft the note."
    assert [p["kind"] for p in preview["messages"][1]["parts"]] == [
        "framing",
        "skill",
        "framing",
        "caller_context",
        "task_input",
    ]
    assert fake_provider.requests == []


def test_a_refused_part_is_never_shown_even_to_a_local_client(fake_provider, make_caller):
    snippet_make(
        identifier="runbook",
        text=RUNBOOK,
        tags=("ops",),
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
        ceiling=TrustZone.PRIVATE_HOSTED,
    )
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, snippet_tags=["ops"])
    local = make_caller("configurations:use", configurations=(configuration,), trust_zone=TrustZone.LOCAL)

    preview = local.post(PREVIEW, request_body(configuration)).json()

    assert preview["would_send"] is False
    assert RUNBOOK not in str(preview)
    assert parts_of(preview)["runbook"]["withheld"] is True
    assert parts_of(preview)[configuration.identifier]["text"] == "Be helpful."


def test_snippet_reads_leave_out_the_texts_of_snippets_above_the_clients_zone(make_caller):
    snippet_make(
        identifier="runbook",
        description="How we restart things.",
        text=RUNBOOK,
        data_class=DataClass.INTERNAL_CONFIGURATION,
        ceiling=TrustZone.EXTERNAL_EU,
    )
    snippet_make(identifier="tone", text="Warm and brief.")
    outside = make_caller("snippets:read")
    inside = make_caller("snippets:read", trust_zone=TrustZone.EXTERNAL_EU)

    listed = outside.get("/api/v1/snippets").json()["results"]
    detail = outside.get("/api/v1/snippets/runbook").json()

    assert RUNBOOK not in str(listed) + str(detail) and "How we restart" not in str(detail)
    assert {item["identifier"]: item["withheld"] for item in listed} == {"runbook": True, "tone": False}
    assert (detail["identifier"], detail["data_class"], detail["withheld"]) == (
        "runbook",
        "internal_configuration",
        True,
    )
    assert {"text", "description", "metadata"}.isdisjoint(detail)
    assert next(item for item in listed if item["identifier"] == "tone")["text"] == "Warm and brief."
    shown = inside.get("/api/v1/snippets/runbook").json()
    assert (shown["withheld"], shown["text"]) == (False, RUNBOOK)


def test_skill_reads_leave_out_the_texts_of_skills_above_the_clients_zone(make_caller, secret_skill):
    outside = make_caller("skills:read")
    inside = make_caller("skills:read", trust_zone=TrustZone.LOCAL)

    listed = outside.get("/api/v1/skills").json()["results"]
    detail = outside.get(f"/api/v1/skills/{secret_skill.pk}").json()

    assert BODY not in str(listed) + str(detail) and "Vault operations" not in str(listed) + str(detail)
    assert [(item["identifier"], item["withheld"]) for item in listed] == [(secret_skill.identifier, True)]
    assert (detail["data_class"], detail["withheld"]) == ("secret_adjacent", True)
    assert {"body", "description", "metadata", "injection_findings"}.isdisjoint(detail)
    shown = inside.get(f"/api/v1/skills/{secret_skill.pk}").json()
    assert (shown["withheld"], shown["body"]) == (False, BODY)


@pytest.fixture
def diagnostics_tool():
    tool = Tool(
        name="read_logs",
        description="Read the service logs.",
        parameters={"type": "object", "properties": {}},
        group="system",
        effect=ToolEffect.READ_ONLY,
        handler=lambda context, arguments: "log line: disk full on db-2",
        data_class=DataClass.SYSTEM_DIAGNOSTICS,
    )
    REGISTRY.register(tool)
    yield tool
    REGISTRY.unregister(tool.name)


def test_run_detail_leaves_out_tool_results_above_the_clients_zone(
    fake_provider, make_caller, diagnostics_tool, django_capture_on_commit_callbacks
):
    fake_provider.script(Reply.tools(("c1", "read_logs", {})), Reply(text="The disk is full."))
    configuration = fake_configuration(fake_provider, allowed_tools=["read_logs"])
    outside = make_caller("runs:read", configurations=(configuration,))
    inside = make_caller("runs:read", configurations=(configuration,), trust_zone=TrustZone.PRIVATE_HOSTED)
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    assert run.status == "completed"
    for caller in (outside, inside):
        AgentRun.objects.filter(pk=run.pk).update(api_client=caller.client)

        messages = caller.get(f"/api/v1/runs/{run.id}").json()["messages"]

        [result] = [m for m in messages if m["role"] == "tool"]
        assert (result["data_class"], result["withheld"]) == ("system_diagnostics", caller is outside)
        assert ("content" in result) is (caller is inside)
        # The answer derives from the tool result: it carries its class, so it is withheld alike.
        answer = messages[-1]
        assert (answer["data_class"], answer["withheld"]) == ("system_diagnostics", caller is outside)
        assert answer.get("content") == (None if caller is outside else "The disk is full.")
    AgentRun.objects.filter(pk=run.pk).update(api_client=outside.client)
    events = b"".join(outside.get(f"/api/v1/runs/{run.id}/events").streaming_content).decode()
    assert "disk full on db-2" not in events
    assert "The disk is full." not in events and '"answer_withheld":true' in events
    # The run was gated for its operator's zone (local): its text as it streamed is not for this client.
    assert "event: delta" not in events


def test_create_api_client_takes_a_trust_zone_and_defaults_to_the_strictest():
    call_command(
        "create_api_client", "inside", "--scope", "skills:read", "--trust-zone", "local", stdout=io.StringIO()
    )
    call_command("create_api_client", "outside", "--scope", "skills:read", stdout=io.StringIO())
    zones = dict(ApiClient.objects.values_list("name", "trust_zone"))
    assert zones == {"inside": "local", "outside": "external_global"}
