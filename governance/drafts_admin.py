"""Admin for drafted rows (snippets, configurations): a save stores a draft, Publish makes it live.

A subclass sets ``publish_permission`` and implements :meth:`DraftAdmin.live_save` with its app's
save service (validation, reclassification guard, history). Saving a change stores the form's values
as the row's draft (``governance.drafts``); a stricter classification in it reaches the live row at
once. The change form shows the draft; "Publish draft" shows each changed field against live and, on
confirmation, applies the draft in one transaction; "Discard draft" drops it. Creating a row is live
(docs/decisions/0014-drafts-and-publishing.md), but inactive for a user without the publish
permission, with the activation as its draft: the add form, "Save as new", deleting and adding again
and a history revert of a deleted row all go through :meth:`DraftAdmin.save_model`, so none of them
puts unpublished text in use.

An interface module: it calls governance services and imports no other app.
"""

from __future__ import annotations

import json
from abc import ABCMeta, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import FieldDoesNotExist, PermissionDenied, ValidationError
from django.db import models, transaction
from django.db.models import QuerySet
from django.forms.widgets import MediaDefiningClass
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from config.admin_history import WordDiff, word_diff
from governance.actors import request_actor
from governance.drafts import (
    classification_tightened,
    draft_discard,
    draft_get,
    draft_save,
    draft_values_apply,
    latest_version,
    publication_record,
    publish_checks,
    with_has_draft,
)
from governance.errors import ReclassifyForbidden
from governance.models import Draft
from governance.personal_data_admin import OVERRIDE_FIELD

SAVED_AS_DRAFT = "Saved as a draft: the live {name} is unchanged until the draft is published."
CREATED_INACTIVE = (
    "Created inactive: publishing needs the publish permission, so the {name} is not in use until its "
    "draft is published."
)
# The field that takes a drafted model's row out of use (snippets and configurations have it).
ACTIVE_FIELD = "is_active"


@dataclass(frozen=True)
class FieldChange:
    """One field of a draft that differs from live, as text, and both sides word by word with the
    changed words marked (the publish page shows them side by side)."""

    name: str
    label: str
    live: str
    draft: str
    words: WordDiff


def form_field_initial(form: forms.ModelForm, name: str, live: Callable[[], Any], empty: Any) -> Any:
    """The initial value of ``form``'s field ``name`` that is not a model field (tags, skills): the
    shown draft's (:meth:`DraftAdmin.get_object` sets it on the instance), else the saved row's
    ``live()``, else ``empty`` for a new row."""
    draft = getattr(form.instance, "_draft", None)
    if draft is not None and name in draft.values:
        return draft.values[name]
    return live() if form.instance.pk else empty


class HasDraftFilter(admin.SimpleListFilter):
    """The change list's "has draft" filter (rows annotated by :meth:`DraftAdmin.get_queryset`)."""

    title = "has draft"
    parameter_name = "has_draft"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
        if self.value() in ("yes", "no"):
            return queryset.filter(has_draft=self.value() == "yes")
        return queryset


class _AbstractAdminMetaclass(MediaDefiningClass, ABCMeta):
    """``ModelAdmin``'s metaclass with ``abc``'s: an admin that leaves an abstract method unimplemented
    fails when the admin site instantiates it at registration, not at its first save."""


