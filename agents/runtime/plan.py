"""Everything one send needs, resolved once: serving model, zone, sources, redacted and assembled context.

The agent loop, the completions API and the context preview all build their context here, so what a
preview shows is what a run would send, and the model is resolved once per send: the gate, the fit
and the dispatch use the same resolution (docs/architecture.md, "How a step runs").
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from agents.runtime.content import SendContent, live_content
from agents.runtime.redactions import Redactions
from catalog.models import Configuration, LlmModel
from catalog.selectors import configuration_sources, configuration_zone
from context_assembly.assembly import (
    TASK_INPUT_IDENTIFIER,
    AssembledContext,
    AssemblyInputs,
    ContextItem,
    assemble,
)
from context_assembly.messages import Message, ToolSpec
from context_assembly.profiles import ModelProfile
from governance.policy import ContextDecision, Receiver, Source, decide, enforcement_mode
from governance.vocabulary import Enforcement, SourceKind, TrustZone
from providers.dispatch import Target
from providers.values import NO_OPTIONS, CallOptions, ProviderConfig
from skills.composition import SkillBlock, SkillMode
from skills.models import Skill
from snippets.composition import snippet_block
from snippets.models import Snippet
from tools.gate import ToolPolicy, ToolVerdict, tools_offered
from tools.registry import Tool

LOAD_SKILL_TOOL = "load_skill"
_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class SendRequest:
    """The per-request part of a send: what the caller asked for, plus the run's transcript.

    A caller-supplied conversation (:mod:`agents.runtime.conversation`) also sets
    ``transcript_sources`` (each transcript message is caller context with its class, instead of the
    tool outputs ``transcript_classes`` classify), may set ``system_override`` (caller system text that
    replaces the configuration's system prompt, only where the configuration allows it), and may bring
    its own tools: ``client_tools`` not None replaces the configuration's tools (the caller runs them;
    nothing is executed here), classified by ``client_tools_class``. ``options`` are passed on to the
    provider, redacted like every other part.
    """

    task_input: str
    input_data_class: str
    caller_context: tuple[ContextItem, ...] = ()
    transcript: tuple[Message, ...] = ()
    transcript_classes: tuple[str, ...] = ()  # per transcript message: a tool result's class, a reply's label
    # Per transcript message: a reply's label for the run's receiver, and whether its label came from
    # a row sent under observe (blank and False for other messages).
    transcript_labels: tuple[tuple[str, bool], ...] = ()
    request_skills: tuple[Skill, ...] = ()
    tail_note: str | None = None
    task_input_identifier: str = TASK_INPUT_IDENTIFIER
    transcript_sources: tuple[Source, ...] | None = None
    system_override: tuple[ContextItem, ...] = ()
    client_tools: tuple[ToolSpec, ...] | None = None
    client_tools_class: str = ""
    options: CallOptions = NO_OPTIONS
    # How many transcript messages at its front are a run's stored conversation, not its own rows.
    caller_messages: int = 0
    # How many more messages the run's own transcript holds than ``transcript`` shows: those a
    # compaction's summary stands for (agents/runtime/compacted.py).
    compacted_messages: int = 0
    # Who the reply is for (DESIGN §4, "Information flow"): the API client's zone, or the zone a run's
    # operator named. None only where no reply is delivered to anyone (an edit's cost, a comparison).
    receiver_zone: TrustZone | None = None
    receiver_name: str = ""


@dataclass(frozen=True)
class SendPlan:
    configuration: Configuration
    model: LlmModel
    profile: ModelProfile
    zone: TrustZone
    fallbacks: tuple[LlmModel, ...]
    targets: tuple[Target, ...]
    assembled: AssembledContext
    offered_tools: tuple[Tool, ...]
    denied_tools: tuple[ToolVerdict, ...]
    unknown_tags: tuple[str, ...]
    empty_tags: tuple[str, ...]
    dropped_skills: tuple[tuple[str, str], ...]  # (skill identifier, reason)
    redactions: dict[str, int]
    # What the context was assembled from, for a preview that lists it part by part.
    request: SendRequest
    content: SendContent
    snippets: tuple[Snippet, ...]
    skills: SkillBlock
    # Configured targets skipped because they or their provider are switched off. With no active
    # target left, ``targets`` is empty and nothing may be sent.
    inactive: tuple[str, ...] = ()
    options: CallOptions = NO_OPTIONS  # the request's provider options, redacted
    receiver: Receiver | None = None  # with the configuration's declassification, if any
    # Set when the sources exceeded the primary model's zone and the send goes to the configuration's
    # trusted model alone: the zone it was routed from (the routing is recorded as an event).
    routed_from: TrustZone | None = None

    @property
    def sources(self) -> tuple[Source, ...]:
        return self.assembled.sources


def receiver_name(client: object | None) -> str:
    """How a refusal names a receiver: the API client by name, else the run's operator."""
    name = getattr(client, "name", None)
    return f"API client {name!r}" if name else "the run's operator"


