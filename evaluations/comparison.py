"""Two sides of an evaluation compared: per case and in total, each difference marked better or worse.

The figures are pass rate (a case passes when it held every expectation), judge score (the mean of
the judges' scores, 0 to 10), tokens (prompt and answer), cost and latency. A higher pass rate or
score is better; fewer tokens, a lower cost and a shorter latency are better. A figure a side lacks
(no judge, a refused case's tokens, an unpriced model's cost) is shown as missing and never compared.
A case that held on the reference side and not on the compared one is a **regression**, the figure a
publish may require to be zero (``Configuration.require_no_regression``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from evaluations.models import EvaluationResult

BETTER, WORSE, SAME = "better", "worse", "same"
Number = int | float | Decimal


@dataclass(frozen=True)
class Figure:
    """One figure on both sides: the values as read, their difference and whether it is better."""

    label: str
    reference: str
    compared: str
    difference: str
    verdict: str  # BETTER, WORSE or SAME (also when a side lacks the figure)


@dataclass(frozen=True)
class CaseComparison:
    position: int
    name: str
    regressed: bool
    figures: tuple[Figure, ...]


@dataclass(frozen=True)
class Comparison:
    cases: tuple[CaseComparison, ...]
    totals: tuple[Figure, ...]
    regressions: int


def judge_score(result: EvaluationResult) -> float | None:
    """The mean score the result's judges gave (None: no judge scored it)."""
    scores = [float(c["score"]) for c in result.checks or () if c.get("judge") and c.get("score") is not None]
    return sum(scores) / len(scores) if scores else None


def result_tokens(result: EvaluationResult) -> int | None:
    if result.prompt_tokens is None and result.completion_tokens is None:
        return None
    return (result.prompt_tokens or 0) + (result.completion_tokens or 0)


def _figure(
    label: str,
    reference: Number | None,
    compared: Number | None,
    shown: Callable[[Number], str],
    *,
    higher_is_better: bool,
) -> Figure:
    if reference is None or compared is None:
        return Figure(label, _or_dash(reference, shown), _or_dash(compared, shown), "—", SAME)
    delta = compared - reference  # type: ignore[operator]
    verdict = SAME if delta == 0 else (BETTER if (delta > 0) == higher_is_better else WORSE)
    sign = "+" if delta > 0 else ("-" if delta < 0 else "±")
    return Figure(label, shown(reference), shown(compared), f"{sign}{shown(abs(delta))}", verdict)


def _or_dash(value: Number | None, shown: Callable[[Number], str]) -> str:
    return "—" if value is None else shown(value)


def _count(value: Number) -> str:
    return f"{int(value):,}"


def _score(value: Number) -> str:
    return f"{float(value):.1f}"


def _cost(value: Number) -> str:
    return f"${Decimal(value):.6f}"


def _ms(value: Number) -> str:
    return f"{int(value):,} ms"


def _percent(value: Number) -> str:
    return f"{float(value):.0f}%"


def _sum(values: Sequence[Number | None]) -> Number | None:
    """The sum of the values present (a refused case sent nothing and cost nothing); None: none is."""
    present = [value for value in values if value is not None]
    return sum(present) if present else None


def _mean(values: Sequence[float | None]) -> float | None:
    present = [value for value in values if value is not None]
    return sum(present) / len(present) if present else None


def case_figures(reference: EvaluationResult, compared: EvaluationResult) -> tuple[Figure, ...]:
    passed = (int(reference.passed), int(compared.passed))
    return (
        Figure(
            "Passed",
            "yes" if reference.passed else "no",
            "yes" if compared.passed else "no",
            "—" if passed[0] == passed[1] else ("fixed" if passed[1] else "regressed"),
            SAME if passed[0] == passed[1] else (BETTER if passed[1] else WORSE),
        ),
        _figure("Judge score", judge_score(reference), judge_score(compared), _score, higher_is_better=True),
        _figure("Tokens", result_tokens(reference), result_tokens(compared), _count, higher_is_better=False),
        _figure("Cost", reference.cost, compared.cost, _cost, higher_is_better=False),
        _figure("Latency", reference.latency_ms, compared.latency_ms, _ms, higher_is_better=False),
    )


def compared(pairs: Sequence[tuple[EvaluationResult, EvaluationResult]]) -> Comparison:
    """The comparison of each (reference, compared) pair of one case's results, in order, and totals
    over them all (cases not yet sent on both sides are left out of both)."""
    cases = tuple(
        CaseComparison(
            position=ref.position,
            name=ref.case_name,
            regressed=ref.passed and not other.passed,
            figures=case_figures(ref, other),
        )
        for ref, other in pairs
    )
    refs, others = [ref for ref, _ in pairs], [other for _, other in pairs]
    count = len(pairs)

    def rate(results: list[EvaluationResult]) -> float | None:
        return 100 * sum(result.passed for result in results) / count if count else None

    totals = (
        _figure("Pass rate", rate(refs), rate(others), _percent, higher_is_better=True),
        _figure(
            "Judge score (mean)",
            _mean([judge_score(r) for r in refs]),
            _mean([judge_score(r) for r in others]),
            _score,
            higher_is_better=True,
        ),
        _figure(
            "Tokens",
            _sum([result_tokens(r) for r in refs]),
            _sum([result_tokens(r) for r in others]),
            _count,
            higher_is_better=False,
        ),
        _figure(
            "Cost",
            _sum([r.cost for r in refs]),
            _sum([r.cost for r in others]),
            _cost,
            higher_is_better=False,
        ),
        _figure(
            "Latency",
            _sum([r.latency_ms for r in refs]),
            _sum([r.latency_ms for r in others]),
            _ms,
            higher_is_better=False,
        ),
    )
    return Comparison(cases, totals, sum(case.regressed for case in cases))