class DraftAdmin(admin.ModelAdmin, metaclass=_AbstractAdminMetaclass):
    """The base of a drafted model's ``ModelAdmin`` (put it before ``ClassifiedAdmin`` in the bases).

    Its rows are annotated with ``has_draft``: put ``"has_draft"`` in ``list_display`` and
    :class:`HasDraftFilter` in ``list_filter``."""

    publish_permission: ClassVar[str]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        return with_has_draft(super().get_queryset(request))

    @admin.display(description="Draft", boolean=True, ordering="has_draft")
    def has_draft(self, obj: Any) -> bool:
        return bool(getattr(obj, "has_draft", False))

    @abstractmethod
    def live_save(
        self, request: HttpRequest, obj: Any, *, values: dict[str, Any] | None, reason: str
    ) -> None:
        """Save ``obj`` live through the app's service; ``values`` are the draft's (``None`` when only
        the classification changes)."""

    # Values: the form's cleaned data as JSON, and back onto a row.

    def draft_values(self, form: forms.ModelForm) -> dict[str, Any]:
        values = {}
        for name in form.fields:
            if name == OVERRIDE_FIELD:
                continue  # an answer to this save's review, recorded as an event, never a value
            if name in form.cleaned_data:
                value = form.cleaned_data[name]
                values[name] = value.pk if isinstance(value, models.Model) else value
        return values

    def draft_apply(self, obj: Any, values: dict[str, Any]) -> None:
        """Set the draft's model fields on ``obj`` (unsaved)."""
        draft_values_apply(obj, values)

    def field_text(self, obj: Any, name: str, values: dict[str, Any] | None) -> str:
        """How field ``name`` reads on the diff page: of the live row when ``values`` is ``None``."""
        value = getattr(obj, name, values.get(name, "") if values else "")
        field = self._model_field(name)
        if field is not None and field.choices and value in dict(field.flatchoices):
            return str(dict(field.flatchoices)[value])  # a vocabulary value reads as its label
        if isinstance(value, list) and all(isinstance(item, str) for item in value):
            return ", ".join(value)  # a list of names reads as its form field shows it (tags, tools)
        if isinstance(value, dict | list):
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        return "" if value is None else str(value)

    def _model_field(self, name: str) -> Any:
        try:
            return self.model._meta.get_field(name)
        except FieldDoesNotExist:
            return None

    def draft_changes(self, live: Any, draft: Draft) -> list[FieldChange]:
        proposed = self.model._default_manager.get(pk=live.pk)
        self.draft_apply(proposed, draft.values)
        changes = []
        for name in draft.values:
            before = self.field_text(live, name, None)
            after = self.field_text(proposed, name, draft.values)
            if before == after:
                continue
            field = self._model_field(name)
            label = str(field.verbose_name) if field is not None else name.replace("_", " ")
            changes.append(FieldChange(name, label.capitalize(), before, after, word_diff(before, after)))
        return changes

    # Saving: a change is a draft; a new row is created live, or inactive without the publish permission.

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Every admin write of a row comes here: the add form, "Save as new", the change form, the
        change list's editable fields and a history version's "Revert" (which on a deleted row
        recreates it)."""
        with transaction.atomic():
            live = (
                self.model._default_manager.select_for_update().filter(pk=obj.pk).first() if change else None
            )
            if live is None:
                self._create(request, obj, self.draft_values(form))
                return
            actor = request_actor(request)
            draft_save(row=live, values=self.draft_values(form), actor=actor)
            tightened = classification_tightened(live.classification, obj.classification)
            if tightened is not None:
                live.classify(tightened)
                self.live_save(request, live, values=None, reason="classification tightened by a draft")
        request._saved_as_draft = True  # type: ignore[attr-defined]

    def _create(self, request: HttpRequest, obj: Any, values: dict[str, Any]) -> None:
        """Create ``obj`` live. Without the publish permission it is created inactive, so none of its
        text is in use until someone who may publish activates it: an activation it asked for waits
        as its draft (adding a row must not be a way round publishing a change)."""
        if request.user.has_perm(self.publish_permission):
            self.live_save(request, obj, values=values, reason="created in admin")
            return
        wants_active = bool(getattr(obj, ACTIVE_FIELD))
        setattr(obj, ACTIVE_FIELD, False)
        self.live_save(request, obj, values=values, reason="created inactive in admin: awaiting publish")
        if wants_active:
            draft_save(row=obj, values={**values, ACTIVE_FIELD: True}, actor=request_actor(request))
        request._created_inactive = True  # type: ignore[attr-defined]

    def message_user(self, request: HttpRequest, message: Any, *args: Any, **kwargs: Any) -> None:
        level = kwargs.get("level", args[0] if args else messages.INFO)
        if getattr(request, "_saved_as_draft", False) and level == messages.SUCCESS:
            message = SAVED_AS_DRAFT.format(name=self.model._meta.verbose_name)
        elif getattr(request, "_created_inactive", False) and level == messages.SUCCESS:
            message = CREATED_INACTIVE.format(name=self.model._meta.verbose_name)
        super().message_user(request, message, *args, **kwargs)

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Deleting a row takes it out of every send at once, with no draft to review: it needs the
        publish permission as well as the delete permission."""
        return super().has_delete_permission(request, obj) and request.user.has_perm(self.publish_permission)

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        with transaction.atomic():
            draft_discard(obj)
            super().delete_model(request, obj)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        with transaction.atomic():
            for obj in queryset:
                draft_discard(obj)
            super().delete_queryset(request, queryset)

    # The change form shows the draft.

    def get_object(self, request: HttpRequest, object_id: str, from_field: str | None = None) -> Any:
        obj = super().get_object(request, object_id, from_field)
        match = request.resolver_match
        opts = self.model._meta
        if (
            obj is not None
            and match is not None
            and match.url_name == f"{opts.app_label}_{opts.model_name}_change"
        ):
            draft = draft_get(obj)
            if draft is not None:
                self.draft_apply(obj, draft.values)
                obj._draft = draft
        return obj

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        live = self.model._default_manager.filter(pk=object_id).first() if object_id.isdigit() else None
        draft = draft_get(live) if live is not None else None
        if live is not None and draft is not None and request.method == "GET":
            self.message_user(
                request,
                format_html(
                    "This form shows a draft by {} ({} UTC); the live {} differs until it is "
                    'published. <a href="{}">Review and publish</a> · <a href="{}">Discard draft</a>',
                    draft.author_label,
                    f"{draft.updated_at:%Y-%m-%d %H:%M}",
                    self.model._meta.verbose_name,
                    self._url("publish", live.pk),
                    self._url("discard_draft", live.pk),
                ),
                messages.WARNING,
            )
        extra = {**(extra_context or {}), "draft": draft}
        if live is not None:
            extra["publications_url"] = publications_url(live)
        return super().change_view(request, object_id, form_url, extra)

    # Publish and discard.

    def get_urls(self) -> list[URLPattern]:
        opts = self.model._meta
        prefix = f"{opts.app_label}_{opts.model_name}"
        wrap = self.admin_site.admin_view
        return [
            path("<path:object_id>/publish/", wrap(self.publish_view), name=f"{prefix}_publish"),
            path("<path:object_id>/discard-draft/", wrap(self.discard_view), name=f"{prefix}_discard_draft"),
            *super().get_urls(),
        ]

    def _url(self, name: str, pk: Any) -> str:
        opts = self.model._meta
        return reverse(f"admin:{opts.app_label}_{opts.model_name}_{name}", args=[pk])

    def _live_and_draft(self, request: HttpRequest, object_id: str) -> tuple[Any, Draft | None]:
        if request.method not in ("GET", "POST"):
            raise _NotAllowed
        live = self.model._default_manager.filter(pk=object_id).first() if object_id.isdigit() else None
        if live is None:
            raise Http404(f"No such {self.model._meta.verbose_name}.")
        if not self.has_change_permission(request, live):
            raise PermissionDenied
        return live, draft_get(live)

    def publish_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: the draft against live, field by field. POST: apply it (needs ``publish_permission``)."""
        try:
            live, draft = self._live_and_draft(request, object_id)
        except _NotAllowed:
            return HttpResponseNotAllowed(["GET", "POST"])
        may_publish = request.user.has_perm(self.publish_permission)
        if request.method == "POST" and not may_publish:
            raise PermissionDenied
        if draft is None:
            self.message_user(request, f"{live} has no draft to publish.", messages.INFO)
            return HttpResponseRedirect(self._url("change", live.pk))
        changes = self.draft_changes(live, draft)
        checks = publish_checks(live, draft)
        error = ""
        if request.method == "POST":
            blocking = [check.label for check in checks if check.blocking]
            if blocking:
                error = "Not published: " + " ".join(blocking)
            else:
                error = self._publish(request, live, draft, changes)
            if not error:
                self.message_user(request, f"Published {live}.", messages.SUCCESS)
                return HttpResponseRedirect(self._url("change", live.pk))
        return self._page(
            request, live, draft, changes=changes, may_publish=may_publish, error=error, checks=checks
        )

    def _publish(self, request: HttpRequest, live: Any, draft: Draft, changes: list[FieldChange]) -> str:
        """Apply ``draft`` to the locked live row, record the publication; an error message, or ''."""
        actor = request_actor(request)
        try:
            with transaction.atomic():
                locked = self.model._default_manager.select_for_update().get(pk=live.pk)
                self.draft_apply(locked, draft.values)
                self.live_save(request, locked, values=draft.values, reason="published")
                publication_record(
                    row=locked,
                    actor=actor,
                    fields=[change.name for change in changes],
                    version=latest_version(locked),
                )
        except ReclassifyForbidden as refused:
            return f"Not published: {refused}"
        except ValidationError as invalid:
            return "Not published: " + "; ".join(invalid.messages)
        self.log_change(request, locked, f"Published the draft by {draft.author_label}.")
        return ""

    def discard_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """GET: confirm. POST: drop the draft (the live row is untouched)."""
        try:
            live, draft = self._live_and_draft(request, object_id)
        except _NotAllowed:
            return HttpResponseNotAllowed(["GET", "POST"])
        if draft is None or request.method == "POST":
            if draft is not None:
                draft_discard(live)
                self.log_change(request, live, f"Discarded the draft by {draft.author_label}.")
                self.message_user(request, f"Discarded the draft of {live}.", messages.SUCCESS)
            return HttpResponseRedirect(self._url("change", live.pk))
        return self._page(request, live, draft, changes=self.draft_changes(live, draft), discard=True)

    def _page(self, request: HttpRequest, live: Any, draft: Draft, **context: Any) -> HttpResponse:
        action = "Discard the draft of" if context.get("discard") else "Publish"
        return TemplateResponse(
            request,
            "admin/govctx/draft_publish.html",
            {
                **self.admin_site.each_context(request),
                "title": f"{action} {live}",
                "opts": self.model._meta,
                "original": live,
                "draft": draft,
                **context,
            },
        )


def publications_url(row: models.Model) -> str:
    """The publication list filtered to ``row``."""
    content_type = ContentType.objects.get_for_model(type(row))
    query = urlencode({"content_type__id__exact": content_type.pk, "object_id": row.pk})
    return f"{reverse('admin:governance_publication_changelist')}?{query}"


class _NotAllowed(Exception):
    pass
