"""Per-client daily budgets: every send reserves its estimate before anything leaves, and settles it
with the provider-reported usage after (docs/decisions/0015-budgets-reserve-and-settle.md).

A client's optional limits (``ApiClient.daily_token_limit``, ``daily_cost_limit``; empty: none) hold
per UTC day. Its consumption for the day is one ``ClientDailyUsage`` row, moved only by single
``UPDATE`` statements whose conditions read that row alone:

* **reserve**: ``used + reserved + estimate <= limit`` in the ``WHERE`` of the ``UPDATE`` that adds
  the estimate to ``reserved``. Concurrent sends serialise on the row lock; each one that lost the
  race re-checks the condition against the row as committed, so the reservations in flight never
  sum above the limit.
* **settle**: ``reserved - estimate`` and ``used + reported`` in one statement, exactly once per
  reservation (:class:`Reservation`); a failed send releases its estimate, one cut after the
  provider had the prompt (its reader went away, or the provider broke its stream mid-way) is
  charged what was spent (:meth:`Reservation.abandon`).

The estimate is the serving model's prompt estimate (the one estimator's fit) plus the reply limit
it is sent, priced at the dearest of the send's targets (a fallback may serve it). A reported usage
is at most the estimate unless the prompt estimate was low, so the day's total can pass a limit by at
most one send's estimation error. Usage is recorded for clients without limits too, so ``GET
budget`` shows the day's consumption and a limit set during the day counts what was spent before.

A send that does not fit raises :class:`~agents.errors.BudgetExhausted` (429 with the reset time:
the next UTC midnight) after recording one ``budget_exhausted`` governance event (figures only,
never content) and counting it (``govctx_budget_refusals_total``); nothing is sent.
"""

from __future__ import annotations

import datetime
import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from types import TracebackType
from typing import Literal

from django.db import DatabaseError
from django.utils import timezone

from agents.errors import BudgetExhausted
from agents.metrics import abandoned_send_counted, broken_stream_counted, budget_refusal_counted
from agents.models import ClientDailyUsage
from agents.runtime.streaming import StreamCut, StreamEnd
from catalog.models import ApiClient, LlmModel
from catalog.pricing import (
    COST_QUANTUM,
    ZERO,
    Prices,
    estimate_cost,
    reply_cost,
)
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import Decision, Provenance, TrustZone
from providers.values import Usage

logger = logging.getLogger(__name__)

TOKENS, COST = "tokens", "cost"


@dataclass(frozen=True, slots=True)
class SendEstimate:
    """The most one send should consume: its prompt estimate plus its reply limit, and their cost."""

    tokens: int
    cost: Decimal
    prompt_tokens: int = 0  # the prompt estimate alone


def send_estimate(*, prompt_tokens: int, max_output_tokens: int, models: list[LlmModel]) -> SendEstimate:
    """``prompt_tokens`` (the fit's estimate) plus ``max_output_tokens``, priced at the dearest of
    ``models`` (the targets the send may reach)."""
    cost = max(
        (
            estimate_cost(Prices.of(model), prompt_tokens=prompt_tokens, max_output_tokens=max_output_tokens)
            for model in models
        ),
        default=ZERO,
    )
    return SendEstimate(tokens=prompt_tokens + max_output_tokens, cost=cost, prompt_tokens=prompt_tokens)


def budget_day(now: datetime.datetime | None = None) -> datetime.date:
    """The UTC day a send made at ``now`` (default: now) counts against."""
    return (now or timezone.now()).astimezone(datetime.UTC).date()


def budget_reset(day: datetime.date) -> datetime.datetime:
    """When ``day``'s budget resets: the next UTC midnight."""
    return datetime.datetime.combine(day + datetime.timedelta(days=1), datetime.time(), tzinfo=datetime.UTC)


