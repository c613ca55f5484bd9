"""Mandatory secret redaction for everything that reaches a provider.

Contract of :func:`redact`:

- every character of every detected secret is replaced, at **every** occurrence in the text, by the
  deterministic placeholder ``[REDACTED:<kind>]``; public prefixes may go with it (we redact whole tokens);
- findings carry the kind and the span in the *original* text, never the value;
- redacting a redacted text changes nothing and reports nothing (placeholders match no rule);
- if the scanner raises, :class:`RedactionFailed` propagates so the caller refuses the call (fail closed).

No library finds full spans, so detection has three sources:

1. an explicit catalogue of full-span patterns for known shapes (``catalogue``), plus key/value
   assignments in code, config, env files, JSON and command lines, a value under a secret-bearing key
   (``assignments``);
2. ``detect-secrets`` plugins run per line as a *source of candidates* (``library``): a reported value is
   located in its line, widened to the whole token run it sits in, and only then searched for everywhere;
3. base64 blocks judged by what they decode to (``blocks``): a private key body without its armour, on
   one line or wrapped, is a secret; an image, a document or a certificate is not, whatever its entropy.

Then every detected value of a token-like shape is searched for in the whole text, so a secret seen once
in an assignment is also removed where it appears bare. Overlapping spans are merged (the union is
replaced; the widest member names the kind) (``spans``).

A text holding invisible characters, compatibility forms (fullwidth letters) or percent-escapes is also
scanned in a normalised view that undoes them; those findings are mapped back to the original spans
(``normalise``, ``scan``).
"""

from __future__ import annotations

from .assignments import assignment_spans, kind_for_key
from .findings import PLACEHOLDER_PREFIX, Finding, Redaction, RedactionFailed, placeholder
from .payloads import redact_json
from .placeholders import is_placeholder
from .scan import detect, redact

__all__ = [
    "PLACEHOLDER_PREFIX",
    "Finding",
    "Redaction",
    "RedactionFailed",
    "assignment_spans",
    "detect",
    "is_placeholder",
    "kind_for_key",
    "placeholder",
    "redact",
    "redact_json",
]
