"""Providers, models, configurations (with the link to their context preview) and API clients.

A configuration's change (its prompt, classification, snippet tags, skills and tool settings) is a
draft until published; its fallback models are saved live (docs/decisions/0014-drafts-and-publishing.md)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from agents.runtime.budget import budget_status, budget_summary
from catalog.models import ApiClient, Configuration, ConfigurationFallback, LlmModel, Provider
from catalog.pricing import catalogue_prices
from catalog.scopes import SCOPES
from catalog.selectors import configuration_zone
from catalog.services import configuration_save
from config.string_list import StringListField, names_text
from context_assembly.profiles import CATALOGUE, catalogue_get
from editors.admin.configuration_form import ConfigurationForm, skill_names
from editors.admin.declassify import DECLASSIFY_ACTIONS, DeclassifyActions
from editors.admin.live_badge import NO_BADGE, live_badge_view
from editors.admin.preview import preview_view
from editors.edit_effects import system_prompt_badge
from evaluations.admin import evaluate_view
from governance.actors import history_stamp, request_actor
from governance.classified_admin import ClassifiedAdmin
from governance.drafts_admin import DraftAdmin, HasDraftFilter


@admin.register(Provider)
class ProviderAdmin(admin.ModelAdmin):
    list_display = ("identifier", "name", "kind", "trust_zone", "base_url", "is_active")
    list_filter = ("kind", "trust_zone", "is_active")
    search_fields = ("identifier", "name")


class LlmModelForm(forms.ModelForm):
    """Window, output limit and tokenizer come from the built-in catalogue when left empty, so nobody
    types a well-known model's figures by hand; a model outside the catalogue must declare them. A
    dated snapshot id takes its family's figures (``catalogue_get``). Capabilities left empty stay
    empty: they are read from the catalogue at every send, so a catalogue fix reaches existing rows."""

    CATALOGUE_FIELDS = ("context_window", "max_output_tokens", "tokenizer")
    PRICE_FIELDS = (
        "input_price_per_million",
        "cached_input_price_per_million",
        "cache_write_price_per_million",
        "output_price_per_million",
    )

    class Meta:
        model = LlmModel
        fields = (
            "provider",
            "model_id",
            "context_window",
            "max_output_tokens",
            "tokenizer",
            "token_parameter",
            "accepts_sampling",
            "system_role",
            "prompt_cache_min_tokens",
            "embeds",
            "embedding_dimensions",
            "thinking",
            "input_price_per_million",
            "cached_input_price_per_million",
            "cache_write_price_per_million",
            "output_price_per_million",
            "is_active",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for name in self.CATALOGUE_FIELDS:
            self.fields[name].required = False
            self.fields[name].help_text = "Leave empty for a model of the catalogue (listed above)."
        for name in self.PRICE_FIELDS:
            self.fields[name].required = False
        if self.instance.pk is None:
            for name in self.PRICE_FIELDS:
                self.initial[name] = None
        for name in ("input_price_per_million", "output_price_per_million"):
            self.fields[name].help_text = (
                "Per million tokens. Leave every price empty for the vendor's list prices of a "
                "catalogue model (catalog/pricing.py), else 0."
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or self.cleaned_data
        self._fill_prices(data)
        missing = [name for name in self.CATALOGUE_FIELDS if data.get(name) in (None, "")]
        if not missing:
            return data
        entry = catalogue_get(data.get("model_id") or "")
        if entry is None:
            for name in missing:
                self.add_error(name, "Required: this model is not in the built-in catalogue.")
            return data
        figures = {
            "context_window": entry.profile.context_window,
            "max_output_tokens": entry.profile.max_output_tokens,
            "tokenizer": entry.profile.tokenizer,
        }
        for name in missing:
            if figures[name] is None:
                self.add_error(name, f"Required: the catalogue declares no {name} ({entry.source}).")
            else:
                data[name] = figures[name]
                setattr(self.instance, name, figures[name])
        return data

    def _fill_prices(self, data: dict[str, Any]) -> None:
        """Every price left empty: the shipped list prices of a catalogue model; input and output
        prices left empty otherwise: zero (a model nobody priced costs nothing in the reports)."""
        shipped = catalogue_prices(data.get("model_id") or "")
        if shipped is not None and all(data.get(name) is None for name in self.PRICE_FIELDS):
            filled: dict[str, Any] = shipped.as_fields()
        else:
            filled = {
                name: Decimal(0)
                for name in ("input_price_per_million", "output_price_per_million")
                if data.get(name) is None
            }
        for name, value in filled.items():
            data[name] = value
            setattr(self.instance, name, value)


@admin.register(LlmModel)
class LlmModelAdmin(admin.ModelAdmin):
    form = LlmModelForm
    list_display = (
        "model_id", "provider", "context_window", "max_output_tokens", "tokenizer",
        "input_price_per_million", "output_price_per_million", "is_active",
    )  # fmt: skip
    list_filter = ("provider", "tokenizer", "is_active")
    search_fields = ("model_id",)
    list_select_related = ("provider",)
    readonly_fields = ("effective_capabilities",)
    # The catalogue's models are listed once, above the three figures they fill in.
    fieldsets = (
        (None, {"fields": ("provider", "model_id", "is_active")}),
        (
            "Window and tokenizer",
            {
                "description": "Left empty, these come from the built-in catalogue for its models: "
                + ", ".join(sorted(CATALOGUE))
                + ". A model outside it declares them.",
                "fields": ("context_window", "max_output_tokens", "tokenizer"),
            },
        ),
        (
            "Request shape",
            {
                "fields": (
                    "token_parameter",
                    "accepts_sampling",
                    "system_role",
                    "prompt_cache_min_tokens",
                    "effective_capabilities",
                )
            },
        ),
        ("Embeddings", {"fields": ("embeds", "embedding_dimensions")}),
        ("Prices", {"fields": LlmModelForm.PRICE_FIELDS}),
    )

    @admin.display(description="Capabilities in effect")
    def effective_capabilities(self, obj: LlmModel) -> str:
        capabilities = obj.capabilities
        sampling = "accepted" if capabilities.sampling else "left out"
        cache = capabilities.cache_min_tokens
        return (
            f"{capabilities.token_parameter}; sampling parameters {sampling}; "
            f"system message as {capabilities.system_role}; "
            f"cached prefix from {f'{cache:,} tokens' if cache else 'the adapter default'}"
        )


class ConfigurationFallbackInline(admin.TabularInline):
    model = ConfigurationFallback
    extra = 0
    ordering = ("position",)


@admin.register(Configuration)
class ConfigurationAdmin(DeclassifyActions, DraftAdmin, ClassifiedAdmin):
    """A change is saved as a draft; Publish makes it live (``governance.drafts_admin``). The
    fallback inline is saved live: it routes, it is not context."""

    form = ConfigurationForm
    publish_permission = "catalog.publish_configuration"
    list_display = (
        "identifier",
        "name",
        "model",
        "serving_zone",
        "system_prompt_data_class",
        "system_prompt_ceiling",
        "system_prompt_enforcement",
        "is_active",
        "has_draft",
        "preview_link",
    )
    list_filter = ("system_prompt_enforcement", "system_prompt_data_class", "is_active", HasDraftFilter)
    search_fields = ("identifier", "name")
    inlines = [ConfigurationFallbackInline]
    actions = ["promote_to_enforce", *DECLASSIFY_ACTIONS]
    readonly_fields = ("tokens", "answers_deliverable_to")

    class Media:
        js = ("context_assembly/live_token_badge.js",)

    fieldsets = (
        (None, {"fields": ("identifier", "name", "model", "is_active")}),
        ("Snippets", {"fields": ("snippet_tags",)}),
        (
            "System prompt",
            {
                "fields": (
                    "system_prompt",
                    "tokens",
                    "system_prompt_data_class",
                    "system_prompt_ceiling",
                    "system_prompt_enforcement",
                    "allow_system_override",
                )
            },
        ),
        ("Skills", {"fields": ("skill_list", "skill_mode", "skill_trust_floor")}),
        (
            "Tools",
            {"fields": ("allowed_tool_groups", "allowed_tools", "untrusted_action", "quarantine_untrusted")},
        ),
        ("Run limits", {"fields": ("max_iterations", "context_usage_note")}),
        (
            "Compaction",
            {"fields": ("context_strategy", "compaction_threshold", "compaction_keep", "summary_model")},
        ),
        # Declassifying answers is an action (privileged, recorded), never a form field.
        ("Information flow", {"fields": ("answers_deliverable_to", "trusted_model")}),
        ("Publishing", {"fields": ("require_passing_evaluation", "require_no_regression")}),
    )

    def get_queryset(self, request: HttpRequest) -> QuerySet[Configuration]:
        return (
            super()
            .get_queryset(request)
            .select_related("model__provider")
            .prefetch_related("fallback_links__model__provider")
        )

    def get_urls(self) -> list[URLPattern]:
        preview = path(
            "<path:object_id>/preview/",
            self.admin_site.admin_view(self.preview),
            name="catalog_configuration_preview",
        )
        # Serves the snippet form too (its template names it): the figures need configurations.
        badge = path("live-badge/", self.admin_site.admin_view(self.live_badge), name="catalog_live_badge")
        evaluate = path(
            "<path:object_id>/evaluate/",
            self.admin_site.admin_view(self.evaluate),
            name="catalog_configuration_evaluate",
        )
        return [badge, preview, evaluate, *super().get_urls()]

    def live_badge(self, request: HttpRequest) -> HttpResponse:
        return live_badge_view(self, request)

    @admin.display(description="Tokens")
    def tokens(self, obj: Configuration) -> str:
        """The system prompt's cost for the configuration's own model; live while typing (with JS)."""
        badge = system_prompt_badge(text=obj.system_prompt, configuration=obj) if obj.system_prompt else None
        return badge.label if badge else NO_BADGE

    def preview(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return preview_view(self, request, object_id)

    def evaluate(self, request: HttpRequest, object_id: str) -> HttpResponse:
        return evaluate_view(self, request, object_id)

    @admin.display(description="Preview")
    def preview_link(self, obj: Configuration) -> str:
        url = reverse("admin:catalog_configuration_preview", args=[obj.pk])
        return format_html('<a href="{}">Preview context</a>', url)

    @admin.display(description="Serving zone")
    def serving_zone(self, obj: Configuration) -> str:
        return configuration_zone(obj).label

    def live_save(
        self, request: HttpRequest, obj: Configuration, *, values: dict[str, Any] | None, reason: str
    ) -> None:
        actor = request_actor(request)
        history_stamp(obj, actor=actor, reason=reason)
        skill_ids = values.get("skill_list") if values else None
        configuration_save(configuration=obj, actor=actor, skill_ids=skill_ids)

    def field_text(self, obj: Configuration, name: str, values: dict[str, Any] | None) -> str:
        if name != "skill_list":
            return super().field_text(obj, name, values)
        if values is None:
            return skill_names([link.skill_id for link in obj.skill_links.order_by("position")])
        return skill_names(values[name])


class ApiClientForm(forms.ModelForm):
    scopes = StringListField(
        label="Scopes",
        unknown=lambda names: [name for name in names if name not in SCOPES],
        known=lambda: SCOPES,
        what="scopes",
        help_text=f"Comma-separated. No scope: the client may do nothing. Scopes: {', '.join(SCOPES)}.",
    )

    class Meta:
        model = ApiClient
        fields = (
            "name", "scopes", "configurations", "default_input_data_class", "trust_zone", "daily_token_limit",
            "daily_cost_limit", "is_active",
        )  # fmt: skip


@admin.register(ApiClient)
class ApiClientAdmin(admin.ModelAdmin):
    form = ApiClientForm
    list_display = (
        "name",
        "token_prefix",
        "scope_list",
        "trust_zone",
        "default_input_data_class",
        "daily_token_limit",
        "daily_cost_limit",
        "is_active",
        "created_at",
    )
    list_filter = ("is_active", "trust_zone")
    search_fields = ("name", "token_prefix")
    readonly_fields = ("token_prefix", "token_digest", "created_at", "budget_today")
    filter_horizontal = ("configurations",)

    @admin.display(description="Scopes")
    def scope_list(self, obj: ApiClient) -> str:
        return names_text(obj.scopes)

    @admin.display(description="Today's budget (UTC)")
    def budget_today(self, obj: ApiClient) -> str:
        """Today's consumption against the limits (agents/runtime/budget.py): figures only."""
        if obj.pk is None:
            return "-"
        return budget_summary(budget_status(obj))

    def has_add_permission(self, request: HttpRequest) -> bool:
        # Tokens are issued by `manage.py create_api_client`, which shows the token once.
        return False