class Reservation:
    """One send's hold on its client's budget for the day it was made. Ended exactly once: by
    :meth:`settle` (the reported usage replaces the estimate), :meth:`abandon` (its reader went away,
    or the provider broke its stream, after the provider had the prompt) or :meth:`release` (nothing
    was consumed). Later calls do nothing. As a context manager it releases on exit unless settled. A
    reservation without a client (``client_id`` None) holds nothing. ``on_abandoned``, when set, is
    told the model and the usage an abandoned or broken send was charged (the completions service
    writes its ledger row)."""

    __slots__ = ("_lock", "_open", "client_id", "day", "estimate", "on_abandoned")

    def __init__(self, client_id: int | None, day: datetime.date, estimate: SendEstimate) -> None:
        self.client_id, self.day, self.estimate = client_id, day, estimate
        self._lock = threading.Lock()
        self._open = True
        self.on_abandoned: Callable[[LlmModel, Usage], None] | None = None

    def settle(self, *, served: LlmModel, usage: Usage) -> None:
        """Replace the estimate with what the provider reported, priced at ``served``'s prices. A
        usage with neither prompt nor completion tokens charges the estimate whole (nothing to price,
        and the call was made)."""
        cost: Decimal | None
        if usage.prompt_tokens is None and usage.completion_tokens is None:
            tokens, cost = self.estimate.tokens, self.estimate.cost
        else:
            tokens = (usage.prompt_tokens or 0) + (usage.completion_tokens or 0)
            cost = reply_cost(served, usage)
        self._end(tokens, cost or ZERO)

    def release(self) -> None:
        """Give the estimate back: the send failed, or never reached a provider."""
        self._end(0, ZERO)

    def abandon(
        self, *, served: LlmModel, usage: Usage, by: Literal["reader", "provider"] = "reader"
    ) -> None:
        """End a send cut before its finish ``by`` its reader (it went away) or its provider (its
        stream broke mid-way), charging ``usage``: what the provider reported, or an estimate capped
        at this reservation (a cut send never consumes more than it reserved); counted
        (``agents/metrics.py``: an abandoned send, or a broken stream) and handed to
        ``on_abandoned``."""
        if usage.provenance != Provenance.PROVIDER_REPORTED:
            prompt = min(usage.prompt_tokens or 0, self.estimate.tokens)
            completion = min(usage.completion_tokens or 0, self.estimate.tokens - prompt)
            usage = Usage(prompt, None, completion, Provenance.ESTIMATED)
        cost = reply_cost(served, usage)
        if usage.provenance == Provenance.ESTIMATED:
            cost = min(cost or ZERO, self.estimate.cost)
        if not self._end((usage.prompt_tokens or 0) + (usage.completion_tokens or 0), cost or ZERO):
            return
        counted = abandoned_send_counted if by == "reader" else broken_stream_counted
        counted(model=served.model_id, usage=usage, charged=usage.provenance.value)
        if self.on_abandoned is not None:
            self.on_abandoned(served, usage)

    def stream_ended(
        self, served: LlmModel, *, prompt_tokens: int, count: Callable[[str], int]
    ) -> Callable[[StreamEnd], None]:
        """How a stream served by ``served`` ends this reservation: settled with its finish's usage;
        cut before it (its reader went away, or the provider broke it: the prompt was processed and
        part of the reply sent), charged the usage the provider reported, else ``prompt_tokens`` (the
        prompt estimate) plus ``count`` of what had streamed, both ``estimated``."""

        def ended(end: StreamEnd) -> None:
            if isinstance(end, StreamCut):
                usage = end.usage or _streamed_usage(end, prompt_tokens, count)
                self.abandon(served=served, usage=usage, by=end.by)
            else:
                self.settle(served=served, usage=end.usage)

        return ended

    def _end(self, tokens: int, cost: Decimal) -> bool:
        """Settle at ``tokens`` and ``cost``; False when this reservation had already ended."""
        with self._lock:
            if not self._open:
                return False
            self._open = False
        if self.client_id is None:
            return True
        try:
            ClientDailyUsage.objects.settle(
                client_id=self.client_id,
                day=self.day,
                reserved_tokens=self.estimate.tokens,
                reserved_cost=self.estimate.cost,
                tokens=tokens,
                cost=cost,
            )
        except DatabaseError:
            # Fail closed: the estimate stays reserved, counting against the budget until the day ends.
            logger.exception("budget settlement of client %s on %s not written", self.client_id, self.day)
        return True

    def __enter__(self) -> Reservation:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.release()


