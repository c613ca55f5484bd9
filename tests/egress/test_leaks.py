"""Leaks the egress properties found, each pinned by a minimal example.

1. A JSON text writes a character as an escape (``\\u200b``). A token with an invisible character inside
it, written so, passed redaction: the redactor saw six ASCII characters where a reader (or a model
decoding the JSON) sees nothing. A provider's tool call carries its arguments as JSON text, so such a
token in a call's arguments was stored in the run's transcript and sent back to the provider at the
next step; a caller's context item holding JSON went out the same way.

2. A tool result is shown to an API client by its class. ``snippets_by_tag`` returns every snippet the
step's zone admits, under the tool's own class: a run on a trusted model showed a client in a less
trusted zone snippets classified above that zone.

3. The catalogue reads (snippets, skills) answered their stored texts as stored: a secret an editor
left in a snippet's text or name, or in a skill's body, went to every client with ``snippets:read``
or ``skills:read`` whose zone admits the row.
"""

from __future__ import annotations

import json

import pytest
from django.test import Client

from agents.models import RunMessage
from catalog.models import ApiClient
from catalog.tokens import token_digest
from governance.guardrails.redaction import redact
from tests.agents.runs import fake_configuration, run_to_end
from tests.egress.receivers import canaries_in
from tests.egress.world import BY_KIND
from tests.factories import configuration_skills_set, skill_make, snippet_make
from tests.fakes.provider_server import Reply

GITHUB = BY_KIND["github_classic_pat"]
PEM_CONTEXT = BY_KIND["rsa_private_key"].context
STRIPE = BY_KIND["stripe_live_secret_key"]
INVISIBLE = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")


def hidden(canary, character: str, at: int = 6) -> str:
    """The canary's line with ``character`` inside its value, ``at`` characters in (past the prefix,
    where no pattern can match the short head alone)."""
    return canary.context.replace(canary.value, canary.value[:at] + character + canary.value[at:])


@pytest.mark.parametrize("character", INVISIBLE)
@pytest.mark.parametrize("canary", [GITHUB, STRIPE], ids=["github", "stripe"])
def test_a_token_hidden_by_an_escaped_invisible_character_is_redacted(canary, character):
    assert redact(hidden(canary, character)).text.count("[REDACTED:") == 1  # as the redactor reads it
    escaped = json.dumps({"note": hidden(canary, character)})
    assert f"\\u{ord(character):04x}" in escaped

    redacted = redact(escaped)

    assert canaries_in(redacted.text) == {}
    assert redacted.text.count("[REDACTED:") == 1
    assert redacted.text.startswith('{"note": "' + canary.context[:5])


def test_an_escaped_character_that_hides_nothing_changes_nothing():
    text = json.dumps({"note": "caf\u00e9 \u2014 line\u2028break \u00e9t\u00e9"})
    assert redact(text).text == text


