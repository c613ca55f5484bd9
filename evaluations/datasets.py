"""Evaluation cases made from production runs (docs/decisions/0038-scores-datasets-judges.md).

A run becomes a case of its configuration: its task input and its caller context as they were sent,
that is as stored (redacted when the run was created: ``agents/services/runs.py``), never the raw
request. The case keeps the run's labels: its one data class is the most sensitive of the input's
class and every caller context item's, so a model whose zone does not admit what the run sent is
refused the case at evaluation, as any case above a zone is. The case names its source run, and a run
already made into a case of its configuration is not made again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from agents.models import AgentRun
from evaluations.models import EvaluationCase
from governance.vocabulary import DataClass, most_sensitive

NAME_CHARS = 8  # characters of the run's id in the case's name


@dataclass(frozen=True)
class CasesFromRuns:
    made: tuple[EvaluationCase, ...]
    skipped: tuple[str, ...]  # the ids of runs already made into a case


def run_label(run: AgentRun) -> DataClass:
    """The most sensitive class of what the run's request held; an unreadable class counts as the
    most sensitive of all."""
    classes = [run.input_data_class, *(str(item.get("data_class", "")) for item in run.caller_context)]
    return most_sensitive([DataClass.parse(raw) or DataClass.SECRET_ADJACENT for raw in classes])


def caller_context_text(run: AgentRun) -> str:
    """The run's caller context items as one text, each under its (redacted) name."""
    return "\n\n".join(f"{item.get('name', '')}:\n{item.get('text', '')}" for item in run.caller_context)


def evaluation_cases_from_runs(*, runs: Iterable[AgentRun]) -> CasesFromRuns:
    """One case per run, of the run's configuration, after the configuration's last case."""
    made: list[EvaluationCase] = []
    skipped: list[str] = []
    with transaction.atomic():
        for run in runs:
            source = f"run {run.pk}"
            cases = EvaluationCase.objects.filter(configuration_id=run.configuration_id)
            if cases.filter(source=source).exists():
                skipped.append(str(run.pk))
                continue
            last = cases.order_by("-position").values_list("position", flat=True).first()
            case = EvaluationCase(
                configuration_id=run.configuration_id,
                name=f"from run {str(run.pk)[:NAME_CHARS]}",
                input=run.input_text,
                caller_context=caller_context_text(run),
                data_class=run_label(run),
                position=(last + 1) if last is not None else 0,
                source=source,
            )
            case.full_clean()
            case.save()
            made.append(case)
    return CasesFromRuns(tuple(made), tuple(skipped))