def _streamed_usage(cut: StreamCut, prompt_tokens: int, count: Callable[[str], int]) -> Usage:
    streamed = count(cut.streamed) if cut.streamed else 0
    return Usage(prompt_tokens, None, streamed, Provenance.ESTIMATED)


ClientLimits = tuple[int | None, Decimal | None]  # (daily_token_limit, daily_cost_limit)


def client_limits(client: ApiClient) -> ClientLimits:
    """The limits of ``client`` as its row was read (a request's authentication reads it whole)."""
    return client.daily_token_limit, client.daily_cost_limit


def budget_reserve(
    *,
    client_id: int | None,
    estimate: SendEstimate,
    events: EventContext,
    zone: TrustZone | None,
    limits: ClientLimits | None = None,
) -> Reservation:
    """Reserve ``estimate`` against the client's budget for today, or raise :class:`BudgetExhausted`
    (its event recorded and counted) when it does not fit. Without a client, nothing is reserved.

    ``limits``: the client's limits as the caller read them in a plain ``SELECT`` of the client row
    earlier in the same request (the authentication's); without them they are read here. Either way
    the condition of the reserving ``UPDATE`` reads the usage row alone, which is what bounds the
    reservations in flight (docs/decisions/0015-budgets-reserve-and-settle.md)."""
    day = budget_day()
    reservation = Reservation(client_id, day, estimate)
    if client_id is None:
        return reservation
    if limits is None:
        limits = ApiClient.objects.filter(pk=client_id).values_list("daily_token_limit", "daily_cost_limit")[
            0
        ]
    token_limit, cost_limit = limits
    if _reserved(client_id, day, estimate, token_limit, cost_limit):
        return reservation
    # The row may not exist yet (the client's first send of the day): create it, then try once more.
    ClientDailyUsage.objects.bulk_create(
        [ClientDailyUsage(client_id=client_id, day=day)], ignore_conflicts=True
    )
    if _reserved(client_id, day, estimate, token_limit, cost_limit):
        return reservation
    raise _exhausted(client_id, day, estimate, token_limit, cost_limit, events=events, zone=zone)


def _reserved(
    client_id: int,
    day: datetime.date,
    estimate: SendEstimate,
    token_limit: int | None,
    cost_limit: Decimal | None,
) -> bool:
    """One conditional ``UPDATE``: add ``estimate`` to today's reservations if it fits every limit."""
    return ClientDailyUsage.objects.reserve(
        client_id=client_id,
        day=day,
        tokens=estimate.tokens,
        cost=estimate.cost,
        token_room=None if token_limit is None else token_limit - estimate.tokens,
        cost_room=None if cost_limit is None else cost_limit - estimate.cost,
    )


@dataclass(frozen=True)
class BudgetStatus:
    """A client's limits and its consumption on ``day`` (settled and reserved); remaining is None
    without a limit, and never below zero."""

    day: datetime.date
    token_limit: int | None
    tokens_used: int
    tokens_reserved: int
    cost_limit: Decimal | None
    cost_used: Decimal
    cost_reserved: Decimal

    @property
    def reset_at(self) -> datetime.datetime:
        return budget_reset(self.day)

    @property
    def tokens_remaining(self) -> int | None:
        if self.token_limit is None:
            return None
        return max(0, self.token_limit - self.tokens_used - self.tokens_reserved)

    @property
    def cost_remaining(self) -> Decimal | None:
        if self.cost_limit is None:
            return None
        return max(ZERO, self.cost_limit - self.cost_used - self.cost_reserved)

    @property
    def exhausted_kind(self) -> str | None:
        """``tokens`` or ``cost`` when nothing at all is left of that limit; None otherwise."""
        if self.tokens_remaining == 0:
            return TOKENS
        if self.cost_remaining is not None and self.cost_remaining <= 0:
            return COST
        return None


