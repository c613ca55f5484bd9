"""Mandatory secret redaction for everything that reaches a provider (DESIGN.md §4 "Guardrails").

Contract of :func:`redact`:

- every character of every detected secret is replaced, at **every** occurrence in the text, by the
  deterministic placeholder ``[REDACTED:<kind>]``; public prefixes may go with it (we redact whole tokens);
- findings carry the kind and the span in the *original* text, never the value;
- redacting a redacted text changes nothing and reports nothing (placeholders match no rule);
- if the scanner raises, :class:`RedactionFailed` propagates so the caller refuses the call (fail closed).

No library finds full spans (``reference/secret-detection.md``), so detection has two sources:

1. an explicit catalogue of full-span patterns for known shapes, plus key/value assignments in code,
   config, env files, JSON and command lines (a value under a secret-bearing key);
2. ``detect-secrets`` plugins run per line as a *source of candidates*: a reported value is located in
   its line, widened to the whole token run it sits in, and only then searched for everywhere.

Then every detected value of a token-like shape is searched for in the whole text, so a secret seen once
in an assignment is also removed where it appears bare. Overlapping spans are merged (the union is
replaced; the widest member names the kind).
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from detect_secrets.filters import heuristic
from detect_secrets.plugins import (
    artifactory,
    aws,
    azure_storage_key,
    basic_auth,
    cloudant,
    discord,
    github_token,
    gitlab_token,
    high_entropy_strings,
    ibm_cloud_iam,
    ibm_cos_hmac,
    jwt,
    keyword,
    mailchimp,
    npm,
    openai,
    pypi_token,
    sendgrid,
    slack,
    softlayer,
    square_oauth,
    stripe,
    telegram_token,
    twilio,
)
from detect_secrets.plugins import base as ds_base
from rest_framework import status

from config.errors import ApplicationError

PLACEHOLDER_PREFIX = "[REDACTED:"


class RedactionFailed(ApplicationError):
    """The secret scanner raised; the payload must not be sent. Carries no content."""

    code = "redaction_failed"
    http_status = status.HTTP_503_SERVICE_UNAVAILABLE


@dataclass(frozen=True, slots=True)
class Finding:
    """One redacted span of the original text. Never holds the secret itself."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    findings: tuple[Finding, ...]
    count: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "count", len(self.findings))

    def counts_by_kind(self) -> dict[str, int]:
        return dict(sorted(Counter(finding.kind for finding in self.findings).items()))


def placeholder(kind: str) -> str:
    return f"{PLACEHOLDER_PREFIX}{kind}]"


# --- placeholders: values that only stand for a secret ----------------------------------------------


def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_PLACEHOLDER_WORDS = _word_set(
    "password passwd pass secret token apikey api_key key none null nil true false undefined yes no on "
    "off redacted hidden masked required optional string str int integer bytes bool boolean float number "
    "any object dict list value empty secretstr changeit n/a tbd todo"
)
_PLACEHOLDER_SHAPES = re.compile(
    r"[*xX•·.\-_#?]*|<[^<>]*>|\$\{[^}]*\}|\$\(.*\)|\$[A-Za-z_]+|\{\{.*\}\}|\{[^{}]*\}|%\(?\w*\)?[sd]|%\w+%"
    r"|(?i:your|insert|enter|replace|example|sample|dummy|placeholder|fake)[-_ .]?\S*|(?i:my)[-_ ]\S*"
    r"|\S*(?i:[-_ ]here)|.*\.\.\.|.*…|\[REDACTED:.*",
    re.S,
)


def is_placeholder(value: str) -> bool:
    """True for values that stand for a secret rather than being one (``YOUR_API_KEY``, ``sk-...``,
    ``${TOKEN}``, ``<password>``, ``****``) and for our own placeholders (idempotence)."""
    bare = value.strip().strip("\"'`")
    return not bare or bare.lower() in _PLACEHOLDER_WORDS or _PLACEHOLDER_SHAPES.fullmatch(bare) is not None


