"""Anthropic prompt caching: where a request's ``cache_control`` breakpoints go.

Anthropic caches a request's prefix, in the order tools → system → messages, up to a block marked
``cache_control: {"type": "ephemeral"}``; a later request reads the longest such prefix it repeats
(Anthropic documentation, "Prompt caching"). At most 4 blocks may be marked, and a prefix shorter than
the model's minimum cacheable length is not cached (without an error).

At most three breakpoints, each placed only where the prefix up to it reaches the minimum
(``capabilities.cache_min_tokens``, else :data:`DEFAULT_CACHE_MIN_TOKENS`):

1. the system block (system prompt and snippets, after the tool specs): shared by every run and
   step of a configuration;
2. the skill block, split off as the first block of the first user message: shared likewise;
3. the last block of the transcript (the newest turn), before the tail note: the run's whole
   history. The next step's request is this one plus its new messages (the tail note excepted), so
   its own third breakpoint finds this request's write a few blocks back and reads everything up to
   it. A request without a transcript (a completion, a run's first step) has no third breakpoint:
   nothing is known to repeat what follows the skill block, and a cache write costs more than
   plain input.

Prefix lengths are estimated with the estimator's approximate rule (``o200k_base`` times the
approximate seed factor, as for any model without a published tokenizer), from the per-message
counts the fit has already cached. Near the minimum a prefix may be misjudged either way; the cost is
a breakpoint that caches nothing or a write that is not made, never a refused request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from context_assembly.estimator import Estimator
from context_assembly.messages import Message
from context_assembly.profiles import APPROXIMATE_SEED_FACTOR, ModelProfile
from providers.values import ProviderCall

CACHE_CONTROL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
# The lowest minimum Anthropic documents (Sonnet and Opus 4.x): for a model outside the catalogue a
# breakpoint on a prefix this long is either cached or harmlessly ignored.
DEFAULT_CACHE_MIN_TOKENS = 1_024
# Counting only: the window is never consulted.
_COUNTING_PROFILE = ModelProfile("anthropic-prefix", 1_000_000, None, "approximate", APPROXIMATE_SEED_FACTOR)

BlockRef = tuple[int, int]  # (index in the wire messages, index in that message's content)


@dataclass(frozen=True)
class WireMessages:
    """Translated messages and where the stable prefix's parts ended up: ``skill_block`` is the text
    block holding the skill block alone (None when it was not split off), ``transcript_end`` the last
    block before the tail messages (None when there is none)."""

    system: str
    messages: list[dict[str, Any]]
    skill_block: BlockRef | None = None
    transcript_end: BlockRef | None = None


def mark_cache_breakpoints(body: dict[str, Any], wire: WireMessages, call: ProviderCall) -> int:
    """Mark ``body`` (built from ``wire`` and ``call``) in place; returns how many blocks were marked.

    The system text becomes a one-block list when it is marked (a string cannot carry the marker).
    """
    minimum = call.capabilities.cache_min_tokens or DEFAULT_CACHE_MIN_TOKENS
    marked, reached = 0, False
    for place, prefix_tokens in _candidates(wire, call):
        # Prefixes only grow: once one reaches the minimum, the later ones need no counting.
        reached = reached or prefix_tokens() >= minimum
        if not reached or marked == MAX_BREAKPOINTS:
            continue
        if place is None:
            body["system"] = [{"type": "text", "text": wire.system, "cache_control": dict(CACHE_CONTROL)}]
        else:
            message, block = place
            wire.messages[message]["content"][block]["cache_control"] = dict(CACHE_CONTROL)
        marked += 1
    return marked


def _candidates(
    wire: WireMessages, call: ProviderCall
) -> Iterator[tuple[BlockRef | None, Callable[[], int]]]:
    """Each breakpoint place (None: the system block), in prefix order, with a function estimating the
    prompt tokens up to and including it."""
    prefix = _Prefix(call)
    if wire.system:
        yield None, prefix.system
    if wire.skill_block is not None:
        yield wire.skill_block, prefix.skill_block
    if wire.transcript_end is not None and wire.transcript_end != wire.skill_block:
        yield wire.transcript_end, prefix.transcript


class _Prefix:
    """Estimated prompt tokens up to each breakpoint, counted once and only when asked for."""

    def __init__(self, call: ProviderCall) -> None:
        self._call = call
        self._estimator = Estimator(_COUNTING_PROFILE)
        self._system: int | None = None

    def system(self) -> int:
        if self._system is None:
            system = [m for m in self._call.messages if m.role == "system"]
            self._system = self._estimator.count_tools(self._call.tool_specs) + sum(
                self._estimator.count_message(m) for m in system
            )
        return self._system

    def skill_block(self) -> int:
        first_user = next(m for m in self._call.messages if m.role == "user")
        chars = self._call.layout.skill_block_chars
        if not isinstance(first_user.content, str):
            return self.system()
        head = Message(role="user", content=first_user.content[:chars])
        return self.system() + self._estimator.count_message(head)

    def transcript(self) -> int:
        stable = self._call.layout.transcript_end(len(self._call.messages)) or 0
        return self._estimator.count_tools(self._call.tool_specs) + sum(
            self._estimator.count_message(m) for m in self._call.messages[:stable]
        )
