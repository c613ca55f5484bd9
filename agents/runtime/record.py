"""Recording a step's model call: its step row and, for a completed call, the assistant message, the
run's totals and the serving model's calibration, in one transaction."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.db import connections, router, transaction
from django.utils import timezone

from agents.models import AgentRun, AgentStep, RunMessage, StepStatus
from agents.runtime.held_writes import Statement, held_rows_written
from agents.runtime.leases import HeldLease, LeaseLost, StepTotals, run_totals_held_sql
from agents.runtime.outcome import Answered, CallOutcome
from agents.runtime.plan import SendPlan, model_profile
from agents.runtime.transcript import TRANSCRIPTS
from agents.telemetry import step_record_observed
from catalog.models import LlmModel
from catalog.models.sql import executed, row_inserted
from catalog.pricing import ZERO, reply_cost
from context_assembly.calibration import CalibrationState, run_ratio
from context_assembly.fitting import FitResult
from governance.vocabulary import Provenance
from providers.values import ProviderReply, Usage

# The step row's fields its validation leaves out: the run and the model are the step's own objects;
# the JSON fields are built here from the step's values (see step_built).
STEP_UNVALIDATED = frozenset(
    ("run", "model", "receipt", "breakdown", "skipped_targets", "pins", "compaction")
)


@dataclass(frozen=True)
class StepRecord:
    """What one step's model phase produced, as its step row stores it: the governed call's
    ``outcome`` holds what it settled (its fit, decision, targets skipped, the model that served),
    whatever ended it."""

    run: AgentRun
    index: int
    outcome: CallOutcome
    started: float  # time.monotonic() when the model phase began
    status: StepStatus
    error: str = ""  # the refusal's or failure's code
    kind: str = "model_call"  # or "compaction": a summary's send (agents/runtime/compaction.py)
    compaction: dict[str, object] = field(default_factory=dict)  # a compaction step's record

    @property
    def plan(self) -> SendPlan:
        return self.outcome.plan

    @property
    def reply(self) -> ProviderReply | None:
        return self.outcome.reply if isinstance(self.outcome, Answered) else None

    @property
    def fitted(self) -> FitResult | None:
        return self.outcome.fitted  # None when governance refused before the fit

    @property
    def model(self) -> LlmModel:
        return self.outcome.served or self.outcome.plan.model

    @property
    def estimated(self) -> int | None:
        return self.fitted.breakdown.estimated if self.fitted else None

    @property
    def uncalibrated(self) -> int | None:
        return uncalibrated_estimate(self.plan, self.fitted, self.model)


def uncalibrated_estimate(plan: SendPlan, fitted: FitResult | None, served: LlmModel) -> int | None:
    """Our estimate of the fitted prompt before the serving model's calibration factor (only
    approximate tokenizers apply it); None when nothing was fitted. ``fitted`` is the serving
    target's fit, estimated with that model's profile."""
    if fitted is None:
        return None
    profile = plan.profile if served.pk == plan.model.pk else model_profile(served)
    estimated = fitted.breakdown.estimated
    if profile.is_exact:
        return estimated
    return round(estimated / profile.calibration_factor)


def served_model_calibrate(
    *, plan: SendPlan, fitted: FitResult, served: LlmModel, usage: Usage
) -> CalibrationState | None:
    """Blend one call's provider-reported prompt tokens into the serving model's calibration: the one
    path for run steps and completions alike, one ``UPDATE … RETURNING`` statement
    (:meth:`catalog.models.calibrated.LlmModelQuerySet.calibrate`), atomic on its own and inside a step's
    transaction. No sample when the provider reported no prompt tokens, or when a fallback served the
    call: only the configuration's own model has its calibration read fresh with every claim, so only
    its factor is kept. Returns the state after the sample, None when none was taken."""
    sample = _calibration_sample(plan=plan, fitted=fitted, served=served, usage=usage)
    return None if sample is None else LlmModel.objects.calibrate(**sample)


def _calibration_sample(
    *, plan: SendPlan, fitted: FitResult, served: LlmModel, usage: Usage
) -> dict[str, Any] | None:
    """:func:`served_model_calibrate`'s sample, as ``LlmModel.objects.calibrate`` takes it; None for
    no sample."""
    estimated = uncalibrated_estimate(plan, fitted, served)
    if not usage.prompt_tokens or not estimated or served.pk != plan.model.pk:
        return None
    return {
        "model_id": served.pk,
        "reported": usage.prompt_tokens,
        "estimated": estimated,
        "at": timezone.now(),
    }


@dataclass(frozen=True)
class CompletedStep:
    message: RunMessage  # the assistant message the reply became
    finished: bool  # the reply had no tool calls, so the run completed in the same commit
    receipt: dict[str, object] | None  # the step's receipt, as stored


def step_record(record: StepRecord) -> AgentStep:
    """Store ``record`` as the run's step row at ``record.index``."""
    return step_saved(step_built(record))


def step_saved(step: AgentStep) -> AgentStep:
    row_inserted(step)
    step_record_observed(step)
    return step


