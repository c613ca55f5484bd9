"""Leaks the egress properties found, each pinned by a minimal example.

1. A JSON text writes a character as an escape (``\\u200b``). A token with an invisible character inside
it, written so, passed redaction: the redactor saw six ASCII characters where a reader (or a model
decoding the JSON) sees nothing. A provider's tool call carries its arguments as JSON text, so such a
token in a call's arguments was stored in the run's transcript and sent back to the provider at the
next step; a caller's context item holding JSON went out the same way.
"""

from __future__ import annotations

import json

import pytest

from agents.models import RunMessage
from governance.guardrails.redaction import redact
from tests.agents.runs import fake_configuration, run_to_end
from tests.egress.receivers import canaries_in
from tests.egress.world import BY_KIND
from tests.fakes.provider_server import Reply

GITHUB = BY_KIND["github_classic_pat"]
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
