"""The governed step (docs/architecture.md): claim → assemble → govern → fit → call → record → tools → next.

A step index that completed is never redone: a redelivered task finds the step recorded and goes
straight to the tool calls that have no result yet. A model call whose result was not recorded (the
worker died during it) is made again; that costs tokens but changes nothing.

An unexpected exception inside a claimed step (a defect: in a scanner, the fit, a record) ends the
run ``failed`` with ``internal_error`` and releases the lease, so no run waits for a step that will
raise again on every delivery. What retrying can cure is left to the task: a dropped database
connection, and Celery's soft time limit (the lease then expires and the reaper requeues the run).

A claimed step keeps its lease renewed while it runs (agents/runtime/heartbeat.py), and each record
of its result first checks that its worker still holds the lease, in the record's own transaction:
a worker that lost it (another worker took the step over) keeps nothing and skips the step.
"""

from __future__ import annotations

import logging
import time
import traceback
from dataclasses import dataclass

from celery.exceptions import SoftTimeLimitExceeded
from django.db import InterfaceError, OperationalError, models, transaction
from django.utils import timezone

from agents.errors import BudgetExhausted
from agents.models import AgentRun, AgentStep, RunMessage, StepStatus, TerminationReason
from agents.runtime.approvals import Pause, run_pause
from agents.runtime.compaction import run_compact
from agents.runtime.heartbeat import lease_kept
from agents.runtime.leases import HeldLease, LeaseLost, lease_claim, lease_hold, run_advance, run_finish
from agents.runtime.live import streamed_send
from agents.runtime.outcome import Ended, SendError
from agents.runtime.plan import SendPlan
from agents.runtime.queue import step_enqueue
from agents.runtime.record import CompletedStep, StepRecord, completed_step_record, step_record
from agents.runtime.send import GovernedCall
from agents.runtime.tool_calls import STEP_RECEIPT_UNREAD, ToolCallsDone, execute_tool_calls
from agents.runtime.transcript import run_send
from agents.selectors import run_client_name
from catalog.errors import ModelInactive
from config.logs import log_context_update
from context_assembly.fitting import ContextOverflow
from governance.errors import ContextRefused
from governance.guardrails.redaction import redact
from governance.services import EventContext
from providers.failures import ProviderError

logger = logging.getLogger(__name__)

INTERNAL_ERROR = "internal_error"
# Exceptions a claimed step lets through to the task, which retries on them (see the module docstring).
RETRIED = (OperationalError, InterfaceError, SoftTimeLimitExceeded)


class LeaseBusy(Exception):
    """Another worker holds a live lease on this step; try again after ``retry_in`` seconds."""

    def __init__(self, retry_in: float) -> None:
        super().__init__(f"step is leased for another {retry_in:.1f}s")
        self.retry_in = retry_in


class StepAction(models.TextChoices):
    """What a step run did (a Celery task returns it)."""

    SKIPPED = "skipped", "Skipped: the step was done, the run ended, or the lease was lost"
    ADVANCED = "advanced", "Advanced: the tool calls ran and the next step is enqueued"
    FINISHED = "finished", "Finished: the run ended (the reason says how)"


@dataclass(frozen=True)
class StepOutcome:
    run_id: str
    step_index: int
    action: StepAction
    reason: str = ""


def step_run(*, run_id: str, step_index: int, worker: str) -> StepOutcome:
    """Run one step of a run. Idempotent: safe to call again for the same index at any time."""
    claim = lease_claim(run_id=run_id, step_index=step_index, worker=worker)
    if not claim.claimed:
        if claim.busy_until is not None:
            raise LeaseBusy(max(0.5, (claim.busy_until - timezone.now()).total_seconds()))
        return StepOutcome(run_id, step_index, StepAction.SKIPPED, "step already done or run ended")
    run = claim.run
    assert run is not None
    try:
        with lease_kept(HeldLease(run_id=str(run.id), step_index=step_index, worker=worker)):
            return _claimed_step_run(run, step_index, worker, claim.step_status, claim.messages)
    except RETRIED:
        raise
    except LeaseLost:
        logger.warning(
            "step %s of run %s: another worker took the step over; nothing of this attempt is kept",
            step_index,
            run.id,
        )
        return StepOutcome(str(run.id), step_index, StepAction.SKIPPED, "lease lost")
    except Exception as error:
        return _internal_error(run, worker, step_index, error)


def _claimed_step_run(
    run: AgentRun, step_index: int, worker: str, recorded: str | None, messages: int | None
) -> StepOutcome:
    """The claimed step; ``messages``: the run's stored messages when the claim took the lease (the
    lease keeps every other writer out, so they are the transcript the model phase reads)."""
    log_context_update(client=run_client_name(run))
    if run.cancel_requested:
        return _finish(run, worker, step_index, TerminationReason.CANCELLED)
    completed = None
    if recorded != StepStatus.COMPLETED:
        if recorded is not None:  # a refusal or failure whose run was not ended (the worker died)
            AgentStep.objects.filter(run=run, index=step_index).delete()
        if step_index >= run.configuration.max_iterations:
            return _finish(run, worker, step_index, TerminationReason.MAX_ITERATIONS)
        compaction = run_compact(run=run, step_index=step_index, worker=worker)
        if compaction is not None:
            action = StepAction.ADVANCED if compaction.advanced else StepAction.SKIPPED
            return StepOutcome(str(run.id), step_index, action, f"compaction {compaction.status}")
        phase = _model_phase(run, step_index, worker, messages)
        if isinstance(phase, StepOutcome):
            return phase
        completed = phase
    return _tool_phase(run, step_index, worker, completed)