def send_receiver(configuration: Configuration, request: SendRequest) -> Receiver | None:
    """The receiver of a send of ``configuration``: the request's zone, with the configuration's
    declassification of its answers (DESIGN §4, "Information flow")."""
    return configuration_receiver(configuration, request.receiver_zone, request.receiver_name)


def configuration_receiver(
    configuration: Configuration, zone: TrustZone | None, name: str = ""
) -> Receiver | None:
    """A receiver in ``zone`` of ``configuration``'s answers, with its declassification; None: none."""
    if zone is None:
        return None
    declared = configuration.answers_deliverable_to
    return Receiver(zone=zone, declassified_to=TrustZone.parse(declared) if declared else None, name=name)


def model_profile(model: LlmModel) -> ModelProfile:
    return ModelProfile(
        model_id=model.model_id,
        context_window=model.context_window,
        max_output_tokens=model.max_output_tokens,
        tokenizer=model.tokenizer,
        calibration_factor=model.calibration_factor,
    )


def provider_config(model: LlmModel) -> ProviderConfig:
    provider = model.provider
    api_key = os.environ.get(provider.api_key_env) if provider.api_key_env else None
    return ProviderConfig(
        identifier=provider.identifier,
        kind=provider.kind,
        base_url=provider.base_url,
        api_key=api_key,
        timeout_seconds=provider.timeout_seconds,
        max_retries=provider.max_retries,
        options=provider.options or {},
    )


def tool_policy(
    configuration: Configuration,
    zone: TrustZone,
    disabled: Iterable[str],
    receiver: Receiver | None = None,
) -> ToolPolicy:
    """The gate's inputs for ``configuration``, for a step whose answers go to ``receiver``.
    Progressive skill mode needs ``load_skill``, so it is allowed there (it still passes the rest of
    the gate like any tool)."""
    allowed_tools = set(configuration.allowed_tools)
    if configuration.skill_mode == SkillMode.PROGRESSIVE:
        allowed_tools.add(LOAD_SKILL_TOOL)
    return ToolPolicy(
        zone=zone,
        allowed_groups=frozenset(configuration.allowed_tool_groups),
        allowed_tools=frozenset(allowed_tools),
        disabled_tools=frozenset(disabled),
        receiver=receiver,
    )


def _transcript_sources(request: SendRequest) -> list[Source]:
    """A caller conversation's own sources, else those of a run's transcript."""
    if request.transcript_sources is not None:
        return list(request.transcript_sources)
    return run_transcript_sources(request.transcript, request.transcript_classes, request.transcript_labels)


