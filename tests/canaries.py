"""Canary secrets: fake credentials in the documented shape of real ones, built at test time.

``generate_canaries(seed)`` returns one canary per shape, each value drawn from ``random.Random(seed)``,
so a test can plant them into any source (snippet, skill, caller context, task input, tool output) and
assert that none of them reaches the recorded wire. No secret-shaped literal exists in this file:
vendor prefixes are assembled from pieces and every body is random.

A canary's ``secret`` is the part that must never be seen again (the value minus public prefixes and
PEM armour); ``context`` is a realistic line or block (prose, code, config, shell) containing the value.
Some canaries hide their value the ways a pattern matcher misses and a reader does not: an invisible
character inside it, compatibility forms (fullwidth letters), percent-escapes, a private key body
without its armour. :meth:`Canary.leaks` finds a secret in a text however it is written.

``generate_negatives()`` is the other half: realistic texts that hold no secret (hashes, UUIDs, base64
images and documents, certificates, percent-encoded URLs, emoji sequences, CJK punctuation) and must
come out of redaction unchanged. ``python -m tests.canaries`` prints how many positives were missed and
how many negatives were touched.
"""

from __future__ import annotations

import base64
import html
import json
import random
import re
import string
import unicodedata
import urllib.parse
import uuid
import zlib
from collections.abc import Callable
from dataclasses import dataclass

_DIGITS = string.digits
_UPPER = string.ascii_uppercase
_LOWER = string.ascii_lowercase
_ALNUM = _UPPER + _LOWER + _DIGITS
_B64URL = _ALNUM + "-_"
_HEX = "0123456789abcdef"


@dataclass(frozen=True, slots=True)
class Canary:
    kind: str
    value: str
    context: str
    secret: str = ""
    # How many written characters hold 8 of the secret: more when it is spelt out (``1, 2, 3``, hex),
    # so that a window is a piece of the secret, not digits that any stored row may hold by chance.
    window: int = 8

    def __post_init__(self) -> None:
        if not self.secret:
            object.__setattr__(self, "secret", self.value)
        if self.value not in self.context or self.secret not in self.value:
            raise ValueError(f"canary {self.kind} is inconsistent")

    def fragments(self, size: int | None = None) -> list[str]:
        """Every ``size``-character window of the secret part: none may survive redaction."""
        size = size or self.window
        return [self.secret[i : i + size] for i in range(max(1, len(self.secret) - size + 1))]

    def leaks(self, text: str, size: int | None = None) -> list[str]:
        """The windows of the secret found in ``text`` as written, or in ``text`` and the secret both
        revealed (invisible characters dropped, NFKC, percent-escapes decoded)."""
        size = size or self.window
        plain, revealed = reveal(self.secret), reveal(text)
        windows = [plain[i : i + size] for i in range(max(1, len(plain) - size + 1))]
        return [w for w in self.fragments(size) if w in text] + [w for w in windows if w in revealed]


# What a reader skips: format characters (Cf) and the variation selectors, fillers and blanks listed
# in issue 26, by code point.
_SKIPPED = (
    "\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u2800\u3164\uffa0"
    + "".join(map(chr, range(0xFE00, 0xFE10)))
    + "".join(map(chr, range(0xE0100, 0xE01F0)))
)


def _skipped(char: str) -> bool:
    return unicodedata.category(char) == "Cf" or char in _SKIPPED


_BACKSLASH_ESCAPE = re.compile(
    r"\\+(?:u([0-9A-Fa-f]{4})|x([0-9A-Fa-f]{2})|U([0-9A-Fa-f]{8})|u\{([0-9A-Fa-f]{1,6})\})|\\(/)|%u([0-9A-Fa-f]{4})"
)


def reveal(text: str) -> str:
    """``text`` as a reader takes it (combining marks dropped): ``\\uXXXX``, ``\\xXX``, ``\\UXXXXXXXX``, ``\\u{X}``, ``%uXXXX`` and
    JSON ``\\/`` escapes and HTML character references decoded, no format character, variation selector
    or filler, compatibility forms folded, ASCII percent-escapes decoded. Written independently of the
    redactor's own normalisation (the standard library's HTML unescaping)."""
    text = _BACKSLASH_ESCAPE.sub(_unescape, text)
    text = "".join(
        char for char in html.unescape(text) if not _skipped(char) and not unicodedata.combining(char)
    )
    return urllib.parse.unquote(unicodedata.normalize("NFKC", text))


def _unescape(match: re.Match[str]) -> str:
    if match.group(5):
        return "/"
    return chr(int(next(group for group in match.groups() if group), 16))


def generate_canaries(seed: int) -> list[Canary]:
    """One canary per known secret shape (at least 30), deterministic for a given seed."""
    rng = random.Random(seed)
    return [build(rng) for build in _BUILDERS]


# --- drawing ------------------------------------------------------------------------------------------


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    """n characters of ``alphabet``, with at least one digit, upper and lower letter when it has them,
    so that no draw degenerates into a word-like run."""
    chars = [rng.choice(alphabet) for _ in range(n)]
    required = [group for group in (_DIGITS, _UPPER, _LOWER) if set(group) & set(alphabet)]
    for position, group in zip(rng.sample(range(n), len(required)), required, strict=True):
        chars[position] = rng.choice([c for c in group if c in alphabet])
    return "".join(chars)


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _password(rng: random.Random, n: int = 18) -> str:
    return _draw(rng, _ALNUM + "-_.~!*", n)


def _canary(kind: str, prefix: str, body: str, context: Callable[[str], str]) -> Canary:
    value = prefix + body
    return Canary(kind=kind, value=value, context=context(value), secret=body)


# --- cloud, VCS and provider tokens -----------------------------------------------------------------


def _aws_access_key_id(rng: random.Random) -> Canary:
    return _canary(
        "aws_access_key_id",
        "AK" + "IA",
        _draw(rng, _UPPER + _DIGITS, 16),
        lambda v: f"aws_access_key_id = {v}",
    )


def _aws_secret_access_key(rng: random.Random) -> Canary:
    value = _draw(rng, _ALNUM + "+/", 40)
    return Canary("aws_secret_access_key", value, f"export AWS_SECRET_ACCESS_KEY={value}")


