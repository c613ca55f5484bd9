"""Helpers for run tests: a configuration served by the loopback fake, and running a run to its end."""

from __future__ import annotations

from typing import Any

from agents.models import AgentRun
from agents.services import CallerContextItem, run_create
from catalog.models import Configuration, ProviderKind
from governance.vocabulary import DataClass, TrustZone
from tests.factories import configuration_make, model_make, provider_make
from tests.fakes.provider_server import FakeProvider


def fake_configuration(fake: FakeProvider, *, zone: str = TrustZone.LOCAL, **fields: Any) -> Configuration:
    provider = provider_make(
        kind=ProviderKind.OPENAI_COMPATIBLE,
        base_url=fake.openai_base_url,
        trust_zone=zone,
        timeout_seconds=5,
        max_retries=0,
    )
    model_fields = {key[6:]: fields.pop(key) for key in list(fields) if key.startswith("model_")}
    model = model_make(provider=provider, model_id="gpt-4o", **model_fields)
    fields.setdefault("allowed_tool_groups", ["content"])
    return configuration_make(model=model, **fields)


def run_to_end(
    capture,
    configuration: Configuration,
    *,
    input_text: str = "Summarise our tone of voice.",
    input_data_class: str = DataClass.PUBLIC_CONTENT,
    caller_context: tuple[CallerContextItem, ...] = (),
    **kwargs: Any,
) -> AgentRun:
    """Create a run and execute every step it enqueues (tasks run eagerly in the default suite)."""
    with capture(execute=True):
        run = run_create(
            configuration=configuration,
            input_text=input_text,
            input_data_class=input_data_class,
            caller_context=caller_context,
            **kwargs,
        )
    run.refresh_from_db()
    return run
