"""A database built before the catalogue, tools, gateway and evaluations became apps of their own
migrates without losing a row: the tables stay, the content types move with their ids, and a group's
permission on a moved model still grants it (docs/decisions/0031-apps-by-feature.md)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.contrib.contenttypes.models import ContentType

from agents.models import AgentRun
from catalog.models import ApiClient, Configuration
from evaluations.models import Evaluation, EvaluationCase
from gateway.models import StoredResponse
from tests.migration_helpers import migrate_to, migrate_to_latest
from tools.models import McpServer, ToolSetting

pytestmark = pytest.mark.usefixtures("on_both_databases")

# Every app at its last migration before the split; the new apps not migrated at all.
BEFORE = [
    ("agents", "0024_mcp_server_names_end_in_no_underscore"),
    ("catalog", None),
    ("tools", None),
    ("gateway", None),
    ("evaluations", None),
]
MOVED = {
    "catalog": ("provider", "llmmodel", "configuration", "apiclient", "historicalconfiguration"),
    "tools": ("mcpserver", "toolsetting"),
    "gateway": ("storedresponse", "completionrecord"),
    "evaluations": ("evaluationcase", "evaluation", "evaluationresult"),
}


def _old_rows(apps) -> dict[str, int]:
    """Rows as the code before the split wrote them, through its own (historical) models."""
    model = apps.get_model
    provider = model("agents", "Provider").objects.create(
        identifier="p", name="P", kind="local", trust_zone="local"
    )
    llm = model("agents", "LlmModel").objects.create(
        provider=provider, model_id="m", context_window=8192, max_output_tokens=1024, tokenizer="o200k_base"
    )
    configuration = model("agents", "Configuration").objects.create(
        identifier="kept",
        name="Kept",
        model=llm,
        system_prompt="Be brief.",
        system_prompt_data_class="public_content",
        system_prompt_ceiling="external_global",
    )
    client = model("agents", "ApiClient").objects.create(
        name="app", token_prefix="gc_", token_digest="d" * 64, scopes=["runs:create"], trust_zone="local"
    )
    client.configurations.add(configuration)
    run = model("agents", "AgentRun").objects.create(configuration=configuration, api_client=client)
    model("agents", "StoredResponse").objects.create(
        response_id="resp_kept",
        api_client=client,
        configuration=configuration,
        request_id="r1",
        label="public_content",
        receiver_label="public_content",
    )
    model("agents", "McpServer").objects.create(
        name="files", transport="stdio", command="true", trust_zone="local", data_class="public_content"
    )
    model("agents", "ToolSetting").objects.create(name="notify_editors", is_enabled=False)
    model("agents", "EvaluationCase").objects.create(
        configuration=configuration, name="tone", input="Hi", data_class="public_content"
    )
    model("agents", "Evaluation").objects.create(
        configuration=configuration,
        model=llm,
        started_by="editor",
        drafts=[{"kind": "agents.configuration", "identifier": "kept", "object_id": "1", "digest": "d"}],
    )
    return {"configuration": configuration.pk, "client": client.pk, "run": run.pk}


@pytest.mark.django_db(transaction=True)
def test_rows_permissions_and_content_types_survive_the_split():
    old_apps = migrate_to(BEFORE)
    assert set(
        ContentType.objects.filter(model__in=MOVED["catalog"]).values_list("app_label", flat=True)
    ) == {"agents"}
    pks = _old_rows(old_apps)
    content_type = ContentType.objects.get(app_label="agents", model="configuration")
    editors = Group.objects.create(name="publishers")
    editors.permissions.add(content_type.permission_set.get(codename="publish_configuration"))
    user = User.objects.create_user("editor")
    user.groups.add(editors)

    migrate_to_latest()

    configuration = Configuration.objects.get(pk=pks["configuration"])
    assert (configuration.identifier, configuration.model.provider.identifier) == ("kept", "p")
    client = ApiClient.objects.get(pk=pks["client"])
    assert list(client.configurations.values_list("identifier", flat=True)) == ["kept"]
    run = AgentRun.objects.select_related("configuration", "api_client").get(pk=pks["run"])
    assert (run.configuration.pk, run.api_client.pk) == (pks["configuration"], pks["client"])
    assert StoredResponse.objects.get(response_id="resp_kept").configuration.pk == pks["configuration"]
    assert list(McpServer.objects.values_list("name", flat=True)) == ["files"]
    assert list(ToolSetting.objects.values_list("name", "is_enabled")) == [("notify_editors", False)]
    assert EvaluationCase.objects.get(name="tone").configuration.pk == pks["configuration"]
    # A passing evaluation recorded before the split still names the draft it applied.
    assert Evaluation.objects.get().applied("catalog.configuration", "1", "d")
    for app_label, models in MOVED.items():
        assert set(ContentType.objects.filter(model__in=models).values_list("app_label", flat=True)) == {
            app_label
        }
    assert ContentType.objects.get(app_label="catalog", model="configuration").pk == content_type.pk
    assert not ContentType.objects.filter(app_label="agents", model="configuration").exists()
    assert User.objects.get(pk=user.pk).has_perm("catalog.publish_configuration")