def _aws_secret_in_prose(rng: random.Random) -> Canary:
    value = _draw(rng, _ALNUM + "+/", 40)
    return Canary("aws_secret_in_prose", value, f"The aws secret key for staging is {value} until Friday.")


def _github(kind: str, letter: str, context: Callable[[str], str]) -> Callable[[random.Random], Canary]:
    return lambda rng: _canary(kind, "gh" + letter + "_", _draw(rng, _ALNUM, 36), context)


def _github_fine_grained(rng: random.Random) -> Canary:
    body = _draw(rng, _ALNUM, 22) + "_" + _draw(rng, _ALNUM, 59)
    return _canary(
        "github_fine_grained_pat", "github" + "_pat_", body, lambda v: f"GH_TOKEN={v} gh release create"
    )


def _gitlab_pat(rng: random.Random) -> Canary:
    return _canary(
        "gitlab_pat",
        "gl" + "pat-",
        _draw(rng, _B64URL, 20),
        lambda v: f'curl --header "PRIVATE-TOKEN: {v}" https://gitlab.example.com/api/v4/projects',
    )


def _slack(kind: str, prefix: str, context: Callable[[str], str]) -> Callable[[random.Random], Canary]:
    def build(rng: random.Random) -> Canary:
        body = f"{_draw(rng, _DIGITS, 11)}-{_draw(rng, _DIGITS, 13)}-{_draw(rng, _ALNUM, 24)}"
        return _canary(kind, prefix, body, context)

    return build


def _slack_webhook(rng: random.Random) -> Canary:
    body = f"T{_draw(rng, _UPPER + _DIGITS, 8)}/B{_draw(rng, _UPPER + _DIGITS, 8)}/{_draw(rng, _ALNUM, 24)}"
    prefix = "https://hooks.slack" + ".com/services/"
    return _canary("slack_webhook", prefix, body, lambda v: f"Post build failures to {v} please.")


def _stripe(
    kind: str, prefix: str, n: int, context: Callable[[str], str]
) -> Callable[[random.Random], Canary]:
    return lambda rng: _canary(kind, prefix, _draw(rng, _ALNUM, n), context)


def _openai_legacy(rng: random.Random) -> Canary:
    body = _draw(rng, _ALNUM, 20) + "T3Blbk" + "FJ" + _draw(rng, _ALNUM, 20)
    return _canary("openai_legacy_key", "s" + "k-", body, lambda v: f'OPENAI_API_KEY="{v}"')


def _openai_project(rng: random.Random) -> Canary:
    return _canary(
        "openai_project_key",
        "s" + "k-proj-",
        _draw(rng, _B64URL, 156),
        lambda v: f"The key {v} belongs to the data team.",
    )


def _anthropic(rng: random.Random) -> Canary:
    body = "api03-" + _draw(rng, _B64URL, 93) + "AA"
    return _canary(
        "anthropic_key", "s" + "k-ant-", body, lambda v: f'client = anthropic.Anthropic(api_key="{v}")'
    )


def _google_api_key(rng: random.Random) -> Canary:
    return _canary(
        "google_api_key",
        "AI" + "za",
        _draw(rng, _B64URL, 35),
        lambda v: f"https://maps.googleapis.com/maps/api/geocode/json?address=Berlin&key={v}",
    )


def _google_oauth_secret(rng: random.Random) -> Canary:
    return _canary(
        "google_oauth_client_secret",
        "GOC" + "SPX-",
        _draw(rng, _B64URL, 28),
        lambda v: f"The OAuth client for the intranet uses {v} as its secret.",
    )


def _jwt(rng: random.Random) -> Canary:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": _draw(rng, _ALNUM, 12), "iat": rng.randrange(10**9, 2 * 10**9), "role": "admin"}
    value = f"{header}.{_b64url(json.dumps(claims).encode())}.{_b64url(rng.randbytes(32))}"
    return Canary("jwt", value, f"The session cookie was {value}; it expires in an hour.")


def _npm(rng: random.Random) -> Canary:
    return _canary(
        "npm_token", "np" + "m_", _draw(rng, _ALNUM, 36), lambda v: f"//registry.npmjs.org/:_authToken={v}"
    )


def _pypi(rng: random.Random) -> Canary:
    prefix = "pyp" + "i-AgEI" + "cHlwaS5vcmc"
    return _canary(
        "pypi_token", prefix, _draw(rng, _B64URL, 70), lambda v: f"twine upload -u __token__ -p {v} dist/*"
    )


def _sendgrid(rng: random.Random) -> Canary:
    body = _draw(rng, _B64URL, 22) + "." + _draw(rng, _B64URL, 43)
    return _canary("sendgrid_key", "S" + "G.", body, lambda v: f'sg = SendGridAPIClient("{v}")')


def _twilio_api_key(rng: random.Random) -> Canary:
    return _canary("twilio_api_key", "S" + "K", _draw(rng, _HEX, 32), lambda v: f"Twilio API key SID: {v}")


def _twilio_auth_token(rng: random.Random) -> Canary:
    value = _draw(rng, _HEX, 32)
    return Canary("twilio_auth_token", value, f"TWILIO_AUTH_TOKEN={value}")


def _heroku(rng: random.Random) -> Canary:
    value = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    return Canary("heroku_api_key", value, f"The heroku API key for the review apps is {value}.")


def _azure_storage(rng: random.Random) -> Canary:
    value = base64.b64encode(rng.randbytes(64)).decode()
    context = (
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={value};EndpointSuffix=core.windows.net"
    )
    return Canary("azure_storage_key", value, context)


def _telegram(rng: random.Random) -> Canary:
    value = f"{rng.randrange(10**8, 10**9)}:AA{_draw(rng, _B64URL, 33)}"
    return Canary("telegram_bot_token", value, f'bot = telebot.TeleBot("{value}")')


def _discord(rng: random.Random) -> Canary:
    value = f"M{_draw(rng, _B64URL, 23)}.{_draw(rng, _B64URL, 6)}.{_draw(rng, _B64URL, 27)}"
    return Canary("discord_bot_token", value, f'client.run("{value}")')


def _mailchimp(rng: random.Random) -> Canary:
    value = f"{_draw(rng, _HEX, 32)}-us{rng.randrange(1, 20)}"
    return Canary("mailchimp_key", value, f"Mailchimp marketing key {value} (audience export)")


