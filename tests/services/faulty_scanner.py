"""Loaded in a worker with ``-I``: the redaction scanner the runtime calls raises, as a defect would, on
any text holding :data:`MARKER`, so a test decides which run meets the fault by what the provider
answers it. Nothing else changes: every other text is scanned as usual."""

from __future__ import annotations

import agents.runtime.redactions

MARKER = "Injected scanner fault"
_scan = agents.runtime.redactions.redact


def _scan_or_raise(value: str):
    if MARKER in value:
        raise RuntimeError(f"cannot scan {value[:60]!r}")  # careless: it quotes the text
    return _scan(value)


agents.runtime.redactions.redact = _scan_or_raise
