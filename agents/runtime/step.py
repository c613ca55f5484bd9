"""The governed step (DESIGN.md §7): claim → assemble → govern → fit → call → record → tools → next.

A step index that completed is never redone: a redelivered task finds the step recorded and goes
straight to the tool calls that have no result yet. A model call whose result was not recorded (the
worker died during it) is made again; that costs tokens but changes nothing.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from agents.models import (
    AgentRun,
    AgentStep,
    LlmModel,
    RunMessage,
    StepStatus,
    TerminationReason,
)
from agents.providers.base import ProviderReply
from agents.runtime.leases import lease_claim, lease_renew, run_advance, run_finish, run_finish_with
from agents.runtime.plan import SendPlan, send_plan
from agents.runtime.queue import step_enqueue
from agents.runtime.send import governed_send
from agents.runtime.tool_calls import execute_tool_calls
from agents.runtime.transcript import run_context, run_request
from agents.selectors import run_client_name
from context_assembly.calibration import run_ratio
from context_assembly.fitting import FitResult
from governance.services import EventContext
from governance.vocabulary import Provenance

logger = logging.getLogger(__name__)


class LeaseBusy(Exception):
    """Another worker holds a live lease on this step; try again after ``retry_in`` seconds."""

    def __init__(self, retry_in: float) -> None:
        super().__init__(f"step is leased for another {retry_in:.1f}s")
        self.retry_in = retry_in


@dataclass(frozen=True)
class StepOutcome:
    run_id: str
    step_index: int
    action: str  # "skipped", "advanced", "finished"
    reason: str = ""


def step_run(*, run_id: str, step_index: int, worker: str) -> StepOutcome:
    """Run one step of a run. Idempotent: safe to call again for the same index at any time."""
    claim = lease_claim(run_id=run_id, step_index=step_index, worker=worker)
    if not claim.claimed:
        if claim.busy_until is not None:
            raise LeaseBusy(max(0.5, (claim.busy_until - timezone.now()).total_seconds()))
        return StepOutcome(run_id, step_index, "skipped", "step already done or run ended")
    run = claim.run
    assert run is not None
    if run.cancel_requested:
        return _finish(run, worker, step_index, TerminationReason.CANCELLED)
    recorded = claim.step_status
    assistant = None
    if recorded != StepStatus.COMPLETED:
        if recorded is not None:  # a refusal or failure whose run was not ended (the worker died)
            AgentStep.objects.filter(run=run, index=step_index).delete()
        if step_index >= run.configuration.max_iterations:
            return _finish(run, worker, step_index, TerminationReason.MAX_ITERATIONS)
        phase = _model_phase(run, step_index, worker)
        if isinstance(phase, StepOutcome):
            return phase
        assistant = phase
    return _tool_phase(run, step_index, worker, assistant)


def _finish(
    run: AgentRun, worker: str, step_index: int, reason: TerminationReason, code: str = "", message: str = ""
) -> StepOutcome:
    run_finish(run_id=str(run.id), reason=reason, worker=worker, code=code, message=message)
    return StepOutcome(str(run.id), step_index, "finished", reason.value)


def _event_context(run: AgentRun, plan: SendPlan, step_index: int) -> EventContext:
    return EventContext(
        correlation_id=str(run.id),
        provider=plan.model.provider.identifier,
        model=plan.model.model_id,
        configuration=plan.configuration.identifier,
        api_client=run_client_name(run),
        run=str(run.id),
        step=step_index,
    )


def _model_phase(run: AgentRun, step_index: int, worker: str) -> StepOutcome | RunMessage:
    """The model call and its record; the assistant message it stored, or how the run ended."""
    started = time.monotonic()
    request = run_request(run, run_context(run))
    plan = send_plan(configuration=run.configuration, request=request)
    outcome = governed_send(plan, _event_context(run, plan, step_index), max_tokens=run.max_tokens)
    if outcome.refusal is not None:
        refusal = outcome.refusal
        _record_step(
            run, step_index, plan, None, None, started, status=StepStatus.REFUSED, error=refusal.code
        )
        return _finish(
            run, worker, step_index, TerminationReason.POLICY_DENIED, refusal.code, refusal.message
        )
    if outcome.overflow:
        _record_step(
            run,
            step_index,
            plan,
            outcome.fitted,
            None,
            started,
            status=StepStatus.REFUSED,
            error="context_overflow",
        )
        return _finish(run, worker, step_index, TerminationReason.CONTEXT_TRUNCATED, "context_overflow")
    if outcome.failure is not None:
        failure = outcome.failure
        _record_step(
            run, step_index, plan, outcome.fitted, None, started, status=StepStatus.FAILED, error=failure.code
        )
        reason = (
            TerminationReason.RETRIES_EXHAUSTED if failure.retryable else TerminationReason.PROVIDER_FAILED
        )
        return _finish(run, worker, step_index, reason, str(failure.failure_class), failure.message)
    assert outcome.fitted is not None and outcome.reply is not None and outcome.served is not None
    message, finished = _record_completed_step(
        run,
        worker,
        step_index,
        plan,
        outcome.fitted,
        outcome.reply,
        outcome.served,
        started,
        len(request.transcript),
    )
    if finished:
        return StepOutcome(str(run.id), step_index, "finished", TerminationReason.COMPLETED.value)
    return message


def _record_step(
    run: AgentRun,
    step_index: int,
    plan: SendPlan,
    fitted: FitResult | None,
    reply: ProviderReply | None,
    started: float,
    *,
    status: StepStatus,
    error: str = "",
    model: LlmModel | None = None,
) -> AgentStep:
    usage = reply.usage if reply else None
    estimated = fitted.breakdown.estimated if fitted else None
    reported = usage.prompt_tokens if usage else None
    step = AgentStep(
        run=run,
        index=step_index,
        status=status,
        model=model or plan.model,
        provider=(model or plan.model).provider.identifier,
        reported_prompt_tokens=reported,
        estimated_prompt_tokens=estimated,
        cached_tokens=usage.cached_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        usage_provenance=usage.provenance
        if usage and reported is not None
        else (Provenance.ESTIMATED if estimated is not None else Provenance.UNAVAILABLE),
        breakdown=fitted.breakdown.as_dict() if fitted else {},
        finish_reason=reply.finish_reason if reply else "",
        calibration_ratio=run_ratio(reported, _uncalibrated(plan, estimated)),
        duration_ms=int((time.monotonic() - started) * 1000),
        error_code=error[:64],
    )
    step.full_clean(exclude=["run", "model"])
    step.save()
    return step


def _uncalibrated(plan: SendPlan, estimated: int | None) -> int | None:
    """Our estimate before the model's calibration factor (only approximate tokenizers apply it)."""
    if estimated is None or plan.profile.is_exact:
        return estimated
    return round(estimated / plan.profile.calibration_factor)