def _huggingface(rng: random.Random) -> Canary:
    return _canary(
        "huggingface_token",
        "h" + "f_",
        _draw(rng, _UPPER + _LOWER, 34),
        lambda v: f"huggingface-cli login --token {v}",
    )


def _digitalocean(rng: random.Random) -> Canary:
    return _canary(
        "digitalocean_token",
        "do" + "p_v1_",
        _draw(rng, _HEX, 64),
        lambda v: f"doctl auth init --access-token {v}",
    )


# --- private keys -------------------------------------------------------------------------------------


def _armour(word: str, *label: str) -> str:
    return "-----" + word + " " + " ".join(label) + "-----"


def _pem_body(rng: random.Random, n_bytes: int) -> str:
    encoded = base64.b64encode(rng.randbytes(n_bytes)).decode()
    return "\n".join(encoded[i : i + 64] for i in range(0, len(encoded), 64))


def _pem(kind: str, *label: str, lead: str = "", tail: str = "") -> Callable[[random.Random], Canary]:
    def build(rng: random.Random) -> Canary:
        body = _pem_body(rng, 480)
        value = f"{_armour('BEGIN', *label)}\n{lead}{body}\n{_armour('END', *label)}"
        return Canary(kind, value, f"Here is the deploy key:\n{value}\n{tail}Keep it safe.", secret=body)

    return build


def _pgp(rng: random.Random) -> Canary:
    label = ("PGP", "PRIVATE", "KEY", "BLOCK")
    body = _pem_body(rng, 600) + "\n=" + _draw(rng, _ALNUM, 4)
    value = f"{_armour('BEGIN', *label)}\n\n{body}\n{_armour('END', *label)}"
    return Canary("pgp_private_key_block", value, f"gpg --import <<'EOF'\n{value}\nEOF", secret=body)


def _gcp_service_account(rng: random.Random) -> Canary:
    body = _pem_body(rng, 480)
    pem = f"{_armour('BEGIN', 'PRIVATE', 'KEY')}\n{body}\n{_armour('END', 'PRIVATE', 'KEY')}\n"
    account = {
        "type": "service_account",
        "project_id": "analytics-prod",
        "private_key": pem,
        "client_email": "exporter@analytics-prod.iam.gserviceaccount.com",
    }
    context = json.dumps(account)
    escaped_body = json.dumps(body)[1:-1]
    return Canary("gcp_service_account_key", json.dumps(pem)[1:-1], context, secret=escaped_body)


# --- passwords in connection strings, headers and assignments ---------------------------------------


def _in_context(kind: str, context: Callable[[str], str], draw: Callable[[random.Random], str] = _password):
    def build(rng: random.Random) -> Canary:
        value = draw(rng)
        return Canary(kind, value, context(value))

    return build


def _basic_auth(rng: random.Random) -> Canary:
    value = base64.b64encode(f"deploy:{_password(rng)}".encode()).decode()
    return Canary("basic_auth_header", value, f"Authorization: Basic {value}")


def _bearer_token(rng: random.Random) -> str:
    return _draw(rng, _ALNUM + "._-", 40)


# --- private keys without their armour ----------------------------------------------------------------
# Real containers built field by field from random numbers (valid DER and OpenSSH wire format,
# mathematically meaningless): what openssl and ssh-keygen print between the armour lines.


def _der(tag: int, content: bytes) -> bytes:
    size = len(content)
    octets = size.to_bytes((size.bit_length() + 7) // 8, "big")
    length = bytes([size]) if size < 0x80 else bytes([0x80 | len(octets)]) + octets
    return bytes([tag]) + length + content


def _der_integer(rng: random.Random, n_bytes: int) -> bytes:
    return _der(0x02, b"\x00" + bytes([rng.randrange(0x80, 0x100)]) + rng.randbytes(n_bytes - 1))


def _der_small(value: int) -> bytes:
    return _der(0x02, bytes([value]))


def _oid(dotted_hex: str) -> bytes:
    return _der(0x06, bytes.fromhex(dotted_hex))


_RSA_ENCRYPTION = _oid("2a864886f70d010101")
_PRIME256V1 = _oid("2a8648ce3d030107")
_PBES2 = _oid("2a864886f70d01050d")
_SHA256_WITH_RSA = _oid("2a864886f70d01010b")


def _rsa_pkcs1(rng: random.Random) -> bytes:
    numbers = [_der_integer(rng, 256), _der(0x02, b"\x01\x00\x01"), _der_integer(rng, 256)]
    numbers += [_der_integer(rng, 128) for _ in range(5)]
    return _der(0x30, _der_small(0) + b"".join(numbers))


def _pkcs8(rng: random.Random) -> bytes:
    algorithm = _der(0x30, _RSA_ENCRYPTION + _der(0x05, b""))
    return _der(0x30, _der_small(0) + algorithm + _der(0x04, _rsa_pkcs1(rng)))


def _ec_sec1(rng: random.Random) -> bytes:
    public = _der(0xA1, _der(0x03, b"\x00\x04" + rng.randbytes(64)))
    return _der(0x30, _der_small(1) + _der(0x04, rng.randbytes(32)) + _der(0xA0, _PRIME256V1) + public)


def _encrypted_pkcs8(rng: random.Random) -> bytes:
    parameters = _der(0x30, _der(0x04, rng.randbytes(16)) + _der(0x02, b"\x08\x00"))
    return _der(0x30, _der(0x30, _PBES2 + parameters) + _der(0x04, rng.randbytes(1232)))


def _ssh_string(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _openssh(rng: random.Random) -> bytes:
    public = _ssh_string(b"ssh-" + b"ed25519") + _ssh_string(rng.randbytes(32))
    check = rng.randbytes(4)
    private = (
        check + check + public + _ssh_string(rng.randbytes(64)) + _ssh_string(b"deploy@ci") + b"\x01\x02"
    )
    header = b"openssh-" + b"key-v1\x00" + _ssh_string(b"none") + _ssh_string(b"none") + _ssh_string(b"")
    return header + (1).to_bytes(4, "big") + _ssh_string(public) + _ssh_string(private)


def _wrapped(data: bytes, width: int, joiner: str = "\n") -> str:
    encoded = base64.b64encode(data).decode()
    return joiner.join(encoded[i : i + width] for i in range(0, len(encoded), width))


def _unarmoured(
    kind: str, layout: Callable[[random.Random], str], context: Callable[[str], str]
) -> Callable[[random.Random], Canary]:
    def build(rng: random.Random) -> Canary:
        value = layout(rng)
        return Canary(kind, value, context(value))

    return build


# --- secrets hidden from pattern matching -------------------------------------------------------------


def _rewritten(
    kind: str, base: Callable[[random.Random], Canary], rewrite: Callable[[random.Random, str], str]
) -> Callable[[random.Random], Canary]:
    """``base``'s canary with its secret part rewritten (the public prefix stays as it was)."""

    def build(rng: random.Random) -> Canary:
        canary = base(rng)
        secret = rewrite(rng, canary.secret)
        value = canary.value.replace(canary.secret, secret)
        return Canary(kind, value, canary.context.replace(canary.value, value), secret=secret)

    return build


def _invisible(mark: str) -> Callable[[random.Random, str], str]:
    def insert(rng: random.Random, secret: str) -> str:
        at = rng.randrange(1, len(secret))
        return secret[:at] + mark + secret[at:]

    return insert


def _percent(text: str) -> str:
    return "".join(f"%{ord(char):02X}" for char in text)


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(char) + 0xFEE0) if "!" <= char <= "~" else char for char in text)


