"""Ordinary prompts that hold no personal data but plenty of what looks like it to a careless pattern:
order and ticket numbers, UUIDs, git SHAs, hex digests, dates and timestamps, version strings (four
parts too), prices, ports, private and loopback addresses, line numbers, SQL, code, diffs, MAC addresses,
ISBNs, UTC offsets, SSH remotes and package specifiers."""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable

Piece = Callable[[random.Random], str]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _n(rng: random.Random, low: int, high: int) -> int:
    return rng.randrange(low, high)


def _date(rng: random.Random) -> str:
    return f"{_n(rng, 2015, 2027)}-{_n(rng, 1, 13):02d}-{_n(rng, 1, 29):02d}"


def _order(rng: random.Random) -> str:
    return (
        f"Order ORD-{_n(rng, 2019, 2027)}-{_n(rng, 100000, 999999)} shipped on {_date(rng)}; "
        f"invoice INV-{_n(rng, 10000, 99999)} totals ${_n(rng, 1, 5000)},{_n(rng, 0, 1000):03d}.{_n(rng, 0, 100):02d}."
    )


def _uuid(rng: random.Random) -> str:
    return f"Request {uuid.UUID(int=rng.getrandbits(128), version=4)} failed after {_n(rng, 1, 900)} ms (retry {_n(rng, 1, 5)})."


def _git(rng: random.Random) -> str:
    sha = _hex(rng, 40)
    return (
        f"Revert commit {sha} ({sha[:7]}): it broke the build on branch release/{_n(rng, 1, 9)}.{_n(rng, 0, 20)}."
        f"\n  git cherry-pick {_hex(rng, 12)} && git push origin HEAD"
    )


def _digest(rng: random.Random) -> str:
    return f"sha256:{_hex(rng, 64)}  dist/app-{_n(rng, 1, 4)}.{_n(rng, 0, 30)}.{_n(rng, 0, 10)}.tar.gz"


def _versions(rng: random.Random) -> str:
    return (
        f"Upgrade django=={_n(rng, 3, 6)}.{_n(rng, 0, 3)}.{_n(rng, 0, 25)} and numpy {_n(rng, 1, 3)}.{_n(rng, 0, 30)}.{_n(rng, 0, 5)}; "
        f"the Windows agent reports {_n(rng, 6, 11)}.{_n(rng, 0, 4)}.{_n(rng, 7000, 26000)}.{_n(rng, 1, 5000)}, "
        f"the firmware {_n(rng, 1, 10)}.{_n(rng, 0, 10)}.{_n(rng, 0, 10)}.{_n(rng, 0, 10)} and Chrome "
        f"{_n(rng, 100, 140)}.0.{_n(rng, 5000, 7000)}.{_n(rng, 10, 250)}."
    )


def _sql(rng: random.Random) -> str:
    return (
        f"SELECT id, total, created_at FROM orders WHERE customer_id = {_n(rng, 1, 10**9)} "
        f"AND created_at >= '{_date(rng)} {_n(rng, 0, 24):02d}:{_n(rng, 0, 60):02d}:00' "
        f"AND total > {_n(rng, 1, 1000)}.{_n(rng, 0, 100):02d} ORDER BY id DESC LIMIT {_n(rng, 10, 500)} OFFSET {_n(rng, 0, 10**6)};"
    )


def _code(rng: random.Random) -> str:
    return (
        f"def backoff(attempt: int) -> float:\n    return min({_n(rng, 10, 120)}.0, 0.{_n(rng, 1, 9)} * 2 ** attempt)"
        f"\n\nTIMEOUT_MS = {_n(rng, 1000, 100000)}\nMAX_ID = {_n(rng, 10**8, 10**12)}\nMAGIC = 0x{_hex(rng, 8)}"
        f"\nassert ratio == {rng.random():.17f}"
    )


def _network(rng: random.Random) -> str:
    private = rng.choice(
        [f"10.{_n(rng, 0, 256)}.{_n(rng, 0, 256)}.{_n(rng, 1, 255)}", f"192.168.{_n(rng, 0, 256)}.{_n(rng, 1, 255)}",
         f"172.{_n(rng, 16, 32)}.{_n(rng, 0, 256)}.{_n(rng, 1, 255)}", "127.0.0.1", "0.0.0.0",
         f"203.0.113.{_n(rng, 1, 255)}", f"198.51.100.{_n(rng, 1, 255)}", "::1", "fe80::1ff:fe23:4567:890a"]
    )  # fmt: skip
    mac = ":".join(_hex(rng, 2) for _ in range(6))
    return f"Bind the service to {private}:{_n(rng, 1024, 65535)}; the NIC {mac} dropped {_n(rng, 1, 10**6)} packets."


