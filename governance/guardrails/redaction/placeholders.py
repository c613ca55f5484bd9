"""Values that only stand for a secret (``YOUR_API_KEY``, ``${TOKEN}``, ``****``) and are never redacted."""

from __future__ import annotations

import re


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PLACEHOLDER_WORDS = word_set(
    "password passwd pass secret token apikey api_key key none null nil true false undefined yes no on "
    "off redacted hidden masked required optional string str int integer bytes bool boolean float number "
    "any object dict list value empty secretstr changeit n/a tbd todo"
)
_PLACEHOLDER_SHAPES = re.compile(
    r"[*xX•·.\-_#?]*|<[^<>]*>|\$\{[^}]*\}|\$\(.*\)|\$[A-Za-z_]+|\{\{.*\}\}|\{[^{}]*\}|%\(?\w*\)?[sd]|%\w+%"
    r"|(?i:your|insert|enter|replace|example|sample|dummy|placeholder|fake)[-_ .]?\S*|(?i:my)[-_ ][A-Za-z_\-]*"
    r"|\S*(?i:[-_ ]here)|.*\.\.\.|.*…|\[REDACTED:.*",
    re.S,
)


def is_placeholder(value: str) -> bool:
    """True for values that stand for a secret rather than being one (``YOUR_API_KEY``, ``sk-...``,
    ``${TOKEN}``, ``<password>``, ``****``) and for our own placeholders (idempotence)."""
    bare = value.strip().strip("\"'`")
    return not bare or bare.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_SHAPES.fullmatch(bare) is not None