def _stripe_fully_percent_encoded(rng: random.Random) -> Canary:
    body = _percent(_draw(rng, _ALNUM, 24))
    value = _percent("r" + "k_live_") + body
    return Canary("stripe_key_fully_percent_encoded", value, f"https://pay.example.com/setup?k={value}", body)


# Issue 26: every format character, variation selector and filler, not only the six above.
_SKIPPED_MARKS = (
    ("variation_selector_16", "\ufe0f"),
    ("combining_grapheme_joiner", "\u034f"),
    ("hangul_choseong_filler", "\u115f"),
    ("hangul_jungseong_filler", "\u1160"),
    ("hangul_filler", "\u3164"),
    ("halfwidth_hangul_filler", "\uffa0"),
    ("khmer_inherent_vowel", "\u17b5"),
    ("mongolian_variation_selector", "\u180b"),
    ("variation_selector_supplement", "\U000e0100"),
    ("interlinear_annotation", "\ufffa"),
    ("musical_format", "\U0001d173"),
    ("egyptian_format", "\U00013430"),
    ("shorthand_format", "\U0001bca0"),
    ("braille_blank", "\u2800"),
    ("invisible_times", "\u2062"),
    ("tag_character", "\U000e0041"),
)


def _skipped_marks() -> tuple[Callable[[random.Random], Canary], ...]:
    bases = (
        ("github_token", _github("github_classic_pat", "p", lambda v: f"Use token {v} for the deploy.")),
        (
            "stripe_key",
            _stripe("stripe_live_secret_key", "s" + "k_live_", 24, lambda v: f"Charge with {v} now."),
        ),
        ("aws_key", lambda rng: _aws_access_key_id(rng)),
    )
    return tuple(
        _rewritten(f"{bases[n % 3][0]}_{name}", bases[n % 3][1], _invisible(mark))
        for n, (name, mark) in enumerate(_SKIPPED_MARKS)
    )


def _escaped(pattern: str) -> Callable[[random.Random, str], str]:
    """Every character of the secret written as ``pattern`` of its code point."""
    return lambda rng, secret: "".join(pattern.format(ord(char)) for char in secret)


def _references_without_semicolon(hexadecimal: bool) -> Callable[[random.Random, str], str]:
    """HTML numeric references without their semicolon (as parsers read them), where the next
    character cannot be taken for one more digit."""

    def write(rng: random.Random, secret: str) -> str:
        digits = string.hexdigits if hexadecimal else string.digits
        pieces = []
        for index, char in enumerate(secret):
            reference = f"&#x{ord(char):x}" if hexadecimal else f"&#{ord(char)}"
            following = secret[index + 1 : index + 2]
            pieces.append(reference + (";" if following and following in digits else ""))
        return "".join(pieces)

    return write


def _quoted_printable(rng: random.Random, secret: str) -> str:
    """A slice of the secret as ``=XX`` escapes and a soft line break in the middle."""
    middle = len(secret) // 2
    return (
        secret[:4]
        + "".join(f"={ord(c):02X}" for c in secret[4:10])
        + secret[10:middle]
        + "=\n"
        + secret[middle:]
    )


