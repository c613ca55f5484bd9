"""detect-secrets as a source of candidates: its plugins run on the lines worth scanning, and each
reported value is widened to the whole token run it sits in (the library reports prefixes)."""

from __future__ import annotations

import bisect
import itertools
import logging
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence

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

from .assignments import plausible_literal
from .catalogue import TOKEN_CHARS
from .findings import PLACEHOLDER_PREFIX, RedactionFailed
from .placeholders import is_placeholder
from .spans import occurrences

# detect-secrets gives its logger a console handler of its own when imported, which would write its
# lines raw beside the service's redacting handler; they go to that handler, as every library's do.
_LIBRARY_LOG = logging.getLogger("detect-secrets")
for _handler in _LIBRARY_LOG.handlers[:]:
    _LIBRARY_LOG.removeHandler(_handler)

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
# Literal preconditions (on the lowercased line, case-insensitive as some plugins are) of the
# plugins: each is implied by every match of its plugin, so skipping a line without it loses nothing.
# A literal search costs a fraction of the plugin's own regexes, which every token line would run.
_PLUGIN_TRIGGERS: dict[type, re.Pattern[str]] = {
    aws.AWSKeyDetector: re.compile(r"a3t|abia|acca|akia|asia|aws", re.I),
    basic_auth.BasicAuthDetector: re.compile(r"://"),
    discord.DiscordBotTokenDetector: re.compile(r"\.[a-z\d_-]{6}\.", re.I),
    github_token.GitHubTokenDetector: re.compile(r"gh[pousr]_", re.I),
    gitlab_token.GitLabTokenDetector: re.compile(
        r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|gr1348941", re.I
    ),
    jwt.JwtTokenDetector: re.compile(r"eyj", re.I),
    openai.OpenAIDetector: re.compile(r"t3blbkfj", re.I),
    pypi_token.PypiTokenDetector: re.compile(r"pypi-ag", re.I),
    sendgrid.SendGridDetector: re.compile(r"sg\.", re.I),
    slack.SlackDetector: re.compile(r"xox|hooks\.slack\.com", re.I),
    square_oauth.SquareOAuthDetector: re.compile(r"sq0csp-", re.I),
    stripe.StripeDetector: re.compile(r"k_live_", re.I),
    telegram_token.TelegramBotTokenDetector: re.compile(r"\d:"),
    twilio.TwilioKeyDetector: re.compile(r"(?:ac|sk)[a-z0-9]{32}", re.I),
    artifactory.ArtifactoryDetector: re.compile(r"akc|ap[\da-f]"),
    cloudant.CloudantDetector: re.compile(
        r"cl(?:oudant|ou)?[-_]?(?:api)?(?:key|pw|pass|token)|cloudant\.com"
    ),
    ibm_cloud_iam.IbmCloudIamDetector: re.compile(r"[a-z0-9_\-]{44}"),
    ibm_cos_hmac.IbmCosHmacDetector: re.compile(r"secret[-_]?(?:access)?[-_]?key"),
    softlayer.SoftlayerDetector: re.compile(r"softlayer|sl[-_]?(?:api)?[-_]?(?:key|pw|pass|token)"),
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
# The runs are found once per text by the caller (base64 blocks start from them too).
CANDIDATE_RUN = re.compile(r"[A-Za-z0-9_\-+/=]{16,}")
_HAS_DIGIT = re.compile(r"\d")
_KEYWORD_ASSIGNMENT = re.compile(r"(?:key|pass|pwd|pw|secret|token|contrase)[a-z0-9_.\-]*[\"'\]]{0,3}\s*[:=]")
_SECRET_WORD = re.compile(
    r"(?<![a-z])(?:secret|token|passw|pwd|api[_\-]?key|auth|credential|private[_\-]?key)", re.I
)
_HASH_CONTEXT = re.compile(r"sha|hash|digest|checksum|commit|etag|integrity|md5|fingerprint|revision", re.I)
# Subresource-integrity digests (integrity="sha384-..."): public hashes, written in base64.
_SRI_DIGEST = re.compile(r"sha(?:256-[A-Za-z0-9+/]{43}=|384-[A-Za-z0-9+/]{64}|512-[A-Za-z0-9+/]{86}==)")
# detect-secrets' own pattern is ``([^\v=!:]*)\s*`` and then this: that prefix can match nothing, so a
# line matches it exactly when it matches this, which starts only at a '=', '!' or ':' instead of
# backtracking over the prefix from every position (quadratic, a fifth of a short text's scan).
_INDIRECT_REFERENCE = re.compile(r"(?::=?|[!=]{1,3})\s*[\w.-]+[\[\(][^\v]*[\]\)]")
_MIN_LIBRARY_VALUE = 8
_MIN_ENTROPY_LENGTH = 16


def library_spans(text: str, lowered: str, runs: Sequence[re.Match[str]]) -> Iterator[tuple[int, int, str]]:
    """Candidate spans from detect-secrets, widened to full token runs. ``runs`` are the matches of
    :data:`CANDIDATE_RUN` in ``text``. Raises RedactionFailed."""
    line_starts = [0, *itertools.accumulate(len(line) + 1 for line in text.split("\n"))]
    token_lines = {
        bisect.bisect_right(line_starts, match.start()) - 1
        for match in runs
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
        except Exception as exc:  # any scanner failure refuses the payload: fail closed
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
            if _is_indirect_reference(window):
                continue
            for value in _KEYWORD_DETECTOR.analyze_string(window):
                if len(value) >= 6 and " " not in value and plausible_literal(value, ""):
                    yield from occurrences(line, value, "secret")
    if has_token:
        yield from _entropy_spans(line, has_keyword)


def _is_indirect_reference(line: str) -> bool:
    """detect-secrets' ``heuristic.is_indirect_reference`` (``secret = get_secret_key()``,
    ``token = request.headers['apikey']``), with its regex searched from the assignment on."""
    return len(line) <= _LONG_LINE and _INDIRECT_REFERENCE.search(line) is not None


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
        hexlike = not value.strip("0123456789abcdefABCDEF")
        shaped = len(value) >= 20 and not hexlike and any(map(str.isdigit, value))
        shaped = shaped and _SRI_DIGEST.fullmatch(value) is None
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
    # Counted at C speed over every character; those outside the charset are then left out.
    length, charset = len(value), plugin.charset
    entropy = -sum(n / length * math.log2(n / length) for c, n in Counter(value).items() if c in charset)
    if plugin is _HEX and len(value) > 1 and value.isdigit():
        entropy -= 1.2 / math.log2(len(value))
    return entropy


def _looks_like_path(value: str) -> bool:
    parts = [part for part in value.split("/") if part]
    return len(parts) >= 3 or (value.count("/") >= 2 and all(p.isalpha() or p.islower() for p in parts))


def _widened_occurrences(line: str, value: str, kind: str) -> Iterator[tuple[int, int, str]]:
    """Each occurrence of a reported value, widened to the token run around it (detect-secrets
    reports GitHub tokens as 'ghp', Stripe keys as a prefix, JWTs without signature)."""
    # A backslash at either end starts or ends an escape in JSON or a string literal (``\\"<token>\\"``):
    # the escape is not part of the value, and a placeholder taking it would break the text around it.
    value = value.strip().strip("\\")
    if "=" in value.rstrip("="):  # some rules report 'AccountKey=<key>': keep the value side
        value = max(_PADDED_PART.findall(value), key=len)
    if not value or PLACEHOLDER_PREFIX in value:
        return
    for start, end, _ in occurrences(line, value, kind):
        while start > 0 and line[start - 1] in TOKEN_CHARS:
            start -= 1
        while end < len(line) and (line[end] in TOKEN_CHARS or line[end] == "."):
            end += 1
        while end > start and line[end - 1] == ".":
            end -= 1
        while end < len(line) and line[end] == "=":  # base64 padding
            end += 1
        token = line[start:end]
        if end - start >= _MIN_LIBRARY_VALUE and not is_placeholder(token) and "://" not in token:
            yield start, end, kind
