"""The one token estimator (docs/architecture.md, "The context of a step").

Counting rules, and where each comes from:

* Text: ``len(encoding.encode_ordinary(text))`` with the profile's tiktoken encoding. Special-token
  strings such as ``<|endoftext|>`` in content are counted as ordinary text, as the API treats them.
* Chat overheads, from the OpenAI Cookbook "How to count tokens with tiktoken" (gpt-3.5-turbo-0125,
  gpt-4-0613, gpt-4o, gpt-4o-mini): 3 tokens per message, the encoded value of every field (role,
  content, name), 1 more token when a ``name`` is present, and 3 tokens priming the reply.
* Tool specs, from the same Cookbook's ``num_tokens_for_tools``: per function ``func_init`` plus
  ``name:description`` (one trailing period dropped); when it has properties ``prop_init``, then per
  property ``prop_key`` plus ``key:type:description``; an enum adds ``enum_init`` and per item
  ``enum_item`` plus the item; one ``func_end`` per request. Constants are 7/3/3/-3/3/12 for
  ``o200k_base`` (gpt-4o family) and 10/3/3/-3/3/12 for ``cl100k_base`` (gpt-3.5-turbo, gpt-4).
  Beyond the Cookbook, which only covers flat properties: other keywords of a property (nested
  ``properties``, ``items``, ``anyOf`` ...) and of the top-level schema (``$defs`` ...) are charged at
  the token count of their compact JSON, deliberately erring high.
* Assistant tool calls and tool results: not documented by OpenAI. We charge
  :data:`TOKENS_PER_TOOL_CALL` plus the call id, function name and arguments per call, and the
  ``tool_call_id`` of a tool message, so that everything on the wire is counted (erring high).
* Images and PDFs, by the rule the profile's provider publishes (``profile.image_rule``): OpenAI's
  tiles by detail, Anthropic's ``width * height / 750``, and a PDF's text plus one page image per
  page. The rules and their sources are in ``context_assembly/media_costs.py``.

Exactness and calibration: for ``o200k_base`` / ``cl100k_base`` profiles every ``count_*`` is the exact
figure of those rules and the calibration factor is *not* applied; :meth:`Estimator.calibrated` applies
it when the caller wants a calibrated figure. For ``approximate`` profiles (no published tokenizer)
each count is the ``o200k_base`` figure times ``profile.calibration_factor``, rounded up per unit (per
text, message, tool block and reply priming), so counts stay additive:
``count_messages(ms) == sum(count_message(m) for m in ms) + reply_priming``.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from config.caches import cache_register
from config.lru import LruCache
from context_assembly.encodings import EncodingUnavailable, get_encoding
from context_assembly.errors import EstimatorUnavailable
from context_assembly.media_costs import OPENAI_TILES, media_tokens
from context_assembly.messages import Message, TextPart, ToolSpec, thaw_json
from context_assembly.profiles import ModelProfile

TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
# Not published by OpenAI; a small framing charge per call so that a call is never counted as free.
TOKENS_PER_TOOL_CALL = 3

# The encoding used for profiles whose vendor tokenizer is not available.
APPROXIMATION_ENCODING = "o200k_base"


@dataclass(frozen=True)
class ToolOverheads:
    """The Cookbook's function-spec constants for one encoding family."""

    func_init: int
    prop_init: int
    prop_key: int
    enum_init: int
    enum_item: int
    func_end: int


TOOL_OVERHEADS = {
    "o200k_base": ToolOverheads(func_init=7, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12),
    "cl100k_base": ToolOverheads(
        func_init=10, prop_init=3, prop_key=3, enum_init=-3, enum_item=3, func_end=12
    ),
}

# Schema keywords the Cookbook rule renders (or that the API does not render); everything else is
# charged as compact JSON.
_PROPERTY_RENDERED = frozenset({"type", "description", "enum"})
_SCHEMA_RENDERED = frozenset({"type", "properties", "required", "additionalProperties"})

CacheKey = tuple[str, bytes]


