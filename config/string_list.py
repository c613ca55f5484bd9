"""A form field for a list of names stored as a JSON list (tags, tool groups, tools, scopes), typed
the way a snippet's tags are: names separated by commas (``tone, legal``), shown the same way.

With ``lines``, one entry a line instead (a command's arguments, which may hold commas), each kept
as typed, repeats included. A JSON list (``["tone", "legal"]``) is still read, so that a form posted by a script keeps working.
Each name is trimmed (and normalised where the field says how); empty names are dropped, repeats are
kept once, in the order typed. ``unknown`` picks the entries the field refuses: the form error names
every one of them (and what ``known`` lists), and nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from django import forms


def names_text(value: Any, separator: str = ", ") -> str:
    """A stored list of names as the field shows it: ``tone, legal``."""
    if isinstance(value, list | tuple):
        return separator.join(str(item) for item in value)
    return "" if value is None else str(value)


class StringListField(forms.Field):
    widget = forms.TextInput

    def __init__(
        self,
        *,
        normalise: Callable[[str], str] = str.strip,
        unknown: Callable[[Sequence[str]], Iterable[str]] | None = None,
        known: Callable[[], Iterable[str]] | None = None,
        what: str = "names",
        lines: bool = False,
        **kwargs: Any,
    ) -> None:
        kwargs.setdefault("required", False)
        if lines:
            kwargs.setdefault("widget", forms.Textarea(attrs={"rows": 4, "cols": 80}))
        kwargs.pop("encoder", None)  # a model JSONField's form arguments
        kwargs.pop("decoder", None)
        super().__init__(**kwargs)
        self.normalise, self.unknown, self.known, self.what = normalise, unknown, known, what
        self.lines = lines
        if not lines:
            self.widget.attrs.setdefault("size", 80)

    def prepare_value(self, value: Any) -> str:
        separator = "\n" if self.lines else ", "
        if isinstance(value, str) and value.strip().startswith("["):
            try:
                return names_text(json.loads(value), separator)
            except ValueError:
                return value
        return names_text(value, separator)

    def to_python(self, value: Any) -> list[str]:
        if value is None:
            return []
        if isinstance(value, list | tuple):
            items = [str(item) for item in value]
        else:
            text = str(value).strip()
            items = self._json_list(text) if text.startswith("[") else self._split(text)
        names = [name for name in (self.normalise(item) for item in items) if name]
        return names if self.lines else list(dict.fromkeys(names))

    def _split(self, text: str) -> list[str]:
        return text.splitlines() if self.lines else text.split(",")

    def _json_list(self, text: str) -> list[str]:
        try:
            items = json.loads(text)
        except ValueError:
            items = None
        if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
            raise forms.ValidationError(
                f"Write the {self.what} "
                + ("one a line" if self.lines else "separated by commas (e.g. a, b)")
                + ", or as a JSON list of texts.",
                code="invalid",
            )
        return items

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        refused = list(self.unknown(value)) if self.unknown is not None and value else []
        if refused:
            known = f" Known: {', '.join(self.known())}." if self.known is not None else ""
            raise forms.ValidationError(f"Unknown {self.what}: {', '.join(refused)}.{known}", code="unknown")

    def has_changed(self, initial: Any, data: Any) -> bool:
        try:
            return self.to_python(initial) != self.to_python(data)
        except forms.ValidationError:
            return True