def step_built(record: StepRecord) -> AgentStep:
    """``record`` as the run's step row at ``record.index``, validated, not yet saved."""
    usage = record.reply.usage if record.reply else None
    reported = usage.prompt_tokens if usage else None
    estimated = record.estimated
    if usage and reported is not None:
        provenance = usage.provenance
    else:
        provenance = Provenance.ESTIMATED if estimated is not None else Provenance.UNAVAILABLE
    step = AgentStep(
        run=record.run,
        index=record.index,
        kind=record.kind,
        compaction=record.compaction,
        status=record.status,
        model=record.model,
        provider=record.model.provider.identifier,
        reported_prompt_tokens=reported,
        estimated_prompt_tokens=estimated,
        cached_tokens=usage.cached_tokens if usage else None,
        cache_write_tokens=usage.cache_write_tokens if usage else None,
        completion_tokens=usage.completion_tokens if usage else None,
        cost=reply_cost(record.model, usage) if usage else None,
        usage_provenance=provenance,
        breakdown=record.fitted.breakdown.as_dict() if record.fitted else {},
        context_window=record.model.context_window,
        max_tokens=record.fitted.breakdown.reserve if record.fitted else None,
        max_tokens_clamped=record.outcome.clamped,
        skipped_targets=[skipped.as_dict() for skipped in record.outcome.skipped],
        pins=pinned.used_dicts() if (pinned := record.plan.pinned) is not None else [],
        finish_reason=record.reply.finish_reason if record.reply else "",
        calibration_ratio=run_ratio(reported, record.uncalibrated),
        duration_ms=int((time.monotonic() - record.started) * 1000),
        error_code=record.error[:64],
        **_labels(record),
    )
    # The receipt, the breakdown, the targets skipped, the pins and a compaction's record are built
    # here from the step's own values (JSON by construction: each an ``as_dict()`` or a list of
    # them, and the save writes each as JSON anyway): validating them would serialise each once
    # more for nothing. The row's one uniqueness rule, (run, index), names the run, which is not
    # validated here: the insert itself enforces it, so the unique and constraint checks would only
    # build the lookups they then skip.
    step.full_clean(exclude=STEP_UNVALIDATED, validate_unique=False, validate_constraints=False)
    return step


def _labels(record: StepRecord) -> dict[str, object]:
    """A step's labels and receipt: only for a step whose sources were decided and sent."""
    answered = record.outcome
    if not isinstance(answered, Answered):
        return {}
    return {
        "label": answered.label,
        "receiver_label": answered.receiver_label,
        "integrity": answered.decision.integrity,
        "receipt": answered.receipt,
    }


def completed_step_record(record: StepRecord, *, worker: str, position: int) -> CompletedStep:
    """The completed step, its assistant message at ``position`` (the transcript's length: the lease
    makes ``worker`` the run's only writer, and a unique constraint backs that), totals, calibration.

    All of it commits at once, or nothing: on PostgreSQL as one statement, else in one transaction
    (``agents/runtime/held_writes.py``). A reply without tool calls ends the run in the same statement
    as the totals, so a final answer and the run's completion commit together. Raises
    :class:`LeaseLost`, keeping nothing, when ``worker`` no longer holds the run's lease at this
    step."""
    answered = record.outcome
    if not isinstance(answered, Answered):
        raise ValueError("a completed step is recorded with its fit, its reply and the model that served it")
    reply, served = answered.reply, answered.served
    step = step_built(record)
    finished = not reply.tool_calls
    # The lease check, with the totals (and, for a final answer, the run's completion) in the same
    # statement; the run's row stays locked until the commit.
    held = HeldLease(run_id=str(record.run.id), step_index=record.index, worker=worker)
    totals = step_totals(step, reply.usage, calibration_ratio=step.calibration_ratio)
    check = run_totals_held_sql(held=held, totals=totals, complete=finished)
    message = RunMessage(
        run=record.run,
        position=position,
        step_index=record.index,
        role="assistant",
        content=reply.text,
        data_class=step.label,
        receiver_class=step.receiver_label,
        label_observed=answered.decision.label_observed,
        integrity=step.integrity,
        tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in reply.tool_calls],
    )
    sample = _calibration_sample(plan=record.plan, fitted=answered.fitted, served=served, usage=reply.usage)
    calibration = None if sample is None else LlmModel.objects.calibrate_sql(**sample)
    alias = router.db_for_write(AgentStep)
    then = () if calibration is None else (calibration,)
    written = held_rows_written(check, (step, message), alias=alias, then=then)
    if written is None:
        written = _recorded_in_transaction(check, step, message, sample, alias=alias)
    if not written:
        raise LeaseLost(f"run {held.run_id} step {held.step_index} is no longer leased by this worker")
    step_record_observed(step)
    if not finished:  # the run's next step reads its transcript from the one held here
        transaction.on_commit(lambda: TRANSCRIPTS.written(message), using=alias)
    return CompletedStep(message=message, finished=finished, receipt=step.receipt)


def _recorded_in_transaction(
    check: Statement, step: AgentStep, message: RunMessage, sample: dict[str, Any] | None, *, alias: str
) -> bool:
    """:func:`completed_step_record`'s writes as statements in one transaction (where one statement
    cannot hold them): the lease check first, the model's calibration last (its row then stays locked
    only for the commit). False, with nothing written, when the check found the lease lost."""
    with transaction.atomic(using=alias):
        with connections[alias].cursor() as cursor:
            if not executed(cursor, *check).rowcount:
                return False
        row_inserted(step)
        row_inserted(message)
        if sample is not None:
            LlmModel.objects.calibrate(**sample)
    return True


def step_totals(step: AgentStep, usage: Usage, *, calibration_ratio: float | None) -> StepTotals:
    """What ``step``, whose reply reported ``usage``, adds to its run's totals."""
    return StepTotals(
        prompt_tokens=usage.prompt_tokens or 0,
        cached_tokens=usage.cached_tokens or 0,
        cache_write_tokens=usage.cache_write_tokens or 0,
        completion_tokens=usage.completion_tokens or 0,
        cost=step.cost or ZERO,
        calibration_ratio=calibration_ratio,
    )