def _spelt(kind: str, base: Callable[[random.Random], Canary], spell: Callable[[str], str], context: str):
    """``base``'s whole value spelt out (separated, hex, character codes); the secret is its body spelt."""

    def build(rng: random.Random) -> Canary:
        canary = base(rng)
        prefix = canary.value[: canary.value.index(canary.secret)]
        value = spell(canary.value)
        secret = value[len(spell(prefix)) :] if prefix else value
        window = -(-8 * len(value) // len(canary.value))  # 8 characters of the value, spelt out
        return Canary(kind, value, context.format(value), secret=secret.strip(" ,-"), window=window)

    return build


def _marked(mark: str) -> Callable[[random.Random, str], str]:
    """A combining mark laid over every character of the secret (struck through, underlined, accented)."""
    return lambda rng, secret: "".join(char + mark for char in secret)


def _split_at(separator: str, at: int | None = None) -> Callable[[random.Random, str], str]:
    """The secret split in two by one ``separator``, ``at`` characters in (else at random, where its
    first part is not yet a token of its own: a token whose first part is one is redacted to the split)."""

    def split(rng: random.Random, secret: str) -> str:
        where = at if at is not None else rng.randrange(1, min(len(secret), 26))
        return secret[:where] + separator + secret[where:]

    return split


def _concatenated(
    kind: str, base: Callable[[random.Random], Canary], at: int, join: str, context: str
) -> Callable[[random.Random], Canary]:
    """``base``'s value split into two string literals ``at`` characters in, joined by ``join`` (which
    closes the first literal and opens the second); the secret is the written form after the prefix."""

    def build(rng: random.Random) -> Canary:
        canary = base(rng)
        value = canary.value[:at] + join + canary.value[at:]
        prefix = canary.value[: canary.value.index(canary.secret)]
        return Canary(kind, value, context.format(value), secret=value[len(prefix) :])

    return build


def _passphrase(*words: str) -> Callable[[random.Random], str]:
    """Three of ``words``, capitalised, run together: a password that holds no digit or punctuation.
    Each canary draws from words of its own, so no two share a run of characters that the egress
    receivers would read as the other's."""

    def draw(rng: random.Random) -> str:
        return "".join(rng.sample(words, 3))

    return draw


def _hidden_keyword(rng: random.Random) -> Canary:
    value = _password(rng, 24)
    return Canary("env_api_key_invisible_in_name", value, f"API_\u200bKEY={value}")


_BUILDERS: tuple[Callable[[random.Random], Canary], ...] = (
    _aws_access_key_id,
    _aws_secret_access_key,
    _aws_secret_in_prose,
    _github("github_classic_pat", "p", lambda v: f"Use token {v} for the deploy."),
    _github(
        "github_oauth_token", "o", lambda v: f"git clone https://x-oauth-basic:{v}@github.com/acme/app.git"
    ),
    _github("github_server_token", "s", lambda v: f"echo {v} | gh auth login --with-token"),
    _github(
        "github_user_token", "u", lambda v: f"headers = {{'Accept': 'application/json', 'X-Token': '{v}'}}"
    ),
    _github_fine_grained,
    _gitlab_pat,
    _slack("slack_bot_token", "xo" + "xb-", lambda v: f'slack_client = WebClient(token="{v}")'),
    _slack("slack_user_token", "xo" + "xp-", lambda v: f"SLACK_USER_TOKEN: {v}"),
    _slack_webhook,
    _stripe("stripe_live_secret_key", "s" + "k_live_", 99, lambda v: f'stripe.api_key = "{v}"'),
    _stripe(
        "stripe_restricted_key", "r" + "k_live_", 24, lambda v: f"Restricted key {v} can only read charges."
    ),
    _stripe("stripe_test_secret_key", "s" + "k_test_", 24, lambda v: f"STRIPE_KEY={v} npm test"),
    _openai_legacy,
    _openai_project,
    _anthropic,
    _google_api_key,
    _google_oauth_secret,
    _jwt,
    _npm,
    _pypi,
    _sendgrid,
    _twilio_api_key,
    _twilio_auth_token,
    _heroku,
    _azure_storage,
    _telegram,
    _discord,
    _mailchimp,
    _huggingface,
    _digitalocean,
    _pem("rsa_private_key", "RSA", "PRIVATE", "KEY"),
    _pem("ec_private_key", "EC", "PRIVATE", "KEY"),
    _pem("openssh_private_key", "OPENSSH", "PRIVATE", "KEY"),
    _pem("pkcs8_private_key", "PRIVATE", "KEY", tail="(pkcs8)\n"),
    _pgp,
    _gcp_service_account,
    _in_context(
        "postgres_url_password", lambda v: f"DATABASE_URL=postgres://app_user:{v}@db.internal:5432/app"
    ),
    _in_context(
        "mongodb_url_password", lambda v: f'MongoClient("mongodb+srv://admin:{v}@cluster0.example.net/")'
    ),
    _in_context("redis_url_password", lambda v: f"CELERY_BROKER=redis://:{v}@cache:6379/0"),
    _in_context(
        "sqlserver_password",
        lambda v: f"Server=tcp:sql.example.net,1433;Database=app;User Id=app;Password={v};Encrypt=True;",
        lambda rng: _draw(rng, _ALNUM + "!#%^*-_", 16),
    ),
    _in_context(
        "bearer_header",
        lambda v: f'curl -H "Authorization: Bearer {v}" https://api.example.com/v1/items',
        _bearer_token,
    ),
    _basic_auth,
    _in_context("curl_user_password", lambda v: f"curl -u deploy:{v} https://ci.example.com/api/json"),
    _in_context("python_password_assignment", lambda v: f'DB_PASSWORD = "{v}"'),
    _in_context("yaml_token", lambda v: f"notifications:\n  token: {v}\n  channel: builds"),
    _in_context("env_api_key", lambda v: f"API_KEY={v}"),
    _in_context("json_client_secret", lambda v: f'{{"client_id": "web-app", "client_secret": "{v}"}}'),
    _in_context("cli_password_flag", lambda v: f"mysql-backup --host db --password={v} --all-databases"),
    # Private key bodies without armour: wrapped as openssl and ssh-keygen print them, or on one line.
    _unarmoured(
        "rsa_key_body_without_armour",
        lambda rng: _wrapped(_rsa_pkcs1(rng), 64),
        lambda v: f"Here is the deploy key, header lines trimmed:\n{v}\nKeep it safe.",
    ),
    _unarmoured(
        "pkcs8_key_on_one_line",
        lambda rng: _wrapped(_pkcs8(rng), 10_000),
        lambda v: f"ops note: the signing blob is {v} (rotate monthly)",
    ),
    _unarmoured(
        "ec_key_in_yaml_block",
        lambda rng: _wrapped(_ec_sec1(rng), 64, "\n    "),
        lambda v: f"signing:\n  algorithm: ES256\n  material: |\n    {v}\n  rotated: 2024-05-01",
    ),
    _unarmoured(
        "openssh_key_body_without_armour",
        lambda rng: _wrapped(_openssh(rng), 70),
        lambda v: f"cat > ~/.ssh/id_ed25519 <<'EOF'\n{v}\nEOF",
    ),
    _unarmoured(
        "encrypted_pkcs8_in_json",
        lambda rng: _wrapped(_encrypted_pkcs8(rng), 64, "\\n"),
        lambda v: '{"name": "backup", "blob": "' + v + '\\n"}',
    ),
    _unarmoured(
        "pem_file_base64_encoded",
        lambda rng: _b64(f"{_armour('BEGIN', 'PRIVATE', 'KEY')}\n{_pem_body(rng, 480)}\n".encode()),
        lambda v: f"kubectl config view --raw prints the client key as {v} on one line.",
    ),
    _unarmoured(
        "random_key_body_without_armour",
        lambda rng: _pem_body(rng, 480),
        lambda v: f"Pasted from the vault, header lost:\n{v}\nEnd of paste.",
    ),
    # An invisible character inside the token: each of the six a keyboard or a web page can produce.
    _rewritten(
        "github_token_zero_width_space",
        _github("github_classic_pat", "p", lambda v: f"Use token {v} for the deploy."),
        _invisible("\u200b"),
    ),
    _rewritten(
        "stripe_key_zero_width_non_joiner",
        _stripe(
            "stripe_live_secret_key", "s" + "k_live_", 24, lambda v: f"Charge with {v} from the billing box."
        ),
        _invisible("\u200c"),
    ),
    _rewritten("aws_key_zero_width_joiner", _aws_access_key_id, _invisible("\u200d")),
    _rewritten(
        "slack_token_word_joiner",
        _slack("slack_bot_token", "xo" + "xb-", lambda v: f"The bot posts with {v} in #builds."),
        _invisible("\u2060"),
    ),
    _rewritten("openai_key_byte_order_mark", _openai_project, _invisible("\ufeff")),
    _rewritten("google_api_key_soft_hyphen", _google_api_key, _invisible("\u00ad")),
    _hidden_keyword,
    # Compatibility forms: fullwidth letters fold to ASCII under NFKC.
    _rewritten(
        "github_token_fullwidth",
        _github("github_user_token", "u", lambda v: f"token for the mirror job: {v}"),
        lambda rng, secret: _fullwidth(secret),
    ),
    _rewritten(
        "huggingface_token_fullwidth_tail",
        lambda rng: _canary(
            "huggingface_token",
            "h" + "f_",
            _draw(rng, _ALNUM, 34),
            lambda v: f"The model pull uses {v} today.",
        ),
        lambda rng, secret: secret[:10] + _fullwidth(secret[10:]),
    ),
    # Percent-encoding: the tail, the head, or every character of the value.
    _rewritten(
        "github_token_percent_encoded_tail",
        _github("github_server_token", "s", lambda v: f"https://ci.example.com/hook?auth={v}&run=42"),
        lambda rng, secret: secret[:-8] + _percent(secret[-8:]),
    ),
    _rewritten(
        "github_token_percent_encoded_head",
        _github(
            "github_oauth_token", "o", lambda v: f"Open https://tools.example.com/check?t={v} to verify."
        ),
        lambda rng, secret: _percent(secret[:6]) + secret[6:],
    ),
    _stripe_fully_percent_encoded,
    # Issue 26: format characters, variation selectors and fillers; more escape syntaxes; tokens spelt
    # out with separators, in hex or in character codes.
    *_skipped_marks(),
    _rewritten(
        "stripe_key_python_long_escapes",
        _stripe("stripe_live_secret_key", "s" + "k_live_", 24, lambda v: f'key = "{v}"'),
        _escaped("\\U{:08x}"),
    ),
    _rewritten("aws_key_braced_unicode_escapes", _aws_access_key_id, _escaped("\\u{{{:x}}}")),
    _rewritten(
        "github_token_css_escapes",
        _github("github_classic_pat", "p", lambda v: f'a::after {{ content: "{v}"; }}'),
        _escaped("\\{:x} "),
    ),
    _rewritten(
        "slack_token_percent_u_escapes",
        _slack("slack_bot_token", "xo" + "xb-", lambda v: f"unescape('{v}')"),
        _escaped("%u{:04X}"),
    ),
    _rewritten(
        "google_api_key_decimal_references_without_semicolon",
        _google_api_key,
        _references_without_semicolon(hexadecimal=False),
    ),
    _rewritten(
        "github_token_hex_references_without_semicolon",
        _github("github_user_token", "u", lambda v: f"<p>{v}</p>"),
        _references_without_semicolon(hexadecimal=True),
    ),
    _rewritten("npm_token_quoted_printable", _npm, _quoted_printable),
    _rewritten(
        "huggingface_token_octal_escapes",
        lambda rng: _canary(
            "huggingface_token", "h" + "f_", _draw(rng, _ALNUM, 34), lambda v: f"printf '{v}'"
        ),
        _escaped("\\{:03o}"),
    ),
    _spelt(
        "github_token_spaced",
        _github("github_classic_pat", "p", lambda v: v),
        " ".join,
        "The token, letter by letter: {} (read it back slowly).",
    ),
    _spelt(
        "stripe_key_dashed",
        _stripe("stripe_live_secret_key", "s" + "k_live_", 24, lambda v: v),
        "-".join,
        "key={} end",
    ),
    _spelt(
        "github_token_in_hex",
        _github("github_server_token", "s", lambda v: v),
        lambda v: v.encode().hex(),
        "token (hex): {}",
    ),
    _spelt(
        "aws_key_hex_bytes",
        _aws_access_key_id,
        lambda v: " ".join(f"{b:02x}" for b in v.encode()),
        "dump: {} |",
    ),
    _spelt(
        "openai_key_character_codes",
        _openai_project,
        lambda v: ", ".join(str(b) for b in v.encode()),
        "String.fromCharCode({})",
    ),
    # A third attack round: combining marks over every character, a padded soft line break, a key split by one
    # blank or line break, a key split into string literals, plain-word passwords after a colon.
    _rewritten("aws_key_combining_long_stroke", _aws_access_key_id, _marked("\u0336")),
    _rewritten(
        "github_token_combining_low_line",
        _github("github_classic_pat", "p", lambda v: f"Use token {v} for the deploy."),
        _marked("\u0332"),
    ),
    _rewritten(
        "stripe_key_combining_acute",
        _stripe("stripe_live_secret_key", "s" + "k_live_", 24, lambda v: f"Charge with {v} now."),
        _marked("\u0301"),
    ),
    _rewritten(
        "npm_token_quoted_printable_padded_soft_break",
        _npm,
        lambda rng, secret: secret[:18] + "= \t\n" + secret[18:],
    ),
    _rewritten("aws_key_split_by_no_break_space", _aws_access_key_id, _split_at("\u00a0", 2)),
    _rewritten("aws_key_split_by_line_break", _aws_access_key_id, _split_at("\n", 14)),
    _rewritten("aws_key_split_by_line_separator", _aws_access_key_id, _split_at("\u2028", 2)),
    _rewritten("aws_key_split_by_paragraph_separator", _aws_access_key_id, _split_at("\u2029", 14)),
    _rewritten(
        "github_token_split_by_line_separator",
        _github("github_user_token", "u", lambda v: f"token for the mirror job: {v}"),
        _split_at("\u2028"),
    ),
    _rewritten(
        "github_token_split_by_paragraph_separator",
        _github("github_classic_pat", "p", lambda v: f"Use token {v} for the deploy."),
        _split_at("\u2029"),
    ),
    _concatenated(
        "aws_key_adjacent_string_literals", _aws_access_key_id, 6, '" "', 'key_id = ("{}")  # from the vault'
    ),
    _concatenated(
        "github_token_string_concatenation",
        _github("github_server_token", "s", lambda v: v),
        20,
        "' + '",
        "gh_login('{}')",
    ),
    _in_context(
        "db_password_plain_words",
        lambda v: f"The db password: {v} (rotate it monthly).",
        _passphrase("Purple", "Tiger", "Harbor", "Maple", "Copper", "Falcon"),
    ),
    # The word ends its clause: "password: <word> and more words" reads as prose and stays.
    _in_context(
        "password_in_prose",
        lambda v: f"Log in as admin, password: {v}, then open the console.",
        _passphrase("Winter", "Orchid", "Granite", "Meadow", "Silver", "Lantern"),
    ),
)


def summary(redact: Callable[[str], object], seeds: range = range(5)) -> str:
    """How many positives leak and how many negatives are touched by ``redact``: the suite's score."""
    positives = [canary for seed in seeds for canary in generate_canaries(seed)]
    missed = [c.kind for c in positives if c.leaks(str(getattr(redact(c.context), "text", "")))]
    touched = false_positives(redact)
    return (
        f"positives: {len(positives)}, missed: {len(missed)}; "
        f"negatives: {len(generate_negatives())}, false positives: {len(touched)}"
    )


# --- negatives: realistic texts without a secret -------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Negative:
    name: str
    text: str


def generate_negatives(seed: int = 0) -> list[Negative]:
    """Texts that hold no secret and must come out of redaction unchanged, deterministic for a seed.
    They sit next to what the detectors look for: hex digests beside secret words, UUIDs, base64 of
    images, documents and JSON, certificates and public keys, percent-encoded URLs, invisible joiners
    in emoji and scripts that need them, fullwidth CJK punctuation."""
    rng = random.Random(seed)
    texts = {**_plain_negatives(rng), **_base64_negatives(rng), **_unicode_negatives()}
    return [Negative(name, text) for name, text in texts.items()]


def false_positives(redact: Callable[[str], object]) -> list[str]:
    """Names of the negatives that ``redact`` changed (``redact`` returns an object with ``text``)."""
    return [n.name for n in generate_negatives() if getattr(redact(n.text), "text", None) != n.text]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice(_HEX) for _ in range(n))


