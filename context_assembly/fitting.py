"""Fitting an assembled context into the model's window (docs/architecture.md, "How a step runs").

Rules:

* budget = window - output reserve - safety margin. The reserve is the request's ``max_tokens``, else
  the model's declared max output, else ``max(1000, ceil(2% of window))``; the safety margin is
  ``ceil(safety_ratio x window)`` (3% by default). Tool specs and the tail note are charged to the
  estimate, never deducted from the budget.
* The HEAD (system message and first user message) and the newest turn are never dropped. A turn
  starts at an assistant message or a later user message and carries the tool results that follow
  it. The oldest whole turns are dropped first; a message is never truncated.
* Pairing: a tool result must answer a call of the assistant message that opened its turn, once.
  Input breaking that raises :class:`TranscriptInvalid`, so whole-turn drops can never orphan one.
* Cost: each transcript message is counted once (memoised by the estimator); prefix sums of those
  counts and a binary search choose the cut, so dropping turns never re-estimates anything. A
  :class:`Fitter` kept by the caller extends its prefix sums when the next transcript extends the
  previous one, so a step's fit costs O(new messages + log n) plus one pointer comparison per known
  transcript message (the check that it is an extension).
* Not checked: an older assistant turn whose calls lack results is passed on as it is (the provider
  would reject it, and no fit decision can repair it).
* At the floor (head + newest turn + tool specs + tail note + reply priming) over budget, the result
  says ``overflow`` and carries the floor: the caller must refuse (the agent loop stops with
  ``context_truncated``; the API raises :class:`ContextOverflow` via :meth:`FitResult.require_fit`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from dataclasses import dataclass, fields

from config.tracing import traced
from context_assembly.assembly import AssembledContext
from context_assembly.errors import ContextOverflow, TranscriptInvalid
from context_assembly.estimator import Estimator
from context_assembly.messages import Message
from context_assembly.profiles import ModelProfile
from context_assembly.telemetry import fit_span_attributes

__all__ = ["Budget", "BudgetBreakdown", "ContextOverflow", "FitResult", "Fitter", "budget_for", "fit"]

DEFAULT_SAFETY_RATIO = 0.03
MIN_FALLBACK_RESERVE = 1000


@dataclass(frozen=True, slots=True)
class Budget:
    """The window split: ``budget = window - reserve - safety`` (may be <= 0 on a misconfiguration,
    in which case every fit overflows rather than passing through)."""

    window: int
    reserve: int
    safety: int
    budget: int


def budget_for(
    profile: ModelProfile, *, max_tokens: int | None = None, safety_ratio: float = DEFAULT_SAFETY_RATIO
) -> Budget:
    """The budget for one send. Raises ValueError on a non-positive ``max_tokens`` or a
    ``safety_ratio`` outside [0, 1) (both are the caller's contract; the API validates its input)."""
    if max_tokens is not None and (
        isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0
    ):
        raise ValueError("max_tokens must be a positive integer or None")
    if isinstance(safety_ratio, bool) or not 0 <= safety_ratio < 1:
        raise ValueError("safety_ratio must be in [0, 1)")
    window = profile.context_window
    if max_tokens is not None:
        reserve = max_tokens
    elif profile.max_output_tokens is not None:
        reserve = profile.max_output_tokens
    else:
        reserve = max(MIN_FALLBACK_RESERVE, -(-window * 2 // 100))
    # Rounding to 6 places first: 0.03 * window in floats can land a hair above an integer.
    safety = math.ceil(round(safety_ratio * window, 6))
    return Budget(window=window, reserve=reserve, safety=safety, budget=window - reserve - safety)


@dataclass(frozen=True, slots=True)
class BudgetBreakdown:
    """Where the budget went. ``system_prompt + snippets + skills + caller_context + tool_specs +
    transcript + tail_note == estimated`` exactly, and ``remaining = budget - estimated``."""

    window: int
    reserve: int
    safety: int
    budget: int
    system_prompt: int
    snippets: int
    skills: int
    caller_context: int
    tool_specs: int
    transcript: int
    tail_note: int
    estimated: int
    remaining: int
    dropped_turns: int

    def as_dict(self) -> dict[str, int]:
        """Every line by name, in order: a new dict (every step stores one, every gateway answer shows
        one). Its fields are ints, so reading each is ``dataclasses.asdict`` without its deep copy."""
        return {name: getattr(self, name) for name in _BREAKDOWN_FIELDS}


_BREAKDOWN_FIELDS = tuple(item.name for item in fields(BudgetBreakdown))


@dataclass(frozen=True, slots=True)
class FitResult:
    """The messages to send (head, a contiguous suffix of the transcript, the tail note), what was
    dropped, and the breakdown. With ``overflow`` the messages are the floor and must not be sent."""

    messages: tuple[Message, ...]
    dropped_turns: int
    dropped_messages: int
    overflow: bool
    breakdown: BudgetBreakdown

    def require_fit(self) -> None:
        """Raise :class:`ContextOverflow` (carrying the breakdown) when the floor is over budget."""
        if self.overflow:
            raise ContextOverflow(
                f"The context needs {self.breakdown.estimated:,} tokens at its smallest, "
                f"over the budget of {self.breakdown.budget:,}.",
                extra={"breakdown": self.breakdown.as_dict()},
            )


def _invalid(index: int, problem: str, message: str) -> TranscriptInvalid:
    return TranscriptInvalid(f"transcript[{index}]: {message}", extra={"index": index, "problem": problem})


class _TranscriptIndex:
    """Per-message counts, prefix sums and turn starts of one transcript, extendable in place."""

    def __init__(self) -> None:
        self.transcript: tuple[Message, ...] = ()
        self.prefix: list[int] = [0]  # prefix[i]: tokens of transcript[:i]
        self.turn_starts: list[int] = []
        self.turn_prefix: list[int] = []  # prefix[start] of every turn, non-decreasing
        self._calls: frozenset[str] = frozenset()  # call ids of the assistant opening the current turn
        self._answered: set[str] = set()

    def extend(self, transcript: tuple[Message, ...], estimator: Estimator) -> None:
        """Scan ``transcript[len(self.transcript):]``; the caller guarantees the rest is known."""
        known, prefix, check = len(self.transcript), self.prefix, self._check_turn
        for index, count in enumerate(estimator.count_each(transcript[known:]), start=known):
            check(index, transcript[index])
            prefix.append(prefix[-1] + count)
        self.transcript = transcript

    def _check_turn(self, index: int, message: Message) -> None:
        role = message.role
        if role == "tool":
            call_id = message.tool_call_id or ""
            if call_id not in self._calls:
                raise _invalid(index, "orphan_tool_result", "tool result answers no call of its turn")
            if call_id in self._answered:
                raise _invalid(index, "duplicate_tool_result", "tool call answered twice")
            self._answered.add(call_id)
        elif role in ("assistant", "user"):
            self.turn_starts.append(index)
            self.turn_prefix.append(self.prefix[index])
            self._calls = frozenset(call.id for call in message.tool_calls)
            self._answered = set()
        else:
            raise _invalid(index, "system_after_head", "system messages belong to the head only")


@dataclass(frozen=True, slots=True)
class _HeadCounts:
    """Counts of the head and of its probes (see :class:`Segments`), for the breakdown."""

    system_total: int
    system_prompt: int
    user_total: int
    skills: int
    through_context: int

    @property
    def total(self) -> int:
        return self.system_total + self.user_total


def _count_head(assembled: AssembledContext, estimator: Estimator) -> _HeadCounts:
    count, segments, head = estimator.count_message, assembled.segments, assembled.head
    skills = count(segments.skills_probe) if segments.skills_probe else 0
    return _HeadCounts(
        system_total=count(head[0]) if segments.has_system_message else 0,
        system_prompt=count(segments.system_prompt_probe) if segments.system_prompt_probe else 0,
        user_total=count(head[-1]),
        skills=skills,
        through_context=count(segments.context_probe) if segments.context_probe else skills,
    )


class Fitter:
    """Fits successive contexts of one growing transcript (one run, one estimator).

    Owned by the caller, never shared globally. When the transcript passed to :meth:`fit` starts with
    the transcript of the previous call (checked element by element; identical objects compare in one
    pointer step, equal-but-rebuilt ones by value), only the new messages are counted and scanned;
    otherwise the index is rebuilt from the estimator's memoised counts. A head equal to the previous
    one reuses its counts (re-assembling a step builds new but equal head messages). Not thread-safe:
    one fitter per run (or per thread).
    """

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator
        self._index = _TranscriptIndex()
        self._head_key: tuple[object, ...] = ()
        self._head_counts: _HeadCounts | None = None

    def fit(
        self,
        assembled: AssembledContext,
        *,
        max_tokens: int | None = None,
        safety_ratio: float = DEFAULT_SAFETY_RATIO,
    ) -> FitResult:
        """Fit ``assembled`` into the budget (see the module docstring). Raises
        :class:`TranscriptInvalid` for an orphan or duplicate tool result or a system message after
        the head, and ValueError when ``assembled`` was built for another profile than the estimator's."""
        if assembled.profile != self.estimator.profile:
            raise ValueError("the context was assembled for another model profile than the estimator's")
        budget = budget_for(assembled.profile, max_tokens=max_tokens, safety_ratio=safety_ratio)
        index = self._indexed(assembled.transcript)
        return _choose(assembled, index, self._counted_head(assembled), budget, self.estimator)

    def _indexed(self, transcript: tuple[Message, ...]) -> _TranscriptIndex:
        known = self._index.transcript
        if len(transcript) < len(known) or transcript[: len(known)] != known:
            self._index = _TranscriptIndex()
        try:
            self._index.extend(transcript, self.estimator)
        except TranscriptInvalid:
            self._index = _TranscriptIndex()  # never keep a half-scanned index
            raise
        return self._index

    def _counted_head(self, assembled: AssembledContext) -> _HeadCounts:
        segments = assembled.segments
        key = (assembled.head, segments.system_prompt_probe, segments.skills_probe, segments.context_probe)
        if self._head_counts is None or key != self._head_key:
            self._head_counts, self._head_key = _count_head(assembled, self.estimator), key
        return self._head_counts


@traced("fit", result_attributes=fit_span_attributes)
def fit(
    assembled: AssembledContext,
    *,
    estimator: Estimator,
    max_tokens: int | None = None,
    safety_ratio: float = DEFAULT_SAFETY_RATIO,
) -> FitResult:
    """One-off fit with a fresh :class:`Fitter`: O(n) cache lookups plus tokenizing uncached messages.
    Use a kept :class:`Fitter` when fitting successive steps of one run."""
    return Fitter(estimator).fit(assembled, max_tokens=max_tokens, safety_ratio=safety_ratio)


def _choose(
    assembled: AssembledContext,
    index: _TranscriptIndex,
    head: _HeadCounts,
    budget: Budget,
    estimator: Estimator,
) -> FitResult:
    tail = assembled.tail_note
    tool_tokens = estimator.count_tools(assembled.tool_specs)
    tail_tokens = estimator.count_message(tail) if tail is not None else 0
    fixed = head.total + tool_tokens + tail_tokens + estimator.reply_priming
    total = index.prefix[-1]
    if index.turn_starts:
        # Keep transcript[start:] with the oldest start whose suffix fits: prefix[start] >= total - room.
        turn = bisect_left(index.turn_prefix, total - (budget.budget - fixed))
        turn = min(turn, len(index.turn_starts) - 1)  # the newest turn is never dropped
        cut = index.turn_starts[turn]
    else:
        turn = cut = 0
    kept_tokens = total - index.prefix[cut]
    messages = assembled.head + index.transcript[cut:] + ((tail,) if tail is not None else ())
    lines = _Lines(tool_specs=tool_tokens, tail_note=tail_tokens, kept=kept_tokens, dropped_turns=turn)
    breakdown = _breakdown(head, budget, lines, estimator.reply_priming)
    return FitResult(
        messages=messages,
        dropped_turns=turn,
        dropped_messages=cut,
        overflow=breakdown.remaining < 0,
        breakdown=breakdown,
    )


@dataclass(frozen=True, slots=True)
class _Lines:
    tool_specs: int
    tail_note: int
    kept: int  # tokens of the kept transcript messages
    dropped_turns: int


def _breakdown(head: _HeadCounts, budget: Budget, lines: _Lines, reply_priming: int) -> BudgetBreakdown:
    """Attribute every token of the estimate to exactly one line, by subtraction inside shared messages.

    * system message (total S): ``system_prompt`` = count of a system message holding the system
      prompt alone (so it carries the message overhead; 0 without a prompt); ``snippets`` = S -
      system_prompt (the separator and the snippet block; all of S when there is no prompt).
    * first user message (total U): ``skills`` = count of a user message holding the skill block
      alone (0 without one); ``caller_context`` = count of a user message holding the skill block
      and the labelled context items, minus ``skills`` (0 without items); the rest of U (the task
      input, its separator, and the message overhead when there are neither skills nor context)
      goes to ``transcript``.
    * ``transcript`` = that rest of U + the reply priming + every kept transcript message.
    * ``tool_specs`` = the estimator's count of the specs; ``tail_note`` = its message's count.

    ``estimated`` is the sum of the lines and equals ``count_messages(kept) + count_tools(specs)``.
    """
    transcript = head.user_total - head.through_context + reply_priming + lines.kept
    estimated = head.total + lines.tool_specs + lines.tail_note + reply_priming + lines.kept
    return BudgetBreakdown(
        window=budget.window,
        reserve=budget.reserve,
        safety=budget.safety,
        budget=budget.budget,
        system_prompt=head.system_prompt,
        snippets=head.system_total - head.system_prompt,
        skills=head.skills,
        caller_context=head.through_context - head.skills,
        tool_specs=lines.tool_specs,
        transcript=transcript,
        tail_note=lines.tail_note,
        estimated=estimated,
        remaining=budget.budget - estimated,
        dropped_turns=lines.dropped_turns,
    )
