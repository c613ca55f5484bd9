"""Admin pages for providers, models and configurations, and the promote action."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.contrib.admin.models import LogEntry

from agents.models import ClientDailyUsage
from agents.runtime.budget import budget_day
from catalog.models import ApiClient, Configuration, LlmModel
from catalog.services import api_client_create
from governance.vocabulary import DataClass, Enforcement, TrustZone
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, provider_make

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("page", ["provider", "llmmodel", "configuration", "apiclient"])
def test_changelists_render(admin_client, page):
    configuration_make(identifier="shown")
    assert admin_client.get(f"/admin/catalog/{page}/").status_code == 200


def test_configuration_list_shows_the_serving_zone(admin_client):
    configuration_make(identifier="shown", zone=TrustZone.LOCAL, fallback_zones=(TrustZone.EXTERNAL_EU,))
    content = admin_client.get("/admin/catalog/configuration/").content.decode()
    assert "External (EU)" in content


def test_promote_action_enforces_declared_rows_and_reports_undeclared_ones(admin_client):
    declared = configuration_make(
        identifier="declared",
        system_prompt_data_class=DataClass.EDITOR_CONTENT,
        system_prompt_ceiling=TrustZone.EXTERNAL_GLOBAL,
        system_prompt_enforcement=Enforcement.OBSERVE,
    )
    undeclared = configuration_make(
        identifier="undeclared",
        system_prompt_data_class="",
        system_prompt_ceiling="",
        system_prompt_enforcement=Enforcement.OBSERVE,
    )
    response = admin_client.post(
        "/admin/catalog/configuration/",
        {"action": "promote_to_enforce", "_selected_action": [declared.pk, undeclared.pk]},
        follow=True,
    )
    messages = [str(m) for m in response.context["messages"]]
    assert messages == [
        "Promoted: declared.",
        "Not promoted undeclared: declare a data class and a ceiling first.",
    ]
    assert dict(Configuration.objects.values_list("identifier", "system_prompt_enforcement")) == {
        "declared": "enforce",
        "undeclared": "observe",
    }
    assert list(LogEntry.objects.values_list("object_repr", "change_message")) == [
        ("declared", "Promoted to enforce.")
    ]


def test_api_clients_cannot_be_added_in_admin(admin_client):
    assert admin_client.get("/admin/catalog/apiclient/add/").status_code == 403


MODEL_FORM = {
    "model_id": "gpt-4o-mini",
    "context_window": "",
    "max_output_tokens": "",
    "tokenizer": "",
    "input_price_per_million": "0",
    "output_price_per_million": "0",
    "is_active": "on",
}


def test_catalogue_model_figures_are_filled_in_when_left_empty(admin_client):
    provider = provider_make()
    response = admin_client.post("/admin/catalog/llmmodel/add/", {**MODEL_FORM, "provider": provider.pk})
    assert response.status_code == 302
    model = LlmModel.objects.get(model_id="gpt-4o-mini")
    assert (model.context_window, model.max_output_tokens, model.tokenizer) == (128_000, 16_384, "o200k_base")


@pytest.mark.parametrize(
    ("model_id", "figures"),
    [
        ("gpt-4o-2024-08-06", (128_000, 16_384, "o200k_base")),
        ("gpt-4o-mini-2024-07-18", (128_000, 16_384, "o200k_base")),
        ("gpt-4-turbo-2024-04-09", (128_000, 4_096, "cl100k_base")),
        ("claude-sonnet-4-5-20250929", (200_000, 64_000, "approximate")),
    ],
)
def test_a_dated_snapshot_takes_its_familys_figures(admin_client, model_id, figures):
    provider = provider_make()
    form = {**MODEL_FORM, "provider": provider.pk, "model_id": model_id}
    assert admin_client.post("/admin/catalog/llmmodel/add/", form).status_code == 302
    model = LlmModel.objects.get(model_id=model_id)
    assert (model.context_window, model.max_output_tokens, model.tokenizer) == figures


def test_a_model_page_shows_the_capabilities_in_effect(admin_client):
    provider = provider_make()
    form = {**MODEL_FORM, "provider": provider.pk, "model_id": "o3-mini-2025-01-31"}
    assert admin_client.post("/admin/catalog/llmmodel/add/", form).status_code == 302
    model = LlmModel.objects.get(model_id="o3-mini-2025-01-31")
    assert (model.token_parameter, model.accepts_sampling, model.system_role) == ("", None, "")
    page = admin_client.get(f"/admin/catalog/llmmodel/{model.pk}/change/").content.decode()
    assert (
        "max_completion_tokens; sampling parameters left out; system message as developer; "
        "cached prefix from the adapter default"
    ) in page


def test_declared_figures_win_over_the_catalogue(admin_client):
    provider = provider_make()
    form = {**MODEL_FORM, "provider": provider.pk, "context_window": "64000", "max_output_tokens": "4000"}
    admin_client.post("/admin/catalog/llmmodel/add/", form)
    model = LlmModel.objects.get(model_id="gpt-4o-mini")
    assert (model.context_window, model.max_output_tokens, model.tokenizer) == (64_000, 4_000, "o200k_base")


def test_prices_left_empty_are_the_catalogue_models_list_prices(admin_client):
    provider = provider_make()
    form = {
        **MODEL_FORM,
        "provider": provider.pk,
        "model_id": "claude-haiku-4-5",
        "input_price_per_million": "",
        "output_price_per_million": "",
    }
    assert admin_client.post("/admin/catalog/llmmodel/add/", form).status_code == 302
    model = LlmModel.objects.get(model_id="claude-haiku-4-5")
    assert (
        model.input_price_per_million,
        model.cached_input_price_per_million,
        model.cache_write_price_per_million,
        model.output_price_per_million,
    ) == (Decimal("1.00"), Decimal("0.10"), Decimal("1.25"), Decimal("5.00"))


def test_declared_prices_are_kept_and_an_unpriced_model_outside_the_catalogue_costs_nothing(admin_client):
    provider = provider_make()
    declared = {**MODEL_FORM, "provider": provider.pk, "input_price_per_million": "0.2"}
    assert admin_client.post("/admin/catalog/llmmodel/add/", declared).status_code == 302
    model = LlmModel.objects.get(model_id="gpt-4o-mini")
    assert (model.input_price_per_million, model.cached_input_price_per_million) == (Decimal("0.2"), None)
    unpriced = {
        **MODEL_FORM,
        "provider": provider.pk,
        "model_id": "in-house-7b",
        "context_window": "32000",
        "max_output_tokens": "2000",
        "tokenizer": "approximate",
        "input_price_per_million": "",
        "output_price_per_million": "",
    }
    assert admin_client.post("/admin/catalog/llmmodel/add/", unpriced).status_code == 302
    model = LlmModel.objects.get(model_id="in-house-7b")
    assert (model.input_price_per_million, model.output_price_per_million) == (Decimal(0), Decimal(0))


@pytest.mark.parametrize("model_id", ["in-house-7b", "gpt-4o-evil", "gpt-4o-2024-13-01"])
def test_a_model_outside_the_catalogue_must_declare_its_figures(admin_client, model_id):
    provider = provider_make()
    response = admin_client.post(
        "/admin/catalog/llmmodel/add/", {**MODEL_FORM, "provider": provider.pk, "model_id": model_id}
    )
    assert response.status_code == 200
    assert response.content.decode().count("Required: this model is not in the built-in catalogue.") == 3
    assert not LlmModel.objects.filter(model_id=model_id).exists()


def test_staff_set_an_api_clients_trust_zone_and_editors_cannot(admin_client, client):
    issued = api_client_create(name="consumer", scopes=["snippets:read"])
    url = f"/admin/catalog/apiclient/{issued.client.pk}/change/"
    form = admin_client.get(url).context["adminform"].form
    assert form.initial["trust_zone"] == "external_global"
    data = {
        "name": "consumer",
        "scopes": '["snippets:read"]',
        "default_input_data_class": "editor_content",
        "trust_zone": "private_hosted",
        "is_active": "on",
    }
    assert admin_client.post(url, data).status_code == 302
    assert ApiClient.objects.get(pk=issued.client.pk).trust_zone == "private_hosted"

    client.force_login(editor_make())
    assert client.post(url, {**data, "trust_zone": "local"}).status_code == 403
    assert ApiClient.objects.get(pk=issued.client.pk).trust_zone == "private_hosted"


def test_staff_set_an_api_clients_daily_limits_and_see_todays_figures(admin_client):
    issued = api_client_create(name="consumer", scopes=["configurations:use"])
    ClientDailyUsage.objects.create(
        client=issued.client,
        day=budget_day(),
        tokens_used=1234,
        tokens_reserved=200,
        cost_used=Decimal("0.5"),
    )
    url = f"/admin/catalog/apiclient/{issued.client.pk}/change/"
    data = {
        "name": "consumer",
        "scopes": '["configurations:use"]',
        "default_input_data_class": "editor_content",
        "trust_zone": "external_global",
        "daily_token_limit": "100000",
        "daily_cost_limit": "2.5",
        "is_active": "on",
    }

    assert admin_client.post(url, data).status_code == 302

    client = ApiClient.objects.get(pk=issued.client.pk)
    assert (client.daily_token_limit, client.daily_cost_limit) == (100_000, Decimal("2.5"))
    page = admin_client.get(url).content.decode()
    day = budget_day().isoformat()
    assert (
        f"{day}: tokens 1,234 used + 200 reserved of 100,000; cost 0.5000000000 used + 0.0000000000 "
        "reserved of 2.5000000000; resets"
    ) in page
    assert (
        admin_client.post(url, {**data, "daily_token_limit": "", "daily_cost_limit": ""}).status_code == 302
    )
    client.refresh_from_db()
    assert (client.daily_token_limit, client.daily_cost_limit) == (None, None)