def _plain_negatives(rng: random.Random) -> dict[str, str]:
    return {
        "commit_sha": f"commit {_hex(rng, 40)} fixed the login redirect",
        "git_range": f"git log --oneline {_hex(rng, 7)}..{_hex(rng, 12)}",
        "sha256_checksum": f"sha256: {_hex(rng, 64)}  release-1.4.2.tar.gz",
        "hex_integrity": f'"integrity": "sha512-{_hex(rng, 40)}"',
        "sri_integrity": f'<script src="/app.js" integrity="sha384-{_b64(rng.randbytes(48))}"></script>',
        "docker_digest": f"image: ghcr.io/acme/api@sha256:{_hex(rng, 64)}",
        "md5_etag": f'ETag: "{_hex(rng, 32)}"',
        "uuid_in_prose": "request 123e4567-e89b-42d3-a456-426614174000 failed with a timeout",
        "uuid_list": json.dumps(
            {"ids": [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(4)]}
        ),
        "prose": "The quick brown fox jumps over the lazy dog. Authentication uses OAuth2 with PKCE.",
        "placeholder_key": "Set the OPENAI"
        + "_API_KEY environment variable to sk-... before running the example.",
        "placeholder_assignment": "api" + '_key = "YOUR_API_KEY"',
        "placeholder_password": "pass" + "word: <your password here>",
        "env_reference": "export GITHUB" + "_TOKEN=${GITHUB" + "_TOKEN}",
        "environ_lookup": "tok" + "en = os.environ['SERVICE_TOKEN']",
        "method_signature": "def check_pass" + "word(self, raw_pass" + "word):",
        "max_tokens": "max_tokens = 4096",
        "docs_url": "See https://docs.djangoproject.com/en/5.2/ref/settings/#secret-key for details.",
        "clone_urls": "Clone https://github.com/acme/widgets.git and open http://localhost:8000/admin/ afterwards.",
        "url_without_password": "postgres://app_user@db.internal:5432/app (the pass"
        + "word comes from the vault)",
        "bearer_reference": "Authorization: Bearer ${API" + "_TOKEN}",
        "pip_install": "pip install 'requests>=2.31.0' numpy==1.26.4 --index-url https://pypi.org/simple",
        "import_line": "from django.contrib.auth.pass" + "word_validation import validate_password",
        "token_prose": "The token: see the section below for how tokens are counted.",
        "code_assignment": "self._secret_fallbacks = fallbacks",
        "search_url": "https://www.google.com/search?q=how%20to%20rotate%20a%20deploy%20key&hl=en",
        "redirect_url": "https://app.example.com/login?next=%2Fadmin%2Fusers%3Fpage%3D2&lang=en",
        "oauth_redirect": "redirect_uri=https%3A%2F%2Fapp.example.com%2Fauth%2Fcallback&scope=openid%20email",
        "utf8_escapes": "https://en.wikipedia.org/wiki/Caf%C3%A9_au_lait and https://de.wikipedia.org/wiki/M%C3%BCnchen",
        "mailto": "mailto:team@example.com?subject=Release%20notes%20v1.4.2&body=See%20the%20changelog.",
    }


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _base64_negatives(rng: random.Random) -> dict[str, str]:
    png, jpeg, pdf = _png(rng), _jpeg(rng), _pdf(rng)
    claims = {"sub": "alice", "roles": ["admin", "dev"], "exp": 1767225600, "iss": "https://auth.example.com"}
    config = "server:\n  port: 8080\n  workers: 4\nlogging:\n  level: info\n  format: json\n"
    return {
        "png_data_uri": f"![chart](data:image/png;base64,{_b64(png)})",
        "png_in_json": json.dumps({"filename": "chart.png", "content": _b64(png)}),
        "png_mime_attachment": "Content-Type: image/png\nContent-Transfer-Encoding: base64\n\n"
        + _wrapped(png, 76),
        "jpeg_thumbnail": json.dumps({"thumbnail": _b64(jpeg[:96])}),
        "gif_pixel": f'<img src="data:image/gif;base64,{_b64(_GIF_PIXEL)}" alt="">',
        "pdf_openssl_base64": f"openssl base64 -in report.pdf:\n{_wrapped(pdf, 64)}",
        "json_base64": f"payload={_b64(json.dumps(claims).encode())}",
        "yaml_base64_configmap": f"binaryData:\n  app.yaml: {_b64(config.encode())}",
        "certificate": "-----BEGIN CERTIFICATE-----\n"
        + _wrapped(_certificate(rng), 64)
        + "\n-----END CERTIFICATE-----",
        "ssh_ed25519_public_key": f"ssh-ed25519 {_b64(_ssh_public(rng, b'ssh-ed25519', 32))} deploy@ci",
        "ssh_rsa_authorized_keys": f"ssh-rsa {_b64(_ssh_public(rng, b'ssh-rsa', 385))} alice@laptop",
    }


