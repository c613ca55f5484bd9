"""Editors see personal data before it is live (decision 0039): a classified row's admin form screens
the texts the row sends, shows what was found and where (kind and line, never the value), and asks
for an explicit override to keep a class below ``personal_data``; the override is a governance event.

An interface module: it calls governance services and imports no other app.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, ClassVar

from django import forms
from django.contrib import messages
from django.http import HttpRequest

from governance.actors import Actor
from governance.classified import ClassifiedBase
from governance.screening import found_in
from governance.services import EventContext, enforced_event_record
from governance.vocabulary import DataClass, Decision

OVERRIDE_FIELD = "personal_data_override"
OVERRIDE_HELP = (
    "Personal data was found in this row's text. A send raises it to personal data whatever it "
    "declares; tick to keep the declared class anyway (recorded as a governance event)."
)


@dataclass(frozen=True)
class TextFinding:
    """Personal data of ``kind`` in field ``field`` at line ``line`` (1-based); never the value."""

    field: str
    line: int
    kind: str

    def __str__(self) -> str:
        return f"{self.kind} in {self.field}, line {self.line}"


def text_findings(texts: dict[str, str]) -> list[TextFinding]:
    """The personal data in each of ``texts`` (field name to text), by field then position."""
    return [
        TextFinding(field, text.count("\n", 0, finding.start) + 1, str(finding.kind))
        for field, text in texts.items()
        for finding in found_in(text or "")
    ]


class PersonalDataForm(forms.ModelForm):
    """Mixed into a classified model's admin form: a text holding personal data under a class below
    ``personal_data`` is refused unless the override is ticked."""

    personal_data_override = forms.BooleanField(
        required=False, label="Keep the declared class", help_text=OVERRIDE_HELP
    )
    personal_data_actor: ClassVar[Actor]
    found: list[TextFinding]
    overridden: bool

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        model = self._meta.model
        assert model is not None and issubclass(model, ClassifiedBase)
        texts = {
            name: str(cleaned[name] if name in cleaned else getattr(self.instance, name, "") or "")
            for name in model.screened_fields
        }
        self.found = text_findings(texts)
        field = model.classification_field("data_class")
        declared = DataClass.parse(str(cleaned.get(field, getattr(self.instance, field, "")) or ""))
        below = declared is not None and declared.rank < DataClass.PERSONAL_DATA.rank
        self.overridden = bool(self.found) and below and bool(cleaned.get(OVERRIDE_FIELD))
        if self.found and below and not self.overridden:
            self.add_error(
                field,
                f"Personal data found ({'; '.join(map(str, self.found))}): choose personal data or a "
                "stricter class, or tick 'Keep the declared class' below.",
            )
        return cleaned


def personal_data_saved(model_admin: Any, request: HttpRequest, form: PersonalDataForm, obj: Any) -> None:
    """After a valid save: tell the editor what was found, and record an override."""
    found = getattr(form, "found", [])
    if not found:
        return
    where = "; ".join(map(str, found))
    if getattr(form, "overridden", False):
        actor = form.personal_data_actor
        data_class = obj.classification.data_class
        enforced_event_record(
            context=EventContext(correlation_id=uuid.uuid4().hex),
            decision=Decision.PERSONAL_DATA_OVERRIDE,
            reason=f"{obj.source_kind} {obj.identifier} kept {data_class} over {len(found)} finding(s) "
            f"by {actor.label}",
        )
        model_admin.message_user(
            request,
            f"Personal data found ({where}); the declared class was kept (recorded).",
            messages.WARNING,
        )
        return
    model_admin.message_user(request, f"Personal data found ({where}).", messages.WARNING)
