"""The catalogue of full-span shapes: explicit patterns for known secret formats, each matching the
whole token (public prefixes and PEM armour included)."""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import regex

from config.caches import cache_register

from .placeholders import is_placeholder

_R = r"(?![A-Za-z0-9_\-])"  # the token ends here
_ARMOUR = r"-{4,5} ?BEGIN (?P<label>[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?) ?-{4,5}"
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@dataclass(frozen=True, slots=True)
class _Shape:
    """One catalogue entry. The secret is the named group ``s`` when present, else the whole match.

    Patterns start with a literal wherever possible, because the regex engine then skips ahead at C
    speed (a leading look-behind or ``re.I`` makes it try every position: ~10 ms per pattern per 200 KB).
    So the left token boundary is checked in Python (``bounded``), and case-insensitive shapes are
    matched in lower case against an ASCII-lowercased copy of the text (``lowered``; same offsets)."""

    kind: str
    pattern: re.Pattern[str]
    bounded: bool = False
    lowered: bool = False
    # Whether a match can lie in one run of token characters, as a token split in two and joined again
    # is read (``spelled``): not a shape that needs a blank, a ";", a ":" or a quote. Unsure: True.
    in_a_run: bool = True


def _shape(
    kind: str,
    pattern: str,
    flags: int = 0,
    *,
    bounded: bool = False,
    lowered: bool = False,
    in_a_run: bool = True,
) -> _Shape:
    return _Shape(kind, re.compile(pattern, flags), bounded, lowered, in_a_run)