_GIF_PIXEL = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;"


def _png(rng: random.Random) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")

    pixels = bytes(rng.randrange(0, 256) if rng.random() < 0.3 else 0 for _ in range(2400))
    header = (40).to_bytes(4, "big") + (20).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(pixels))
        + chunk(b"IEND", b"")
    )


def _jpeg(rng: random.Random) -> bytes:
    return b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + rng.randbytes(400)


def _pdf(rng: random.Random) -> bytes:
    stream = zlib.compress(bytes(rng.randrange(32, 127) for _ in range(900)))
    header = f"%PDF-1.7\n1 0 obj\n<< /Length {len(stream)} /Filter /FlateDecode >>\nstream\n"
    return header.encode() + stream


def _certificate(rng: random.Random) -> bytes:
    name = _der(0x30, _der(0x31, _der(0x30, _oid("550403") + _der(0x0C, b"api.example.com"))))
    validity = _der(0x30, _der(0x17, b"250101000000Z") + _der(0x17, b"260101000000Z"))
    public_key = _der(
        0x30, _der(0x30, _RSA_ENCRYPTION + _der(0x05, b"")) + _der(0x03, b"\x00" + rng.randbytes(270))
    )
    algorithm = _der(0x30, _SHA256_WITH_RSA + _der(0x05, b""))
    version = _der(0xA0, _der_small(2))
    tbs = _der(0x30, version + _der_integer(rng, 16) + algorithm + name + validity + name + public_key)
    return _der(0x30, tbs + algorithm + _der(0x03, b"\x00" + rng.randbytes(256)))


