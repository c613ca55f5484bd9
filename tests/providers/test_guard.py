"""The guard pass over each provider body: silent on a clean body, a late redaction otherwise.

Against the loopback fake and the real SDKs: what the guard lets through is what reached the wire.
Canaries are drawn at test time (tests/canaries.py).
"""

from __future__ import annotations

import random
from dataclasses import asdict

import pytest

from agents.runtime.redactions import CLEAN_TEXT_MAX_CHARS, RedactionMemo
from context_assembly.estimator import Estimator
from context_assembly.messages import Message, ToolCall, ToolSpec
from context_assembly.profiles import ModelProfile
from governance.guardrails.redaction import Finding, Redaction
from providers.adapters import ADAPTER_POOL
from providers.dispatch import complete_with_fallbacks
from providers.guard import LateRedaction, LateRedactionOverflow, WireGuard
from providers.openai_compatible import OpenAICompatibleAdapter
from providers.values import ProviderCall
from tests.canaries import generate_canaries
from tests.fakes.provider_server import Reply
from tests.providers.test_dispatch import CALL, anthropic_target, openai_target

CANARIES = {canary.kind: canary for canary in generate_canaries(seed=20261202)}
GITHUB = CANARIES["github_classic_pat"]
ESTIMATOR = Estimator(ModelProfile("gpt-4o", 128_000, 4_096, "o200k_base"))


def leaked(text: str, canary) -> list[str]:
    return [fragment for fragment in canary.fragments() if fragment in text]


def guard(reports: list[LateRedaction], *, budget: int = 100_000, scanner=None) -> WireGuard:
    return WireGuard(
        scanner=scanner or RedactionMemo(),
        estimator=ESTIMATOR,
        budget=budget,
        on_late_redaction=reports.append,
    )


@pytest.fixture(autouse=True)
def _fresh_pool():
    yield
    ADAPTER_POOL.clear()


def test_a_clean_body_goes_out_unchanged_and_unreported(fake_provider):
    config, _ = openai_target(fake_provider, "primary", 0)
    adapter = OpenAICompatibleAdapter(config)
    reports: list[LateRedaction] = []
    call, body = guard(reports).prepare(adapter, CALL)
    assert call is CALL
    assert body == adapter.request_body(CALL)
    assert reports == []


def test_a_secret_in_a_tool_description_is_redacted_recounted_and_reported(fake_provider):
    spec = ToolSpec(name="fetch", description=f"Fetch with {GITHUB.value}.", parameters={"type": "object"})
    call = ProviderCall(model_id="gpt-4o", messages=CALL.messages, tool_specs=(spec,), max_tokens=32)
    fake_provider.script(Reply(text="ok"))
    reports: list[LateRedaction] = []

    result = complete_with_fallbacks([openai_target(fake_provider, "primary", 0)], call, guard=guard(reports))

    assert result.answer.text == "ok"
    [request] = fake_provider.requests
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    assert request.body["tools"][0]["function"]["description"] == "Fetch with [REDACTED:github_token]."
    redacted_spec = ToolSpec(
        name="fetch", description="Fetch with [REDACTED:github_token].", parameters=spec.parameters
    )
    assert reports == [
        LateRedaction(
            target_index=0,
            provider="primary",
            counts={"github_token": 1},
            estimated=ESTIMATOR.count_request(call.messages, (redacted_spec,)),
            budget=100_000,
        )
    ]


def test_a_secret_the_anthropic_adapter_decodes_from_tool_arguments_never_reaches_its_wire(fake_provider):
    # The arguments' JSON text escapes every character of the secret; the Anthropic adapter decodes
    # it into the tool_use input it sends. (The per-part pass reads such escapes too; this call skips
    # it, so only the guard stands between the arguments and the wire.)
    escaped = "".join(f"\\u{ord(char):04x}" for char in GITHUB.value)
    arguments = '{"query": "' + escaped + '"}'
    call = ProviderCall(
        model_id="claude-x",
        messages=(
            Message(role="user", content="Look it up."),
            Message(role="assistant", content="", tool_calls=(ToolCall("t1", "search", arguments),)),
            Message(role="tool", content="nothing found", tool_call_id="t1"),
        ),
        max_tokens=32,
    )
    fake_provider.script(Reply(text="ok"))
    reports: list[LateRedaction] = []

    complete_with_fallbacks([anthropic_target(fake_provider, "claude", 0)], call, guard=guard(reports))

    [request] = fake_provider.requests
    assert leaked(fake_provider.wire_text(), GITHUB) == []
    tool_use = request.body["messages"][1]["content"][0]
    assert tool_use["input"] == {"query": "[REDACTED:github_token]"}
    assert [(r.provider, r.counts) for r in reports] == [("claude", {"github_token": 1})]


def test_a_late_redaction_over_the_budget_sends_nothing(fake_provider):
    word = "-".join(["marker", str(random.Random(5).randint(1000, 9999))])
    long_placeholder = "[REDACTED:" + " ".join(["long"] * 50) + "]"

    class Expanding:
        """Redacts one word into a placeholder of fifty words."""

        seen_clean: frozenset[str] = frozenset()

        def clean(self, text: str) -> bool:
            return word not in text

        def redact(self, text: str) -> Redaction:
            if word not in text:
                return Redaction(text=text, findings=())
            start = text.index(word)
            findings = (Finding("test", start, start + len(word)),)
            return Redaction(text=text.replace(word, long_placeholder), findings=findings)

    call = ProviderCall(model_id="m", messages=(Message(role="user", content=f"see {word}"),), max_tokens=8)
    before = ESTIMATOR.count_request(call.messages)
    reports: list[LateRedaction] = []

    with pytest.raises(LateRedactionOverflow) as raised:
        complete_with_fallbacks(
            [openai_target(fake_provider, "primary", 0)],
            call,
            guard=guard(reports, budget=before + 5, scanner=Expanding()),
        )

    assert fake_provider.requests == []
    assert raised.value.late == reports[0]
    assert reports[0].estimated > before + 5
    assert word not in str(asdict(reports[0]))


def test_the_memo_answers_clean_for_a_short_text_seen_clean_without_scanning_again():
    memo = RedactionMemo(max_clean_texts=1)
    assert memo.clean("twenty characters...") is True
    assert memo.clean(GITHUB.context) is False
    assert memo.clean_texts.peek("twenty characters...") is True
    assert memo.clean_texts.peek(GITHUB.context) is None
    assert memo.clean("x" * (CLEAN_TEXT_MAX_CHARS + 1)) is True
    assert len(memo.clean_texts) == 1