def _finish(
    run: AgentRun, worker: str, step_index: int, reason: TerminationReason, code: str = "", message: str = ""
) -> StepOutcome:
    # Stored as it may leave (the run detail shows it): redacted.
    message = redact(message).text if message else message
    run_finish(run_id=str(run.id), reason=reason, worker=worker, code=code, message=message)
    return StepOutcome(str(run.id), step_index, StepAction.FINISHED, reason.value)


def _internal_error(run: AgentRun, worker: str, step_index: int, error: Exception) -> StepOutcome:
    """End the run ``failed`` with ``internal_error``. The log line carries the exception's class and
    its frames (code locations and source lines), never its message, which may quote content; the
    stored message names the class only."""
    frames = "".join(traceback.format_tb(error.__traceback__))
    name = type(error).__name__
    logger.error(
        "step %s of run %s raised %s; the run ends with internal_error\nTraceback (message withheld):\n%s",
        step_index,
        run.id,
        name,
        frames,
    )
    # A fixed text and a class name: nothing to redact, so a broken scanner cannot stop the run ending.
    message = f"The step failed on an internal error ({name}); the service log has the details."
    reason = TerminationReason.INTERNAL_ERROR
    run_finish(run_id=str(run.id), reason=reason, worker=worker, code=INTERNAL_ERROR, message=message)
    return StepOutcome(str(run.id), step_index, StepAction.FINISHED, reason.value)


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


def _model_phase(
    run: AgentRun, step_index: int, worker: str, messages: int | None = None
) -> StepOutcome | CompletedStep:
    """The model call and its record; the step it stored, or how the run ended."""
    started = time.monotonic()
    request, plan = run_send(run, stored_messages=messages)
    context = _event_context(run, plan, step_index)
    call = GovernedCall(plan, context, client_id=run.api_client_id, max_tokens=run.max_tokens)
    outcome = streamed_send(call, run_id=str(run.id), step_index=step_index)
    if isinstance(outcome, Ended):
        status, reason, code = step_ends(outcome.error)
        with transaction.atomic():
            lease_hold(HeldLease(run_id=str(run.id), step_index=step_index, worker=worker))
            step_record(StepRecord(run, step_index, outcome, started, status, error=outcome.error.code))
            return _finish(run, worker, step_index, reason, code, outcome.error.message)
    record = StepRecord(
        run=run, index=step_index, outcome=outcome, started=started, status=StepStatus.COMPLETED
    )
    completed = completed_step_record(
        record,
        worker=worker,
        position=len(request.transcript) - request.caller_messages + request.compacted_messages,
    )
    if completed.finished:
        return StepOutcome(str(run.id), step_index, StepAction.FINISHED, TerminationReason.COMPLETED.value)
    return completed


# How a governed call that ended without a reply ends its step and its run: the step's status and the
# run's termination reason, by the call's error.
STEP_ENDS: dict[type[Exception], tuple[StepStatus, TerminationReason]] = {
    ModelInactive: (StepStatus.FAILED, TerminationReason.PROVIDER_FAILED),
    ContextRefused: (StepStatus.REFUSED, TerminationReason.POLICY_DENIED),
    BudgetExhausted: (StepStatus.REFUSED, TerminationReason.BUDGET_EXHAUSTED),
    ContextOverflow: (StepStatus.REFUSED, TerminationReason.CONTEXT_TRUNCATED),
    ProviderError: (StepStatus.FAILED, TerminationReason.PROVIDER_FAILED),
}


def step_ends(error: SendError) -> tuple[StepStatus, TerminationReason, str]:
    """The step's status, the run's termination reason and its code for ``error`` (:data:`STEP_ENDS`):
    a provider that failed on retries exhausted them; its code is its failure class."""
    status, reason = STEP_ENDS[type(error)]
    if isinstance(error, ProviderError):
        reason = TerminationReason.RETRIES_EXHAUSTED if error.retryable else reason
        return status, reason, str(error.failure_class)
    return status, reason, error.code


def _tool_phase(run: AgentRun, step_index: int, worker: str, completed: CompletedStep | None) -> StepOutcome:
    """The tool calls of the step's reply: ``completed`` when this attempt recorded it, else (None)
    read as an earlier attempt stored it."""
    recorded_now = completed is not None
    if completed is None:  # recorded by an earlier attempt of this step
        assistant = RunMessage.objects.get(run=run, step_index=step_index, role="assistant")
        receipt = STEP_RECEIPT_UNREAD
    else:
        assistant, receipt = completed.message, completed.receipt
    if not assistant.tool_calls:
        return _finish(run, worker, step_index, TerminationReason.COMPLETED)
    while (
        done := execute_tool_calls(
            run=run,
            step_index=step_index,
            worker=worker,
            assistant=assistant,
            recorded_now=recorded_now,
            receipt=receipt,
        )
    ) == ToolCallsDone.WAITING:
        pause = run_pause(run=run, worker=worker, step_index=step_index)
        if pause != Pause.DECIDED:  # paused: a decision queues this step again (agents/runtime/approvals.py)
            return StepOutcome(str(run.id), step_index, StepAction.SKIPPED, pause.value)
        recorded_now = False  # some results are stored now
        receipt = STEP_RECEIPT_UNREAD
    # The last result's statement may have moved the run on already.
    if done == ToolCallsDone.ADVANCED or run_advance(run=run, worker=worker, next_index=step_index + 1):
        step_enqueue(run_id=str(run.id), step_index=step_index + 1)
        return StepOutcome(str(run.id), step_index, StepAction.ADVANCED)
    return StepOutcome(str(run.id), step_index, StepAction.SKIPPED, "lease lost")
