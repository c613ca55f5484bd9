"""Context usage (docs/architecture.md): the last completed step's prompt size, with provenance, read live."""

from __future__ import annotations

import dataclasses

import pytest

from context_assembly.profiles import catalogue_get
from context_assembly.usage import (
    UNAVAILABLE,
    ContextUsage,
    RunContext,
    UsageValue,
    usage_from_step,
)
from governance.vocabulary import Provenance

PROFILE = catalogue_get("gpt-4o").profile


class StepLog:
    """Stands in for the agents app's step table: the reader closes over this mutable state."""

    def __init__(self) -> None:
        self.steps: list[tuple[int | None, int | None]] = []  # (reported, estimated) per step

    def read(self) -> UsageValue:
        if not self.steps:
            return UNAVAILABLE
        return usage_from_step(*self.steps[-1])


def run_context(log: StepLog) -> RunContext:
    return RunContext(run_id="run-1", profile=PROFILE, read_usage=log.read)


def test_usage_is_unavailable_before_the_first_step_not_zero():
    usage = run_context(StepLog()).context_usage
    assert usage == ContextUsage(UsageValue(None, Provenance.UNAVAILABLE), 128_000, "gpt-4o")
    assert usage.used_tokens.value is None
    assert usage.as_dict() == {
        "used_tokens": {"value": None, "provenance": "unavailable"},
        "context_window": 128_000,
        "model": "gpt-4o",
    }


def test_after_a_step_with_reported_usage_it_is_that_steps_prompt_tokens():
    log = StepLog()
    log.steps.append((1_234, 1_200))
    assert run_context(log).context_usage.used_tokens == UsageValue(1_234, Provenance.PROVIDER_REPORTED)


def test_without_reported_usage_it_is_our_estimate_of_what_was_sent():
    log = StepLog()
    log.steps.append((None, 1_200))
    assert run_context(log).context_usage.used_tokens == UsageValue(1_200, Provenance.ESTIMATED)


def test_a_later_step_sees_the_newer_value_through_the_same_run_context():
    log = StepLog()
    context = run_context(log)
    assert context.context_usage.used_tokens == UNAVAILABLE
    log.steps.append((1_000, 990))
    assert context.context_usage.used_tokens == UsageValue(1_000, Provenance.PROVIDER_REPORTED)
    log.steps.append((None, 2_500))
    assert context.context_usage.used_tokens == UsageValue(2_500, Provenance.ESTIMATED)


def test_it_is_the_last_steps_size_never_the_runs_cumulative_input():
    log = StepLog()
    context = run_context(log)
    for reported in (1_000, 1_500, 2_100):
        log.steps.append((reported, None))
    assert context.context_usage.used_tokens.value == 2_100


def test_context_usage_carries_no_fraction_and_no_reserve():
    assert [field.name for field in dataclasses.fields(ContextUsage)] == [
        "used_tokens",
        "context_window",
        "model",
    ]


def test_a_reader_that_knows_the_serving_models_window_is_taken_as_it_is():
    served = ContextUsage(UsageValue(3_000, Provenance.PROVIDER_REPORTED), 8_192, "gpt-4")
    context = RunContext(run_id="run-1", profile=PROFILE, read_usage=lambda: served)
    assert context.context_usage == served


def test_reader_returning_anything_else_is_refused():
    context = RunContext(run_id="run-1", profile=PROFILE, read_usage=lambda: 1_000)
    with pytest.raises(TypeError):
        context.context_usage  # noqa: B018 - the property read is the behaviour under test


@pytest.mark.parametrize(
    ("reported", "estimated", "expected"),
    [
        (500, 480, UsageValue(500, Provenance.PROVIDER_REPORTED)),
        (500, None, UsageValue(500, Provenance.PROVIDER_REPORTED)),
        (None, 480, UsageValue(480, Provenance.ESTIMATED)),
        (0, 480, UsageValue(480, Provenance.ESTIMATED)),
        (None, None, UNAVAILABLE),
        (0, 0, UNAVAILABLE),
    ],
)
def test_usage_from_step_prefers_reported_then_estimated_then_unavailable(reported, estimated, expected):
    assert usage_from_step(reported, estimated) == expected


def test_usage_from_step_rejects_non_integers():
    with pytest.raises(TypeError):
        usage_from_step(12.5, None)


@pytest.mark.parametrize(
    ("value", "provenance"),
    [
        (0, Provenance.UNAVAILABLE),
        (None, Provenance.PROVIDER_REPORTED),
        (None, Provenance.ESTIMATED),
        (-1, Provenance.ESTIMATED),
        (True, Provenance.ESTIMATED),
    ],
)
def test_usage_value_keeps_absence_and_numbers_apart(value, provenance):
    with pytest.raises(ValueError):
        UsageValue(value, provenance)


def test_usage_value_accepts_the_stored_provenance_string():
    assert UsageValue(10, "estimated").provenance is Provenance.ESTIMATED
