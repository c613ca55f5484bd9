"""What a part of a send holds, beside what it declares: personal data found in its text raises the
class it is sent at (decision 0032, decision 0039).

:func:`found_in` is the personal-data screener's one entry point: the findings of a (redacted) text,
with the operator's patterns (``PERSONAL_DATA_PATTERNS``), memoized by the text itself, since a
configuration's prompt, snippets and skills are screened again at every send. :func:`raised` turns a
source whose text holds personal data into the source sent: its class the stricter of its declared
class and ``personal_data``, its declared class kept beside it, its findings by kind and count.
Nothing here keeps a value: findings are kinds and spans, summaries kinds and counts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import replace

from django.conf import settings

from config.caches import cache_register
from config.lru import LruCache
from governance.guardrails.personal_data import Finding, OperatorPattern, find_personal_data, summary
from governance.policy import Source
from governance.vocabulary import DataClass

# Texts longer than this are screened anew each time (a memo entry holds its key alive).
_MAX_MEMO_CHARS = 262_144
_FOUND: LruCache[tuple[str, str], tuple[Finding, ...]] = LruCache(8192)
_PATTERNS: LruCache[str, tuple[OperatorPattern, ...]] = LruCache(8)
cache_register(
    _PATTERNS,
    name="personal_data_patterns",
    key="PERSONAL_DATA_PATTERNS as configured (JSON, sorted keys)",
    invalidation="none needed: the compiled patterns are a pure function of the key",
)
cache_register(
    _FOUND,
    name="personal_data_findings",
    key="the text itself (up to 262,144 characters) and the operator's patterns as configured",
    invalidation="none needed: findings are a pure function of the text and the patterns in the key",
)


def operator_patterns() -> tuple[OperatorPattern, ...]:
    """The operator's patterns (``PERSONAL_DATA_PATTERNS``), compiled once per configured value."""
    return _compiled(_patterns_key())


def found_in(text: str) -> tuple[Finding, ...]:
    """The personal data in ``text``, by start (every built-in kind and the operator's patterns)."""
    if not text:
        return ()
    key = _patterns_key()
    if len(text) > _MAX_MEMO_CHARS:
        return find_personal_data(text, extra_patterns=_compiled(key))
    return _FOUND.get_or_build((key, text), lambda: find_personal_data(text, extra_patterns=_compiled(key)))


def counted(findings: Iterable[Finding]) -> dict[str, int]:
    """The findings by kind and count, in kind order: what receipts, events and metrics show."""
    return {str(kind): count for kind, count in summary(findings).items()}


def raised(source: Source, found: dict[str, int]) -> Source:
    """``source`` as it is sent when its text holds ``found`` (kinds and counts): at the stricter of
    its declared class and ``personal_data`` (its receiver's class too, for an earlier turn), the
    declared class kept in ``declared_class`` where it was raised. Nothing found: ``source`` itself. A class that cannot be
    read is left as it is: the gate reads it as the strictest class anyway (an observe row's missing
    class is its own rule)."""
    if not found:
        return source
    declared = DataClass.parse(source.data_class)
    data_class = source.data_class
    if declared is not None and declared.rank < DataClass.PERSONAL_DATA.rank:
        data_class = DataClass.PERSONAL_DATA.value
    receiver_class = source.receiver_class
    receiver_declared = DataClass.parse(receiver_class)
    if receiver_declared is not None and receiver_declared.rank < DataClass.PERSONAL_DATA.rank:
        receiver_class = DataClass.PERSONAL_DATA.value
    return replace(
        source,
        data_class=data_class,
        receiver_class=receiver_class,
        declared_class=source.data_class if data_class != source.data_class else None,
        personal_data=tuple(sorted(found.items())),
    )


def declared(source: Source) -> Source:
    """``source`` at the class it declared, as it would be sent had nothing been found in it."""
    if source.declared_class is None:
        return source
    return replace(source, data_class=source.declared_class, receiver_class=source.declared_class)


def _patterns_key() -> str:
    """The configured patterns as JSON with sorted keys, built again only when the setting is another
    object (``override_settings`` replaces it; a setting is never changed in place). The last value is
    held with its key, so an ``is`` comparison cannot meet a new object at a freed one's address."""
    global _LAST_PATTERNS
    patterns = getattr(settings, "PERSONAL_DATA_PATTERNS", None) or _NO_PATTERNS
    last = _LAST_PATTERNS
    if last[0] is patterns:
        return last[1]
    key = json.dumps(patterns, sort_keys=True)
    _LAST_PATTERNS = (patterns, key)
    return key


_NO_PATTERNS: dict[str, str] = {}
_LAST_PATTERNS: tuple[object, str] = (_NO_PATTERNS, "{}")


def _compiled(key: str) -> tuple[OperatorPattern, ...]:
    return _PATTERNS.get_or_build(
        key,
        lambda: tuple(OperatorPattern(name, re.compile(regex)) for name, regex in json.loads(key).items()),
    )
