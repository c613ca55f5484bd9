"""Compaction: a step of its own kind that makes a run's context smaller before it fills
(docs/decisions/0021-compaction-is-a-governed-send.md; docs/architecture.md, "The context of a step").

Per configuration, ``context_strategy``:

* ``drop_oldest`` (the default): nothing here; the fit drops the oldest whole turns at every step;
* ``clear_tool_results``: the run's older tool results are replaced by stubs naming the tool and the
  tokens cleared; the ``compaction_keep`` most recent results stay as they are. No model is called;
* ``summarise``: the run's turns before its ``compaction_keep`` most recent are replaced by a summary
  written by the summary model (``agents/runtime/summary.py``), a governed send recorded as this step
  with its usage, cost and labels. A refused summary (governance, the budget, the summary model's
  window) is recorded (nothing was sent) and the run goes on with ``drop_oldest``, for good: what
  refused it stays in the transcript. A failed one is recorded too, and tried again when next due.

Due at step ``i`` (never the first, never right after a compaction step) when the last completed model
call's prompt (the context usage of docs/architecture.md, "Context usage") reached
``compaction_threshold`` of its model's window, or when the step, fitted as it stands, would drop turns
or overflow. The compaction takes index ``i`` and the model call moves to ``i + 1``; the step row, the
run's totals and the run's advance commit together, so a redelivered index finds the run moved on.
Transcript rows are never changed (``agents/runtime/compacted.py`` applies the records).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from django.db import transaction

from agents.models import AgentRun, AgentStep, StepKind, StepStatus
from agents.runtime.compacted import (
    CLEAR_TOOL_RESULTS,
    SUMMARISE,
    Compacted,
    compacted,
    compaction_records,
)
from agents.runtime.leases import run_advance
from agents.runtime.outcome import Ended, SendError
from agents.runtime.plan import model_profile
from agents.runtime.queue import step_enqueue
from agents.runtime.record import StepRecord, step_record, step_totals
from agents.runtime.send import GovernedCall
from agents.runtime.summary import summary_events, summary_plan
from agents.runtime.targets import reply_limit
from agents.runtime.transcript import TRANSCRIPTS, run_send, run_usage
from catalog.errors import ModelInactive
from catalog.models import ContextStrategy
from context_assembly.estimator import Estimator
from context_assembly.fitting import fit
from governance.vocabulary import Provenance
from providers.failures import ProviderError
from providers.values import ProviderReply


class _LeaseLost(Exception):
    """The run's lease moved on while the compaction was recorded: nothing of it is kept."""


@dataclass(frozen=True)
class Compaction:
    """What a compaction step did: ``advanced`` is False when the lease was lost (nothing recorded)."""

    strategy: str
    status: str
    advanced: bool


