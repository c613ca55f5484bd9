"""Per-client daily budgets over the API (agents/runtime/budget.py): a send reserves its estimate
before anything leaves and settles with the provider-reported usage after; a send that does not fit
is a 429 ``budget_exhausted`` with the reset time, and nothing reaches the provider.

Prices: 2.50 per million prompt tokens, 10 per million completion tokens, so a reply of 120 prompt
and 30 completion tokens costs 0.0003 + 0.0003 = 0.0006 exactly.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import replace
from decimal import Decimal

import pytest
from django.utils import timezone
from prometheus_client import REGISTRY

from agents.models import AgentRun, ClientDailyUsage
from agents.runtime.budget import budget_day
from catalog.models import ApiClient
from gateway.models import CompletionRecord
from governance.models import GovernanceEvent
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply
from tests.gateway.conftest import assert_error

pytestmark = pytest.mark.django_db

COMPLETIONS = "/api/v1/completions"
PREVIEW = "/api/v1/context/preview"
CHAT = "/api/openai/v1/chat/completions"
BUDGET = "/api/v1/budget"
MAX_TOKENS = 200


@pytest.fixture
def configuration(fake_provider):
    return fake_configuration(
        fake_provider,
        model_input_price_per_million=Decimal("2.50"),
        model_output_price_per_million=Decimal("10"),
    )


@pytest.fixture
def caller(make_caller, configuration):
    return make_caller("configurations:use", configurations=(configuration,))


def limits(caller, *, tokens: int | None = None, cost: str | None = None) -> None:
    ApiClient.objects.filter(pk=caller.client.pk).update(
        daily_token_limit=tokens, daily_cost_limit=Decimal(cost) if cost is not None else None
    )


def body(configuration, **extra):
    return {"configuration": configuration.identifier, "input": "Summarise the release.", **extra}


def estimate_of(caller, configuration) -> int:
    """The reservation a send of :func:`body` makes: the fit's prompt estimate plus its reply limit."""
    breakdown = caller.post(PREVIEW, body(configuration, max_tokens=MAX_TOKENS)).json()["breakdown"]
    assert breakdown["reserve"] == MAX_TOKENS
    return breakdown["estimated"] + breakdown["reserve"]


def usage_row(caller) -> tuple[int, int, Decimal, Decimal]:
    row = ClientDailyUsage.objects.get(client=caller.client, day=budget_day())
    return row.tokens_used, row.tokens_reserved, row.cost_used, row.cost_reserved


def refusals(kind: str) -> float:
    return REGISTRY.get_sample_value("govctx_budget_refusals_total", {"kind": kind}) or 0.0


def next_midnight() -> datetime.datetime:
    return datetime.datetime.combine(
        timezone.now().astimezone(datetime.UTC).date() + datetime.timedelta(days=1),
        datetime.time(),
        tzinfo=datetime.UTC,
    )


def test_without_limits_the_send_goes_out_and_its_usage_is_recorded(caller, configuration, fake_provider):
    fake_provider.script(Reply(text="Shipped.", prompt_tokens=120, completion_tokens=30))

    response = caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS))

    assert response.status_code == 200, response.content
    assert len(fake_provider.requests) == 1
    assert usage_row(caller) == (150, 0, Decimal("0.0006"), Decimal(0))
    budget = caller.get(BUDGET).json()
    assert budget["tokens"] == {"limit": None, "used": 150, "reserved": 0, "remaining": None}
    assert budget["cost"] == {
        "limit": None,
        "used": "0.0006000000",
        "reserved": "0.0000000000",
        "remaining": None,
    }
    assert budget["day"] == budget_day().isoformat()
    assert datetime.datetime.fromisoformat(budget["reset_at"]) == next_midnight()


def test_under_the_limits_the_reservation_is_settled_with_the_reported_usage(
    caller, configuration, fake_provider
):
    limits(caller, tokens=10_000, cost="0.01")
    fake_provider.script(Reply(text="Shipped.", prompt_tokens=120, completion_tokens=30))

    response = caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS))

    assert response.status_code == 200, response.content
    assert response.json()["usage"]["cost"] == "0.0006000000"
    assert usage_row(caller) == (150, 0, Decimal("0.0006"), Decimal(0))
    budget = caller.get(BUDGET).json()
    assert budget["tokens"] == {"limit": 10_000, "used": 150, "reserved": 0, "remaining": 9_850}
    assert budget["cost"]["remaining"] == "0.0094000000"
    assert not GovernanceEvent.objects.filter(decision="budget_exhausted").exists()


