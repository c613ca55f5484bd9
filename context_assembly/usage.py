"""How full the context is, as a step sees it (docs/architecture.md, "Context usage").

The figure is the **last completed step's prompt size**: what the provider reported it received
(including cached prompt tokens), else our estimate of what we sent. It is never the run's cumulative
input tokens, which count every step's prompt again and read as a multiple of the real fill. Before
the first step it is absent (``value=None``, ``unavailable``), which is a different fact from zero.

There is no fraction and no output reserve here: dividing is one line where the number is rendered,
and the reserve belongs to the fit's budget, not to this report.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from context_assembly.profiles import ModelProfile
from governance.vocabulary import Provenance


@dataclass(frozen=True)
class UsageValue:
    """A token figure with where it came from. ``value`` is None exactly when ``unavailable``."""

    value: int | None
    provenance: Provenance

    def __post_init__(self) -> None:
        provenance = Provenance(self.provenance)  # raises ValueError on an unknown provenance
        object.__setattr__(self, "provenance", provenance)
        if provenance == Provenance.UNAVAILABLE:
            if self.value is not None:
                raise ValueError("an unavailable usage value carries no number")
        elif isinstance(self.value, bool) or not isinstance(self.value, int) or self.value < 0:
            raise ValueError(f"a {provenance.value} usage value must be a non-negative integer")

    def as_dict(self) -> dict[str, Any]:
        return {"value": self.value, "provenance": self.provenance.value}


UNAVAILABLE = UsageValue(None, Provenance.UNAVAILABLE)


@dataclass(frozen=True)
class ContextUsage:
    """The last completed step's prompt size beside the declared window of the model that served that
    step (``model``; before the first step, the model that would serve it, or None when not known).
    No fraction."""

    used_tokens: UsageValue
    context_window: int
    model: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "used_tokens": self.used_tokens.as_dict(),
            "context_window": self.context_window,
            "model": self.model,
        }


def _positive(value: int | None) -> bool:
    if value is None:
        return False
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("prompt token figures must be integers or None")
    return value > 0


def usage_from_step(reported_prompt_tokens: int | None, estimated_prompt_tokens: int | None) -> UsageValue:
    """The usage value of one completed step, from that step's own prompt figures.

    * ``reported_prompt_tokens`` (the provider's prompt tokens of that one call, cached tokens
      included) wins: ``provider_reported``;
    * else ``estimated_prompt_tokens`` (our estimate of what that call sent): ``estimated``;
    * else :data:`UNAVAILABLE`.

    A figure of 0 or less counts as absent: a prompt always has tokens, so a provider reporting 0
    reported nothing, and passing it on would read as "the window is empty". Pass per-step figures
    only, never a run's cumulative input tokens.
    """
    if _positive(reported_prompt_tokens):
        return UsageValue(reported_prompt_tokens, Provenance.PROVIDER_REPORTED)
    if _positive(estimated_prompt_tokens):
        return UsageValue(estimated_prompt_tokens, Provenance.ESTIMATED)
    return UNAVAILABLE


UsageReader = Callable[[], "UsageValue | ContextUsage"]


@dataclass(frozen=True)
class RunContext:
    """What a step and its tools know about the run they belong to.

    ``read_usage`` is supplied by the caller (the agents app passes a function that reads the last
    completed step of this run from the database and applies :func:`usage_from_step`). It is called
    on every read of :attr:`context_usage`, never cached, so a step sees the state after the
    previous step landed rather than a snapshot taken when the run started. It returns either the
    whole :class:`ContextUsage` (the window of the model that served that step: a fallback's may
    differ from ``profile``'s) or a :class:`UsageValue`, read against ``profile``'s window.
    """

    run_id: str
    profile: ModelProfile
    read_usage: UsageReader

    @property
    def context_usage(self) -> ContextUsage:
        """The usage as of now. Raises TypeError if the reader returns anything else."""
        used = self.read_usage()
        if isinstance(used, ContextUsage):
            return used
        if not isinstance(used, UsageValue):
            raise TypeError("the usage reader must return a UsageValue or a ContextUsage")
        return ContextUsage(
            used_tokens=used, context_window=self.profile.context_window, model=self.profile.model_id
        )
