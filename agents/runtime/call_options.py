"""A request's provider options checked against every model a send may call, before anything is sent.

Each option a caller sets is forwarded, held or refused, never dropped (docs/governance.md): what a
model's provider cannot take or hold is a 400 :class:`~agents.errors.ParameterUnsupported` naming the
parameter and the model, raised while the send is planned, like a modality the model does not read
(``agents/runtime/modalities.py``). A fallback counts as the serving model does: it would otherwise
answer without what was asked.

On the Messages API (``providers/anthropic_structured.py`` says how the rest is held): ``seed`` has no
counterpart; a ``json_schema`` whose root is not an object cannot be a tool's input; a caller tool
named as the response tool would be mistaken for the structured reply.

Extended thinking (``thinking_budget``) goes only to an Anthropic model whose catalogue capabilities
declare ``thinking``, and never beside a forced tool (the API refuses both together) or ``top_p``.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.errors import ParameterUnsupported
from catalog.models import LlmModel, ProviderKind
from context_assembly.messages import ToolSpec
from providers.anthropic_structured import RESPONSE_TOOL
from providers.structured import response_schema
from providers.values import CallOptions


def options_check(options: CallOptions, tool_specs: Sequence[ToolSpec], models: Sequence[LlmModel]) -> None:
    """Raise :class:`ParameterUnsupported` when one of ``models`` cannot take or hold ``options``."""
    for model in models:
        anthropic = model.provider.kind == ProviderKind.ANTHROPIC
        if options.thinking_budget is not None:
            _thinking_check(options, model, anthropic)
        if anthropic:
            _anthropic_check(options, tool_specs, model)


def _refused(param: str, model: LlmModel, problem: str) -> ParameterUnsupported:
    return ParameterUnsupported(
        f"{param} is not supported by model {model.model_id!r}: {problem}",
        extra={"param": param, "model": model.model_id},
    )


def _thinking_check(options: CallOptions, model: LlmModel, anthropic: bool) -> None:
    """Extended thinking goes only to an Anthropic model whose catalogue entry declares it, and not
    beside what the API refuses with it (a forced tool, which a structured reply is, or ``top_p``)."""
    if not anthropic or not model.capabilities.thinking:
        raise _refused(
            "thinking",
            model,
            "the catalogue does not declare that it takes extended thinking; send the "
            "request without it, or choose a configuration whose models declare it",
        )
    forced = options.forced_function is not None or options.tool_choice == "required"
    if forced or response_schema(options) is not None:
        raise _refused(
            "thinking",
            model,
            "extended thinking cannot be combined with a forced tool choice or a structured response format",
        )
    if options.top_p is not None:
        raise _refused("top_p", model, "sampling parameters are not taken beside extended thinking")


def _anthropic_check(options: CallOptions, tool_specs: Sequence[ToolSpec], model: LlmModel) -> None:
    if options.seed is not None:
        raise _refused("seed", model, "its provider has no seed; send the request without it")
    schema = response_schema(options)
    if schema is None:
        return
    if schema.get("type", "object") != "object":
        raise _refused(
            "response_format",
            model,
            "its structured output is a tool's input, so the schema's root must be an object",
        )
    if any(spec.name == RESPONSE_TOOL for spec in tool_specs):
        raise _refused(
            "response_format",
            model,
            f"a tool named {RESPONSE_TOOL!r} would be taken for the structured reply",
        )