def _log(rng: random.Random) -> str:
    return (
        f"{_date(rng)}T{_n(rng, 0, 24):02d}:{_n(rng, 0, 60):02d}:{_n(rng, 0, 60):02d}.{_n(rng, 0, 10**6):06d}+0{_n(rng, 0, 10)}:00 "
        f"ERROR worker-{_n(rng, 1, 32)} pid={_n(rng, 100, 99999)} ts={_n(rng, 1_500_000_000, 1_800_000_000)}"
        f'{_n(rng, 100, 1000)} job={_n(rng, 10**5, 10**9)} File "app/tasks.py", line {_n(rng, 1, 900)}, in run'
    )


def _prices(rng: random.Random) -> str:
    return (
        f"The plan costs €{_n(rng, 5, 500)},{_n(rng, 0, 100):02d} per month or ${_n(rng, 1, 99)},{_n(rng, 0, 1000):03d} per year;"
        f" {_n(rng, 1, 100)}% off until {_n(rng, 1, 29):02d}/{_n(rng, 1, 13):02d}/{_n(rng, 2024, 2028)}"
        f" ({_n(rng, 1, 29):02d}.{_n(rng, 1, 13):02d}.{_n(rng, 2024, 2028)})."
    )


def _diff(rng: random.Random) -> str:
    a = _n(rng, 1, 900)
    return (
        f"@@ -{a},{_n(rng, 3, 9)} +{a + 2},{_n(rng, 3, 9)} @@\n-    retries = {_n(rng, 1, 5)}\n+    retries = {_n(rng, 1, 9)}"
        f"\n 2 files changed, {_n(rng, 1, 200)} insertions(+), {_n(rng, 1, 90)} deletions(-)"
    )


def _references(rng: random.Random) -> str:
    return (
        f"See JIRA-{_n(rng, 100, 9999)} and ISBN 978-{_n(rng, 0, 10)}-{_n(rng, 10, 99)}-{_n(rng, 100000, 999999)}-{_n(rng, 0, 10)};"
        f" tracking 1Z{''.join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(16))}"
        f" and part no. {_n(rng, 100, 999)}-{_n(rng, 10, 99)}-{_n(rng, 1000, 9999)}-{rng.choice('ABCDEFG')}."
    )


def _remotes(rng: random.Random) -> str:
    return (
        f"Clone git@github.com:team-{_n(rng, 1, 99)}/service.git and install @types/node@{_n(rng, 14, 23)}.{_n(rng, 0, 20)}.{_n(rng, 0, 20)};"
        f" pin image@sha256:{_hex(rng, 64)} and reply in UTC+{_n(rng, 1, 12)} (+05:30 for Pune)."
    )


def _math(rng: random.Random) -> str:
    values = ", ".join(str(_n(rng, 0, 10 ** rng.randrange(1, 10))) for _ in range(8))
    return (
        f"Sort the list [{values}] and compute {_n(rng, 100, 999)} + {_n(rng, 100, 999)} * {_n(rng, 10, 99)}; "
        f"the matrix is {_n(rng, 2, 9)}x{_n(rng, 2, 9)} and 1e-{_n(rng, 3, 9)} is the tolerance, seed {_n(rng, 10**9, 10**10)}."
    )


def _prose(rng: random.Random) -> str:
    return rng.choice(
        [
            "Summarise the attached design doc in three bullet points for the steering meeting.",
            "Rewrite this paragraph in a friendlier tone, keeping it under 120 words.",
            "Explain why the cache hit rate fell from 93% to 71% after the 2.4 release.",
            "Draft release notes for version 3.12.1: faster startup, fewer retries, a new export format.",
            "Translate the error message into German and French, and keep the placeholders as they are.",
        ]
    )


PIECES: tuple[Piece, ...] = (
    _order, _uuid, _git, _digest, _versions, _sql, _code, _network, _log, _prices, _diff, _references,
    _remotes, _math, _prose,
)  # fmt: skip


def ordinary_prompts(seed: int = 36, count: int = 1200) -> list[str]:
    """``count`` prompts of two to four pieces each, none holding personal data."""
    rng = random.Random(seed)
    return ["\n\n".join(rng.choice(PIECES)(rng) for _ in range(rng.randrange(2, 5))) for _ in range(count)]