class TokenCache(LruCache[CacheKey, int]):
    """A bounded, thread-safe LRU of raw token counts keyed by ``(encoding name, sha256 digest)``.

    It only memoises pure results (a count is a function of the encoding and the content), so sharing
    one instance between estimators, profiles and threads is safe. ``max_entries=0`` disables storing.
    """

    def __init__(self, max_entries: int = 50_000) -> None:
        super().__init__(max_entries)

    def approx_bytes(self) -> int:
        """Approximate memory held: the container plus each key tuple, digest and count.

        Encoding-name strings are shared with the encodings and are not counted. O(size).
        """
        with self._lock:
            total = sys.getsizeof(self._entries)
            for (_, digest), value in self._entries.items():
                total += sys.getsizeof((None, None)) + sys.getsizeof(digest) + sys.getsizeof(value)
            return total


# Process-wide default. It holds memoised pure counts only, never calibration or any other state
# that could make two runs disagree.
DEFAULT_CACHE = cache_register(
    TokenCache(),
    name="token_counts",
    key="(encoding name, SHA-256 digest of the counted message or tool spec)",
    invalidation="none needed: a count is a pure function of the encoding and the content",
)


def _ceil_scaled(count: int, factor: float) -> int:
    # Rounding to 6 places first keeps 100 * 1.1 == 110.00000000000001 from becoming 111.
    return math.ceil(round(count * factor, 6))


def _without_final_period(text: str) -> str:
    return text[:-1] if text.endswith(".") else text


def _compact_json(value: Any) -> str:
    return json.dumps(thaw_json(value), separators=(",", ":"), ensure_ascii=False)


