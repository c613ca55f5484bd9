"""Everything one send needs, resolved once: serving model, zone, sources, redacted and assembled context.

The agent loop, the completions API and the context preview all build their context here, so what a
preview shows is what a run would send, and the model is resolved once per send: the gate, the fit
and the dispatch use the same resolution (docs/architecture.md, "How a step runs").
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from agents.runtime.call_options import options_check
from agents.runtime.content import SendContent, live_content
from agents.runtime.modalities import modalities_check
from agents.runtime.pins import PinnedContent
from agents.runtime.pseudonyms import Pseudonyms
from agents.runtime.redactions import Redactions
from agents.runtime.request import SendRequest
from agents.runtime.screening import (
    PartScreen,
    caller_context_screened,
    caller_sources,
    media_screened,
    part_screen,
)
from catalog.models import Configuration, LlmModel, ProviderKind
from catalog.selectors import configuration_sources, configuration_zone
from context_assembly.assembly import (
    AssembledContext,
    AssemblyInputs,
    assemble,
)
from context_assembly.media_costs import ANTHROPIC_PIXELS, OPENAI_TILES
from context_assembly.profiles import ModelProfile
from governance.policy import ContextDecision, Receiver, Source, decide, enforcement_mode
from governance.screening import declared, raised
from governance.vocabulary import Integrity, PersonalDataOutcome, SourceKind, TrustZone
from providers.dispatch import Target
from providers.values import NO_OPTIONS, CallOptions, ProviderConfig
from skills.composition import SkillMode, skill_section
from skills.models import Skill
from snippets.composition import snippet_block
from snippets.models import Snippet
from tools.gate import ToolPolicy, ToolVerdict, tools_offered
from tools.registry import Tool

READ_RESULT_TOOL = "read_result"
LOAD_SKILL_TOOL = "load_skill"
_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class SendPlan:
    """What one send carries and to whom, resolved once: the serving model and its fallbacks as
    targets, the zone, the assembled (redacted) context and its sources, the tools offered and
    denied, the redactions made, the request's provider options (redacted), the receiver. What the
    context was assembled from (the request, the snippets and skills chosen) is the caller's to keep
    (the preview's :class:`agents.runtime.preview.SendProvenance`)."""

    configuration: Configuration
    model: LlmModel
    profile: ModelProfile
    zone: TrustZone
    fallbacks: tuple[LlmModel, ...]
    targets: tuple[Target, ...]
    assembled: AssembledContext
    offered_tools: tuple[Tool, ...]
    denied_tools: tuple[ToolVerdict, ...]
    redactions: dict[str, int]
    # A run's pinned versions the content was built from (recorded on its step); None: live rows.
    pinned: PinnedContent | None = None
    # Configured targets skipped because they or their provider are switched off. With no active
    # target left, ``targets`` is empty and nothing may be sent.
    inactive: tuple[str, ...] = ()
    options: CallOptions = NO_OPTIONS  # the request's provider options, redacted
    receiver: Receiver | None = None  # with the configuration's declassification, if any
    # Set when the sources exceeded the primary model's zone and the send goes to the configuration's
    # trusted model alone: the zone it was routed from (the routing is recorded as an event).
    routed_from: TrustZone | None = None
    # Personal data found in what is sent, by kind (the parts it raised; never a value), and the
    # placeholders sent instead where the configuration pseudonymizes (agents/runtime/pseudonyms.py).
    personal_data: dict[str, int] = field(default_factory=dict)
    pseudonyms: Pseudonyms | None = None

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
        image_rule=ANTHROPIC_PIXELS if model.provider.kind == ProviderKind.ANTHROPIC else OPENAI_TILES,
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
    integrity: Integrity = Integrity.TRUSTED,
) -> ToolPolicy:
    """The gate's inputs for ``configuration``, for a step whose answers go to ``receiver``, for a
    call asked for by a reply of ``integrity`` (offering: none asked yet). Progressive skill mode
    needs ``load_skill``, so it is allowed there (it still passes the rest of the gate like any
    tool)."""
    allowed_tools = set(configuration.allowed_tools)
    if configuration.skill_mode == SkillMode.PROGRESSIVE:
        allowed_tools.add(LOAD_SKILL_TOOL)
    if configuration.quarantine_untrusted:
        allowed_tools.add(READ_RESULT_TOOL)  # held results are read with it (quarantine.py)
    return ToolPolicy(
        zone=zone,
        allowed_groups=frozenset(configuration.allowed_tool_groups),
        allowed_tools=frozenset(allowed_tools),
        disabled_tools=frozenset(disabled),
        receiver=receiver,
        integrity=integrity,
        untrusted_action=configuration.untrusted_action,
    )


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
    if configuration.personal_data_outcome == PersonalDataOutcome.REFUSE and not routes_to_trusted(
        decide(tuple(map(declared, plan.sources)), plan.zone, enforcement_mode(), plan.receiver)
    ):
        return plan  # only the personal data found exceeds the zone, and the configuration refuses it
    return replace(_send_plan(content, request, (trusted,)), routed_from=plan.zone)


def routes_to_trusted(decision: ContextDecision) -> bool:
    """Whether a send so decided goes to its configuration's trusted model (where it names one): some
    source is refused for the zone of the configuration's own models, not only for the receiver's."""
    return any(not item.by_receiver for item in decision.refused)


