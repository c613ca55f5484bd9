"""Costs per day (UTC), API client and configuration: the report, its command and its admin page."""

from __future__ import annotations

import datetime
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management import CommandError, call_command

from agents.models import AgentRun, AgentStep
from agents.services import send_request_build
from catalog.services import api_client_create
from config.logs import log_context
from editors.cost_report import cost_report
from gateway.models import CompletionRecord
from gateway.services import CompletionCall
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration, run_to_end
from tests.editor_accounts import EDITOR_PASSWORD
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db

DAY_ONE, DAY_TWO = datetime.date(2026, 3, 1), datetime.date(2026, 3, 2)
PRICES = {"model_input_price_per_million": Decimal("2"), "model_output_price_per_million": Decimal("8")}


def _on(day: datetime.date, hour: int = 12) -> datetime.datetime:
    return datetime.datetime.combine(day, datetime.time(hour), tzinfo=datetime.UTC)


@pytest.fixture
def ledger(fake_provider, django_capture_on_commit_callbacks):
    """Day one: alpha's run (2 steps) and alpha's completion on `support`, beta's completion on
    `sales`, and a client-less run on `sales`. Day two: one more completion of alpha's."""
    support = fake_configuration(fake_provider, identifier="support", **PRICES)
    sales = fake_configuration(fake_provider, identifier="sales", **PRICES)
    alpha = api_client_create(name="alpha", scopes=["configurations:use"]).client
    beta = api_client_create(name="beta", scopes=["configurations:use"]).client
    tool_turn = Reply.tools(("call-1", "snippets_by_tag", {"tag": "tone"}))
    fake_provider.script(
        Reply(tool_calls=tool_turn.tool_calls, prompt_tokens=100, completion_tokens=10),
        Reply(text="Done.", prompt_tokens=300, cached_tokens=200, completion_tokens=20),
    )
    alpha_run = run_to_end(django_capture_on_commit_callbacks, support, api_client=alpha)
    fake_provider.script(Reply(text="Done.", prompt_tokens=50, completion_tokens=5))
    loose_run = run_to_end(django_capture_on_commit_callbacks, sales)
    for client, configuration, prompt in ((alpha, support, 1_000), (beta, sales, 10), (alpha, support, 7)):
        fake_provider.script(Reply(text="Answer.", prompt_tokens=prompt, completion_tokens=1))
        request = send_request_build(
            input_text="Hello.", input_data_class=DataClass.PUBLIC_CONTENT, api_client=client
        )
        with log_context():  # as a request would: the call's correlation id ends with it
            CompletionCall(configuration=configuration, api_client=client, request=request).create()
    AgentStep.objects.filter(run__in=[alpha_run, loose_run]).update(created_at=_on(DAY_ONE, 23))
    records = list(CompletionRecord.objects.order_by("id"))
    CompletionRecord.objects.filter(pk__in=[r.pk for r in records[:2]]).update(created_at=_on(DAY_ONE, 0))
    CompletionRecord.objects.filter(pk=records[2].pk).update(created_at=_on(DAY_TWO, 0))
    return alpha_run, loose_run


EXPECTED_ROWS = [
    # (day, client, configuration, calls, prompt, cached, written, completion, cost)
    # alpha/support on day one: steps 100+300 prompt (200 cached), 10+20 out; a 1,000-token completion.
    # Cost: (100 + 300 + 1,000) x 2 + (10 + 20 + 1) x 8 = 3,048 per million (no cached-input price).
    (DAY_ONE, "", "sales", 1, 50, 0, 0, 5, "0.0001400000"),
    (DAY_ONE, "alpha", "support", 3, 1_400, 200, 0, 31, "0.0030480000"),
    (DAY_ONE, "beta", "sales", 1, 10, 0, 0, 1, "0.0000280000"),
    (DAY_TWO, "alpha", "support", 1, 7, 0, 0, 1, "0.0000220000"),
]


def _rows(report) -> list[tuple]:
    return [
        (
            row.day, row.client, row.configuration, row.calls, row.prompt_tokens, row.cached_tokens,
            row.cache_write_tokens, row.completion_tokens, str(row.cost),
        )
        for row in report.rows
    ]  # fmt: skip


