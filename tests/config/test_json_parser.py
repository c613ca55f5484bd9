"""``config/limits.py``'s ``BoundedJSONParser``: NUL and unpaired surrogates, which JSON can only write
as ``\\u`` escapes, are refused naming the field in every spelling of the escape; a body without such
an escape is not walked for them, and text that merely shows a backslash and ``u0000`` is kept."""

from __future__ import annotations

import io

import pytest

from config import limits
from config.errors import InvalidText
from config.limits import BoundedJSONParser


def parsed(body: str):
    return BoundedJSONParser().parse(io.BytesIO(body.encode()), "application/json", {})


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ('{"a": ["ok", "x\\u0000y"]}', "a[1]"),
        ('{"a": {"b": "\\uD800"}}', "a.b"),
        ('{"a": "\\udfff"}', "a"),
        ('{"a": "\\uDbFf!"}', "a"),
        ('{"k\\u0000": 1}', "(key)"),
    ],
)
def test_every_spelling_of_a_bad_escape_is_refused_naming_its_field(body, field):
    with pytest.raises(InvalidText) as refused:
        parsed(body)
    assert refused.value.extra == {"field": field}


@pytest.mark.parametrize(
    ("body", "value"),
    [
        ('{"a": "\\\\u0000 and \\\\uD800 as text"}', {"a": "\\u0000 and \\uD800 as text"}),
        ('{"a": "\\ud83d\\ude00 \\u00e9 \\uE000"}', {"a": "\U0001f600 \u00e9 \ue000"}),
        ('{"a": "plain"}', {"a": "plain"}),
    ],
)
def test_escapes_that_decode_to_good_text_are_kept(body, value):
    assert parsed(body) == value


def test_a_body_without_such_an_escape_is_not_walked(monkeypatch):
    def walked(data):
        raise AssertionError("walked")

    monkeypatch.setattr(limits, "bad_text_field", walked)
    assert parsed('{"a": ["ok", "caf\\u00e9", "\U0001f600"]}') == {"a": ["ok", "café", "\U0001f600"]}
    # A surrogate pair's escapes spell what a lone surrogate's would, so that body is walked.
    for body in ('{"a": "\\u0000"}', '{"a": "\\ud83d\\ude00"}'):
        with pytest.raises(AssertionError, match="walked"):
            parsed(body)
