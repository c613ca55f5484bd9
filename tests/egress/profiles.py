"""Hypothesis settings of the egress properties.

Two profiles: ``egress`` (the default suite: :data:`EGRESS_EXAMPLES` examples in total, shared out
between the test functions by weight) and ``fuzz`` (``make fuzz``: :data:`FUZZ_EXAMPLES` in total),
selected by the environment variable ``EGRESS_PROFILE``. Neither profile is loaded globally, so the
rest of the suite keeps its own settings.

Under CI (``CI`` or ``REQUIRE_SERVICES=1`` set) examples are derandomized, so every run draws the same
ones. Otherwise each session draws from a fresh seed, printed with every example's failure and
replayable with ``EGRESS_SEED=<seed>``.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import seed as hypothesis_seed

EGRESS_EXAMPLES = 600
FUZZ_EXAMPLES = 20_000
PROFILE = os.environ.get("EGRESS_PROFILE", "egress")
CI = bool(os.environ.get("CI")) or os.environ.get("REQUIRE_SERVICES") == "1"

# How the examples of a profile are shared out: each test function's weight (they sum to 1).
WEIGHTS = {
    "preview": 0.18,
    "completions": 0.18,
    "openai": 0.18,
    "runs": 0.28,
    "reads": 0.11,
    "admin": 0.07,
}

_COMMON: dict[str, Any] = {
    "deadline": None,
    "derandomize": CI,
    "print_blob": True,
    # One fake provider, one skill source and one staff user serve every example of a test function.
    "suppress_health_check": [HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
}
settings.register_profile("egress", max_examples=EGRESS_EXAMPLES, **_COMMON)
settings.register_profile("fuzz", max_examples=FUZZ_EXAMPLES, **_COMMON)
if PROFILE not in ("egress", "fuzz"):
    raise RuntimeError(f"EGRESS_PROFILE must be 'egress' or 'fuzz', not {PROFILE!r}")

SEED = int(os.environ.get("EGRESS_SEED") or random.SystemRandom().randrange(2**32))
# The canaries' random bodies: fixed under CI, else drawn from the session's seed.
CANARY_SEED = 20261130 if CI else SEED


def examples_for(path: str) -> int:
    """This path's share of the profile's examples (at least one). ``EGRESS_EXAMPLES`` overrides the
    profile's total (for a quick look while working on a path)."""
    total = int(os.environ.get("EGRESS_EXAMPLES") or settings.get_profile(PROFILE).max_examples)
    return max(1, round(total * WEIGHTS[path]))


def egress_settings(path: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The profile's settings with ``path``'s share of examples, and the session's seed unless CI."""
    chosen = settings(settings.get_profile(PROFILE), max_examples=examples_for(path))

    def apply(test: Callable[..., Any]) -> Callable[..., Any]:
        test = chosen(test)
        return test if CI else hypothesis_seed(SEED)(test)

    return apply