@pytest.mark.django_db
def test_a_token_hidden_in_a_tool_calls_arguments_is_neither_stored_nor_sent_back(
    fake_provider, django_capture_on_commit_callbacks
):
    note = hidden(GITHUB, "\u200b")
    fake_provider.script(
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["ops"], "note": note})), Reply(text="done")
    )
    configuration = fake_configuration(fake_provider, allowed_tool_groups=["content"])

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    assert run.status == "completed"
    [call] = RunMessage.objects.get(run=run, role="assistant", step_index=0).tool_calls
    assert canaries_in(call["arguments"]) == {}
    assert "[REDACTED:github_token]" in json.loads(call["arguments"])["note"]
    assert len(fake_provider.requests) == 2
    assert canaries_in(fake_provider.wire_text()) == {}


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data_class", "ceiling"), [("secret_adjacent", "local"), ("editor_content", "external_eu")]
)
def test_a_snippet_a_tool_returned_is_withheld_from_a_client_outside_its_ceiling(
    fake_provider, django_capture_on_commit_callbacks, data_class, ceiling
):
    """``snippets_by_tag`` returns the snippets the step's zone admits; its result must then be shown
    to an API client only if the client's zone admits them too, not by the tool's own class; and no
    later step of the client's run sends it, since the client receives that step's reply."""
    snippet_make(identifier="runbook", text="Restart with mkrunbookx.", data_class=data_class, ceiling=ceiling,
                 tags=("ops",))  # fmt: skip
    configuration = fake_configuration(fake_provider, zone="local", allowed_tool_groups=["content"])
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["ops"]})), Reply(text="done"))
    token = "gca_egress-leak-" + "x" * 20
    client = ApiClient.objects.create(
        name="outside", token_prefix=token[:10], token_digest=token_digest(token),
        scopes=["runs:create", "runs:read"], trust_zone="external_global",
    )  # fmt: skip
    client.configurations.add(configuration)
    http, headers = Client(), {"Authorization": f"Bearer {token}"}
    body = {"configuration": configuration.identifier, "input": "Restart the service."}

    with django_capture_on_commit_callbacks(execute=True):
        created = http.post("/api/v1/runs", body, content_type="application/json", headers=headers)
    detail = http.get(created.headers["Location"], headers=headers)

    # The tool's result is above the client's zone, and the client receives what the next step
    # derives from it: that step is refused before its send (DESIGN §4, "Information flow").
    assert "mkrunbookx" not in fake_provider.wire_text() and len(fake_provider.requests) == 1
    assert (detail.json()["termination_reason"], detail.json()["error"]["code"]) == (
        "policy_denied",
        "context_refused",
    )
    [result] = [message for message in detail.json()["messages"] if message["role"] == "tool"]
    assert result["withheld"] is True
    assert "mkrunbookx" not in detail.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("data_class", "ceiling", "covering"),
    [
        ("secret_adjacent", "local", "secret_adjacent"),
        ("editor_content", "external_eu", "source_code"),
        ("public_content", "private_hosted", "system_diagnostics"),
        ("editor_content", "external_global", "editor_content"),
    ],
)
def test_a_tool_result_is_classified_to_cover_the_rows_it_holds(
    fake_provider, django_capture_on_commit_callbacks, tmp_path, data_class, ceiling, covering
):
    """A tool result's class is all a later receiver sees of it: it must admit no zone that the
    ceiling of a snippet or skill it holds does not admit."""
    snippet_make(identifier="runbook", text="Restart.", data_class=data_class, ceiling=ceiling, tags=("ops",))
    skill = skill_make(tmp_path, name="restarts", data_class=data_class, ceiling=ceiling)
    configuration = fake_configuration(
        fake_provider, zone="local", allowed_tool_groups=["content", "skills"], skill_mode="progressive"
    )
    configuration_skills_set(configuration, [skill])
    fake_provider.script(
        Reply.tools(("c1", "snippets_by_tag", {"tags": ["ops"]}), ("c2", "load_skill", {"name": "restarts"})),
        Reply(text="done"),
    )

    run = run_to_end(django_capture_on_commit_callbacks, configuration)

    results = RunMessage.objects.filter(run=run, role="tool").order_by("position")
    assert [(m.tool_name, m.data_class) for m in results] == [
        ("snippets_by_tag", covering),
        ("load_skill", covering),
    ]
    assert "Restart." in results[0].content


def _reader(*scopes: str) -> tuple[Client, dict[str, str]]:
    token = "gca_egress-reader-" + "x" * 20
    ApiClient.objects.create(
        name="reader", token_prefix=token[:10], token_digest=token_digest(token), scopes=list(scopes),
        trust_zone="local",
    )  # fmt: skip
    return Client(), {"Authorization": f"Bearer {token}"}


@pytest.mark.django_db
def test_catalogue_reads_answer_no_secret_an_editor_left_in_a_row(tmp_path):
    snippet_make(identifier="billing", name=f"Billing {GITHUB.value}", text=f"Setup:\n{STRIPE.context}")
    skill = skill_make(tmp_path, name="deploys", body=f"# Steps\n\n{PEM_CONTEXT}\n")
    http, headers = _reader("snippets:read", "skills:read")

    answers = [
        http.get(path, headers=headers)
        for path in (
            "/api/v1/snippets",
            "/api/v1/snippets/billing",
            "/api/v1/skills",
            f"/api/v1/skills/{skill.pk}",
        )
    ]

    assert [answer.status_code for answer in answers] == [200, 200, 200, 200]
    for answer in answers:
        assert canaries_in(answer.content.decode()) == {}
    assert answers[1].json()["name"] == "Billing [REDACTED:github_token]"
    assert "[REDACTED:" in answers[1].json()["text"]
    assert "[REDACTED:private_key]" in answers[3].json()["body"]
