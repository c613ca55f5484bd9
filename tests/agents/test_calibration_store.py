"""The stored calibration follows the pure rule exactly: the database applies it in one statement."""

from __future__ import annotations

import pytest

from agents.models import LlmModel
from agents.runtime.step import _calibrate
from context_assembly.calibration import CalibrationState, calibration_update
from tests.factories import model_make

pytestmark = pytest.mark.django_db

# (reported, estimated): first sample, averaging, clamping both ways, a drifting tokenizer.
SAMPLES = [(1_500, 1_000), (1_000, 1_000), (500, 1_000), (9_000, 1_000), (10, 1_000)] + [
    (1_000 + 37 * n, 1_000) for n in range(8)
]


def test_each_stored_sample_matches_the_pure_update():
    model = model_make()
    expected = CalibrationState()
    for reported, estimated in SAMPLES:
        _calibrate(model, reported=reported, estimated=estimated)
        expected = calibration_update(expected, reported=reported, estimated=estimated)
        row = LlmModel.objects.get(pk=model.pk)
        assert (row.calibration_factor, row.calibration_samples) == (expected.factor, expected.samples)
    assert row.calibration_updated_at is not None


@pytest.mark.parametrize(("reported", "estimated"), [(0, 1_000), (1_000, 0), (1_000, None)])
def test_a_figure_that_is_no_sample_changes_nothing(reported, estimated):
    model = model_make()
    _calibrate(model, reported=reported, estimated=estimated)
    row = LlmModel.objects.get(pk=model.pk)
    assert (row.calibration_factor, row.calibration_samples, row.calibration_updated_at) == (1.0, 0, None)
