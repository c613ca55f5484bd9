"""Evaluations: a configuration's evaluation set sent live and live + drafts, side by side.

:func:`evaluation_start` records an evaluation (the live versions it starts from as pins, the drafts
it applies with their digests) and enqueues it; :func:`evaluation_run` (the Celery task's service)
sends every case on both sides through the one governed call (:class:`agents.runtime.send.GovernedCall`:
the same governance check and events, egress redaction, fit, guard pass and dispatch as a completion),
storing each result as it lands so its progress shows. The live side is built from the pinned
versions (agents/runtime/pins.py); the drafted side from live + the drafts
(:mod:`evaluations.drafts`, as edited content: ``agents/runtime/content.py``), which must still have the digests they had at the start.
Comparing two published versions of the configuration instead (:mod:`evaluations.versions`), both
sides are pinned: the baseline side to one version, the candidate side to the other. A case that held
on the reference side (live, or the baseline) and not on the other is a regression, counted on the
evaluation when it finishes.

A case is a task input (and one caller context item) of the case's class: a model whose zone does not
accept it is refused the case, with its refusal event, and nothing reaches the provider. Its answer
goes to the editor who reads the evaluation in the admin, the service's operator (receiver zone
``local``, as a run without an API client). Evaluation sends are charged to no client's budget; their
usage and cost are stored on their results (docs/decisions/0025-evaluating-drafts.md).
"""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from agents.runtime.content import SendContent, edited_content, pinned_send_content
from agents.runtime.outcome import Answered, Ended
from agents.runtime.parts import configuration_parts
from agents.runtime.pins import Pin, configuration_pins_take, pinned_content
from agents.runtime.plan import send_plan
from agents.runtime.queue import task_enqueue
from agents.runtime.record import served_model_calibrate
from agents.runtime.request import SendRequest
from agents.runtime.send import GovernedCall
from catalog.models import Configuration, LlmModel
from context_assembly.assembly import ContextItem
from context_assembly.fitting import ContextOverflow
from evaluations.checks import expectations_checked
from evaluations.drafts import drafted_side, with_model
from evaluations.errors import EvaluationInvalid
from evaluations.judges import judge_verdict
from evaluations.models import (
    REFERENCE_SIDES,
    Evaluation,
    EvaluationCase,
    EvaluationResult,
    EvaluationSide,
    EvaluationStatus,
    ResultOutcome,
)
from evaluations.versions import version_pins
from governance.actors import Actor
from governance.errors import ContextRefused
from governance.policy import decide, enforcement_mode
from governance.services import EventContext, decision_as_dict
from governance.vocabulary import TrustZone

# The name the task had before evaluations were an app of their own: messages already queued under
# it are still delivered to the task after an upgrade.
EVALUATION_TASK = "agents.tasks.evaluation_run_task"
RECEIVER_NAME = "the evaluation's editor"
# How long a claim holds a running evaluation without storing a result: longer than any one send with
# its retries and fallbacks, shorter than the broker's redelivery of a lost task.
LEASE = timedelta(minutes=10)

logger = logging.getLogger(__name__)


def evaluation_start(
    *,
    configuration: Configuration,
    model: LlmModel,
    actor: Actor,
    versions: tuple[int, int] | None = None,
) -> Evaluation:
    """Record an evaluation of ``configuration``'s cases on ``model`` and enqueue it once committed:
    live beside live + the pending drafts, or with ``versions`` (baseline, candidate: history ids of
    the configuration, :mod:`evaluations.versions`) those two published versions side by side.

    Raises :class:`EvaluationInvalid` (nothing stored or enqueued) when the configuration has no case,
    ``model`` or its provider is switched off, or a version is not one of the configuration's."""
    cases = list(configuration.evaluation_cases.all())
    if not cases:
        raise EvaluationInvalid(f"Configuration {configuration.identifier!r} has no evaluation cases.")
    if not (model.is_active and model.provider.is_active):
        raise EvaluationInvalid(f"Model {model} or its provider is switched off: nothing would be sent.")
    with transaction.atomic():
        if versions is None:
            parts = configuration_parts(configuration)
            pins = configuration_pins_take(
                configuration=configuration, snippets=parts.selection.snippets, request_skills=()
            )
            drafts, candidate_pins = list(drafted_side(configuration).applied), []
        else:
            pins = version_pins(configuration, versions[0])
            drafts, candidate_pins = [], version_pins(configuration, versions[1])
        evaluation = Evaluation(
            configuration=configuration,
            model=model,
            started_by=actor.label,
            drafts=drafts,
            pins=pins,
            candidate_pins=candidate_pins,
            cases=[case.pk for case in cases],
            total=2 * len(cases),
        )
        evaluation.full_clean()
        evaluation.save()
        task_enqueue(EVALUATION_TASK, evaluation.pk)
    return evaluation


