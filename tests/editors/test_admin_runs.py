"""Run pages: read-only, with per-step context usage; cancel is the only action and it is logged."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.contrib.admin.models import LogEntry

from agents.models import AgentRun, AgentStep, RunStatus
from agents.services import run_create
from governance.vocabulary import DataClass
from snippets.models import Snippet
from tests.agents.runs import fake_configuration, run_to_end
from tests.editor_accounts import editor_make
from tests.factories import configuration_make, snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def finished_run(fake_provider, django_capture_on_commit_callbacks):
    fake_provider.script(
        replace(Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})), prompt_tokens=1234),
        Reply(text="done", prompt_tokens=1500),
    )
    return run_to_end(django_capture_on_commit_callbacks, fake_configuration(fake_provider))


def queued_run() -> AgentRun:
    return run_create(
        configuration=configuration_make(), input_text="Hello", input_data_class=DataClass.PUBLIC_CONTENT
    )


def test_run_page_shows_usage_per_step_against_the_window(admin_client, finished_run):
    response = admin_client.get(f"/admin/agents/agentrun/{finished_run.pk}/change/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "1,500 of 128,000 (provider reported, gpt-4o)" in html
    assert "<title>Step 0: 1,234 of 128,000 tokens (0.96% of the window), provider reported</title>" in html
    assert "<title>Step 1: 1,500 of 128,000 tokens (1.2% of the window), provider reported</title>" in html
    assert ">Context used (tokens)</text>" in html and ">Share of the window</text>" in html
    assert ">1,500</text>" in html  # the tick at the top of the axis, and step 1's figure
    assert "The window, 128,000 tokens, is above this scale" in html
    assert 'name="_save"' not in html  # read-only


def test_the_run_page_shows_its_status_once(admin_client, finished_run):
    html = admin_client.get(f"/admin/agents/agentrun/{finished_run.pk}/change/").content.decode()
    assert '<div class="readonly">Completed</div>' in html
    run_fields = html.split("js-inline-admin-formset")[0]  # before the steps' table
    assert run_fields.count(">Completed<") == 1
    assert "(completed)" not in html and "Termination reason" not in html
    assert f"<h2>run {finished_run.pk}</h2>" in html


def test_a_run_that_ended_otherwise_says_why_beside_its_status(admin_client):
    run = queued_run()
    AgentRun.objects.filter(pk=run.pk).update(status=RunStatus.FAILED, termination_reason="policy_denied")
    html = admin_client.get(f"/admin/agents/agentrun/{run.pk}/change/").content.decode()
    assert '<div class="readonly">Failed: Refused by governance</div>' in html
    listing = admin_client.get("/admin/agents/agentrun/").content.decode()
    assert '<td class="field-outcome">Failed: Refused by governance</td>' in listing


def test_run_list_shows_status_and_steps(admin_client, finished_run):
    html = admin_client.get("/admin/agents/agentrun/").content.decode()
    run = finished_run
    assert (
        f'<th class="field-short_id"><a href="/admin/agents/agentrun/{run.pk}/change/">'
        f'<span title="{run.pk}">{str(run.pk)[:8]}</span></a></th>'
    ) in html
    assert '<td class="field-outcome">Completed</td>' in html
    assert '<td class="field-step_count">2</td>' in html
    assert (
        '<td class="field-context_used">1,500 of 128,000<br><small>provider reported, gpt-4o</small></td>'
    ) in html
    tokens = f"{run.prompt_tokens_total:,} in<br>{run.completion_tokens_total:,} out"
    assert f'<td class="field-tokens">{tokens}</td>' in html


def test_step_page_draws_the_breakdown(admin_client, finished_run):
    step = AgentStep.objects.get(run=finished_run, index=1)
    html = admin_client.get(f"/admin/agents/agentstep/{step.pk}/change/").content.decode()
    assert 'id="budget-bar"' in html
    assert f'<td class="num">{step.breakdown["window"]}</td>' in html
    assert f"Transcript: {step.breakdown['transcript']} tokens" in html


def test_runs_cannot_be_added_changed_or_deleted(admin_client, finished_run):
    assert admin_client.get("/admin/agents/agentrun/add/").status_code == 403
    assert admin_client.post(f"/admin/agents/agentrun/{finished_run.pk}/delete/").status_code == 403
    admin_client.post(f"/admin/agents/agentrun/{finished_run.pk}/change/", {"status": "failed"})
    finished_run.refresh_from_db()
    assert finished_run.status == RunStatus.COMPLETED


def test_cancel_action_cancels_a_queued_run_and_logs_it(admin_client, finished_run):
    run = queued_run()
    response = admin_client.post(
        "/admin/agents/agentrun/",
        {"action": "cancel_runs", "_selected_action": [str(run.pk), str(finished_run.pk)]},
        follow=True,
    )
    run.refresh_from_db()
    assert (run.status, run.termination_reason, run.cancel_requested) == ("cancelled", "cancelled", True)
    assert [str(m) for m in response.context["messages"]] == [
        f"Run {finished_run.pk} has already finished (completed).",
        "Cancel requested for 1 run(s).",
    ]
    assert list(LogEntry.objects.values_list("object_id", "change_message")) == [
        (str(run.pk), "Cancel requested.")
    ]
    finished_run.refresh_from_db()
    assert finished_run.cancel_requested is False


def test_editors_see_runs_but_cannot_cancel_them(client):
    run = queued_run()
    client.force_login(editor_make())
    assert client.get(f"/admin/agents/agentrun/{run.pk}/change/").status_code == 200
    response = client.post(
        "/admin/agents/agentrun/", {"action": "cancel_runs", "_selected_action": [str(run.pk)]}
    )
    run.refresh_from_db()
    # Cancel is not among the actions offered to editors (making cases is): "No action selected".
    assert (response.status_code, response.url) == (302, "/admin/agents/agentrun/")
    assert (run.status, run.cancel_requested) == ("queued", False)
    assert LogEntry.objects.count() == 0


def test_run_page_lists_the_versions_the_run_and_each_step_used(
    admin_client, fake_provider, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, snippet_tags=["tone"])
    snippet = snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    fake_provider.script(Reply(text="done"))
    run = run_to_end(django_capture_on_commit_callbacks, configuration)
    version = Snippet.history.filter(id=snippet.pk).latest("history_id").history_id
    configured = configuration.history.latest("history_id").history_id

    html = admin_client.get(f"/admin/agents/agentrun/{run.pk}/change/").content.decode()

    listed = f"configuration {configuration.identifier} @ {configured}; snippet tone @ {version}"
    assert html.count(listed) == 2  # the run's pins, and the one step's


def test_a_steps_receipt_reads_as_a_table(admin_client, finished_run):
    step = finished_run.steps.get(index=1)
    receipt = step.receipt
    html = admin_client.get(f"/admin/agents/agentstep/{step.pk}/change/").content.decode()
    table = html.split('<table class="receipt">')[1].split("</table>")[0]
    rows = dict(re.findall(r'<tr><th scope="row">([^<]+)</th><td>([^<]*)</td></tr>', table))
    assert rows["Decision"] == receipt["decision_id"]
    assert rows["Model"] == f"{receipt['provider']}/{receipt['model']}"
    assert rows["Zone of the call"] == "Local"  # the fake provider's zone
    assert rows["Reply&#x27;s label"] == "Editor content"  # the tool result it read
    assert rows["Redacted in the reply"] == "none"
    sources = html.split('<table class="receipt-sources">')[1].split("</table>")[0]
    cells = re.findall(r"<tr><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", sources)
    assert ("Task input", "task_input", "Public content") in cells
    assert len(cells) == len(receipt["sources"])
    assert '"decision_id"' not in html and "{&#x27;decision_id" not in html  # no JSON left


def test_an_unknown_receipt_key_is_shown_by_its_name():
    from agents.receipt_table import receipt_table

    table = receipt_table({"decision_id": "d1", "zone": "local", "cache": {"hit": True}})
    assert ("cache", '{"hit": true}') in table.rows
    assert ("Zone of the call", "Local") in table.rows and ("Redacted in what was sent", "none") in table.rows
