"""Calibration: a two-sided, smoothed, clamped factor per model; the per-run last-step ratio."""

from __future__ import annotations

import pytest

from context_assembly import calibration
from context_assembly.calibration import CalibrationState, calibration_update, run_ratio


def test_first_sample_sets_the_factor():
    assert calibration_update(CalibrationState(), reported=1_500, estimated=1_000) == CalibrationState(1.5, 1)


def test_factor_can_go_below_one():
    assert calibration_update(CalibrationState(), reported=750, estimated=1_000) == CalibrationState(0.75, 1)


def test_later_samples_are_averaged_in():
    state = calibration_update(CalibrationState(), reported=1_500, estimated=1_000)
    state = calibration_update(state, reported=1_000, estimated=1_000)  # alpha 1/2
    assert state == CalibrationState(1.25, 2)
    state = calibration_update(state, reported=500, estimated=1_000)  # alpha 1/3, moves down
    assert state.samples == 3
    assert state.factor == pytest.approx(1.0, abs=1e-12)


def test_smoothing_weight_never_drops_below_a_fifth():
    state = calibration_update(CalibrationState(1.0, 10), reported=1_500, estimated=1_000)
    assert state == CalibrationState(1.1, 11)


@pytest.mark.parametrize(("reported", "factor"), [(5_000, 2.0), (100, 0.5)])
def test_factor_is_clamped(reported, factor):
    assert calibration_update(CalibrationState(), reported=reported, estimated=1_000).factor == factor


def test_one_wild_sample_moves_a_settled_factor_by_at_most_a_fifth_of_the_clamp():
    state = calibration_update(CalibrationState(1.0, 20), reported=100_000, estimated=1_000)
    assert state.factor == pytest.approx(1.2, abs=1e-12)


@pytest.mark.parametrize(("reported", "estimated"), [(0, 1_000), (1_000, 0), (-5, 1_000), (1_000, -1)])
def test_non_positive_figures_leave_the_state_unchanged(reported, estimated):
    state = CalibrationState(1.2, 4)
    assert calibration_update(state, reported=reported, estimated=estimated) is state


def test_non_integer_figures_are_refused():
    with pytest.raises(TypeError):
        calibration_update(CalibrationState(), reported=1.5, estimated=1_000)


@pytest.mark.parametrize(("factor", "samples"), [(0.4, 0), (2.1, 0), (float("nan"), 0), (1.0, -1)])
def test_state_rejects_impossible_values(factor, samples):
    with pytest.raises(ValueError):
        CalibrationState(factor, samples)


@pytest.mark.parametrize(
    ("reported", "estimated", "ratio"),
    [(1_200, 1_000, 1.2), (5_000, 1_000, 5.0), (None, 1_000, None), (1_000, None, None), (0, 1_000, None)],
)
def test_run_ratio_is_the_unclamped_last_step_ratio(reported, estimated, ratio):
    assert run_ratio(reported, estimated) == ratio


def test_module_holds_no_mutable_state():
    mutable = [
        name
        for name, value in vars(calibration).items()
        if not name.startswith("__") and isinstance(value, dict | list | set)
    ]
    assert mutable == []
