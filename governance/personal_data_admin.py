"""Editors see personal data before it is live (decision 0039): a classified row's admin form screens
the texts the row sends, shows what was found and where (kind and line, never the value), and asks
for an explicit override to keep a class below ``personal_data``; the override is a governance event.
The question and the event are ``governance/personal_data_override.py``'s, which the API's writes ask
too.

An interface module: it calls governance services and imports no other app.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django import forms
from django.contrib import messages
from django.http import HttpRequest

from governance.actors import Actor
from governance.classified import ClassifiedBase
from governance.personal_data_override import (
    OVERRIDE_FIELD,
    TextFinding,
    below_personal_data,
    personal_data_override_record,
    text_findings,
)

OVERRIDE_HELP = (
    "Personal data was found in this row's text. A send raises it to personal data whatever it "
    "declares; tick to keep the declared class anyway (recorded as a governance event)."
)


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
        below = below_personal_data(str(cleaned.get(field, getattr(self.instance, field, "")) or ""))
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
        personal_data_override_record(row=obj, actor=form.personal_data_actor, found=found)
        model_admin.message_user(
            request,
            f"Personal data found ({where}); the declared class was kept (recorded).",
            messages.WARNING,
        )
        return
    model_admin.message_user(request, f"Personal data found ({where}).", messages.WARNING)