# Order breaks ties between equally wide overlapping matches (the first listed names the kind).
_CATALOGUE: tuple[_Shape, ...] = (
    # The whole block, armour included; an unterminated block runs to the end of its base64 run.
    _shape(
        "private_key",
        _ARMOUR + r"(?:.{0,40000}?-{4,5} ?END (?P=label) ?-{4,5}|[A-Za-z0-9+/=\s\\:,.\-]*)",
        re.S,
        in_a_run=False,
    ),
    _shape(
        "private_key", r"PuTTY-User-Key-File-\d+:.{0,20000}?Private-MAC: *[0-9A-Fa-f]+", re.S, in_a_run=False
    ),
    _shape("aws_access_key_id", r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Z0-9])", bounded=True),
    _shape(
        "aws_secret_access_key",
        r"aws[^\n]{0,30}?(?:secret|key)[^\n]{0,30}?[\s\"'=:](?P<s>[a-z0-9/+]{40})(?![a-z0-9/+=])",
        lowered=True,
    ),
    _shape("github_token", r"gh[pousr]_[A-Za-z0-9]{30,255}" + _R, bounded=True),
    _shape("github_token", r"github_pat_[A-Za-z0-9_]{30,255}" + _R, bounded=True),
    _shape(
        "gitlab_token",
        r"gl(?:pat|dt|rt|ptt|cbt|soat|ffct|imt|oas|ft|agent)-[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]+)*",
        bounded=True,
    ),
    _shape("gitlab_token", r"GR1348941[A-Za-z0-9_\-]{20,}", bounded=True),
    _shape("slack_token", r"xox[abposre]-[A-Za-z0-9\-]{10,}", bounded=True),
    _shape("slack_token", r"xapp-\d-[A-Za-z0-9\-]{10,}", bounded=True),
    _shape("slack_webhook", r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9_/\-]{20,})"),
    _shape("discord_webhook", r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[A-Za-z0-9_\-]{30,})"),
    _shape("stripe_key", r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}" + _R, bounded=True),
    _shape("stripe_webhook_secret", r"whsec_[A-Za-z0-9+/=]{24,}", bounded=True),
    _shape("anthropic_api_key", r"sk-ant-[A-Za-z0-9_\-]{20,}", bounded=True),
    # A digit is required so that prose placeholders such as sk-your-openai-key-goes-here stay.
    _shape("openai_api_key", r"sk-(?!ant-)(?=[A-Za-z0-9_\-]*\d)[A-Za-z0-9_\-]{20,}", bounded=True),
    _shape("google_api_key", r"AIza[0-9A-Za-z_\-]{35}" + _R, bounded=True),
    _shape("google_oauth_client_secret", r"GOCSPX-[A-Za-z0-9_\-]{20,}", bounded=True),
    _shape("google_oauth_token", r"ya29\.[A-Za-z0-9_\-]{20,}", bounded=True),
    _shape("jwt", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}(?:\.[A-Za-z0-9_\-]+){1,3}\.?", bounded=True),
    _shape("npm_token", r"npm_[A-Za-z0-9]{36}" + _R, bounded=True),
    _shape("pypi_token", r"pypi-AgE[A-Za-z0-9_\-]{50,}", bounded=True),
    _shape("sendgrid_api_key", r"SG\.[A-Za-z0-9_\-]{16,32}\.[A-Za-z0-9_\-]{30,50}" + _R, bounded=True),
    _shape("twilio_api_key", r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])", bounded=True),
    _shape("heroku_api_key", r"HRKU-[A-Za-z0-9_\-]{30,}", bounded=True),
    _shape(
        "heroku_api_key",
        r"heroku[^\n]{0,60}?(?<![0-9a-f\-])(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})"
        r"(?![0-9a-f\-])",
        lowered=True,
    ),
    _shape(
        "azure_storage_key",
        r"(?:accountkey|sharedaccesskey)\s*=\s*(?P<s>[a-z0-9+/]{20,}={0,2})",
        lowered=True,
    ),
    _shape("azure_sas_signature", r"[?&;]sig=(?P<s>[a-z0-9%+/=]{16,})", lowered=True, in_a_run=False),
    # Telegram bot tokens are matched from their colon (a literal) and checked for the digits before.
    _shape("telegram_bot_token", r":[A-Za-z0-9_\-]{35}" + _R, in_a_run=False),
    _shape(
        "discord_token",
        r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + _R,
        bounded=True,
    ),
    _shape("mailchimp_api_key", r"-us[0-9]{1,2}(?![0-9])"),
    _shape("huggingface_token", r"hf_[A-Za-z0-9]{34,}" + _R, bounded=True),
    _shape("digitalocean_token", r"do[poar]_v1_[a-f0-9]{64}" + _R, bounded=True),
    _shape("square_token", r"sq0(?:csp|atp)-[A-Za-z0-9_\-]{22,}", bounded=True),
    _shape("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    # scheme://user:password@host: the password goes, the user and host stay.
    _shape("password", r"://[^\s:/?#@'\"<>]*:(?P<s>[^\s/?#'\"<>]+)@", in_a_run=False),
    # ADO / SQL Server connection strings: after a ';' everything up to the next ';' is the password;
    # at a line start, only when a ';' follows (else it is code: password = getenv("X")).
    _shape(
        "password",
        r";[ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<s>[^;\r\n\"']*[^;\r\n\"'\s])",
        lowered=True,
        in_a_run=False,
    ),
    _shape(
        "password",
        r"^[ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<s>[^;\r\n\"'(\[\s][^;\r\n\"'(\[]*?)[ \t]*(?=;)",
        re.M,
        lowered=True,
        in_a_run=False,
    ),
    _shape("password", r"(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<s>[^\s\"']+)", bounded=True, in_a_run=False),
    _shape(
        "bearer_token",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|digest|apikey|sso-key)[ \t]+"
        r"(?P<s>[a-z0-9._~+/\-=:]{8,})",
        lowered=True,
        in_a_run=False,
    ),
    _shape(
        "basic_auth",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+(?P<s>[a-z0-9+/]{6,}=*)",
        lowered=True,
        in_a_run=False,
    ),
    _shape(
        "bearer_token",
        r"bearer[ \t]+(?P<s>(?=[a-z0-9._~+/\-]*\d)[a-z0-9._~+/\-]{16,}=*)",
        lowered=True,
        in_a_run=False,
    ),
)

TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
# Shapes whose left part cannot start a fast regex: (kind, the characters that must precede, how many).
_LEFT_PARTS = {
    "telegram_bot_token": (string.digits, 8, 10),
    "mailchimp_api_key": ("0123456789abcdef", 32, 32),
}


def lower_ascii(text: str) -> str:
    """``text`` with ASCII letters lowercased and every offset unchanged."""
    lowered = text.lower()  # fast; Unicode lowering may add characters (İ), which would shift offsets
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def catalogue_spans(
    text: str, lowered: str, soft_starts: frozenset[int] = frozenset()
) -> Iterator[tuple[int, int, str]]:
    """Catalogue matches. ``soft_starts`` are offsets that start a token whatever precedes them
    (in a normalised view, where an invisible character separated two words)."""
    for shape in _CATALOGUE:
        has_group = "s" in shape.pattern.groupindex
        for match in shape.pattern.finditer(lowered if shape.lowered else text):
            start, end = match.span("s") if has_group else match.span()
            if shape.kind in _LEFT_PARTS:
                start = _left_part(text, start, *_LEFT_PARTS[shape.kind])
            elif shape.bounded and start > 0 and text[start - 1] in TOKEN_CHARS and start not in soft_starts:
                continue
            if 0 <= start < end and not is_placeholder(text[start:end]):
                yield start, end, shape.kind