def budget_status(client: ApiClient, day: datetime.date | None = None) -> BudgetStatus:
    """``client``'s limits (read fresh) and its consumption on ``day`` (default: today, UTC)."""
    day = day or budget_day()
    token_limit, cost_limit = ApiClient.objects.filter(pk=client.pk).values_list(
        "daily_token_limit", "daily_cost_limit"
    )[0]
    usage = ClientDailyUsage.objects.filter(client_id=client.pk, day=day).first()
    return BudgetStatus(
        day=day,
        token_limit=token_limit,
        tokens_used=usage.tokens_used if usage else 0,
        tokens_reserved=usage.tokens_reserved if usage else 0,
        cost_limit=cost_limit,
        cost_used=usage.cost_used if usage else ZERO,
        cost_reserved=usage.cost_reserved if usage else ZERO,
    )


def budget_summary(status: BudgetStatus) -> str:
    """``status`` in one line for people (the admin's client page): figures only."""
    tokens = f"tokens {status.tokens_used:,} used + {status.tokens_reserved:,} reserved"
    tokens += " (no limit)" if status.token_limit is None else f" of {status.token_limit:,}"
    cost = f"cost {_figure(status.cost_used)} used + {_figure(status.cost_reserved)} reserved"
    cost += " (no limit)" if status.cost_limit is None else f" of {_figure(status.cost_limit)}"
    return f"{status.day.isoformat()}: {tokens}; {cost}; resets {status.reset_at.isoformat()}"


def budget_require(*, client: ApiClient, events: EventContext | None = None) -> None:
    """Raise :class:`BudgetExhausted` (event recorded and counted) when nothing is left of one of
    ``client``'s limits today: the up-front check of a request that will send later (a run)."""
    status = budget_status(client)
    if status.exhausted_kind is None:
        return
    context = events or EventContext(correlation_id=uuid.uuid4().hex, api_client=client.name)
    raise _exhausted(
        client.pk,
        status.day,
        SendEstimate(tokens=0, cost=ZERO),
        status.token_limit,
        status.cost_limit,
        events=context,
        zone=None,
        kind=status.exhausted_kind,
    )


def _exhausted(
    client_id: int,
    day: datetime.date,
    estimate: SendEstimate,
    token_limit: int | None,
    cost_limit: Decimal | None,
    *,
    events: EventContext,
    zone: TrustZone | None,
    kind: str | None = None,
) -> BudgetExhausted:
    """The refusal of a send that did not fit (``kind``: which limit; by default the token limit if
    the estimate does not fit it, else the cost limit), its event recorded and counted."""
    usage = ClientDailyUsage.objects.filter(client_id=client_id, day=day).first()
    tokens_used, tokens_reserved = (usage.tokens_used, usage.tokens_reserved) if usage else (0, 0)
    cost_used, cost_reserved = (usage.cost_used, usage.cost_reserved) if usage else (ZERO, ZERO)
    if kind is None:
        over = token_limit is not None and tokens_used + tokens_reserved + estimate.tokens > token_limit
        kind = TOKENS if over else COST
    figures: tuple[int | Decimal | None, ...]
    if kind == TOKENS:
        figures = (token_limit, tokens_used, tokens_reserved, estimate.tokens)
    else:
        figures = (cost_limit, cost_used, cost_reserved, estimate.cost)
    limit, used, reserved, asked = (_figure(value) for value in figures)
    reset = budget_reset(day)
    retry_after = max(1, int((reset - timezone.now()).total_seconds()) + 1)
    reason = f"daily {kind} limit {limit}: used {used}, reserved {reserved}, this send {asked}"
    enforced_event_record(context=events, decision=Decision.BUDGET_EXHAUSTED, zone=zone, reason=reason)
    budget_refusal_counted(kind=kind)
    return BudgetExhausted(
        f"This client's daily {kind} budget is exhausted: {limit} allowed, {used} used and {reserved} "
        f"reserved, this request needs {asked}. Nothing was sent; the budget resets at "
        f"{reset.isoformat()}.",
        extra={
            "kind": kind,
            "limit": limit,
            "used": used,
            "reserved": reserved,
            "estimate": asked,
            "reset_at": reset.isoformat(),
            "retry_after": retry_after,
        },
    )


def _figure(value: int | Decimal | None) -> int | str | None:
    """A figure as the API shows it: token counts as integers, costs as exact decimal strings."""
    if isinstance(value, Decimal):
        return format(value.quantize(COST_QUANTUM), "f")
    return value
