"""Key/value assignments: ``password = "..."``, ``API_KEY=...``, ``"secret": "..."``, ``token: ...``,
``--token ...``. A value under a secret-bearing key is a secret unless it reads as a reference, a label,
a template or prose."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from .characters import INVISIBLE
from .findings import PLACEHOLDER_PREFIX
from .placeholders import is_placeholder, word_set

_KEY_HIT = re.compile(r"pass|pwd|secret|token|key|credential|contrase", re.I)
_KEY_HIT_LOWER = re.compile(_KEY_HIT.pattern)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzñÑ0123456789_.-")
_KEY_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-zñ]+|[A-Z]+|\d+")
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "contraseña", "contrasena"})
_KEY_QUALIFIERS = word_set(
    "api access auth private client secret account service master signing encryption db database storage "
    "priv app consumer license"
)
_JOINED_KEYS = {
    "apikey": "api_key",
    "privatekey": "private_key",
    "accesskey": "secret",
    "secretkey": "secret",
}
# A key ending in one of these names a property of a secret (max_token_length, password_min_length,
# token_type, secret_name, api_key_env), not the secret itself.
_NOT_SECRET_LAST = word_set(
    "count counts type types limit limits max min size length len name names env var variable file path "
    "dir url uri endpoint field fields header param policy prompt ttl expiry expires expiration usage "
    "budget estimate estimator id ids hint label help rotation required enabled format encoding kind mode "
    "days seconds hours minutes ms at reset strength regex pattern validator validators placeholder "
    "tokenizer index position offset version algorithm scope scopes provider class method ref lifetime "
    "timeout rate cost price window ratio factor chars bytes prefix suffix text message msg description "
    "title doc docs note notes error warning source"
)
_NOT_SECRET_FIRST = frozenset({"max", "min", "num", "n", "is", "has", "use", "total"})
_SEPARATOR = re.compile(r"[\\\"'\]]{0,3}[ \t]*(:=|=>|=(?!=)|:(?![:/\\]))")
_FLAG_SEPARATOR = re.compile(r"[ \t]+(?=[^\s\-=])")
_VALUE = re.compile(
    r"[ \t]*(?:\\\"(?P<eq>(?:[^\"\\\r\n]|\\[^\"])*)\\\"|\"(?P<dq>[^\"\r\n]*)\"|'(?P<sq>[^'\r\n]*)'"
    r"|`(?P<bq>[^`\r\n]*)`|(?P<bare>[^\s'\"`;,&<>]+))"
)
_LINE_PREFIX = re.compile(r"[ \t\-#>{\[,\"']*(?:export[ \t]+|set[ \t]+|ENV[ \t]+)?")
# settings.SECRET_KEY, process.env.apiToken, self.password: code references, each part a word-like name.
_NAME = r"(?:[a-z_][a-z0-9_]*|[A-Z][A-Z0-9_]*|[A-Za-z][a-z0-9]*(?:[A-Z][a-z][a-z0-9]+)*)"
_ATTRIBUTE_PATH = re.compile(rf"{_NAME}(?:\.{_NAME})+(?::{_NAME})?")  # also module.path:callable
_SLUG = re.compile(r"[A-Za-z]+(?:[-_][A-Za-z]+)+")
_CODE_NAME = re.compile(r"[A-Za-z_]+")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def kind_for_key(key: str) -> str | None:
    """The placeholder kind for a value stored under ``key``, or None when the key is not secret-bearing."""
    words = [word.lower() for word in _KEY_WORDS.findall(key)]
    if not words or words[-1] in _NOT_SECRET_LAST or words[0] in _NOT_SECRET_FIRST:
        return None
    if any(word in _PASSWORD_WORDS for word in words):
        return "password"
    if "secret" in words or "secrets" in words:
        return "aws_secret_access_key" if "aws" in words else "secret"
    if "token" in words:
        return "token"
    for previous, word in itertools.pairwise(words):
        if word == "key" and previous in _KEY_QUALIFIERS:
            return {"api": "api_key", "private": "private_key", "priv": "private_key"}.get(previous, "secret")
    joined = next((_JOINED_KEYS[word] for word in words if word in _JOINED_KEYS), None)
    return joined or ("secret" if {"credential", "credentials"} & set(words) else None)


# Longer runs before an "=" are rather a line of base64 than a key's name.
_KEY_NAME_LIMIT = 40


def secret_key_before(text: str, end: int) -> bool:
    """Whether the name that ends at ``end`` is a secret-bearing key (``API_KEY`` of ``API_KEY=``),
    invisible characters inside it read through, as the normalised view reads them."""
    start = end
    while (
        start > 0
        and end - start <= _KEY_NAME_LIMIT
        and (text[start - 1] in _KEY_CHARS or text[start - 1] in INVISIBLE)
    ):
        start -= 1
    name = "".join(char for char in text[start:end] if char in _KEY_CHARS)
    return 0 < len(name) <= _KEY_NAME_LIMIT and kind_for_key(name) is not None


def assignment_spans(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    """Values assigned to secret-bearing keys, in the syntaxes of code, config, env files and CLIs.
    ``lowered`` is ``text`` with ASCII letters lowercased (a case-insensitive search is ~8x slower)."""
    for start, key_end, kind in _keys(text, lowered):
        yield from _assigned_value(text, start, key_end, kind)


def clause_words(text: str, lowered: str) -> Iterator[tuple[int, int]]:
    """The spans of the words after a password key and a colon (``password: hunter2``): whether such a
    word is a password depends on the first character after it that is not a blank (it ends its
    clause, or more words follow: :func:`_password_ends_clause`), which a text still arriving may not
    hold yet. ``lowered`` as for :func:`assignment_spans`."""
    for _, key_end, kind in _keys(text, lowered):
        separator = _SEPARATOR.match(text, key_end)
        if kind != "password" or separator is None or separator.group(1) != ":":
            continue
        value = _VALUE.match(text, separator.end())
        if value is not None and value.group("bare") is not None:
            yield value.span("bare")


def _keys(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    """The secret-bearing keys of ``text``: their spans and the kind of what they hold."""
    key_end = -1
    for hit in _KEY_HIT_LOWER.finditer(lowered):
        if hit.start() < key_end:
            continue
        start, key_end = hit.start(), hit.end()
        while start > 0 and text[start - 1] in _KEY_CHARS:
            start -= 1
        if text.endswith(PLACEHOLDER_PREFIX, 0, start):
            continue  # the kind inside our own placeholder, [REDACTED:api_key]: not a key of the text
        while key_end < len(text) and text[key_end] in _KEY_CHARS:
            key_end += 1
        kind = kind_for_key(text[start:key_end])
        if kind is not None:
            yield start, key_end, kind


def _assigned_value(text: str, key_start: int, key_end: int, kind: str) -> Iterator[tuple[int, int, str]]:
    key = text[key_start:key_end]
    separator: re.Match[str] | None = _SEPARATOR.match(text, key_end)
    if separator is None and key.startswith("-"):
        separator = _FLAG_SEPARATOR.match(text, key_end)
    if separator is None:
        return
    value = _VALUE.match(text, separator.end())
    if value is None:
        return
    group = next(name for name in ("eq", "dq", "sq", "bq", "bare") if value.group(name) is not None)
    start, end = value.span(group)
    while group == "bare" and end > start and (text[end - 1] == ":" or _unbalanced(text[start:end])):
        end -= 1  # f(token=abc123): and def f(token=None): the trailing punctuation is syntax
    sep = separator.group(1) if separator.re is _SEPARATOR else " "
    line_start = _LINE_PREFIX.fullmatch(text, text.rfind("\n", 0, key_start) + 1, key_start) is not None
    if _accept_value(text, start, end, key=key, quoted=group != "bare", sep=sep, line_start=line_start):
        yield start, end, kind
    elif (
        kind == "password" and sep == ":" and group == "bare" and _password_ends_clause(text, start, end, key)
    ):
        yield start, start + len(text[start:end].rstrip(".")), kind


def _accept_value(
    text: str, start: int, end: int, *, key: str, quoted: bool, sep: str, line_start: bool
) -> bool:
    value = text[start:end]
    if not plausible_literal(value, key):
        return False
    if quoted:
        return True
    if value[0] in "$%{([" or "(" in value or "[" in value or _code_reference(value):
        return False
    if sep == "=" and text[start - 1] in " \t" and _CODE_NAME.fullmatch(value):
        return False  # self._secret = fallbacks: spaced '=' and a digit-free name is code, not a literal
    if sep == "=" and text[start - 1] == "=":
        return True  # KEY=value (env files, shell, query strings, --flag=value): the first word is the value
    if line_start:
        # YAML and ini lines: the value is the rest of the line; several plain words are prose.
        line_end = text.find("\n", end)
        rest = text[end : line_end if line_end != -1 else len(text)]
        return not rest.split(" #", 1)[0].strip(" \t\r,;") or _tokenish(value)
    # Mid-line, "key: value" is as often prose ("the token: see below") as data.
    return sep != ":" or _tokenish(value)


def _password_ends_clause(text: str, start: int, end: int, key: str) -> bool:
    """``db password: letmein``, ``log in as admin, password: hunter2.``: after a password key and a
    colon, one word that ends its clause (the line, or punctuation or a bracket after it) is the
    password, however plain; a word that more words follow is prose ("password: click the link")."""
    value = text[start:end].rstrip(".")  # the end of a sentence, not of the password
    if not plausible_literal(value, key) or "(" in value or "[" in value or value[0] in "$%{":
        return False
    if _code_reference(value):
        return False
    line_end = text.find("\n", end)
    rest = text[end : line_end if line_end != -1 else len(text)].lstrip(" \t")
    return not rest.strip() or rest[0] in _CLAUSE_ENDS


_CLAUSE_ENDS = frozenset(".,;:!?)(]\r")


def _unbalanced(value: str) -> bool:
    closers = {")": "(", "]": "[", "}": "{"}
    last = value[-1]
    return last in closers and value.count(last) > value.count(closers[last])


def plausible_literal(value: str, key: str) -> bool:
    """Whether a value assigned to a secret-bearing key can be a secret rather than a reference,
    a label ('Enter your password'), a template ('{token}'), prose or an enum (SECRET = "secret")."""
    if len(value) < 4 or is_placeholder(value) or PLACEHOLDER_PREFIX in value:
        return False
    if (" " in value and _KEY_HIT.search(value)) or ("{" in value and "}" in value):
        return False
    if _KEY_HIT.search(value) and _SLUG.fullmatch(value):
        return False  # reset_url_token = "set-password": a slug naming the thing
    if len(value.split()) >= 5 or _normal_name(value) == _normal_name(key):
        return False
    # password = db_password, API_KEY=API_KEY: a reference to a variable, not a literal. A word of the
    # name must be the secret word: a random value may hold 'pwd' or 'key' across its letters (xPWd).
    words = _KEY_WORDS.findall(value) if _IDENTIFIER.fullmatch(value) else []
    return not any(_KEY_HIT_LOWER.match(word.lower()) for word in words)


def _code_reference(value: str) -> bool:
    """settings.SECRET_KEY, process.env.apiToken: names joined by dots. Names rarely carry more than
    two digits; a random value with a dot in it (T96W2OTM.rAlz2Uuwi) does."""
    return _ATTRIBUTE_PATH.fullmatch(value) is not None and sum(c.isdigit() for c in value) <= 2


def _normal_name(name: str) -> str:
    return name.lower().replace("-", "_").strip("_")


def _tokenish(value: str) -> bool:
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or c in "-_+/=.!@#$%^&*~" for c in value)
    return len(value) >= 20 or (len(value) >= 8 and has_letter and has_other)