class Estimator:
    """Counts tokens of messages, tool specs and text for one model profile. Thread-safe.

    Raises :class:`EstimatorUnavailable` on construction when the tokenizer cannot be loaded offline.
    Per-message and per-tool counts are memoised in ``cache`` (``DEFAULT_CACHE`` when None), so
    re-counting a transcript after one new message tokenizes only the new message; the others cost a
    cache lookup (their digest is computed once per Message object).
    """

    def __init__(self, profile: ModelProfile, *, cache: TokenCache | None = None) -> None:
        self.profile = profile
        self.encoding_name = profile.tokenizer if profile.is_exact else APPROXIMATION_ENCODING
        try:
            self._encoding = get_encoding(self.encoding_name)
        except EncodingUnavailable as exc:
            raise EstimatorUnavailable(
                f"the {self.encoding_name} tokenizer is unavailable offline",
                extra={"model_id": profile.model_id, "encoding": self.encoding_name},
            ) from exc
        self.cache = DEFAULT_CACHE if cache is None else cache
        # Two profiles on one encoding count a message with media differently under different image
        # rules, so the rule is part of the cache's key space.
        rule = profile.image_rule
        self._cache_space = self.encoding_name if rule == OPENAI_TILES else f"{self.encoding_name}/{rule}"
        self._overheads = TOOL_OVERHEADS[self.encoding_name]

    @property
    def is_exact(self) -> bool:
        """True when counts come from the model's own tokenizer without scaling."""
        return self.profile.is_exact

    @property
    def reply_priming(self) -> int:
        """Tokens priming the assistant reply, charged once per request by :meth:`count_messages`."""
        return self._scale(REPLY_PRIMING)

    def calibrated(self, count: int) -> int:
        """``count`` times the profile's calibration factor, rounded up.

        For approximate profiles the factor is already inside every ``count_*`` figure, so ``count``
        is returned unchanged: calling this is always safe and never applies the factor twice.
        """
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError("count must be a non-negative integer")
        return _ceil_scaled(count, self.profile.calibration_factor) if self.is_exact else count

    def count_text(self, text: str) -> int:
        """Tokens of a bare string (no chat overhead). Not memoised: O(len(text))."""
        return self._scale(self._tokens(text))

    def count_message(self, message: Message) -> int:
        """Tokens one message adds to a request: overhead, role, content, name, tool calls."""
        return self.count_each((message,))[0]

    def count_each(self, messages: Iterable[Message]) -> list[int]:
        """:meth:`count_message` of each message, in order, each message's raw count kept under its
        digest (one call for a transcript's messages)."""
        space, get, put = self._cache_space, self.cache.get, self.cache.put
        factor = None if self.is_exact else self.profile.calibration_factor
        counts = []
        for message in messages:
            key = (space, message.digest)
            raw = get(key)
            if raw is None:
                raw = self._raw_message(message)
                put(key, raw)
            counts.append(raw if factor is None else _ceil_scaled(raw, factor))
        return counts

    def count_messages(self, messages: Iterable[Message]) -> int:
        """Prompt tokens of a message list: every message plus the reply priming (even when empty)."""
        return sum(self.count_each(messages)) + self.reply_priming

    def count_tools(self, tool_specs: Sequence[ToolSpec]) -> int:
        """Tokens the tool specs add to a request (0 for none; ``func_end`` once otherwise)."""
        if not tool_specs:
            return 0
        raw = self._overheads.func_end
        for spec in tool_specs:
            key = (self.encoding_name, spec.digest)
            spec_raw = self.cache.get(key)
            if spec_raw is None:
                spec_raw = self._raw_tool(spec)
                self.cache.put(key, spec_raw)
            raw += spec_raw
        return self._scale(raw)

    def count_request(self, messages: Iterable[Message], tool_specs: Sequence[ToolSpec] = ()) -> int:
        """Prompt tokens of a whole request: messages, reply priming and tool specs."""
        return self.count_messages(messages) + self.count_tools(tool_specs)

    def _scale(self, raw: int) -> int:
        return raw if self.is_exact else _ceil_scaled(raw, self.profile.calibration_factor)

    def _tokens(self, text: str) -> int:
        return len(self._encoding.encode_ordinary(text)) if text else 0

    def _raw_message(self, message: Message) -> int:
        count = TOKENS_PER_MESSAGE + self._tokens(message.role)
        if isinstance(message.content, str):
            count += self._tokens(message.content)
        else:
            for part in message.content:
                if isinstance(part, TextPart):
                    count += self._tokens(part.text)
                else:
                    count += media_tokens(part, self.profile.image_rule, self._tokens)
        if message.name is not None:
            count += self._tokens(message.name) + TOKENS_PER_NAME
        for call in message.tool_calls:
            count += TOKENS_PER_TOOL_CALL + self._tokens(call.id)
            count += self._tokens(call.name) + self._tokens(call.arguments)
        if message.tool_call_id is not None:
            count += self._tokens(message.tool_call_id)
        return count

    def _raw_tool(self, spec: ToolSpec) -> int:
        overheads = self._overheads
        count = overheads.func_init + self._tokens(f"{spec.name}:{_without_final_period(spec.description)}")
        properties = spec.parameters.get("properties")
        if isinstance(properties, Mapping) and properties:
            count += overheads.prop_init
            for key, schema in properties.items():
                count += overheads.prop_key + self._raw_property(key, schema)
        extra = {key: value for key, value in spec.parameters.items() if key not in _SCHEMA_RENDERED}
        if extra:
            count += self._tokens(_compact_json(extra))
        return count

    def _raw_property(self, key: str, schema: Any) -> int:
        if not isinstance(schema, Mapping):
            return self._tokens(f"{key}::")
        kind = schema.get("type", "")
        kind_text = kind if isinstance(kind, str) else _compact_json(kind)
        description = schema.get("description", "")
        description_text = _without_final_period(description) if isinstance(description, str) else ""
        count = self._tokens(f"{key}:{kind_text}:{description_text}")
        enum = schema.get("enum")
        if isinstance(enum, Sequence) and not isinstance(enum, str):
            count += self._overheads.enum_init
            for item in enum:
                item_text = item if isinstance(item, str) else _compact_json(item)
                count += self._overheads.enum_item + self._tokens(item_text)
        extra = {name: value for name, value in schema.items() if name not in _PROPERTY_RENDERED}
        if extra:
            count += self._tokens(_compact_json(extra))
        return count
