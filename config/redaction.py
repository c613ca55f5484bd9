"""The service's one redactor (``governance.guardrails.redaction.redact``) for what ``config`` itself
writes out: log lines (``config.logs``) and the API's error bodies (``config.exception_handler``).

It is named by its dotted path and loaded on first use: ``config`` imports no app, and the settings
import ``config.logs`` before any app can be loaded. Both uses fail closed: what the redactor cannot
take is replaced whole, never written raw.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from django.utils.module_loading import import_string

REDACTOR = "governance.guardrails.redaction.redact"


class Redactor:
    """``redactor`` (a dotted path to a function returning an object with ``.text``) applied to a
    string, loaded on first use. Fails closed: any failure gives ``withheld``."""

    def __init__(self, redactor: str, *, withheld: str) -> None:
        self.path = redactor
        self.withheld = withheld
        self.function: Callable[[str], Any] | None = None
        self.loading = False
        self.lock = threading.RLock()  # re-entrant: the import may log in the same thread

    def __call__(self, text: str) -> str:
        try:
            return self.redacted(text)
        except Exception:  # fail closed: whatever went wrong, the raw text is never written
            return self.withheld

    def redacted(self, text: str) -> str:
        """``text`` redacted; raises whatever loading or running the redactor raises."""
        return str(self.loaded()(text).text)

    def loaded(self) -> Callable[[str], Any]:
        with self.lock:
            if self.function is None:
                if self.loading:  # a record logged while the redactor itself is being imported
                    raise RuntimeError("the redactor is loading")
                self.loading = True
                try:
                    self.function = import_string(self.path)
                finally:
                    self.loading = False
            return self.function

    def json(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, scalars) with every string redacted, keys included;
        raises as :meth:`redacted` does (the caller decides what to answer instead)."""
        if isinstance(value, str):
            return self.redacted(value)
        if isinstance(value, dict):
            return {self.json(key): self.json(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.json(item) for item in value]
        return value
