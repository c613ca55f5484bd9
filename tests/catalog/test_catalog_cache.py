"""The catalogue token and the per-worker cache of what a configuration resolves to.

A worker reuses a configuration's snippet selection, skill block, fallbacks and disabled tools while
the catalogue token read with the configuration is unchanged. These tests hold the triggers to every
write path that could otherwise leave a worker sending what an editor has since reclassified.
"""

from __future__ import annotations

import importlib
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import AgentRun
from agents.runtime.caches import caches_clear
from agents.runtime.leases import lease_claim
from agents.runtime.parts import snippet_selection
from agents.runtime.plan import send_plan
from agents.runtime.request import SendRequest
from agents.runtime.step import step_run
from agents.services import run_create
from catalog.models import CatalogVersion, Configuration, ConfigurationFallback, LlmModel, Provider
from catalog.selectors import catalog_token_of, with_catalog_token
from governance.models import GovernanceEvent
from governance.vocabulary import DataClass, TrustZone
from skills.models import Skill, SkillSource
from snippets.models import Snippet, Tag
from tests.agents.runs import fake_configuration
from tests.factories import configuration_skills_set, model_make, provider_make, skill_make, snippet_make
from tests.fakes.provider_server import Reply
from tools.models import ToolSetting

pytestmark = pytest.mark.django_db

MIGRATION = importlib.import_module("agents.migrations.0006_catalog_version")
CAPABILITIES_MIGRATION = importlib.import_module("catalog.migrations.0009_llmmodel_thinking")
CALIBRATION_COLUMNS = {"calibration_factor", "calibration_samples", "calibration_updated_at"}


def token() -> str:
    return CatalogVersion.objects.get(id=1).token


def changes_token(write) -> bool:
    before = token()
    write()
    return token() != before


def _configuration_with_everything(fake_provider, tmp_path) -> Configuration:
    configuration = fake_configuration(
        fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"], system_prompt=""
    )
    snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    configuration_skills_set(configuration, [skill_make(tmp_path)])
    ConfigurationFallback.objects.create(
        configuration=configuration, model=model_make(model_id="fallback-model"), position=0
    )
    return configuration


def test_every_write_path_of_the_catalogue_changes_the_token(fake_provider, tmp_path):
    configuration = _configuration_with_everything(fake_provider, tmp_path)
    snippet = Snippet.objects.get(identifier="tone")
    writes = {
        "snippet saved": lambda: snippet.save(),
        "snippet bulk update": lambda: Snippet.objects.update(data_class=DataClass.SECRET_ADJACENT),
        "tag added": lambda: Tag.objects.create(name="new-tag"),
        "snippet tagged": lambda: snippet.tags.add(Tag.objects.get(name="new-tag")),
        "snippet untagged": lambda: snippet.tags.clear(),
        "skill disabled by bulk update": lambda: Skill.objects.update(is_enabled=False),
        "skill source retrusted": lambda: SkillSource.objects.update(trust_level="untrusted"),
        "provider rezoned": lambda: Provider.objects.update(trust_zone=TrustZone.LOCAL),
        "model window changed": lambda: LlmModel.objects.update(context_window=64_000),
        "model capabilities changed": lambda: LlmModel.objects.update(
            token_parameter="max_completion_tokens", accepts_sampling=False
        ),
        "configuration saved": lambda: Configuration.objects.filter(pk=configuration.pk).update(
            snippet_tags=[]
        ),
        "skill unlinked": lambda: configuration.skill_links.all().delete(),
        "fallback unlinked": lambda: configuration.fallback_links.all().delete(),
        "tool disabled": lambda: ToolSetting.objects.create(name="snippets_by_tag", is_enabled=False),
        "tool setting deleted": lambda: ToolSetting.objects.all().delete(),
        "snippet deleted": lambda: Snippet.objects.all().delete(),
    }
    unchanged = [name for name, write in writes.items() if not changes_token(write)]
    assert unchanged == []


def test_a_calibration_update_leaves_the_token_alone(fake_provider):
    fake_configuration(fake_provider)
    assert not changes_token(lambda: LlmModel.objects.update(calibration_factor=1.2, calibration_samples=3))


def test_the_model_trigger_watches_every_column_but_calibration():
    watched = set(CAPABILITIES_MIGRATION.LLMMODEL_COLUMNS)
    columns = {field.column for field in LlmModel._meta.concrete_fields}
    assert watched == columns - CALIBRATION_COLUMNS


def _tables(sql: str) -> set[str]:
    return set(re.findall(r'(?:FROM|JOIN)\s+"(\w+)"', sql))


def test_resolving_a_configuration_reads_only_tables_the_triggers_watch(fake_provider, tmp_path):
    configuration = _configuration_with_everything(fake_provider, tmp_path)
    caches_clear()
    loaded = with_catalog_token(Configuration.objects.select_related("model__provider")).get(
        pk=configuration.pk
    )
    with CaptureQueriesContext(connection) as queries:
        send_plan(
            configuration=loaded, request=SendRequest(task_input="Hi", input_data_class="public_content")
        )
    read = set().union(*(_tables(query["sql"]) for query in queries.captured_queries))
    assert read  # the miss did resolve from the database
    assert read - set(MIGRATION.CATALOG_TABLES) == set()


def test_a_configuration_read_with_its_token_is_resolved_once_per_token(fake_provider, tmp_path):
    configuration = _configuration_with_everything(fake_provider, tmp_path)
    request = SendRequest(task_input="Hi", input_data_class="public_content")

    def plan_queries() -> int:
        loaded = with_catalog_token(Configuration.objects.select_related("model__provider")).get(
            pk=configuration.pk
        )
        assert catalog_token_of(loaded) == token()
        with CaptureQueriesContext(connection) as queries:
            send_plan(configuration=loaded, request=request)
        return len(queries.captured_queries)

    first = plan_queries()
    assert first > 0
    assert plan_queries() == 0
    Snippet.objects.update(text="Write briskly.")
    assert plan_queries() == first