def run_transcript_sources(
    messages: Sequence[Message],
    classes: Sequence[str],
    labels: Sequence[tuple[str, bool]],
    offset: int = 0,
) -> list[Source]:
    """The sources of a run's own transcript: each tool result at its tool's class, and each earlier
    reply at its label (its label for the run's receiver beside it), so a label follows the run. A
    reply whose label came from a row sent under observe is observed where that row was; a reply
    stored without a label (before labels were kept) reads as ``secret_adjacent``."""
    sources = []
    labels = labels or (("", False),) * len(classes)
    for index, (message, data_class, (for_receiver, observed)) in enumerate(
        zip(messages, classes, labels, strict=True), start=offset
    ):
        if message.role == "tool":
            sources.append(
                Source(
                    SourceKind.TOOL_OUTPUT, message.tool_call_id or "", data_class, None, Enforcement.ENFORCE
                )
            )
        elif message.role == "assistant":
            sources.append(
                Source(
                    SourceKind.ASSISTANT_TURN,
                    f"transcript[{index}]",
                    data_class,
                    None,
                    Enforcement.OBSERVE if observed else Enforcement.ENFORCE,
                    receiver_class=for_receiver or data_class,
                )
            )
    return sources


def send_plan(
    *, configuration: Configuration, request: SendRequest, content: SendContent | None = None
) -> SendPlan:
    """Plan a send of ``content`` (``agents/runtime/content.py``; by default the configuration's live
    content with the request's skills): resolve the serving model and zone, offer tools through the
    gate, redact every part that will reach the wire, and assemble. Governance and the fit run on the
    result.

    Route instead of refuse: when the configuration names a trusted model and some source exceeds the
    zone of its own model and fallbacks (:func:`governance.policy.decide`, pure), the plan is made
    anew for the trusted model alone (``routed_from`` names the zone it left); the send's gate then
    decides for the trusted model's zone, and its fit is made for that model's window.

    A configuration read with its catalogue token (``agents.selectors.with_catalog_token``) reuses
    what it resolves to from this worker's cache while that token is current.
    """
    if content is None:
        content = live_content(configuration, request.request_skills)
    plan = _send_plan(content, request, (configuration.model, *content.fallbacks))
    trusted = configuration.trusted_model
    if trusted is None or trusted.pk == plan.model.pk:
        return plan
    decision = decide(plan.sources, plan.zone, enforcement_mode(), plan.receiver)
    if not routes_to_trusted(decision):
        return plan
    return replace(_send_plan(content, request, (trusted,)), routed_from=plan.zone)


def routes_to_trusted(decision: ContextDecision) -> bool:
    """Whether a send so decided goes to its configuration's trusted model (where it names one): some
    source is refused for the zone of the configuration's own models, not only for the receiver's."""
    return any(not item.by_receiver for item in decision.refused)


def _send_plan(content: SendContent, request: SendRequest, models: tuple[LlmModel, ...]) -> SendPlan:
    configuration, selection, skills = content.configuration, content.selection, content.skills
    snippets = selection.snippets
    active, inactive = active_targets(models)
    model = (active or models)[0]
    zone = configuration_zone(configuration, serving_model=model, fallbacks=(active or models)[1:])
    if request.client_tools is None:
        receiver = send_receiver(configuration, request)
        offered, denied = tools_offered(tool_policy(configuration, zone, content.disabled_tools, receiver))
    else:
        offered, denied = [], []  # the caller's own tools replace the configuration's
    redactions = Redactions()
    tool_specs = (
        tuple(tool.spec() for tool in offered)
        if request.client_tools is None
        else tuple(redactions.tool_spec(spec) for spec in request.client_tools)
    )
    inputs = AssemblyInputs(
        profile=model_profile(model),
        task_input=redactions.text(request.task_input),
        task_input_data_class=request.input_data_class,
        task_input_identifier=request.task_input_identifier,
        system_prompt=redactions.text(_system_prompt(configuration, request)),
        snippet_block=redactions.text(snippet_block(snippets)),
        skill_block=redactions.text(skills.text),
        caller_context=tuple(
            ContextItem(
                redactions.text(item.name), redactions.text(item.text), item.data_class, item.identifier
            )
            for item in request.caller_context
        ),
        transcript=tuple(redactions.message(message) for message in request.transcript),
        tool_specs=tool_specs,
        tail_note=request.tail_note,
        sources=(
            *_configuration_sources(configuration, request, snippets, skills.included),
            *_transcript_sources(request),
            *_caller_sources(request),
        ),
    )
    return SendPlan(
        configuration=configuration,
        model=model,
        profile=inputs.profile,
        zone=zone,
        fallbacks=tuple(active[1:]),
        targets=tuple(Target(provider_config(m), m.model_id, m.capabilities) for m in active),
        assembled=assemble(inputs),
        offered_tools=tuple(offered),
        denied_tools=tuple(denied),
        unknown_tags=selection.unknown_tags,
        empty_tags=selection.empty_tags,
        dropped_skills=skills.dropped,
        options=redactions.options(request.options),
        redactions=dict(redactions.counts),
        request=request,
        content=content,
        snippets=tuple(snippets),
        skills=skills,
        inactive=tuple(str(m) for m in inactive),
        receiver=send_receiver(configuration, request),
    )


