"""Admin for classified rows (snippets, skills, configuration prompts): one promote action and report,
and the classification rules on every change form.

An editor may tighten a classification; lowering a class, loosening a ceiling or relaxing enforcement
needs the ``governance.reclassify`` permission, and a new row always enforces. The form says so as a
field error before anything is stored; the owning app's service (through
:func:`governance.services.reclassification_guard`) enforces the same rules again under a lock.

An interface module: it calls governance services and imports no other app.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import ModelAdmin
from django.db.models import QuerySet
from django.http import HttpRequest

from governance.actors import Actor, request_actor
from governance.classified import FIELDS, Classification, ClassifiedBase
from governance.personal_data_admin import OVERRIDE_FIELD, PersonalDataForm, personal_data_saved
from governance.services import (
    NEW_ROWS_ENFORCE,
    PromotionResult,
    enforcement_promote,
    reclassification_refusal,
)
from governance.vocabulary import Enforcement

PROMOTED_IN_ADMIN = "Promoted to enforce."


def promotion_report(
    model_admin: ModelAdmin,
    request: HttpRequest,
    *,
    result: PromotionResult,
    rows: Sequence[ClassifiedBase],
    log_message: str = PROMOTED_IN_ADMIN,
) -> None:
    """Log each promoted row in its own admin history, then one message for the promoted rows and
    one for each row skipped with its reason."""
    by_identifier = {row.identifier: row for row in rows}
    for identifier in result.promoted:
        # log_change uses the object's own content type, whichever admin reports it.
        model_admin.log_change(request, by_identifier[identifier], log_message)
    if result.promoted:
        model_admin.message_user(request, f"Promoted: {', '.join(result.promoted)}.", messages.SUCCESS)
    for identifier, reason in result.skipped:
        model_admin.message_user(request, f"Not promoted {identifier}: {reason}.", messages.WARNING)


class ClassificationForm(forms.ModelForm):
    """Mixed into a classified model's admin form by :meth:`ClassifiedAdmin.get_form`."""

    classification_actor: ClassVar[Actor]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        enforcement = self.fields.get(self._model().classification_field("enforcement"))
        if self.instance.pk is None and isinstance(enforcement, forms.ChoiceField):
            enforcement.choices = [(Enforcement.ENFORCE.value, Enforcement.ENFORCE.label)]
            enforcement.help_text = NEW_ROWS_ENFORCE

    def _model(self) -> type[ClassifiedBase]:
        model = self._meta.model
        assert model is not None and issubclass(model, ClassifiedBase)
        return model

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or self.cleaned_data
        model = self._model()
        # The stored row, not the form's instance: a history revert's instance is the old version.
        stored = model._default_manager.filter(pk=self.instance.pk).first() if self.instance.pk else None
        if stored is None:
            return cleaned
        before = stored.classification
        after = Classification(
            **{
                name: str(cleaned.get(model.classification_field(name), getattr(before, name)))
                for name in FIELDS
            }
        )
        refusal = reclassification_refusal(before=before, after=after, actor=self.classification_actor)
        for field, message in refusal.items():
            self.add_error(model.classification_field(field), message)
        return cleaned


class ClassifiedAdmin(admin.ModelAdmin):
    """The base of a classified model's ``ModelAdmin``: its change forms apply the classification
    rules; list ``"promote_to_enforce"`` in ``actions`` for the promote action."""

    def get_form(self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any) -> Any:
        if self.model.screened_fields and "form" not in kwargs:
            # Declared on the form before the fields are listed: the override is no model field.
            kwargs["form"] = type(self.form.__name__, (PersonalDataForm, self.form), {"__module__": __name__})
        form = super().get_form(request, obj, change=change, **kwargs)
        actor = request_actor(request)
        attrs = {"classification_actor": actor, "personal_data_actor": actor, "__module__": __name__}
        return type(form.__name__, (ClassificationForm, form), attrs)

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        fieldsets = super().get_fieldsets(request, obj)
        if not self.model.screened_fields:
            return fieldsets
        return [*fieldsets, ("Personal data", {"fields": (OVERRIDE_FIELD,)})]

    def save_form(self, request: HttpRequest, form: Any, change: bool) -> Any:
        obj = super().save_form(request, form, change)
        if isinstance(form, PersonalDataForm):
            personal_data_saved(self, request, form, obj)
        return obj

    @admin.action(description="Promote selected %(verbose_name_plural)s to enforce", permissions=["change"])
    def promote_to_enforce(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        rows = list(queryset)
        result = enforcement_promote(rows=rows, actor=request_actor(request))
        promotion_report(self, request, result=result, rows=rows)
