"""Purging the content of evaluation results past their retention (editors/retention.py schedules it).

A purged evaluation keeps its verdict and its accounting: every result keeps its case's name, side,
outcome, checks and whether it passed, its usage, cost, decision and receipt; the case's input as
sent, the answer and the message go. Governance events are never touched.
"""

from __future__ import annotations

from datetime import datetime

from django.db import transaction
from django.db.models import QuerySet

from evaluations.models import Evaluation, EvaluationResult


def evaluations_content_due(*, before: datetime) -> QuerySet[Evaluation]:
    """Evaluations that finished before ``before`` and still hold their results' content."""
    return Evaluation.objects.filter(finished_at__lt=before, content_purged_at__isnull=True)


def evaluations_content_purge(*, before: datetime, now: datetime) -> int:
    """Purge the results' content of every evaluation :func:`evaluations_content_due` names, in one
    transaction; how many evaluations were purged."""
    with transaction.atomic():
        due = list(evaluations_content_due(before=before).values_list("id", flat=True))
        EvaluationResult.objects.filter(evaluation_id__in=due).update(case_input="", answer="", message="")
        return Evaluation.objects.filter(id__in=due).update(content_purged_at=now)