def evaluation_run(*, evaluation_id: int) -> Evaluation:
    """Send every case of a queued evaluation on both sides and store the results; a no-op for one
    finished or held by another task. A running evaluation whose lease expired (its worker died; the
    task is redelivered, ``acks_late``) is taken over and goes on after the results already stored,
    which are never sent again. An error that stops it is stored on it (status ``failed``) and logged."""
    now = timezone.now()
    claimable = Q(status=EvaluationStatus.QUEUED) | Q(status=EvaluationStatus.RUNNING, lease_until__lt=now)
    claimed = Evaluation.objects.filter(claimable, pk=evaluation_id).update(
        status=EvaluationStatus.RUNNING, lease_until=now + LEASE
    )
    evaluation = Evaluation.objects.select_related("configuration__model__provider", "model__provider").get(
        pk=evaluation_id
    )
    if claimed != 1:
        return evaluation
    try:
        passed, regressions = _run(evaluation)
    except Exception as error:
        logger.exception("evaluation %s failed", evaluation_id)
        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        _finish(
            evaluation, status=EvaluationStatus.FAILED, passed=False, regressions=None, error=str(message)
        )
        return evaluation
    _finish(evaluation, status=EvaluationStatus.FINISHED, passed=passed, regressions=regressions, error="")
    return evaluation


def _finish(
    evaluation: Evaluation, *, status: str, passed: bool, regressions: int | None, error: str
) -> None:
    Evaluation.objects.filter(pk=evaluation.pk).update(
        status=status,
        passed=passed,
        regressions=regressions,
        error=error,
        finished_at=timezone.now(),
        lease_until=None,
    )
    evaluation.refresh_from_db()


@dataclass(frozen=True)
class _Side:
    side: str
    configuration: Configuration
    content: SendContent


def _sides(evaluation: Evaluation) -> tuple[_Side, _Side]:
    """The configuration and content of each side, on the evaluation's model."""
    configuration = evaluation.configuration
    if evaluation.compares_versions:
        served = with_model(configuration, evaluation.model)
        return (
            _pinned_side(EvaluationSide.BASELINE, served, evaluation.pins),
            _pinned_side(EvaluationSide.CANDIDATE, served, evaluation.candidate_pins),
        )
    drafted = drafted_side(configuration)
    if list(drafted.applied) != list(evaluation.drafts):
        raise EvaluationInvalid(
            "The drafts changed after the evaluation started (saved, published or discarded); "
            "start a new evaluation."
        )
    pins = [Pin.of(raw) for raw in evaluation.pins]
    live = with_model(configuration, evaluation.model)
    drafts = with_model(drafted.configuration, evaluation.model)
    return (
        _Side(
            EvaluationSide.LIVE,
            live,
            pinned_send_content(live, pinned_content(configuration=live, pins=pins)),
        ),
        _Side(
            EvaluationSide.DRAFTED,
            drafts,
            edited_content(drafts, drafted.snippet_edits, drafted.own_skills),
        ),
    )


def _pinned_side(side: str, configuration: Configuration, raw_pins: list[Any]) -> _Side:
    pins = [Pin.of(raw) for raw in raw_pins]
    content = pinned_send_content(configuration, pinned_content(configuration=configuration, pins=pins))
    return _Side(side, configuration, content)


