"""Helpers for compaction tests: a long tool-heavy task for a small window, served by the loopback
fake, and a summary model with a fake of its own (what it was sent is seen apart from the run's
model)."""

from __future__ import annotations

import json
from decimal import Decimal

from agents.models import AgentRun, AgentStep
from catalog.models import Configuration, LlmModel, ProviderKind
from context_assembly.encodings import get_encoding
from governance.vocabulary import DataClass, TrustZone
from tests.agents.runs import fake_configuration
from tests.factories import model_make, provider_make, snippet_make
from tests.fakes.provider_server import ENCODING, FakeProvider, Reply

WORDS = ("amber", "basalt", "cedar", "delta", "ember", "fjord", "granite", "harbour", "iris", "juniper")
CALLS = 6
SUMMARY = "Notes 0 to 2 were read: amber, basalt and cedar lists."
SECRET_SUMMARY = "Notes 0 to 2 were read; notes 1 are restricted."
# 2,000-token window, 200 reserved for the reply, 3% margin: a budget of 1,740 the six results exceed.
SMALL_WINDOW = {"model_context_window": 2000, "model_max_output_tokens": 200}


def notes(*, secret: int | None = None) -> list[str]:
    """Six snippets of about 270 tokens, one per tag ``t0``..``t5``; the tool's result text of each."""
    results = []
    for i in range(CALLS):
        text = " ".join(f"{WORDS[(i + j) % len(WORDS)]}{j}" for j in range(120))
        fields = {}
        if i == secret:
            fields = {"data_class": DataClass.SECRET_ADJACENT, "ceiling": TrustZone.LOCAL}
        snippet_make(identifier=f"notes-{i}", name=f"Notes {i}", text=text, tags=(f"t{i}",), **fields)
        results.append(f"Notes {i}:\n{text}")
    return results


def tool_heavy_script(fake: FakeProvider) -> None:
    fake.script(
        *[Reply.tools((f"call_{i}", "snippets_by_tag", {"tags": [f"t{i}"]})) for i in range(CALLS)],
        Reply(text="All notes read."),
    )


def compacting_configuration(fake: FakeProvider, strategy: str, **fields: object) -> Configuration:
    settings = {"compaction_threshold": 0.5, "compaction_keep": 2, **fields}
    return fake_configuration(
        fake,
        max_iterations=20,
        context_strategy=strategy,
        context_usage_note="tail",
        **SMALL_WINDOW,
        **settings,
    )


def summary_model_on(fake: FakeProvider, zone: str, context_window: int = 8000) -> LlmModel:
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake.openai_base_url,
        trust_zone=zone,
        timeout_seconds=5,
        max_retries=0,
    )
    return model_make(
        provider=provider,
        model_id="gpt-4o-mini",
        context_window=context_window,
        max_output_tokens=500,
        input_price_per_million=Decimal("2.00"),
        output_price_per_million=Decimal("8.00"),
    )


def steps_of(run: AgentRun) -> list[tuple[int, str, str]]:
    return list(AgentStep.objects.filter(run=run).order_by("index").values_list("index", "kind", "status"))


def tokens(text: str) -> int:
    return len(get_encoding(ENCODING).encode(text))


def wire(body: dict) -> list[tuple[str, str | None]]:
    return [(m["role"], m.get("content")) for m in body["messages"]]


def call(i: int) -> dict:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {
                    "name": "snippets_by_tag",
                    "arguments": json.dumps({"tags": [f"t{i}"]}, separators=(",", ":")),
                },
            }
        ],
    }


def result(i: int, content: str) -> dict:
    return {"role": "tool", "content": content, "tool_call_id": f"call_{i}"}


def prompts_of(run: AgentRun) -> dict[int, int]:
    steps = AgentStep.objects.filter(run=run, kind="model_call").order_by("index")
    return dict(steps.values_list("index", "reported_prompt_tokens"))
