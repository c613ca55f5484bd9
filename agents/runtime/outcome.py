"""What one governed call ended with (:class:`~agents.runtime.send.GovernedCall`): one frozen value,
whatever drove the call (whole or streamed, blocking or on the event loop).

* :class:`Answered`: the reply (redacted) and everything the call settled to get it: the decision,
  the serving target's fit, the targets skipped, the model that served, what the reply's redaction
  took out; from these its usage, cost, labels and receipt.
* :class:`Ended`: why it ended without a reply, as one typed error (:data:`SendError`), and what it
  had settled by then (nothing before the governance check; the fit once fitted; the model that
  served when a stream broke after its first delta). The step records a refused or failed step from
  it as it records an answered one; each caller maps the error once (a step's status, an HTTP
  answer, an evaluation's outcome).

Anything else a call raises is a defect, not an outcome.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from agents.errors import BudgetExhausted
from agents.runtime.plan import SendPlan
from agents.runtime.receipts import answer_receipt
from catalog.errors import ModelInactive
from catalog.models import LlmModel
from catalog.pricing import reply_cost
from context_assembly.fitting import ContextOverflow, FitResult
from governance.errors import ContextRefused
from governance.policy import ContextDecision
from governance.vocabulary import DataClass, most_sensitive
from providers.failures import ProviderError
from providers.values import ProviderReply, Usage

# Every way a governed call ends without a reply.
SendError = ModelInactive | ContextRefused | ContextOverflow | BudgetExhausted | ProviderError
SEND_ERRORS = (ModelInactive, ContextRefused, ContextOverflow, BudgetExhausted, ProviderError)


@dataclass(frozen=True)
class SkippedTarget:
    """A target the send was not sent to, and why (figures only, never content)."""

    provider: str
    model: str
    reason: str  # "context_overflow": its window cannot hold the context's floor
    estimated: int  # the floor's tokens, counted for this target
    budget: int  # this target's budget (window - reply limit - safety)
    window: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "provider": self.provider,
            "model": self.model,
            "reason": self.reason,
            "estimated": self.estimated,
            "budget": self.budget,
            "window": self.window,
        }


@dataclass(frozen=True)
class Answered:
    """A call answered by ``served``: its ``reply`` (redacted), the ``decision`` that permitted it, the
    serving target's fit (``clamped``: its reply limit was lowered to fit), the targets ``skipped``
    on the way, and the reply's redactions by kind."""

    plan: SendPlan
    reply: ProviderReply
    decision: ContextDecision
    fitted: FitResult
    served: LlmModel
    clamped: bool = False
    skipped: tuple[SkippedTarget, ...] = ()
    reply_redactions: Mapping[str, int] = field(default_factory=dict)
    # Personal data the provider's reply held, by kind (before any restore), and whether values were
    # put back in place of its placeholders (agents/runtime/pseudonyms.py).
    reply_personal_data: Mapping[str, int] = field(default_factory=dict)
    restored: bool = False

    @property
    def usage(self) -> Usage:
        return self.reply.usage

    @property
    def cost(self) -> Decimal | None:
        """The reply's reported usage at the serving model's prices."""
        return reply_cost(self.served, self.reply.usage)

    @property
    def label(self) -> DataClass:
        """The decision's label, raised to ``personal_data`` when the provider's reply holds personal
        data (derived content keeps the class of what it holds). A pseudonymizing send's reply is
        not raised by it, nor by the values restored into it: where it re-enters a later send it is
        screened and pseudonymized again, as every part is (decision 0039)."""
        return _with_personal_data(self.decision.label, self._raises)

    @property
    def receiver_label(self) -> DataClass:
        return _with_personal_data(self.decision.receiver_label, self._raises)

    @property
    def _raises(self) -> bool:
        return bool(self.reply_personal_data) and self.plan.pseudonyms is None

    @property
    def receipt(self) -> dict[str, Any]:
        """The answer's receipt (content-free: ``agents/runtime/receipts.py``)."""
        return answer_receipt(
            plan=self.plan,
            decision=self.decision,
            served=self.served,
            reply_redactions=self.reply_redactions,
            reply_personal_data=self.reply_personal_data,
            labels=(self.label, self.receiver_label),
        )


@dataclass(frozen=True)
class Ended:
    """A call that ended without a reply: ``error`` says why; the rest is what it had settled by then
    (None or empty for what it had not reached)."""

    plan: SendPlan
    error: SendError
    decision: ContextDecision | None = None
    fitted: FitResult | None = None
    served: LlmModel | None = None
    clamped: bool = False
    skipped: tuple[SkippedTarget, ...] = ()


CallOutcome = Answered | Ended


def _with_personal_data(label: DataClass, holds: bool) -> DataClass:
    return most_sensitive((label, DataClass.PERSONAL_DATA)) if holds else label