def _run(evaluation: Evaluation) -> tuple[bool, int]:
    """Send what is not stored yet; whether every case held on the compared side, and how many cases
    held on the reference side and not on the compared one (regressions)."""
    sides = _sides(evaluation)
    passed = True
    regressions = 0
    cases = EvaluationCase.objects.select_related("judge__model__provider").in_bulk(evaluation.cases)
    stored = {(r.position, r.side): r.passed for r in EvaluationResult.objects.filter(evaluation=evaluation)}
    for position, case_id in enumerate(evaluation.cases):
        case = cases.get(case_id)
        if case is None:
            raise EvaluationInvalid("A case was deleted after the evaluation started; start a new one.")
        held_by_side = []
        for side in sides:
            held = stored.get((position, side.side))
            if held is None:
                result = _case_result(evaluation, case, position, side)
                result.full_clean()
                with transaction.atomic():
                    result.save()
                    Evaluation.objects.filter(pk=evaluation.pk).update(
                        done=F("done") + 1, lease_until=timezone.now() + LEASE
                    )
                held = result.passed
            held_by_side.append(held)
            passed = passed and (held or side.side in REFERENCE_SIDES)
        reference_held, compared_held = held_by_side
        regressions += int(reference_held and not compared_held)
    return passed, regressions


def _case_request(case: EvaluationCase) -> SendRequest:
    """A case as a request: its input and caller context at its class, for the operator."""
    context = (ContextItem("context", case.caller_context, case.data_class),) if case.caller_context else ()
    return SendRequest(
        task_input=case.input,
        input_data_class=case.data_class,
        caller_context=context,
        receiver_zone=TrustZone.LOCAL,
        receiver_name=RECEIVER_NAME,
    )


def _case_result(
    evaluation: Evaluation, case: EvaluationCase, position: int, side: _Side
) -> EvaluationResult:
    """One case sent on one side through the governed call, as a result (unsaved)."""
    request_id = uuid.uuid4().hex
    plan = send_plan(configuration=side.configuration, request=_case_request(case), content=side.content)
    events = EventContext(
        correlation_id=request_id,
        provider=plan.model.provider.identifier,
        model=plan.model.model_id,
        configuration=evaluation.configuration.identifier,
    )
    started = time.monotonic()
    outcome = GovernedCall(plan, events, client_id=None).send()
    fields = _ended_fields(outcome) if isinstance(outcome, Ended) else _answered_fields(outcome)
    latency_ms = round(1000 * (time.monotonic() - started))
    if fields["outcome"] == ResultOutcome.REFUSED:
        fields["decision"] = decision_as_dict(
            decide(plan.sources, plan.zone, enforcement_mode(), plan.receiver)
        )
    checks = expectations_checked(case, fields, plan.profile)
    if case.judge_id is not None:
        verdict = judge_verdict(case=case, fields=fields)
        checks.append(verdict.check)
        if verdict.cost is not None:  # the judge's cost is the evaluation's too
            fields["cost"] = (fields.get("cost") or Decimal(0)) + verdict.cost
    return EvaluationResult(
        evaluation=evaluation,
        case=case,
        case_name=case.name,
        case_input=case.input,
        case_data_class=case.data_class,
        position=position,
        side=side.side,
        latency_ms=latency_ms,
        checks=checks,
        passed=all(check["held"] for check in checks)
        and fields["outcome"] in (ResultOutcome.ANSWERED, ResultOutcome.REFUSED),
        **fields,
    )


def _ended_fields(ended: Ended) -> dict[str, Any]:
    """A call that ended without a reply, as a result's fields: why, and what it had settled."""
    error = ended.error
    message = str(getattr(error, "message", "") or error)
    if isinstance(error, ContextRefused):
        return {"outcome": ResultOutcome.REFUSED, "message": message}
    outcome = ResultOutcome.OVERFLOW if isinstance(error, ContextOverflow) else ResultOutcome.FAILED
    return {
        "outcome": outcome,
        "message": message,
        "breakdown": ended.fitted.breakdown.as_dict() if ended.fitted is not None else {},
        "decision": decision_as_dict(ended.decision) if ended.decision is not None else {},
    }


def _answered_fields(answered: Answered) -> dict[str, Any]:
    """An answered call as a result's fields; the serving model's calibration takes its usage."""
    usage = answered.usage
    served_model_calibrate(plan=answered.plan, fitted=answered.fitted, served=answered.served, usage=usage)
    return {
        "outcome": ResultOutcome.ANSWERED,
        "answer": answered.reply.text,
        "tool_calls": [{"name": c.name, "arguments": c.arguments} for c in answered.reply.tool_calls],
        "breakdown": answered.fitted.breakdown.as_dict(),
        "decision": decision_as_dict(answered.decision),
        "receipt": answered.receipt,
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "cost": answered.cost,
    }