def test_over_the_token_limit_nothing_is_sent_and_the_answer_names_the_reset(
    caller, configuration, fake_provider
):
    estimate = estimate_of(caller, configuration)
    limits(caller, tokens=estimate - 1)
    before = refusals("tokens")

    response = caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS))

    error = assert_error(response, 429, "budget_exhausted")
    reset = next_midnight()
    assert error["extra"] == {
        "kind": "tokens",
        "limit": estimate - 1,
        "used": 0,
        "reserved": 0,
        "estimate": estimate,
        "reset_at": reset.isoformat(),
        "retry_after": error["extra"]["retry_after"],
    }
    retry_after = int(response["Retry-After"])
    assert retry_after == error["extra"]["retry_after"]
    assert 0 < retry_after - (reset - timezone.now()).total_seconds() <= 2
    assert fake_provider.requests == []
    assert not CompletionRecord.objects.exists()
    assert usage_row(caller) == (0, 0, Decimal(0), Decimal(0))
    (event,) = GovernanceEvent.objects.all()
    assert (event.decision, event.outcome, event.api_client) == (
        "budget_exhausted",
        "enforced",
        caller.client.name,
    )
    assert event.reason == f"daily tokens limit {estimate - 1}: used 0, reserved 0, this send {estimate}"
    assert refusals("tokens") == before + 1


def test_a_send_that_fits_exactly_is_sent_and_the_next_is_refused(caller, configuration, fake_provider):
    estimate = estimate_of(caller, configuration)
    limits(caller, tokens=estimate)
    fake_provider.script(Reply(text="Shipped.", prompt_tokens=120, completion_tokens=30))

    assert caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS)).status_code == 200
    error = assert_error(
        caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS)), 429, "budget_exhausted"
    )

    assert error["extra"]["used"] == 150
    assert len(fake_provider.requests) == 1
    assert usage_row(caller) == (150, 0, Decimal("0.0006"), Decimal(0))


def test_over_the_cost_limit_nothing_is_sent(caller, configuration, fake_provider):
    estimate = estimate_of(caller, configuration)
    prompt = estimate - MAX_TOKENS
    cost = (prompt * Decimal("2.50") + MAX_TOKENS * Decimal(10)) / 1_000_000
    limits(caller, tokens=1_000_000, cost=str(cost - Decimal("0.0000000001")))
    before = refusals("cost")

    error = assert_error(
        caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS)), 429, "budget_exhausted"
    )

    tenth = Decimal("1E-10")
    extra = error["extra"]
    assert (extra["kind"], extra["limit"], extra["used"], extra["reserved"], extra["estimate"]) == (
        "cost",
        f"{(cost - tenth).quantize(tenth):f}",
        "0.0000000000",
        "0.0000000000",
        f"{cost.quantize(tenth):f}",
    )
    assert fake_provider.requests == []
    assert usage_row(caller) == (0, 0, Decimal(0), Decimal(0))
    assert refusals("cost") == before + 1


def test_a_provider_failure_releases_the_reservation(caller, configuration, fake_provider):
    limits(caller, tokens=10_000)
    fake_provider.script(Reply.failing(400, "The model rejected the request."))

    response = caller.post(COMPLETIONS, body(configuration, max_tokens=MAX_TOKENS))

    assert response.status_code == 502, response.content
    assert len(fake_provider.requests) == 1
    assert usage_row(caller) == (0, 0, Decimal(0), Decimal(0))


def test_the_openai_endpoint_refuses_in_openai_shape_streamed_or_not(caller, configuration, fake_provider):
    limits(caller, tokens=10)
    chat = {"model": configuration.identifier, "messages": [{"role": "user", "content": "Hi."}]}

    for stream in (False, True):
        response = caller.post(CHAT, {**chat, "stream": stream})

        assert response.status_code == 429
        assert response["x-should-retry"] == "false"
        error = response.json()["error"]
        assert (error["type"], error["code"], error["param"]) == (
            "rate_limit_error",
            "budget_exhausted",
            None,
        )
        assert error["budget"]["reset_at"] == next_midnight().isoformat()
        assert int(response["Retry-After"]) > 0
    assert fake_provider.requests == []
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == 2


def test_a_streamed_chat_completion_settles_with_the_reported_usage(caller, configuration, fake_provider):
    limits(caller, tokens=10_000)
    fake_provider.script(Reply(text="Shipped today.", prompt_tokens=120, completion_tokens=30))
    chat = {
        "model": configuration.identifier,
        "messages": [{"role": "user", "content": "Hi."}],
        "stream": True,
    }

    response = caller.post(CHAT, {**chat, "max_tokens": MAX_TOKENS})

    assert response.status_code == 200
    events = b"".join(response.streaming_content).decode()
    assert events.rstrip().endswith("data: [DONE]")
    assert usage_row(caller) == (150, 0, Decimal("0.0006"), Decimal(0))