@dataclass(frozen=True, slots=True)
class Serving:
    """The models a send may call: the active ones in order (the first serves, the rest are its
    fallbacks), those switched off, and the send's zone over the ones it may call."""

    active: tuple[LlmModel, ...]
    inactive: tuple[LlmModel, ...]
    model: LlmModel
    zone: TrustZone


def serving(configuration: Configuration, models: Sequence[LlmModel]) -> Serving:
    """``models`` as a send of ``configuration`` may call them (every configured one when none is
    active, the stricter reading of the zone; nothing is then sent)."""
    active, inactive = active_targets(models)
    called = active or tuple(models)
    zone = configuration_zone(configuration, serving_model=called[0], fallbacks=called[1:])
    return Serving(active, inactive, called[0], zone)


def plan_of(
    *,
    configuration: Configuration,
    serving: Serving,
    inputs: AssemblyInputs,
    request: SendRequest,
    redactions: Redactions,
    offered: Sequence[Tool] = (),
    denied: Sequence[ToolVerdict] = (),
    pinned: PinnedContent | None = None,
    screen: PartScreen | None = None,
    added_found: Sequence[dict[str, int]] = (),
) -> SendPlan:
    """The plan of a send of ``inputs`` (already redacted by ``redactions`` and screened by
    ``screen``) by ``serving``: every send's plan is made here, a step's and a completion's
    (:func:`send_plan`) as a summary's (``agents/runtime/summary.py``). ``added_found`` is what each
    source assembly adds (the caller's context items, then the task input) holds."""
    called = serving.active or (serving.model,)
    modalities_check(inputs, called)
    options_check(request.options, inputs.tool_specs, called)
    assembled = assemble(inputs)
    if any(added_found):
        given = len(inputs.sources)
        added = zip(assembled.sources[given:], added_found, strict=True)
        assembled = replace(assembled, sources=inputs.sources + tuple(raised(s, f) for s, f in added))
    screen = screen or PartScreen()
    return SendPlan(
        configuration=configuration,
        model=serving.model,
        profile=inputs.profile,
        zone=serving.zone,
        fallbacks=serving.active[1:],
        targets=tuple(Target(provider_config(m), m.model_id, m.capabilities) for m in serving.active),
        assembled=assembled,
        offered_tools=tuple(offered),
        denied_tools=tuple(denied),
        options=redactions.options(request.options),
        redactions=dict(redactions.counts),
        pinned=pinned,
        inactive=tuple(str(m) for m in serving.inactive),
        receiver=send_receiver(configuration, request),
        personal_data=dict(screen.found),
        pseudonyms=screen.pseudonyms,
    )


def _send_plan(content: SendContent, request: SendRequest, models: tuple[LlmModel, ...]) -> SendPlan:
    configuration, selection, skills = content.configuration, content.selection, content.skills
    snippets = selection.snippets
    served = serving(configuration, models)
    zone = served.zone
    receiver = send_receiver(configuration, request)
    if request.client_tools is None:
        offered, denied = tools_offered(tool_policy(configuration, zone, content.disabled_tools, receiver))
    else:
        offered, denied = [], []  # the caller's own tools replace the configuration's
    redactions = Redactions()
    screen = part_screen(configuration, zone, receiver, request.pseudonym_scope)
    tool_specs = (
        tuple(tool.spec() for tool in offered)
        if request.client_tools is None
        else tuple(redactions.tool_spec(spec) for spec in request.client_tools)
    )
    own_prompt = bool(request.system_override)
    system_prompt, prompt_found = screen.text(
        redactions.text(_system_prompt(configuration, request)), own=own_prompt
    )
    snippet_text, snippets_found = screen.block(
        redactions.text(snippet_block(snippets)), [redactions.text(s.text) for s in snippets]
    )
    progressive = configuration.skill_mode == SkillMode.PROGRESSIVE
    skill_text, skills_found = screen.block(
        redactions.text(skills.text),
        [redactions.text(skill_section(skill, progressive=progressive)) for skill in skills.included],
    )
    caller_context, context_found = caller_context_screened(request, redactions, screen)
    task_input, task_found = screen.text(redactions.text(request.task_input), own=True)
    task_input_parts, media_sources = media_screened(request, redactions, screen)
    transcript, transcript_sources = screen.entries(
        request.transcript,
        [redactions.message(entry.message, remember=entry.held) for entry in request.transcript],
    )
    configured = _configuration_sources(configuration, request, snippets, skills.included)
    found = ([] if own_prompt or not system_prompt else [prompt_found]) + snippets_found + skills_found
    inputs = AssemblyInputs(
        profile=model_profile(served.model),
        task_input=task_input,
        task_input_data_class=request.input_data_class,
        task_input_identifier=request.task_input_identifier,
        task_input_parts=task_input_parts,
        system_prompt=system_prompt,
        snippet_block=snippet_text,
        skill_block=skill_text,
        caller_context=caller_context,
        transcript=transcript,
        tool_specs=tool_specs,
        tail_note=request.tail_note,
        sources=(
            *(raised(source, counts) for source, counts in zip(configured, found, strict=True)),
            *transcript_sources,
            *caller_sources(request, screen, prompt_found),
            *media_sources,
        ),
    )
    return plan_of(
        configuration=configuration,
        serving=served,
        inputs=inputs,
        request=request,
        redactions=redactions,
        offered=offered,
        denied=denied,
        pinned=content.pinned,
        screen=screen,
        added_found=(*context_found, *([task_found] if task_input else [])),
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
