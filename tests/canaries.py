"""Canary secrets: fake credentials in the documented shape of real ones, built at test time.

``generate_canaries(seed)`` returns one canary per shape, each value drawn from ``random.Random(seed)``,
so a test can plant them into any source (snippet, skill, caller context, task input, tool output) and
assert that none of them reaches the recorded wire. No secret-shaped literal exists in this file:
vendor prefixes are assembled from pieces and every body is random.

A canary's ``secret`` is the part that must never be seen again (the value minus public prefixes and
PEM armour); ``context`` is a realistic line or block (prose, code, config, shell) containing the value.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
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

    def __post_init__(self) -> None:
        if not self.secret:
            object.__setattr__(self, "secret", self.value)
        if self.value not in self.context or self.secret not in self.value:
            raise ValueError(f"canary {self.kind} is inconsistent")

    def fragments(self, size: int = 8) -> list[str]:
        """Every ``size``-character window of the secret part: none may survive redaction."""
        return [self.secret[i : i + size] for i in range(max(1, len(self.secret) - size + 1))]


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
)