def _ssh_public(rng: random.Random, algorithm: bytes, n_bytes: int) -> bytes:
    return _ssh_string(algorithm) + _ssh_string(rng.randbytes(n_bytes))


def _unicode_negatives() -> dict[str, str]:
    return {
        "emoji_zwj_sequences": "Great work \U0001f469\u200d\U0001f4bb\U0001f468\u200d\U0001f469\u200d\U0001f467 "
        "\u2014 ship it! \U0001f3f3\ufe0f\u200d\U0001f308",
        "persian_zwnj": "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 \u06a9\u0647 \u06a9\u0644\u06cc\u062f "
        "\u0631\u0627 \u0639\u0648\u0636 \u06a9\u0646\u0645.",
        "german_soft_hyphens": "Die Donau\u00addampf\u00adschiff\u00adfahrts\u00adgesellschaft ver\u00f6ffentlicht "
        "den Fahr\u00adplan.",
        "byte_order_mark": "\ufeffimport os\nprint(os.getcwd())\n",
        "chinese_fullwidth_punctuation": "\u8bf7\u5728\u8bbe\u7f6e\u4e2d\u542f\u7528\u53cc\u91cd\u8ba4\u8bc1"
        "\uff0c\u7136\u540e\u91cd\u65b0\u767b\u5f55\uff08\u7ea6\u9700\uff15\u5206\u949f\uff09\uff01",
        "japanese_fullwidth_latin": "\uff21\uff30\uff29\u30ad\u30fc\u3092\u8a2d\u5b9a\u3057\u3066\u304f\u3060"
        "\u3055\u3044\uff1a\u7ba1\u7406\u753b\u9762\uff08\uff12\uff10\uff12\uff14\u5e74\uff15\u6708\uff09",
        "nbsp_and_ellipsis": "Wait\u00a0for it\u2026 then press\u00a0Enter and the token\u00a0count appears.",
        # Combining marks in decomposed prose, and over letters of scripts that need them.
        "decomposed_accents": unicodedata.normalize(
            "NFD", "Cr\u00e8me br\u00fbl\u00e9e, r\u00e9sum\u00e9 v2 et na\u00efvet\u00e9."
        ),
        "vietnamese_decomposed": unicodedata.normalize(
            "NFD", "Ti\u1ebfng Vi\u1ec7t c\u00f3 nhi\u1ec1u d\u1ea5u."
        ),
        "hindi_marks": "\u0928\u092e\u0938\u094d\u0924\u0947, \u0915\u0943\u092a\u092f\u093e API_KEY \u0938\u0947\u091f \u0915\u0930\u0947\u0902\u0964",
        # Words and identifiers split by one blank or line break, and strings joined in code.
        "line_separators": "Release v1.4.2\u2028Build 20240501-rc1\u2029Deploy to eu-west-1\u00a0region ABC123xyz",
        "wrapped_identifiers": "Call build_context_window\nWITH_TOOL_SPECS then MAX_OUTPUT_TOKENS_4096\nDEFAULT_v2.",
        "string_concatenation": 'url = "https://api.example.com/" + "v1/items?page=" + str(page)\n'
        'label = ("Context window " "usage report 2024")',
        "password_prose": "Forgot your pass"
        + "word: click the link below. The pass"
        + "word: see the vault.",
    }


if __name__ == "__main__":
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    django.setup()
    from governance.guardrails.redaction import redact as _redact

    print(summary(_redact))
