"""The stored calibration follows the pure rule exactly: the database applies the same definition
(``context_assembly.calibration.blended_factor``, rendered as SQL) in one statement."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from catalog.models import LlmModel
from context_assembly.calibration import MAX_FACTOR, MIN_FACTOR, CalibrationState, calibration_update
from tests.factories import model_make

pytestmark = pytest.mark.django_db

# (reported, estimated): first sample, averaging, clamping both ways, a drifting tokenizer.
SAMPLES = [(1_500, 1_000), (1_000, 1_000), (500, 1_000), (9_000, 1_000), (10, 1_000)] + [
    (1_000 + 37 * n, 1_000) for n in range(8)
]


def calibrate(model: LlmModel, reported: int, estimated: int) -> CalibrationState | None:
    return LlmModel.objects.calibrate(
        model_id=model.pk, reported=reported, estimated=estimated, at=timezone.now()
    )


def test_each_stored_sample_matches_the_pure_update():
    model = model_make()
    expected = CalibrationState()
    for reported, estimated in SAMPLES:
        stored = calibrate(model, reported, estimated)
        expected = calibration_update(expected, reported=reported, estimated=estimated)
        row = LlmModel.objects.get(pk=model.pk)
        assert stored == expected
        assert (row.calibration_factor, row.calibration_samples) == (expected.factor, expected.samples)
    assert row.calibration_updated_at is not None


def test_from_any_stored_state_the_database_blends_exactly_as_the_pure_update():
    """Arbitrary factors in range, the first samples (alpha 1, 1/2, 1/3, 1/4) and settled ones, and
    arbitrary figures: every bit of the stored factor equals the float computation."""
    rng = random.Random(16)
    model = model_make()
    for _ in range(300):
        samples = rng.choice([0, 1, 2, 3, 4, rng.randrange(5, 10**6)])
        state = CalibrationState(factor=rng.uniform(MIN_FACTOR, MAX_FACTOR), samples=samples)
        LlmModel.objects.filter(pk=model.pk).update(
            calibration_factor=state.factor, calibration_samples=state.samples
        )
        reported, estimated = rng.randrange(1, 10**6), rng.randrange(1, 10**6)
        expected = calibration_update(state, reported=reported, estimated=estimated)
        assert calibrate(model, reported, estimated) == expected
        row = LlmModel.objects.get(pk=model.pk)
        assert (row.calibration_factor.hex(), row.calibration_samples) == (expected.factor.hex(), samples + 1)


def test_a_sample_is_one_update_statement_that_reads_nothing_first():
    model = model_make()
    with CaptureQueriesContext(connection) as queries:
        calibrate(model, 1_200, 1_000)
    assert len(queries.captured_queries) == 1
    assert queries.captured_queries[0]["sql"].startswith("UPDATE")


@pytest.mark.parametrize(("reported", "estimated"), [(0, 1_000), (1_000, 0), (-3, 1_000)])
def test_a_figure_that_is_no_sample_changes_nothing(reported, estimated):
    model = model_make()
    with CaptureQueriesContext(connection) as queries:
        assert calibrate(model, reported, estimated) is None
    assert queries.captured_queries == []
    row = LlmModel.objects.get(pk=model.pk)
    assert (row.calibration_factor, row.calibration_samples, row.calibration_updated_at) == (1.0, 0, None)


def test_a_missing_model_is_no_state():
    assert LlmModel.objects.calibrate(model_id=10**9, reported=1, estimated=1, at=timezone.now()) is None