def test_a_stream_broken_midway_is_charged_not_released(caller, configuration, fake_provider):
    # The provider had the prompt and sent part of the reply: charged as an abandoned stream is
    # (tests/gateway/test_abandoned_streams.py has the exact figures).
    limits(caller, tokens=10_000)
    fake_provider.script(Reply(text="Shipped today, and more.", truncate_stream=True))
    chat = {
        "model": configuration.identifier,
        "messages": [{"role": "user", "content": "Hi."}],
        "stream": True,
    }

    response = caller.post(CHAT, chat)

    assert response.status_code == 200
    lines = b"".join(response.streaming_content).decode().split("\n\n")
    assert json.loads(lines[-2].removeprefix("data: "))["error"]["type"] == "api_error"
    tokens_used, tokens_reserved, cost_used, cost_reserved = usage_row(caller)
    record = CompletionRecord.objects.get()
    assert (tokens_used, tokens_reserved, cost_reserved) == (
        record.prompt_tokens + record.completion_tokens,
        0,
        Decimal(0),
    )
    assert record.prompt_tokens > 0 and record.completion_tokens > 0 and cost_used == record.cost > 0


def test_budget_needs_a_sending_scope(make_caller):
    reader = make_caller("snippets:read")
    error = assert_error(reader.get(BUDGET), 403, "permission_denied")
    assert error["extra"] == {"required_scope": ["configurations:use", "runs:create"]}
    runner = make_caller("runs:create")
    assert runner.get(BUDGET).status_code == 200


RUNS = "/api/v1/runs"


@pytest.fixture
def runner(make_caller, configuration):
    return make_caller("runs:create", "runs:read", configurations=(configuration,))


def test_a_run_is_refused_up_front_when_the_budget_is_already_spent(runner, configuration, fake_provider):
    limits(runner, tokens=100)
    ClientDailyUsage.objects.create(client=runner.client, day=budget_day(), tokens_used=100)

    error = assert_error(runner.post(RUNS, body(configuration)), 429, "budget_exhausted")

    assert (error["extra"]["kind"], error["extra"]["used"], error["extra"]["estimate"]) == ("tokens", 100, 0)
    assert not AgentRun.objects.exists()
    assert fake_provider.requests == []
    assert GovernanceEvent.objects.filter(decision="budget_exhausted").count() == 1


def test_a_step_that_does_not_fit_ends_the_run_with_budget_exhausted(
    runner, configuration, fake_provider, django_capture_on_commit_callbacks
):
    limits(runner, tokens=MAX_TOKENS - 1)  # something is left, but not a reply limit's worth

    with django_capture_on_commit_callbacks(execute=True):
        response = runner.post(RUNS, body(configuration, max_tokens=MAX_TOKENS))

    assert response.status_code == 202
    run = AgentRun.objects.get()
    detail = runner.get(f"{RUNS}/{run.id}").json()
    assert (detail["status"], detail["termination_reason"]) == ("failed", "budget_exhausted")
    assert detail["error"]["code"] == "budget_exhausted"
    assert [(step["status"], step["error_code"]) for step in detail["steps"]] == [
        ("refused", "budget_exhausted")
    ]
    assert fake_provider.requests == []
    assert usage_row(runner) == (0, 0, Decimal(0), Decimal(0))
    (event,) = GovernanceEvent.objects.filter(decision="budget_exhausted")
    assert (event.run, event.step) == (str(run.id), 0)


def test_each_step_reserves_and_the_step_that_no_longer_fits_ends_the_run(
    runner, configuration, fake_provider, django_capture_on_commit_callbacks
):
    limits(runner, tokens=10_000)
    fake_provider.script(
        replace(
            Reply.tools(("c1", "snippets_by_tag", {"tags": ["x"]})),
            prompt_tokens=9_300,
            completion_tokens=500,
        )
    )

    with django_capture_on_commit_callbacks(execute=True):
        response = runner.post(RUNS, body(configuration, max_tokens=MAX_TOKENS))

    run = AgentRun.objects.get(id=response.json()["id"])
    assert (run.status, run.termination_reason, run.error_code) == (
        "failed",
        "budget_exhausted",
        "budget_exhausted",
    )
    assert list(run.steps.order_by("index").values_list("status", "error_code")) == [
        ("completed", ""),
        ("refused", "budget_exhausted"),
    ]
    assert len(fake_provider.requests) == 1
    cost = (9_300 * Decimal("2.50") + 500 * Decimal(10)) / 1_000_000
    assert usage_row(runner) == (9_800, 0, cost, Decimal(0))