def test_the_report_sums_steps_and_completions_per_day_client_and_configuration(ledger):
    report = cost_report(start=DAY_ONE, end=DAY_TWO)
    assert _rows(report) == EXPECTED_ROWS
    assert report.total_calls == 6
    assert report.total_cost == Decimal("0.0032380000")
    assert _rows(cost_report(start=DAY_TWO, end=DAY_TWO)) == EXPECTED_ROWS[3:]
    assert (
        cost_report(start=DAY_ONE - datetime.timedelta(days=1), end=DAY_ONE - datetime.timedelta(days=1)).rows
        == ()
    )


def test_refused_and_failed_steps_are_not_calls(ledger):
    alpha_run, _ = ledger
    AgentStep.objects.filter(run=alpha_run, index=1).update(status="failed")
    rows = cost_report(start=DAY_ONE, end=DAY_ONE).rows
    alpha = next(row for row in rows if row.client == "alpha")
    assert (alpha.calls, alpha.prompt_tokens, str(alpha.cost)) == (2, 1_100, "0.0022880000")


def test_the_command_prints_the_report_as_json(ledger):
    out = StringIO()
    call_command("cost_report", "--from", "2026-03-01", "--to", "2026-03-02", "--json", stdout=out)
    document = json.loads(out.getvalue())
    assert document["total"] == {"calls": 6, "cost": "0.0032380000"}
    assert document["rows"][1] == {
        "day": "2026-03-01",
        "client": "alpha",
        "configuration": "support",
        "calls": 3,
        "prompt_tokens": 1_400,
        "cached_tokens": 200,
        "cache_write_tokens": 0,
        "completion_tokens": 31,
        "cost": "0.0030480000",
    }
    assert [(row["day"], row["client"], row["configuration"]) for row in document["rows"]] == [
        (day.isoformat(), client, configuration) for day, client, configuration, *_ in EXPECTED_ROWS
    ]


def test_the_command_prints_a_table(ledger):
    out = StringIO()
    call_command("cost_report", "--from", "2026-03-02", "--to", "2026-03-02", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].split() == [
        "day", "client", "configuration", "calls", "prompt_tokens", "cached_tokens", "cache_write_tokens",
        "completion_tokens", "cost",
    ]  # fmt: skip
    assert lines[2].split() == ["2026-03-02", "alpha", "support", "1", "7", "0", "0", "1", "0.0000220000"]
    assert lines[-1] == "1 call(s) from 2026-03-02 to 2026-03-02; total cost 0.0000220000."


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (("--from", "2026-03-02", "--to", "2026-03-01"), "--from (2026-03-02) is after --to (2026-03-01)."),
        (("--from", "March"), "Not a day (YYYY-MM-DD): 'March'."),
    ],
)
def test_the_command_refuses_a_bad_range(arguments, message):
    with pytest.raises(CommandError) as raised:
        call_command("cost_report", *arguments, stdout=StringIO())
    assert str(raised.value) == message


def test_the_admin_cost_page_shows_the_same_rows(ledger, admin_client):
    assert AgentRun.objects.count() == 2
    page = admin_client.get("/admin/agents/agentrun/costs/", {"from": "2026-03-01", "to": "2026-03-02"})
    assert page.status_code == 200
    html = page.content.decode()
    assert "6 model call(s) from 2026-03-01 to 2026-03-02 (UTC days); total cost 0.0032380000." in html
    assert html.count('<tr data-day="') == 4
    assert (
        '<tr data-day="2026-03-01" data-client="alpha" data-configuration="support">' in html
        and '<td class="cost">0.0030480000</td>' in html
    )
    assert "/admin/agents/agentrun/costs/" in admin_client.get("/admin/agents/agentrun/").content.decode()


def test_the_admin_cost_page_reports_a_reversed_range_and_shows_the_default(admin_client):
    page = admin_client.get("/admin/agents/agentrun/costs/", {"from": "2026-03-02", "to": "2026-03-01"})
    assert page.status_code == 200
    assert "The first day is after the last day." in page.content.decode()


def test_the_admin_cost_page_is_for_staff_who_may_view_runs(client):
    assert client.get("/admin/agents/agentrun/costs/").status_code == 302  # to the login page
    staff = User.objects.create_user(username="staff", password=EDITOR_PASSWORD, is_staff=True)
    client.force_login(staff)
    assert client.get("/admin/agents/agentrun/costs/").status_code == 403
    staff.user_permissions.add(Permission.objects.get(codename="view_agentrun"))
    client.force_login(User.objects.get(pk=staff.pk))
    assert client.get("/admin/agents/agentrun/costs/").status_code == 200
