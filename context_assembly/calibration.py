"""Calibration of the estimator against provider-reported prompt tokens (docs/architecture.md).

Pure functions over explicit state: the agents app loads a model's :class:`CalibrationState`, calls
:func:`calibration_update` with a step's reported and estimated prompt tokens, and persists the result;
the factor reaches the estimator as ``ModelProfile.calibration_factor``. Nothing here is process-wide.

Unlike an up-only ``max(calibration, ratio)`` (nr_llm's, the peer in ``bench/fit.py``), the factor moves both
ways: an estimate that runs high is corrected down as surely as one that runs low is corrected up.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

MIN_FACTOR = 0.5
MAX_FACTOR = 2.0
# Later samples move the factor by at least this share, so it keeps tracking a drifting tokenizer.
MIN_ALPHA = 0.2


def _clamp(value: float) -> float:
    return min(MAX_FACTOR, max(MIN_FACTOR, value))


@dataclass(frozen=True)
class CalibrationState:
    """A model's smoothed ratio of reported to estimated prompt tokens, and how many samples made it."""

    factor: float = 1.0
    samples: int = 0

    def __post_init__(self) -> None:
        factor = self.factor
        if isinstance(factor, bool) or not isinstance(factor, int | float) or not math.isfinite(factor):
            raise ValueError("factor must be a finite number")
        if not MIN_FACTOR <= factor <= MAX_FACTOR:
            raise ValueError(f"factor must be within [{MIN_FACTOR}, {MAX_FACTOR}]")
        if isinstance(self.samples, bool) or not isinstance(self.samples, int) or self.samples < 0:
            raise ValueError("samples must be a non-negative integer")


def _usable(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("token figures must be integers")
    return value > 0


def calibration_update(state: CalibrationState, *, reported: int, estimated: int) -> CalibrationState:
    """The state after one sample: ``reported`` prompt tokens of a call whose payload we estimated at
    ``estimated`` (both for that one call, cached tokens included in ``reported``).

    The sample ratio is clamped to [0.5, 2.0] (one bogus report cannot throw the factor to the bound
    on its own weight), then blended by an exponential moving average with
    ``alpha = max(0.2, 1 / (samples + 1))``: the first sample sets the factor, the next ones average
    in, and from the fifth on each moves it by a fifth. A non-positive figure is no sample: the state
    is returned unchanged. Raises TypeError for non-integers.
    """
    ratio = sample_ratio(reported=reported, estimated=estimated)
    if ratio is None:
        return state
    factor = blended_factor(state.factor, float(state.samples), ratio, greatest=max, least=min)
    return CalibrationState(factor=factor, samples=state.samples + 1)


class Number(Protocol):
    """What :func:`blended_factor` needs of its operands: a float, or a term of a SQL expression."""

    def __add__(self, other: Any, /) -> Any: ...
    def __sub__(self, other: Any, /) -> Any: ...
    def __mul__(self, other: Any, /) -> Any: ...
    def __rtruediv__(self, other: Any, /) -> Any: ...


N = TypeVar("N", bound=Number)


def blended_factor(
    factor: N, samples: N, ratio: N, *, greatest: Callable[[Any, Any], N], least: Callable[[Any, Any], N]
) -> N:
    """The one definition of the blend: ``alpha = max(MIN_ALPHA, 1 / (samples + 1))``, then the factor
    moved by ``alpha`` towards the (clamped) sample ``ratio`` and clamped to [MIN_FACTOR, MAX_FACTOR].

    :func:`calibration_update` evaluates it on floats (``greatest=max, least=min``); the model
    store renders it as one SQL expression over the stored columns
    (``catalog.models.calibrated.LlmModelQuerySet.calibrate``), so concurrent steps blend in place
    without a read lock. Both are IEEE-754 double arithmetic in the same order, so they agree exactly.
    """
    alpha = greatest(MIN_ALPHA, 1.0 / (samples + 1.0))
    return least(MAX_FACTOR, greatest(MIN_FACTOR, factor + alpha * (ratio - factor)))


def sample_ratio(*, reported: int, estimated: int) -> float | None:
    """One sample's ratio as :func:`calibration_update` blends it (clamped); None when either figure
    is not positive (no sample). A store that applies the update in place (one SQL statement, so
    concurrent steps never lose a sample) blends this ratio with :func:`blended_factor`."""
    if not (_usable(reported) & _usable(estimated)):
        return None
    return _clamp(reported / estimated)


def run_ratio(reported: int | None, estimated: int | None) -> float | None:
    """A run's last-step ratio of reported to estimated prompt tokens, unclamped (it is a reading, not
    a factor); None when either figure is missing or not positive."""
    if reported is None or estimated is None:
        return None
    if not (_usable(reported) & _usable(estimated)):
        return None
    return reported / estimated