def run_compact(*, run: AgentRun, step_index: int, worker: str) -> Compaction | None:
    """Compact the run at ``step_index`` when its strategy asks for it and it is due (see the module
    docstring); None when nothing was done and the step is a model call as always."""
    configuration = run.configuration
    strategy = configuration.context_strategy
    if strategy == ContextStrategy.DROP_OLDEST or step_index == 0:
        return None
    records = compaction_records(run)
    if records and records[-1].index == step_index - 1:
        return None
    state = compacted(TRANSCRIPTS.read(run), records)
    if strategy == ContextStrategy.SUMMARISE and state.refused:
        return None
    if not _due(run):
        return None
    started = time.monotonic()
    if strategy == ContextStrategy.CLEAR_TOOL_RESULTS:
        cleared = _clearing(run, state)
        if cleared is None:
            return None
        step = AgentStep(
            run=run,
            index=step_index,
            kind=StepKind.COMPACTION,
            status=StepStatus.COMPLETED,
            usage_provenance=Provenance.UNAVAILABLE,
            compaction=cleared,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        return _recorded(run, step_index, worker, lambda: _saved(step), CLEAR_TOOL_RESULTS, step.status)
    return _summarised(run, step_index, worker, state, started)


def _due(run: AgentRun) -> bool:
    """The last model call's prompt reached the threshold share of its window, or the step as it
    stands would drop turns or overflow (fitted by the one estimator for the serving model)."""
    usage = run_usage(run)
    used = usage.used_tokens.value
    if used is not None and used >= run.configuration.compaction_threshold * usage.context_window:
        return True
    _, plan = run_send(run)
    limit, _ = reply_limit(run.max_tokens, plan.model)
    fitted = fit(plan.assembled, estimator=Estimator(plan.profile), max_tokens=limit)
    return fitted.overflow or fitted.dropped_turns > 0


def _clearing(run: AgentRun, state: Compacted) -> dict[str, Any] | None:
    """The record of clearing every tool result in view but the ``compaction_keep`` most recent ones
    that is not cleared yet; None when there is none."""
    tools = [
        state.start + offset - (1 if state.summarised else 0)
        for offset, message in enumerate(state.messages)
        if message.role == "tool"
    ]
    keep = run.configuration.compaction_keep
    candidates = [position for position in tools[:-keep] if position not in state.cleared]
    if not candidates:
        return None
    names = {call.id: call.name for message in state.messages for call in message.tool_calls}
    estimator = Estimator(model_profile(run.configuration.model))
    entries = TRANSCRIPTS.read(run)
    cleared = []
    for position in candidates:
        message = entries[position].message
        text = message.content if isinstance(message.content, str) else ""
        name = names.get(message.tool_call_id or "", "a tool")
        cleared.append({"position": position, "tool": name, "tokens": estimator.count_text(text)})
    return {
        "strategy": CLEAR_TOOL_RESULTS,
        "cleared": cleared,
        "tokens": sum(item["tokens"] for item in cleared),
    }


def _summarised(
    run: AgentRun, step_index: int, worker: str, state: Compacted, started: float
) -> Compaction | None:
    """Summarise the turns before the ``compaction_keep`` most recent (one governed send) and record
    the step, whatever its outcome; None when there is no turn to summarise yet."""
    offset = 1 if state.summarised else 0
    starts = [i for i, message in enumerate(state.messages) if message.role == "assistant" and i >= offset]
    keep = run.configuration.compaction_keep
    if len(starts) <= keep:
        return None
    cut = starts[-keep]
    through = state.start + cut - offset
    plan = summary_plan(
        run=run,
        configuration=run.configuration,
        entries=state.entries[:cut],
    )
    events = summary_events(run, plan.model, step_index)
    outcome = GovernedCall(plan, events, client_id=run.api_client_id).send()
    data: dict[str, Any] = {"strategy": SUMMARISE, "through": through, "messages": cut}
    record = StepRecord(
        run=run,
        index=step_index,
        outcome=outcome,
        started=started,
        status=StepStatus.COMPLETED,
        kind=StepKind.COMPACTION,
        compaction=data,
    )
    if isinstance(outcome, Ended):
        record = replace(record, status=_ended(outcome.error), error=outcome.error.code)
    elif not outcome.reply.text.strip() or outcome.reply.tool_calls:
        record = replace(record, status=StepStatus.FAILED, error="summary_empty")
    else:
        data["summary"] = outcome.reply.text
        data["observed"] = outcome.decision.label_observed
    return _recorded(run, step_index, worker, lambda: _with_totals(record), SUMMARISE, record.status)


def _ended(error: SendError) -> StepStatus:
    """A summary the governance check, the client's budget or the summary model's window refused is
    ``refused`` (for good); one the provider failed, or whose model is switched off, ``failed``."""
    return StepStatus.FAILED if isinstance(error, ModelInactive | ProviderError) else StepStatus.REFUSED


def _with_totals(record: StepRecord) -> AgentStep:
    """The summary's step row, and its usage and cost added to the run's totals."""
    step = step_record(record)
    reply: ProviderReply | None = record.reply
    if reply is not None:
        totals = step_totals(step, reply.usage, calibration_ratio=None)
        AgentRun.objects.totals_add(run_id=str(record.run.id), added=totals.added(), values={})
    return step


def _saved(step: AgentStep) -> AgentStep:
    step.full_clean(exclude=["run", "model"])
    step.save()
    return step


def _recorded(
    run: AgentRun, step_index: int, worker: str, save: Callable[[], AgentStep], strategy: str, status: str
) -> Compaction:
    """``save()`` the step and advance the run past it in one transaction; nothing is kept when the
    lease was lost. The next step is enqueued on commit."""
    try:
        with transaction.atomic():
            save()
            if not run_advance(run=run, worker=worker, next_index=step_index + 1):
                raise _LeaseLost
    except _LeaseLost:
        return Compaction(strategy=strategy, status=status, advanced=False)
    step_enqueue(run_id=str(run.id), step_index=step_index + 1)
    return Compaction(strategy=strategy, status=status, advanced=True)