def test_a_configuration_without_a_token_is_resolved_at_every_send(fake_provider, tmp_path):
    configuration = _configuration_with_everything(fake_provider, tmp_path)
    request = SendRequest(task_input="Hi", input_data_class="public_content")
    loaded = Configuration.objects.select_related("model__provider").get(pk=configuration.pk)
    assert catalog_token_of(loaded) is None
    send_plan(configuration=loaded, request=request)
    with CaptureQueriesContext(connection) as queries:
        send_plan(configuration=loaded, request=request)
    assert len(queries.captured_queries) > 0


def test_a_snippet_reclassified_between_steps_is_refused_at_the_next_step(
    fake_provider, django_capture_on_commit_callbacks
):
    """Step 0 resolves (and caches) the configuration; an editor then reclassifies its snippet as
    secret-adjacent; step 1 must see that and refuse before any request, not reuse the cached parts."""
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL, snippet_tags=["tone"])
    snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="never"))
    with django_capture_on_commit_callbacks(execute=False):
        run = run_create(configuration=configuration, input_text="Go.", input_data_class="public_content")
    with django_capture_on_commit_callbacks(execute=False):
        assert step_run(run_id=str(run.id), step_index=0, worker="w1").action == "advanced"
    assert len(fake_provider.requests) == 1

    Snippet.objects.filter(identifier="tone").update(
        data_class=DataClass.SECRET_ADJACENT, ceiling=TrustZone.LOCAL
    )
    outcome = step_run(run_id=str(run.id), step_index=1, worker="w1")

    assert outcome.reason == "policy_denied"
    assert len(fake_provider.requests) == 1
    event = GovernanceEvent.objects.get(decision="context_blocked")
    assert (event.source_kind, event.source_identifier, event.outcome) == ("snippet", "tone", "enforced")
    assert AgentRun.objects.get(id=run.id).termination_reason == "policy_denied"


def _new_run(configuration: Configuration) -> str:
    return str(
        run_create(configuration=configuration, input_text="Go.", input_data_class="public_content").id
    )


def test_a_claim_is_one_statement_once_its_configuration_is_held(fake_provider):
    configuration = fake_configuration(fake_provider)
    first, second = _new_run(configuration), _new_run(configuration)
    assert lease_claim(run_id=first, step_index=0, worker="w1").claimed
    with CaptureQueriesContext(connection) as queries:
        claim = lease_claim(run_id=second, step_index=0, worker="w1")
        identifier = claim.run.configuration.model.provider.identifier
    assert len(queries.captured_queries) == 1
    assert (claim.run.status, claim.run.lease_owner, claim.run.next_step_index) == ("running", "w1", 0)
    assert catalog_token_of(claim.run.configuration) == token()
    assert identifier == configuration.model.provider.identifier


def test_a_claim_reads_the_current_calibration_without_changing_the_held_configuration(fake_provider):
    configuration = fake_configuration(fake_provider)
    runs = [_new_run(configuration) for _ in range(3)]
    models = []
    for factor, run_id in zip((1.0, 1.25, 0.8), runs, strict=True):
        LlmModel.objects.filter(pk=configuration.model_id).update(
            calibration_factor=factor, calibration_samples=7
        )
        models.append(lease_claim(run_id=run_id, step_index=0, worker="w1").run.configuration.model)
    assert [(m.calibration_factor, m.calibration_samples) for m in models] == [(1.0, 7), (1.25, 7), (0.8, 7)]
    assert len({id(m) for m in models}) == 3


def test_without_a_token_row_nothing_is_cached(fake_provider, tmp_path):
    configuration = _configuration_with_everything(fake_provider, tmp_path)
    CatalogVersion.objects.all().delete()
    claim = lease_claim(run_id=_new_run(configuration), step_index=0, worker="w1")
    assert catalog_token_of(claim.run.configuration) is None
    request = SendRequest(task_input="Hi", input_data_class="public_content")
    send_plan(configuration=claim.run.configuration, request=request)
    with CaptureQueriesContext(connection) as queries:
        send_plan(configuration=claim.run.configuration, request=request)
    assert len(queries.captured_queries) > 0


def test_the_zone_uses_the_cached_fallbacks(fake_provider):
    configuration = fake_configuration(fake_provider, zone=TrustZone.LOCAL)
    ConfigurationFallback.objects.create(
        configuration=configuration,
        model=model_make(provider=provider_make(trust_zone=TrustZone.EXTERNAL_EU), model_id="eu-model"),
        position=0,
    )
    loaded = with_catalog_token(Configuration.objects.select_related("model__provider")).get(
        pk=configuration.pk
    )
    plan = send_plan(
        configuration=loaded, request=SendRequest(task_input="Hi", input_data_class="public_content")
    )
    assert plan.zone == TrustZone.EXTERNAL_EU
    assert [model.model_id for model in plan.fallbacks] == ["eu-model"]


def test_the_tool_lookup_is_cached_per_token_and_sees_every_write():
    snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    first = snippet_selection(["tone"], token())
    assert snippet_selection(["tone"], token()) is first
    Snippet.objects.filter(identifier="tone").update(text="Write briskly.")
    assert [s.text for s in snippet_selection(["tone"], token()).snippets] == ["Write briskly."]
    assert [s.text for s in first.snippets] == ["Write warmly."]
