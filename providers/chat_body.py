"""The OpenAI Chat Completions body of a call: the wire-neutral shape, which the OpenAI-compatible
adapter sends and the offline ``local`` provider receives."""

from __future__ import annotations

from typing import Any

from context_assembly.messages import thaw_json
from providers.values import CallOptions, ProviderCall


def chat_completions_body(call: ProviderCall) -> dict[str, Any]:
    """The OpenAI Chat Completions body of ``call`` (model, messages, reply limit, tools, temperature);
    the wire-neutral shape, also what the offline ``local`` provider receives."""
    body: dict[str, Any] = {
        "model": call.model_id,
        "messages": [message.to_openai() for message in call.messages],
        "max_tokens": call.max_tokens,
    }
    if call.tool_specs:
        body["tools"] = [spec.to_openai() for spec in call.tool_specs]
    if call.temperature is not None:
        body["temperature"] = call.temperature
    body.update(openai_options(call.options, sampling=True, tools=bool(call.tool_specs)))
    return body


def openai_options(options: CallOptions, *, sampling: bool, tools: bool) -> dict[str, Any]:
    """The Chat Completions fields of ``options`` that are set (``top_p`` only when the model takes
    sampling parameters; ``parallel_tool_calls`` only beside tools, as the API requires)."""
    fields: dict[str, Any] = {}
    if options.top_p is not None and sampling:
        fields["top_p"] = options.top_p
    if options.stop:
        fields["stop"] = list(options.stop)
    if options.seed is not None:
        fields["seed"] = options.seed
    if options.response_format is not None:
        fields["response_format"] = thaw_json(options.response_format)
    if options.tool_choice is not None:
        fields["tool_choice"] = thaw_json(options.tool_choice)
    if options.user is not None:
        fields["user"] = options.user
    if options.parallel_tool_calls is not None and tools:
        fields["parallel_tool_calls"] = options.parallel_tool_calls
    return fields