# --- key/value assignments: password = "...", API_KEY=..., "secret": "...", token: ..., --token ... ----

_KEY_HIT = re.compile(r"pass|pwd|secret|token|key|credential|contrase", re.I)
_KEY_HIT_LOWER = re.compile(_KEY_HIT.pattern)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyzñÑ0123456789_.-")
_KEY_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-zñ]+|[A-Z]+|\d+")
_PASSWORD_WORDS = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "contraseña", "contrasena"})
_KEY_QUALIFIERS = _word_set(
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
_NOT_SECRET_LAST = _word_set(
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


def assignment_spans(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    """Values assigned to secret-bearing keys, in the syntaxes of code, config, env files and CLIs.
    ``lowered`` is ``text`` with ASCII letters lowercased (a case-insensitive search is ~8x slower)."""
    key_end = -1
    for hit in _KEY_HIT_LOWER.finditer(lowered):
        if hit.start() < key_end:
            continue
        start, key_end = hit.start(), hit.end()
        while start > 0 and text[start - 1] in _KEY_CHARS:
            start -= 1
        while key_end < len(text) and text[key_end] in _KEY_CHARS:
            key_end += 1
        kind = kind_for_key(text[start:key_end])
        if kind is not None:
            yield from _assigned_value(text, start, key_end, kind)


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


def _accept_value(
    text: str, start: int, end: int, *, key: str, quoted: bool, sep: str, line_start: bool
) -> bool:
    value = text[start:end]
    if not _plausible_literal(value, key):
        return False
    if quoted:
        return True
    if value[0] in "$%{([" or "(" in value or "[" in value or _ATTRIBUTE_PATH.fullmatch(value):
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


def _unbalanced(value: str) -> bool:
    closers = {")": "(", "]": "[", "}": "{"}
    last = value[-1]
    return last in closers and value.count(last) > value.count(closers[last])


def _plausible_literal(value: str, key: str) -> bool:
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
    # password = db_password, API_KEY=API_KEY: a reference to a variable, not a literal
    return not (_IDENTIFIER.fullmatch(value) and _KEY_HIT.search(value))


def _normal_name(name: str) -> str:
    return name.lower().replace("-", "_").strip("_")


def _tokenish(value: str) -> bool:
    has_letter = any(c.isalpha() for c in value)
    has_other = any(c.isdigit() or c in "-_+/=.!@#$%^&*~" for c in value)
    return len(value) >= 20 or (len(value) >= 8 and has_letter and has_other)


# --- (1) the catalogue of full-span shapes ------------------------------------------------------------

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


def _shape(
    kind: str, pattern: str, flags: int = 0, *, bounded: bool = False, lowered: bool = False
) -> _Shape:
    return _Shape(kind, re.compile(pattern, flags), bounded, lowered)


# Order breaks ties between equally wide overlapping matches (the first listed names the kind).
_CATALOGUE: tuple[_Shape, ...] = (
    # The whole block, armour included; an unterminated block runs to the end of its base64 run.
    _shape(
        "private_key",
        _ARMOUR + r"(?:.{0,40000}?-{4,5} ?END (?P=label) ?-{4,5}|[A-Za-z0-9+/=\s\\:,.\-]*)",
        re.S,
    ),
    _shape("private_key", r"PuTTY-User-Key-File-\d+:.{0,20000}?Private-MAC: *[0-9A-Fa-f]+", re.S),
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
    _shape("azure_sas_signature", r"[?&;]sig=(?P<s>[a-z0-9%+/=]{16,})", lowered=True),
    # Telegram bot tokens are matched from their colon (a literal) and checked for the digits before.
    _shape("telegram_bot_token", r":[A-Za-z0-9_\-]{35}" + _R),
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
    _shape("password", r"://[^\s:/?#@'\"<>]*:(?P<s>[^\s/?#'\"<>]+)@"),
    # ADO / SQL Server connection strings: after a ';' everything up to the next ';' is the password;
    # at a line start, only when a ';' follows (else it is code: password = getenv("X")).
    _shape("password", r";[ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<s>[^;\r\n\"']*[^;\r\n\"'\s])", lowered=True),
    _shape(
        "password",
        r"^[ \t]*(?:password|pwd)[ \t]*=[ \t]*(?P<s>[^;\r\n\"'(\[\s][^;\r\n\"'(\[]*?)[ \t]*(?=;)",
        re.M,
        lowered=True,
    ),
    _shape("password", r"(?:-u|--user)[ \t]+[\"']?[^\s:\"']+:(?P<s>[^\s\"']+)", bounded=True),
    _shape(
        "bearer_token",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|token|digest|apikey|sso-key)[ \t]+"
        r"(?P<s>[a-z0-9._~+/\-=:]{8,})",
        lowered=True,
    ),
    _shape(
        "basic_auth",
        r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?basic[ \t]+(?P<s>[a-z0-9+/]{6,}=*)",
        lowered=True,
    ),
    _shape("bearer_token", r"bearer[ \t]+(?P<s>(?=[a-z0-9._~+/\-]*\d)[a-z0-9._~+/\-]{16,}=*)", lowered=True),
)

_TOKEN_CHARS = frozenset(string.ascii_letters + string.digits + "_-")
# Shapes whose left part cannot start a fast regex: (kind, the characters that must precede, how many).
_LEFT_PARTS = {
    "telegram_bot_token": (string.digits, 8, 10),
    "mailchimp_api_key": ("0123456789abcdef", 32, 32),
}


def _lower_ascii(text: str) -> str:
    """``text`` with ASCII letters lowercased and every offset unchanged."""
    lowered = text.lower()  # fast; Unicode lowering may add characters (İ), which would shift offsets
    return lowered if len(lowered) == len(text) else text.translate(_ASCII_LOWER)


def _catalogue_spans(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    for shape in _CATALOGUE:
        has_group = "s" in shape.pattern.groupindex
        for match in shape.pattern.finditer(lowered if shape.lowered else text):
            start, end = match.span("s") if has_group else match.span()
            if shape.kind in _LEFT_PARTS:
                start = _left_part(text, start, *_LEFT_PARTS[shape.kind])
            elif shape.bounded and start > 0 and text[start - 1] in _TOKEN_CHARS:
                continue
            if 0 <= start < end and not is_placeholder(text[start:end]):
                yield start, end, shape.kind


def _left_part(text: str, start: int, alphabet: str, shortest: int, longest: int) -> int:
    """The start of the run of ``alphabet`` characters that must precede a match, or -1."""
    begin = start
    while begin > 0 and start - begin < longest and text[begin - 1] in alphabet:
        begin -= 1
    before = text[begin - 1] if begin > 0 else ""
    if start - begin < shortest or before in _TOKEN_CHARS or before in alphabet:
        return -1
    return begin


# --- (2) detect-secrets as a source of candidates -------------------------------------------------------

# Instantiated here rather than through detect-secrets' process-global settings: no verification
# requests, no shared mutable state (the settings singletons are unsafe under threads).
_TOKEN_PLUGINS: tuple[ds_base.BasePlugin, ...] = (
    artifactory.ArtifactoryDetector(),
    aws.AWSKeyDetector(),
    basic_auth.BasicAuthDetector(),
    discord.DiscordBotTokenDetector(),
    github_token.GitHubTokenDetector(),
    gitlab_token.GitLabTokenDetector(),
    jwt.JwtTokenDetector(),
    mailchimp.MailchimpDetector(),
    npm.NpmDetector(),
    openai.OpenAIDetector(),
    pypi_token.PypiTokenDetector(),
    sendgrid.SendGridDetector(),
    slack.SlackDetector(),
    square_oauth.SquareOAuthDetector(),
    stripe.StripeDetector(),
    telegram_token.TelegramBotTokenDetector(),
    twilio.TwilioKeyDetector(),
)
_KEYWORD_PLUGINS: tuple[ds_base.BasePlugin, ...] = (
    azure_storage_key.AzureStorageKeyDetector(),
    cloudant.CloudantDetector(),
    ibm_cloud_iam.IbmCloudIamDetector(),
    ibm_cos_hmac.IbmCosHmacDetector(),
    softlayer.SoftlayerDetector(),
)
_KEYWORD_DETECTOR = keyword.KeywordDetector()
# Literal preconditions (on the lowercased line) of the plugins whose regexes cost the most per
# character; each is implied by every match of its plugin, so skipping a line without it loses nothing.
_PLUGIN_TRIGGERS: dict[type, re.Pattern[str]] = {
    artifactory.ArtifactoryDetector: re.compile(r"akc|ap[0-9a-f]"),
    cloudant.CloudantDetector: re.compile(
        r"cl(?:oudant|ou)?[-_]?(?:api)?(?:key|pw|pass|token)|cloudant\.com"
    ),
    ibm_cloud_iam.IbmCloudIamDetector: re.compile(r"[a-z0-9_\-]{44}"),
    ibm_cos_hmac.IbmCosHmacDetector: re.compile(r"secret[-_]?(?:access)?[-_]?key"),
    softlayer.SoftlayerDetector: re.compile(r"softlayer|sl[-_]?(?:api)?(?:key|pw|pass|token)"),
    mailchimp.MailchimpDetector: re.compile(r"-us[0-9]"),
    npm.NpmDetector: re.compile(r"_authtoken"),  # its '//.+/' is quadratic on long lines
}
# On long lines (minified JSON) the keyword plugin reads windows around each keyword assignment.
_LONG_LINE = 1000
_BASE64 = high_entropy_strings.Base64HighEntropyString(limit=4.5)
_HEX = high_entropy_strings.HexHighEntropyString(limit=3.0)
_BASE64_EAGER = re.compile(r"[A-Za-z0-9+/\\\-_=]+")
_HEX_EAGER = re.compile(r"[0-9A-Fa-f]+")
_PADDED_PART = re.compile(r"[^=]+=*")

# Lines worth handing to the library, found by two whole-text searches rather than per-line work
# (running every plugin on every line costs ~0.5 s per 200 KB): a run of 16+ token characters with a
# digit in it (token plugins, entropy), or a secret keyword followed by an assignment (keyword plugins).
_CANDIDATE_RUN = re.compile(r"[A-Za-z0-9_\-+/=]{16,}")
_HAS_DIGIT = re.compile(r"\d")
_KEYWORD_ASSIGNMENT = re.compile(r"(?:key|pass|pwd|pw|secret|token|contrase)[a-z0-9_.\-]*[\"'\]]{0,3}\s*[:=]")
_SECRET_WORD = re.compile(
    r"(?<![a-z])(?:secret|token|passw|pwd|api[_\-]?key|auth|credential|private[_\-]?key)", re.I
)
_HASH_CONTEXT = re.compile(r"sha|hash|digest|checksum|commit|etag|integrity|md5|fingerprint|revision", re.I)
_MIN_LIBRARY_VALUE = 8
_MIN_ENTROPY_LENGTH = 16


def _library_spans(text: str, lowered: str) -> Iterator[tuple[int, int, str]]:
    """Candidate spans from detect-secrets, widened to full token runs. Raises RedactionFailed."""
    line_starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n"))]
    token_lines = {
        bisect.bisect_right(line_starts, match.start()) - 1
        for match in _CANDIDATE_RUN.finditer(text)
        if _HAS_DIGIT.search(match.group())
    }
    keyword_lines = {
        bisect.bisect_right(line_starts, match.start()) - 1 for match in _KEYWORD_ASSIGNMENT.finditer(lowered)
    }
    for index in sorted(token_lines | keyword_lines):
        offset = line_starts[index]
        end = line_starts[index + 1] - 1 if index + 1 < len(line_starts) else len(text)
        try:
            line, lowered_line = text[offset:end], lowered[offset:end]
            spans = list(_scan_line(line, lowered_line, index in token_lines, index in keyword_lines))
        except Exception as exc:  # any scanner failure refuses the payload (DESIGN.md §4)
            raise RedactionFailed(
                "The secret scanner failed; the payload was not sent.", extra={"error": type(exc).__name__}
            ) from None
        yield from ((offset + start, offset + stop, kind) for start, stop, kind in spans)


def _scan_line(line: str, lowered: str, has_token: bool, has_keyword: bool) -> Iterator[tuple[int, int, str]]:
    plugins = (_TOKEN_PLUGINS if has_token else ()) + (_KEYWORD_PLUGINS if has_keyword else ())
    for plugin in plugins:
        trigger = _PLUGIN_TRIGGERS.get(type(plugin))
        if trigger is not None and trigger.search(lowered) is None:
            continue
        for value in plugin.analyze_string(line):
            yield from _widened_occurrences(line, value, "secret")
    if has_keyword:
        for window in _keyword_windows(line, lowered):
            if heuristic.is_indirect_reference(window):
                continue
            for value in _KEYWORD_DETECTOR.analyze_string(window):
                if len(value) >= 6 and " " not in value and _plausible_literal(value, ""):
                    yield from _occurrences(line, value, "secret")
    if has_token:
        yield from _entropy_spans(line, has_keyword)


def _keyword_windows(line: str, lowered: str) -> Iterator[str]:
    """The line, or on a long line the merged windows around its keyword assignments."""
    if len(line) <= _LONG_LINE:
        yield line
        return
    start = end = -1
    for match in _KEYWORD_ASSIGNMENT.finditer(lowered):
        window_start, window_end = max(0, match.start() - 64), match.end() + 256
        if window_start > end >= 0:
            yield line[start:end]
            start = -1
        start = window_start if start < 0 else start
        end = max(end, window_end)
    if start >= 0:
        yield line[start:end]


def _entropy_spans(line: str, has_keyword: bool) -> Iterator[tuple[int, int, str]]:
    for value in _entropy_values(_BASE64, _BASE64_EAGER, line):
        hexlike = all(c in "0123456789abcdefABCDEF" for c in value)
        shaped = len(value) >= 20 and not hexlike and any(c.isdigit() for c in value)
        if shaped and not _looks_like_path(value) and f"base64,{value}" not in line:
            for start, end, kind in _widened_occurrences(line, value, "high_entropy_string"):
                if not _inside_url(line, start):
                    yield start, end, kind
    # A hex string is a secret only right after a secret keyword and away from hash vocabulary:
    # commit SHAs and checksums are the commonest hex strings in prompts.
    if has_keyword and not _HASH_CONTEXT.search(line):
        for value in _entropy_values(_HEX, _HEX_EAGER, line):
            for start, end, kind in _widened_occurrences(line, value, "high_entropy_string"):
                if end - start >= 16 and _SECRET_WORD.search(line, max(0, start - 40), start):
                    yield start, end, kind


def _inside_url(line: str, position: int) -> bool:
    """URL paths and fragments are full of mangled names; secrets in URLs are caught by the catalogue
    (userinfo, webhook paths) and by assignments (query parameters)."""
    word_start = max(line.rfind(" ", 0, position), line.rfind("\t", 0, position)) + 1
    return "://" in line[word_start:position]


def _entropy_values(
    plugin: high_entropy_strings.HighEntropyStringsPlugin, eager: re.Pattern[str], line: str
) -> Iterator[str]:
    """scan_line semantics: quoted strings first; unquoted runs only when nothing was quoted."""
    # An unquoted run such as KEY=value is split at inner '=' (base64 only has it as trailing padding).
    values = list(plugin.analyze_string(line)) or [
        part for run in eager.findall(line) for part in _PADDED_PART.findall(run)
    ]
    for value in values:
        # Shannon entropy of n characters is at most log2(n): shorter strings cannot pass the limit,
        # and skipping them saves the plugin's costly computation.
        if len(value) < _MIN_ENTROPY_LENGTH or _shannon_entropy(plugin, value) <= plugin.entropy_limit:
            continue
        if heuristic.is_sequential_string(value) or heuristic.is_potential_uuid(value):
            continue
        yield value


def _shannon_entropy(plugin: high_entropy_strings.HighEntropyStringsPlugin, value: str) -> float:
    """The plugin's own measure (bits per character over its charset, with the hex plugin's discount
    for all-digit strings), computed in one pass instead of one ``str.count`` per charset character."""
    counts = Counter(c for c in value if c in plugin.charset)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    if plugin is _HEX and len(value) > 1 and value.isdigit():
        entropy -= 1.2 / math.log2(len(value))
    return entropy


def _looks_like_path(value: str) -> bool:
    parts = [part for part in value.split("/") if part]
    return len(parts) >= 3 or (value.count("/") >= 2 and all(p.isalpha() or p.islower() for p in parts))


def _occurrences(line: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    start = line.find(value)
    while start != -1:
        yield start, start + len(value), kind
        start = line.find(value, start + 1)


def _widened_occurrences(line: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    """Each occurrence of a reported value, widened to the token run around it (detect-secrets
    reports GitHub tokens as 'ghp', Stripe keys as a prefix, JWTs without signature)."""
    value = value.strip()
    if "=" in value.rstrip("="):  # some rules report 'AccountKey=<key>': keep the value side
        value = max(_PADDED_PART.findall(value), key=len)
    if not value or PLACEHOLDER_PREFIX in value:
        return
    for start, end, _ in _occurrences(line, value, kind):
        while start > 0 and line[start - 1] in _TOKEN_CHARS:
            start -= 1
        while end < len(line) and (line[end] in _TOKEN_CHARS or line[end] == "."):
            end += 1
        while end > start and line[end - 1] == ".":
            end -= 1
        while end < len(line) and line[end] == "=":  # base64 padding
            end += 1
        token = line[start:end]
        if end - start >= _MIN_LIBRARY_VALUE and not is_placeholder(token) and "://" not in token:
            yield start, end, kind


# --- merging and replacement ----------------------------------------------------------------------------

_SHORT_WORD = re.compile(r"[a-z]{1,11}|[A-Z][a-z]{1,10}")


def _replaceable_everywhere(value: str) -> bool:
    """Short plain words (a YAML ``token: enabled`` mistaken for a secret) are redacted only where
    they were detected; anything token-like is redacted at every occurrence."""
    return len(value) >= 6 and _SHORT_WORD.fullmatch(value) is None


def _every_occurrence(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    values: dict[str, str] = {}
    for start, end, kind in spans:
        values.setdefault(text[start:end], kind)
    extra = [
        hit
        for value, kind in values.items()
        if _replaceable_everywhere(value)
        for hit in _occurrences(text, value, kind)
    ]
    return spans + extra


# Generic kinds lose ties against a named shape covering the same characters.
_GENERIC_KINDS = {"high_entropy_string": 2, "secret": 1}


def _merge(spans: list[tuple[int, int, str]]) -> list[Finding]:
    """Union of overlapping spans; the widest member names the merged span."""
    merged: list[list[Any]] = []  # [start, end, kind, rank of the member naming it]
    for start, end, kind in sorted(spans, key=lambda s: (s[0], s[0] - s[1])):
        rank = (end - start, -_GENERIC_KINDS.get(kind, 0))
        if merged and start < merged[-1][1]:
            last = merged[-1]
            last[1] = max(last[1], end)
            if rank > last[3]:
                last[2], last[3] = kind, rank
        else:
            merged.append([start, end, kind, rank])
    return [Finding(kind=kind, start=start, end=end) for start, end, kind, _ in merged]


def _apply(text: str, findings: list[Finding]) -> str:
    pieces: list[str] = []
    cursor = 0
    for finding in findings:
        pieces.append(text[cursor : finding.start])
        pieces.append(placeholder(finding.kind))
        cursor = finding.end
    pieces.append(text[cursor:])
    return "".join(pieces)


def detect(text: str, *, known_values: dict[str, str] | None = None) -> list[Finding]:
    """Merged findings for ``text``. ``known_values`` (value → kind) are secrets detected elsewhere in
    the same payload, also removed here. Raises RedactionFailed when the scanner fails."""
    lowered = _lower_ascii(text)
    spans = list(_catalogue_spans(text, lowered))
    spans.extend(assignment_spans(text, lowered))
    spans.extend(_library_spans(text, lowered))
    for value, kind in (known_values or {}).items():
        spans.extend(_occurrences(text, value, kind))
    return _merge(_every_occurrence(text, spans))


def redact(text: str) -> Redaction:
    """Replace every secret in ``text`` by its placeholder. Deterministic and idempotent.

    Cost is linear in the text: about 40 ms per 200 KB of prose, code and config; dense single-line
    payloads (minified JSON full of keys) cost up to ~0.3 s, spent in detect-secrets' own regexes.
    Raises RedactionFailed when the scanner fails (the caller refuses the call)."""
    if not text:
        return Redaction(text=text, findings=())
    findings = detect(text)
    return Redaction(text=_apply(text, findings), findings=tuple(findings))


def redact_json(value: Any) -> tuple[Any, dict[str, int]]:
    """Redact every string (dict keys included) of a JSON-like value; return (new value, counts by kind).

    A string under a secret-bearing key (``{"password": "..."}``) is redacted whole, its context being
    the key; a secret found anywhere in the payload is removed from every string of it."""
    first_pass: dict[str, list[Finding]] = {}
    known: dict[str, str] = {}
    for text, key_kind in _strings(value, None):
        if key_kind is not None and _replaceable_everywhere(text) and not is_placeholder(text):
            known.setdefault(text, key_kind)
        if text not in first_pass:
            first_pass[text] = detect(text)
            for finding in first_pass[text]:
                secret = text[finding.start : finding.end]
                if _replaceable_everywhere(secret):
                    known.setdefault(secret, finding.kind)
    counts: Counter[str] = Counter()

    def redact_string(text: str, key_kind: str | None) -> str:
        if key_kind is not None and text and not is_placeholder(text):
            findings = [Finding(kind=key_kind, start=0, end=len(text))]
        else:
            spans = [(f.start, f.end, f.kind) for f in first_pass[text]]
            spans.extend(hit for secret, kind in known.items() for hit in _occurrences(text, secret, kind))
            findings = _merge(spans)
        counts.update(finding.kind for finding in findings)
        return _apply(text, findings)

    return _rebuild(value, redact_string, None), dict(sorted(counts.items()))


def _strings(value: Any, key_kind: str | None) -> Iterator[tuple[str, str | None]]:
    """Every string of a JSON-like value with the secret kind implied by the key it sits under."""
    if isinstance(value, str):
        yield value, key_kind
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str):
                yield key, None
            yield from _strings(item, kind_for_key(key) if isinstance(key, str) else None)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item, key_kind)


def _rebuild(value: Any, redact_string: Callable[[str, str | None], str], key_kind: str | None) -> Any:
    if isinstance(value, str):
        return redact_string(value, key_kind)
    if isinstance(value, dict):
        return {
            (redact_string(key, None) if isinstance(key, str) else key): _rebuild(
                item, redact_string, kind_for_key(key) if isinstance(key, str) else None
            )
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return type(value)(_rebuild(item, redact_string, key_kind) for item in value)
    return value
