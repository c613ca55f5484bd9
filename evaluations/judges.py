"""A judge: a configuration that scores an evaluation answer against the case's rubric
(docs/decisions/0038-scores-datasets-judges.md).

The judge's request is one send through the same governed call as the case's own (the same gate,
events, redaction, fit and dispatch): its task input holds the rubric, the case's input and the
answer, at the most sensitive of the case's class and the answer's label, so a judge whose zone does
not admit them is refused, says so in the check, and nothing reaches its provider. The operator reads
the verdict (receiver zone ``local``). Its tokens and cost are on the check and counted in the
result's cost. The judge answers "SCORE: n" (0 to 10); an answer without one fails the check.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agents.runtime.outcome import Ended
from agents.runtime.plan import SendRequest, send_plan
from agents.runtime.send import GovernedCall
from config.errors import ApplicationError
from evaluations.models import JUDGE_DEFAULT_MIN, JUDGE_SCALE, EvaluationCase, ResultOutcome
from governance.errors import ContextRefused
from governance.services import EventContext
from governance.vocabulary import DataClass, TrustZone, most_sensitive

SCORE = re.compile(r"SCORE:\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
REASON_CHARS = 300
PROMPT = (
    "You are judging an answer against a rubric. Reply first with a line 'SCORE: n', n from 0 (fails "
    f"the rubric) to {JUDGE_SCALE} (fully meets it), then one sentence saying why.\n\n"
    "RUBRIC:\n{rubric}\n\nQUESTION:\n{question}\n\nANSWER:\n{answer}"
)


@dataclass(frozen=True)
class Verdict:
    check: dict[str, Any]  # {"expectation", "held", "judge", "score", "reason", tokens, "cost"}
    cost: Decimal | None


def judge_verdict(*, case: EvaluationCase, fields: dict[str, Any]) -> Verdict:
    """The judge's check of one result's ``fields`` (outcome, answer, receipt)."""
    judge = case.judge
    assert judge is not None  # only called for a case with a judge
    minimum = case.judge_min_score if case.judge_min_score is not None else JUDGE_DEFAULT_MIN
    base = {"expectation": f"judge {judge.identifier} scores at least {minimum}", "judge": judge.identifier}
    if fields["outcome"] != ResultOutcome.ANSWERED:
        return Verdict({**base, "held": False, "score": None, "reason": "no answer to judge"}, None)
    answer_label = DataClass.parse((fields.get("receipt") or {}).get("label")) or DataClass.SECRET_ADJACENT
    label = most_sensitive([DataClass.parse(case.data_class) or DataClass.SECRET_ADJACENT, answer_label])
    request = SendRequest(
        task_input=PROMPT.format(
            rubric=case.judge_rubric, question=case.input, answer=fields.get("answer", "")
        ),
        input_data_class=label,
        receiver_zone=TrustZone.LOCAL,
        receiver_name="the evaluation's editor",
    )
    try:
        plan = send_plan(configuration=judge, request=request)
        events = EventContext(
            correlation_id=uuid.uuid4().hex,
            provider=plan.model.provider.identifier,
            model=plan.model.model_id,
            configuration=judge.identifier,
        )
        outcome = GovernedCall(plan, events, client_id=None).send()
    except ApplicationError as unsent:
        return Verdict({**base, "held": False, "score": None, "reason": f"not sent: {unsent.message}"}, None)
    if isinstance(outcome, Ended):
        ended = outcome.error
        what = "refused" if isinstance(ended, ContextRefused) else "failed"
        reason = f"the judge was {what}: {getattr(ended, 'message', '') or ended}"
        return Verdict({**base, "held": False, "score": None, "reason": reason}, None)
    text = outcome.reply.text
    found = SCORE.search(text)
    score = min(float(found.group(1)), float(JUDGE_SCALE)) if found else None
    cost = outcome.cost
    check = {
        **base,
        "held": score is not None and score >= minimum,
        "score": score,
        "reason": text[:REASON_CHARS] if found else f"no score in the judge's answer: {text[:REASON_CHARS]}",
        "prompt_tokens": outcome.usage.prompt_tokens,
        "completion_tokens": outcome.usage.completion_tokens,
        "cost": str(cost) if cost is not None else None,
    }
    return Verdict(check, cost)