def _left_part(text: str, start: int, alphabet: str, shortest: int, longest: int) -> int:
    """The start of the run of ``alphabet`` characters that must precede a match, or -1."""
    begin = start
    while begin > 0 and start - begin < longest and text[begin - 1] in alphabet:
        begin -= 1
    before = text[begin - 1] if begin > 0 else ""
    if start - begin < shortest or (before != "" and (before in TOKEN_CHARS or before in alphabet)):
        return -1
    return begin


# --- shapes still arriving ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Partial:
    """A shape compiled for partial matching: the ``regex`` package tells a text that ends inside a
    match from one that cannot match. ``head`` is what precedes the secret of a shape whose secret is
    its group ``s``."""

    shape: _Shape
    pattern: regex.Pattern[str]
    head: regex.Pattern[str] | None


def _partial(shape: _Shape) -> _Partial:
    source, flags = shape.pattern.pattern, shape.pattern.flags & (re.I | re.M | re.S)
    head, group, _ = source.partition("(?P<s>")
    return _Partial(shape, regex.compile(source, flags), regex.compile(head, flags) if group else None)


_PARTIALS = tuple(_partial(shape) for shape in _CATALOGUE if shape.in_a_run)


def may_cross(text: str, join: int) -> bool:
    """Whether ``text`` (token characters: two runs joined at ``join``), followed by more token
    characters, may hold a catalogue shape whose secret starts before ``join`` and ends after it: a
    shape already crossing ``join`` (what follows may still change it), or the start of one that runs
    to the end of ``text`` (``AK`` or ``ghp_Ab`` before ``join``, the end). A token split at ``join``
    (``AK IA…``) reads whole again only then. Errs on the side of ``True``: a shape that no
    continuation completes may count; one that some continuation completes is never missed.

    It costs one partial search per shape that a run can hold (about 40 µs), and a stream asks it
    at almost every piece that ends after a word (the word, then what of the next has arrived): a
    short ``text`` is answered from :data:`_may_cross_short`, since the words of replies recur."""
    if len(text) <= MAY_CROSS_MEMO_MAX_CHARS:
        return _may_cross_short(text, join)
    return _may_cross(text, join)


def _may_cross(text: str, join: int) -> bool:
    """:func:`may_cross`, searched: one partial search per shape that a run can hold (more where a
    shape starts often)."""
    lowered = lower_ascii(text)
    if any(start < join < end for start, end, _ in catalogue_spans(text, lowered)):
        return True
    return any(
        _runs_to_the_end(partial, lowered if partial.shape.lowered else text, join) for partial in _PARTIALS
    )


MAY_CROSS_MEMO_MAX_CHARS = 64

_may_cross_short = cache_register(
    lru_cache(maxsize=8192)(_may_cross),
    name="split_crossings",
    key=f"a run of token characters up to {MAY_CROSS_MEMO_MAX_CHARS} characters and where it was split",
    invalidation="none needed: a pure function of the text and the split (and of the catalogue's code)",
)


def _runs_to_the_end(partial: _Partial, text: str, join: int) -> bool:
    """Whether the shape matches ``text`` from a start before ``join`` up to its end and may go on, its
    secret starting before ``join`` (after the head, for a shape whose secret is its group ``s``, or
    at its left part, which may itself still be arriving)."""
    if partial.shape.kind in _LEFT_PARTS and _open_left_part(text, join, *_LEFT_PARTS[partial.shape.kind]):
        return True
    position = 0
    while position <= len(text):
        match = partial.pattern.search(text, position, partial=True)
        if match is None:
            return False
        start = match.start()
        if partial.shape.kind in _LEFT_PARTS:
            start = _left_part(text, start, *_LEFT_PARTS[partial.shape.kind])
        elif partial.head is not None:  # the head must end before the join, within the text
            start = start if join > 1 and partial.head.match(text, start, join - 1) else -1
        elif partial.shape.bounded and start > 0 and text[start - 1] in TOKEN_CHARS:
            start = -1
        if match.partial and 0 <= start < join:
            return True
        position = match.start() + 1
    return False


def _open_left_part(text: str, join: int, alphabet: str, shortest: int, longest: int) -> bool:
    """Whether ``text`` ends in a left part still arriving (its start before ``join``)."""
    begin = len(text)
    while begin > 0 and len(text) - begin < longest and text[begin - 1] in alphabet:
        begin -= 1
    before = text[begin - 1] if begin > 0 else ""
    bounded = before == "" or (before not in TOKEN_CHARS and before not in alphabet)
    return begin < min(join, len(text)) and bounded