@transaction.atomic
def _record_completed_step(
    run: AgentRun,
    worker: str,
    step_index: int,
    plan: SendPlan,
    fitted: FitResult,
    reply: ProviderReply,
    served: LlmModel,
    started: float,
    position: int,
) -> tuple[RunMessage, bool]:
    """The completed step, its assistant message at ``position`` (the transcript's length: the lease
    makes this worker the run's only writer, and a unique constraint backs that), totals, calibration.

    A reply without tool calls ends the run in the same statement as the totals (True), so a final
    answer and the run's completion commit together."""
    step = _record_step(
        run, step_index, plan, fitted, reply, started, status=StepStatus.COMPLETED, model=served
    )
    message = RunMessage.objects.create(
        run=run,
        position=position,
        step_index=step_index,
        role="assistant",
        content=reply.text,
        tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
    )
    usage = reply.usage
    totals = {
        "prompt_tokens_total": F("prompt_tokens_total") + (usage.prompt_tokens or 0),
        "cached_tokens_total": F("cached_tokens_total") + (usage.cached_tokens or 0),
        "completion_tokens_total": F("completion_tokens_total") + (usage.completion_tokens or 0),
        "last_calibration_ratio": step.calibration_ratio,
    }
    finished = not reply.tool_calls and run_finish_with(
        run_id=str(run.id), worker=worker, reason=TerminationReason.COMPLETED, **totals
    )
    if not finished:
        AgentRun.objects.filter(id=run.id).update(**totals)
    estimated = _uncalibrated(plan, fitted.breakdown.estimated)
    if usage.prompt_tokens and estimated and served.pk == plan.model.pk:
        # Last in the transaction: the model row stays locked only for the commit.
        LlmModel.objects.calibrate(
            model_id=served.pk, reported=usage.prompt_tokens, estimated=estimated, at=timezone.now()
        )
    return message, finished


def _tool_phase(run: AgentRun, step_index: int, worker: str, assistant: RunMessage | None) -> StepOutcome:
    if assistant is None:  # recorded by an earlier attempt of this step
        assistant = RunMessage.objects.get(run=run, step_index=step_index, role="assistant")
    if not assistant.tool_calls:
        return _finish(run, worker, step_index, TerminationReason.COMPLETED)
    lease_renew(run=run, worker=worker)
    execute_tool_calls(run=run, step_index=step_index, assistant=assistant)
    if run_advance(run=run, worker=worker, next_index=step_index + 1):
        step_enqueue(run_id=str(run.id), step_index=step_index + 1)
        return StepOutcome(str(run.id), step_index, "advanced")
    return StepOutcome(str(run.id), step_index, "skipped", "lease lost")