def _system_prompt(configuration: Configuration, request: SendRequest) -> str:
    """The configuration's system prompt, or the caller's system text where the configuration allows
    it to override (snippets still follow it)."""
    if not request.system_override:
        return configuration.system_prompt.strip()
    if not configuration.allow_system_override:
        # The conversation module makes such text caller context; here it would replace the prompt.
        raise ValueError(f"configuration {configuration.identifier!r} does not allow a system override")
    return _SEPARATOR.join(item.text for item in request.system_override).strip()


def _configuration_sources(
    configuration: Configuration, request: SendRequest, snippets: Sequence[Snippet], skills: Iterable[Skill]
) -> list[Source]:
    sources = configuration_sources(configuration, snippets=snippets, skills=skills)
    if request.system_override:
        return [source for source in sources if source.kind != SourceKind.SYSTEM_PROMPT]
    return sources


def _caller_sources(request: SendRequest) -> list[Source]:
    """The caller's system text that overrides the prompt, and the caller's tool specs, response
    format and stop sequences (caller text sent to the provider, classified like the rest of the
    request)."""
    sources = [
        Source(
            SourceKind.CALLER_CONTEXT, item.identifier or "system", item.data_class, None, Enforcement.ENFORCE
        )
        for item in request.system_override
    ]
    if request.client_tools:
        sources.append(
            Source(SourceKind.CALLER_CONTEXT, "tools", request.client_tools_class, None, Enforcement.ENFORCE)
        )
    option_class = request.client_tools_class or request.input_data_class
    for name, present in (
        ("response_format", request.options.response_format is not None),
        ("stop", bool(request.options.stop)),
    ):
        if present:
            sources.append(Source(SourceKind.CALLER_CONTEXT, name, option_class, None, Enforcement.ENFORCE))
    return sources


def send_zone(configuration: Configuration, fallbacks: Sequence[LlmModel]) -> TrustZone:
    """The zone of a send for ``configuration``: the least trusted of the models it may call (every
    configured one when none is active, the stricter reading). The tool gate uses it too, so a step's
    tools are offered and run for the same zone its context was checked for."""
    active, _ = active_targets((configuration.model, *fallbacks))
    called = active or (configuration.model, *fallbacks)
    return configuration_zone(configuration, serving_model=called[0], fallbacks=called[1:])


def active_targets(models: Sequence[LlmModel]) -> tuple[tuple[LlmModel, ...], tuple[LlmModel, ...]]:
    """``models`` split into those that may be called and those switched off (the model or its
    provider), each in order. The call's zone is computed over the active ones: they are the only
    targets the dispatch is given, so a switched-off fallback neither receives nor restricts."""
    active = tuple(m for m in models if m.is_active and m.provider.is_active)
    return active, tuple(m for m in models if m not in active)
