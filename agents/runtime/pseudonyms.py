"""Pseudonymize and restore (decision 0039): personal data sent as stable placeholders, the values put
back in the reply for a receiver that may see them.

A placeholder is ``[<kind>_<10 hex>]``, the hex a keyed digest of the kind and the value: the same
value gets the same placeholder wherever it appears in a send, and in every send made with the same
key. A run's key is derived from the service's secret key and the run's id, so every step of a run
uses the same placeholders without the mapping being kept anywhere: each step rebuilds it, in memory,
from the values it sends (a run's stored input and transcript hold them already). A completion's key
is random, made for that one request, whose messages carry the whole conversation.

The mapping (:class:`Pseudonyms`) never leaves the process: its ``repr`` shows counts only, and it
refuses to be pickled, so no task argument, cache or log record can carry it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
from collections.abc import Sequence
from typing import Any

from django.conf import settings

from governance.guardrails.personal_data import Finding, PersonalDataKind

_KINDS = "|".join(kind.value for kind in PersonalDataKind)
PLACEHOLDER = re.compile(rf"\[(?:{_KINDS})_[0-9a-f]{{10}}\]")
_LONGEST = max(len(kind.value) for kind in PersonalDataKind) + 13


def run_key(run_id: object) -> bytes:
    """The key of a run's placeholders: the same at every step of the run, different for every run."""
    secret = str(settings.SECRET_KEY).encode()
    return hmac.new(secret, f"pseudonyms:run:{run_id}".encode(), hashlib.sha256).digest()


def request_key() -> bytes:
    """The key of one request's placeholders (a completion: its messages are the whole conversation)."""
    return secrets.token_bytes(32)


class Pseudonyms:
    """The placeholders of one send: which value each stands for, and whether the send's receiver may
    see it restored (a value from what the receiver supplied always; any other value only when the
    receiver's zone admits ``personal_data``). Counts by kind are what may be reported."""

    def __init__(self, key: bytes) -> None:
        self._key = key
        self._values: dict[str, str] = {}
        self._restorable: set[str] = set()
        self.counts: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"Pseudonyms({len(self._values)} values)"

    def __reduce__(self) -> str | tuple[Any, ...]:
        raise TypeError("a pseudonym mapping is never serialised")

    def replaced(self, text: str, findings: Sequence[Finding], *, restorable: bool) -> str:
        """``text`` with the value of every finding replaced by its placeholder."""
        pieces, last = [], 0
        for finding in findings:
            value = text[finding.start : finding.end]
            pieces += [text[last : finding.start], self._placeholder(finding.kind, value, restorable)]
            last = finding.end
        pieces.append(text[last:])
        return "".join(pieces)

    def _placeholder(self, kind: PersonalDataKind, value: str, restorable: bool) -> str:
        digest = hmac.new(self._key, f"{kind}\0{value}".encode(), hashlib.sha256).hexdigest()[:10]
        placeholder = f"[{kind}_{digest}]"
        self._values[placeholder] = value
        if restorable:
            self._restorable.add(placeholder)
        self.counts[kind] = self.counts.get(kind, 0) + 1
        return placeholder

    def restore(self, text: str, *, json_text: bool = False) -> str:
        """``text`` with every placeholder the receiver may see replaced by its value (escaped as in a
        JSON string when ``json_text``); other placeholders, and look-alikes, are left as they are."""
        if "[" not in text or not self._restorable:
            return text

        def value(match: re.Match[str]) -> str:
            placeholder = match.group(0)
            if placeholder not in self._restorable:
                return placeholder
            original = self._values[placeholder]
            return json.dumps(original, ensure_ascii=False)[1:-1] if json_text else original

        return PLACEHOLDER.sub(value, text)

    def held_from(self, text: str) -> int:
        """Where a placeholder the receiver may see might begin at the end of ``text`` (``len(text)``:
        nowhere): a stream holds the text from there until the next delta says."""
        start = text.rfind("[", max(0, len(text) - _LONGEST))
        if start < 0:
            return len(text)
        tail = text[start:]
        if any(len(tail) < len(p) and p.startswith(tail) for p in self._restorable):
            return start
        return len(text)

    @property
    def restoring(self) -> bool:
        """Whether any placeholder of this send may be restored for its receiver."""
        return bool(self._restorable)


class StreamRestorer:
    """Restores a stream's placeholders as its deltas arrive: a delta that ends inside what may be a
    placeholder is held back from there until the next delta completes it (or shows it is none)."""

    def __init__(self, pseudonyms: Pseudonyms, *, json_text: bool = False) -> None:
        self._pseudonyms = pseudonyms
        self._json_text = json_text
        self._held = ""

    def feed(self, text: str) -> str:
        pending = self._held + text
        cut = self._pseudonyms.held_from(pending)
        self._held = pending[cut:]
        return self._pseudonyms.restore(pending[:cut], json_text=self._json_text)

    def finish(self) -> str:
        rest, self._held = self._held, ""
        return self._pseudonyms.restore(rest, json_text=self._json_text)
