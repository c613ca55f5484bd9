"""The what-if page in front of every governance change made in a change form: a snippet's, skill's or
configuration prompt's classification, a provider's zone (the zone of every model it serves), an LLM
model's provider (so its zone) and an API client's zone; and in front of a snippet's deletion and a
tag's rename or deletion, which change what configurations send (editors/admin/what_if_page.py shows the page;
editors/what_if/ computes it).

The snippet and skill admins belong to apps that know nothing of configurations, so, as with the
governance event log (editors/admin/events.py), this module registers each of these models again with
its admin extended by :class:`editors.admin.what_if_page.WhatIfAdmin`.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.db import models
from django.http import HttpRequest, HttpResponse

from catalog.models import ApiClient, Configuration, LlmModel, Provider
from editors.admin.catalog import ApiClientAdmin, ConfigurationAdmin, LlmModelAdmin, ProviderAdmin
from editors.admin.what_if_page import DeleteWhatIfAdmin, ProposedChange, WhatIfAdmin
from editors.what_if import (
    ClientZoneChange,
    ModelProviderChange,
    ProviderZoneChange,
    SnippetRemoval,
    SourceChange,
    TagChange,
)
from governance.classified import FIELDS, ClassifiedBase
from governance.drafts import classification_tightened
from governance.drafts_admin import DraftAdmin
from governance.vocabulary import TrustZone
from skills.admin import SkillAdmin
from skills.models import Skill
from snippets.admin import SnippetAdmin, TagAdmin
from snippets.models import Snippet, Tag


def _label(model: type[models.Model], field: str, value: str) -> str:
    model_field = model._meta.get_field(field)
    choices = dict(model_field.flatchoices) if isinstance(model_field, models.Field) else {}
    return str(choices.get(value, value or "undeclared"))


class ClassifiedWhatIf(WhatIfAdmin):
    """A classified row: the classification the save makes live. A drafted row takes only what
    tightens at once (``governance.drafts.classification_tightened``); a loosening waits in its
    draft for publishing."""

    def what_if_change(self, live: Any, proposed: Any) -> ProposedChange | None:
        assert isinstance(live, ClassifiedBase) and isinstance(proposed, ClassifiedBase)
        before, after = live.classification, proposed.classification
        applied = classification_tightened(before, after) if isinstance(self, DraftAdmin) else after
        if applied is None or applied == before:
            return None
        changed = type(live)._default_manager.get(pk=live.pk)
        changed.classify(applied)
        model = type(live)
        parts = [
            f"{name.replace('_', ' ')} {_label(model, field, getattr(before, name))} → "
            f"{_label(model, field, getattr(applied, name))}"
            for name in FIELDS
            if getattr(before, name) != getattr(applied, name)
            for field in [model.classification_field(name)]
        ]
        return ProposedChange(SourceChange(changed.as_source()), f"{live.identifier}: {', '.join(parts)}")


class ZoneWhatIf(WhatIfAdmin):
    """A provider's or an API client's ``trust_zone``."""

    def what_if_change(self, live: Any, proposed: Any) -> ProposedChange | None:
        if proposed.trust_zone == live.trust_zone:
            return None
        zone = TrustZone.parse(proposed.trust_zone)
        change = (
            ProviderZoneChange(live.pk, zone)
            if isinstance(live, Provider)
            else ClientZoneChange(live.pk, zone)
        )
        before = _label(type(live), "trust_zone", live.trust_zone)
        return ProposedChange(change, f"{live}: trust zone {before} → {zone.label}")


class ModelWhatIf(WhatIfAdmin):
    """An LLM model's provider, so its zone (a model has no zone of its own)."""

    def what_if_change(self, live: Any, proposed: Any) -> ProposedChange | None:
        if proposed.provider_id == live.provider_id or proposed.provider_id is None:
            return None
        before, after = live.provider, Provider.objects.get(pk=proposed.provider_id)
        summary = f"{live.model_id}: provider {before} ({before.zone.label}) → {after} ({after.zone.label})"
        return ProposedChange(ModelProviderChange(live.pk, after.pk), summary)


class SnippetWhatIfAdmin(DeleteWhatIfAdmin, ClassifiedWhatIf, SnippetAdmin):
    def what_if_deletion(self, obj: Any) -> ProposedChange | None:
        return ProposedChange(SnippetRemoval(obj.pk), f"snippet {obj.identifier} deleted", "Delete it")

    def history_form_view(
        self, request: HttpRequest, object_id: str, version_id: str, extra_context: Any = None
    ) -> HttpResponse:
        """Reverting to a version saves its classification like the change form: it asks first too."""
        if request.method == "POST":
            page = self.what_if_form_gate(request, unquote(object_id))
            if page is not None:
                return page
        return super().history_form_view(request, object_id, version_id, extra_context)


class TagWhatIfAdmin(DeleteWhatIfAdmin, WhatIfAdmin, TagAdmin):
    """A tag's rename or deletion: the snippets carrying it change the configurations they are sent
    by."""

    def what_if_change(self, live: Any, proposed: Any) -> ProposedChange | None:
        if proposed.name == live.name:
            return None
        return ProposedChange(
            TagChange(live.name, proposed.name), f"tag {live.name} renamed to {proposed.name}"
        )

    def what_if_deletion(self, obj: Any) -> ProposedChange | None:
        return ProposedChange(TagChange(obj.name, None), f"tag {obj.name} deleted", "Delete it")


class SkillWhatIfAdmin(ClassifiedWhatIf, SkillAdmin):
    pass


class ConfigurationWhatIfAdmin(ClassifiedWhatIf, ConfigurationAdmin):
    pass


class ProviderWhatIfAdmin(ZoneWhatIf, ProviderAdmin):
    pass


class ApiClientWhatIfAdmin(ZoneWhatIf, ApiClientAdmin):
    pass


class LlmModelWhatIfAdmin(ModelWhatIf, LlmModelAdmin):
    pass


_EXTENDED: dict[type[models.Model], type[admin.ModelAdmin]] = {
    Snippet: SnippetWhatIfAdmin,
    Tag: TagWhatIfAdmin,
    Skill: SkillWhatIfAdmin,
    Configuration: ConfigurationWhatIfAdmin,
    Provider: ProviderWhatIfAdmin,
    ApiClient: ApiClientWhatIfAdmin,
    LlmModel: LlmModelWhatIfAdmin,
}
for _model, _admin in _EXTENDED.items():
    admin.site.unregister(_model)
    admin.site.register(_model, _admin)
