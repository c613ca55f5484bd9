"""The context preview: what a send would assemble, decide and fit, without recording or sending.

The preview API and the admin preview page call this; it builds the same :class:`SendPlan` and runs
the same :func:`governance.policy.decide` and :func:`context_assembly.fitting.fit` as a real send.
A preview is a simulation: it records no governance event.

The preview is itself something that leaves the service, so it has a receiver too. Its messages are
listed part by part (the system prompt, each snippet, each skill, each caller context item, the task
input, and the framing the assembly writes itself), and a part's text is shown only when its class is
within the receiver's zone (:func:`governance.policy.receiver_may_read`) and the send would send it;
any other part is listed by kind, identifier and class with ``"withheld": true`` and no text.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agents.runtime.content import SendContent, live_content
from agents.runtime.plan import SendPlan, send_plan
from agents.runtime.redactions import Redactions
from agents.runtime.request import SendRequest
from agents.runtime.targets import reply_limit, reply_limit_check
from catalog.errors import ModelInactive
from catalog.models import Configuration
from context_assembly.assembly import ContextItem, caller_context_identifier, context_item_text
from context_assembly.estimator import Estimator
from context_assembly.fitting import FitResult, fit
from governance.policy import (
    ContextDecision,
    Source,
    SourceDecision,
    decide,
    enforcement_mode,
    receiver_may_read,
)
from governance.services import decision_as_dict
from governance.vocabulary import Enforcement, Outcome, SourceKind, TrustZone
from skills.composition import END_MARKER, SECTION_SEPARATOR, SkillBlock, SkillMode, skill_section
from snippets.composition import snippet_block
from snippets.models import Snippet

FRAMING = "framing"  # the kind of a part the assembly writes itself (the skill block's fences)


@dataclass(frozen=True)
class PreviewPart:
    """One part of a message as it would be sent (redacted). ``source`` is None for framing;
    ``message`` is the position of the message the part belongs to."""

    message: int
    role: str
    kind: str
    identifier: str
    text: str
    source: Source | None


@dataclass(frozen=True)
class SendProvenance:
    """What a previewed send was assembled from, part by part: the request, and the content (the
    configuration as sent, its snippet selection with the tags that matched nothing, and its skill
    block with the skills left out). A send needs none of it once planned; a preview lists it."""

    request: SendRequest
    content: SendContent

    @property
    def snippets(self) -> tuple[Snippet, ...]:
        return tuple(self.content.selection.snippets)

    @property
    def skills(self) -> SkillBlock:
        return self.content.skills

    @property
    def unknown_tags(self) -> tuple[str, ...]:
        return tuple(self.content.selection.unknown_tags)

    @property
    def empty_tags(self) -> tuple[str, ...]:
        return tuple(self.content.selection.empty_tags)

    @property
    def dropped_skills(self) -> tuple[tuple[str, str], ...]:
        return tuple(self.content.skills.dropped)


@dataclass(frozen=True)
class ContextPreview:
    plan: SendPlan
    provenance: SendProvenance
    decision: ContextDecision
    fitted: FitResult

    @property
    def would_send(self) -> bool:
        return self.decision.permitted and not self.fitted.overflow

    def as_dict(self, *, receiver_zone: TrustZone) -> dict[str, Any]:
        """The preview as a receiver in ``receiver_zone`` may see it (see the module docstring)."""
        plan, provenance = self.plan, self.provenance
        return {
            "configuration": plan.configuration.identifier,
            "model": plan.model.model_id,
            "provider": plan.model.provider.identifier,
            "zone": plan.zone.value,
            "routed_from": plan.routed_from.value if plan.routed_from is not None else None,
            "answers_deliverable_to": plan.configuration.answers_deliverable_to or None,
            "would_send": self.would_send,
            "overflow": self.fitted.overflow,
            "messages": shown_messages(
                preview_parts(plan, provenance), send_zone=plan.zone, receiver_zone=receiver_zone
            ),
            "tools": [spec.to_openai() for spec in plan.assembled.tool_specs],
            "decision": decision_as_dict(self.decision),
            "breakdown": self.fitted.breakdown.as_dict(),
            "unknown_tags": list(provenance.unknown_tags),
            "empty_tags": list(provenance.empty_tags),
            "dropped_skills": [
                {"skill": skill, "reason": reason} for skill, reason in provenance.dropped_skills
            ],
            "denied_tools": [{"tool": v.name, "reason": v.denial.value} for v in plan.denied_tools],
            "redactions": plan.redactions,
        }


def context_preview(
    *,
    configuration: Configuration,
    request: SendRequest,
    max_tokens: int | None = None,
    content: SendContent | None = None,
) -> ContextPreview:
    """Assemble, decide and fit for ``configuration`` and ``request``; messages are redacted."""
    if content is None:
        content = live_content(configuration, request.request_skills)
    plan = send_plan(configuration=configuration, request=request, content=content)
    if not plan.targets:
        raise ModelInactive(
            f"Configuration '{configuration.identifier}' has no active model: nothing would be sent.",
            extra={"inactive": list(plan.inactive)},
        )
    reply_limit_check((plan.model, *plan.fallbacks), max_tokens)
    decision = decide(plan.sources, plan.zone, enforcement_mode(), plan.receiver)
    limit, _ = reply_limit(max_tokens, plan.model)
    fitted = fit(plan.assembled, estimator=Estimator(plan.profile), max_tokens=limit)
    provenance = SendProvenance(request=request, content=content)
    return ContextPreview(plan=plan, provenance=provenance, decision=decision, fitted=fitted)


def preview_parts(plan: SendPlan, provenance: SendProvenance) -> tuple[PreviewPart, ...]:
    """The parts of the head, then of the tail note, in wire order, each redacted as the send redacts
    it, with its source. A preview request has no transcript; the tail note is our own text."""
    redactions = Redactions()
    system = list(_system_parts(plan, provenance, redactions))
    user = 1 if system else 0
    transcript = list(_transcript_parts(provenance.request, redactions, user + 1))
    parts = [*system, *_user_parts(plan, provenance, redactions, user), *transcript]
    request = provenance.request
    if request.tail_note:
        tail = user + 1 + len(request.transcript)
        parts.append(PreviewPart(tail, "user", FRAMING, "tail_note", request.tail_note, None))
    return tuple(parts)


def decided_parts(
    parts: tuple[PreviewPart, ...], *, send_zone: TrustZone
) -> tuple[tuple[PreviewPart, SourceDecision | None], ...]:
    """Each part with the decision on its source for a send to ``send_zone`` (None for framing)."""
    sourced = [part.source for part in parts if part.source is not None]
    decisions = iter(decide(sourced, send_zone, enforcement_mode()).sources)
    return tuple((part, next(decisions) if part.source is not None else None) for part in parts)


def shown_messages(
    parts: tuple[PreviewPart, ...], *, send_zone: TrustZone, receiver_zone: TrustZone
) -> list[dict[str, Any]]:
    """``parts`` grouped into their messages, each part's text shown only when the send would send
    it and the receiver may read it."""
    sourced = [part.source for part in parts if part.source is not None]
    readable = iter(receiver_may_read(sourced, receiver_zone))
    messages: list[dict[str, Any]] = []
    for part, verdict in decided_parts(parts, send_zone=send_zone):
        shown = verdict is None or ((verdict.outcome != Outcome.REFUSED) & next(readable))
        if len(messages) <= part.message:
            messages.append({"role": part.role, "parts": []})
        messages[part.message]["parts"].append(_part_dict(part, shown))
    return messages


def _part_dict(part: PreviewPart, shown: bool) -> dict[str, Any]:
    data_class = (part.source.data_class or None) if part.source is not None else None
    listed = {"kind": str(part.kind), "identifier": part.identifier, "data_class": data_class}
    if shown:
        return {**listed, "withheld": False, "text": part.text}
    return {**listed, "withheld": True}


def _system_parts(
    plan: SendPlan, provenance: SendProvenance, redactions: Redactions
) -> Iterator[PreviewPart]:
    configuration = plan.configuration
    prompt = configuration.system_prompt.strip()
    for item in provenance.request.system_override:  # the caller's system text in place of the prompt
        identifier = item.identifier or "system"
        source = Source(SourceKind.CALLER_CONTEXT, identifier, item.data_class, None, Enforcement.ENFORCE)
        yield PreviewPart(
            0, "system", SourceKind.CALLER_CONTEXT, identifier, redactions.text(item.text), source
        )
    if prompt and not provenance.request.system_override:
        [source] = configuration.prompt_sources()
        text = redactions.text(prompt)
        yield PreviewPart(0, "system", SourceKind.SYSTEM_PROMPT, source.identifier, text, source)
    for snippet in provenance.snippets:
        source = snippet.as_source()
        text = redactions.text(snippet_block([snippet]))
        yield PreviewPart(0, "system", SourceKind.SNIPPET, source.identifier, text, source)


def _user_parts(
    plan: SendPlan, provenance: SendProvenance, redactions: Redactions, message: int
) -> Iterator[PreviewPart]:
    yield from _skill_parts(plan, provenance, redactions, message)
    request = provenance.request
    for position, item in enumerate(request.caller_context):
        identifier = item.identifier or caller_context_identifier(position)
        source = Source(SourceKind.CALLER_CONTEXT, identifier, item.data_class, None, Enforcement.ENFORCE)
        labelled = context_item_text(
            ContextItem(redactions.text(item.name), redactions.text(item.text), item.data_class)
        )
        yield PreviewPart(message, "user", SourceKind.CALLER_CONTEXT, identifier, labelled, source)
    task_input = request.task_input
    if task_input:
        identifier = request.task_input_identifier
        source = Source(
            SourceKind.TASK_INPUT, identifier, request.input_data_class, None, Enforcement.ENFORCE
        )
        text = redactions.text(task_input)
        yield PreviewPart(message, "user", SourceKind.TASK_INPUT, identifier, text, source)


def _transcript_parts(request: SendRequest, redactions: Redactions, first: int) -> Iterator[PreviewPart]:
    """A caller conversation's messages after the task, one part each (content, then any tool calls
    as JSON), at message ``first`` on. A run's transcript is not previewed."""
    for offset, entry in enumerate(request.transcript):
        source = entry.source(offset)
        if source is None:
            continue
        redacted = redactions.message(entry.message)
        content = redacted.content if isinstance(redacted.content, str) else ""
        calls = [json.dumps(call.to_openai()["function"], ensure_ascii=False) for call in redacted.tool_calls]
        text = "\n".join(text for text in (content, *calls) if text)
        yield PreviewPart(first + offset, entry.message.role, source.kind, source.identifier, text, source)


def _skill_parts(
    plan: SendPlan, provenance: SendProvenance, redactions: Redactions, message: int
) -> Iterator[PreviewPart]:
    """The skill block as its fences (framing) around one part per included skill."""
    block = provenance.skills
    if not block.included:
        return
    progressive = plan.configuration.skill_mode == SkillMode.PROGRESSIVE
    sections = [skill_section(skill, progressive=progressive) for skill in block.included]
    tail = f"\n{END_MARKER}"
    head = block.text[: len(block.text) - len(SECTION_SEPARATOR.join(sections)) - len(tail)]
    yield PreviewPart(message, "user", FRAMING, "skill_block_begin", head, None)
    for section, source in zip(sections, block.sources, strict=True):
        text = redactions.text(section)
        yield PreviewPart(message, "user", SourceKind.SKILL, source.identifier, text, source)
    yield PreviewPart(message, "user", FRAMING, "skill_block_end", END_MARKER, None)
