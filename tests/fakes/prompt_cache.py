"""Anthropic-style prompt caching for the fake provider (``FakeProvider(prompt_cache=True)``).

The model of the real service (Anthropic documentation, "Prompt caching"), reduced to what tests and
the prompt-cache benchmark need:

* a request is a sequence of blocks in prefix order: each tool, the system text (or each of its
  blocks), then each content block of each message; a block's identity is its JSON without
  ``cache_control``, its role, and whether it opens its message;
* a block marked ``cache_control`` writes the prefix ending with it, when that prefix holds at least
  ``min_tokens`` tokens;
* a request reads the longest previously written prefix that ends at one of its marked blocks or at
  one of the 19 block boundaries before each (the real service checks about 20);
* tokens: each block's text in ``o200k_base`` (structures as compact JSON), plus 3 and the role's
  tokens for the block that opens a message or the system text, plus 3 priming the reply.

Reported usage then says, as Anthropic's does: ``cache_read_input_tokens`` (the prefix read),
``cache_creation_input_tokens`` (from there to the last prefix written) and ``input_tokens`` (the rest).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from context_assembly.encodings import get_encoding

LOOKBACK_BLOCKS = 20
# The fake's counting rule (tests.fakes.provider_server.count_prompt_tokens): the OpenAI Cookbook's.
TOKENS_PER_MESSAGE = REPLY_PRIMING = 3


def count_text_tokens(text: str) -> int:
    return len(get_encoding("o200k_base").encode(text, disallowed_special=()))


@dataclass(frozen=True)
class CacheUsage:
    read: int
    written: int
    uncached: int

    @property
    def prompt(self) -> int:
        return self.read + self.written + self.uncached


@dataclass(frozen=True)
class _Block:
    identity: str
    tokens: int
    marked: bool


def _text(block: Mapping[str, Any]) -> str:
    if isinstance(block.get("text"), str):
        return block["text"]
    return json.dumps(block, separators=(",", ":"), sort_keys=True)


def _block(kind: str, role: str, opens: bool, raw: Mapping[str, Any]) -> _Block:
    plain = {key: value for key, value in raw.items() if key != "cache_control"}
    tokens = count_text_tokens(_text(plain))
    if opens:
        tokens += TOKENS_PER_MESSAGE + count_text_tokens(role)
    identity = json.dumps([kind, role, opens, plain], separators=(",", ":"), sort_keys=True)
    return _Block(identity, tokens, "cache_control" in raw)


def blocks(body: Mapping[str, Any]) -> Iterator[_Block]:
    """The request's blocks in prefix order (tools, system, messages)."""
    for tool in body.get("tools") or []:
        yield _block("tool", "", False, tool)
    system = body.get("system")
    if isinstance(system, str) and system:
        yield _block("system", "system", True, {"type": "text", "text": system})
    elif isinstance(system, list):
        for position, part in enumerate(system):
            yield _block("system", "system", position == 0, part)
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
        for position, part in enumerate(parts):
            yield _block("message", str(message.get("role")), position == 0, part)


class PrefixCache:
    """The written prefixes (by digest) of every request seen so far. Thread-safe."""

    def __init__(self, min_tokens: int = 0) -> None:
        self.min_tokens = min_tokens
        self._written: set[bytes] = set()
        self._lock = threading.Lock()

    def account(self, body: Mapping[str, Any]) -> CacheUsage:
        """Read and write ``body``'s prefixes; what it read, wrote and left uncached."""
        digests, totals, marks = [], [], []
        hasher, total = hashlib.sha256(), 0
        for index, block in enumerate(blocks(body)):
            hasher.update(hashlib.sha256(block.identity.encode()).digest())
            total += block.tokens
            digests.append(hasher.copy().digest())
            totals.append(total)
            if block.marked:
                marks.append(index)
        with self._lock:
            read_end = max((self._hit(digests, mark) for mark in marks), default=0)
            written_end = read_end
            for mark in marks:
                if totals[mark] >= self.min_tokens:
                    self._written.add(digests[mark])
                    written_end = max(written_end, mark + 1)
        read = totals[read_end - 1] if read_end else 0
        written = (totals[written_end - 1] if written_end else 0) - read
        return CacheUsage(read=read, written=written, uncached=total + REPLY_PRIMING - read - written)

    def _hit(self, digests: list[bytes], mark: int) -> int:
        """The number of blocks of the longest written prefix found looking back from ``mark``."""
        for index in range(mark, max(-1, mark - LOOKBACK_BLOCKS), -1):
            if digests[index] in self._written:
                return index + 1
        return 0

    def clear(self) -> None:
        with self._lock:
            self._written.clear()
