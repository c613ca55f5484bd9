"""The API side of per-target fit: a skipped fallback is listed in the run detail; ``max_tokens``
above every target's output limit is a 400 naming the limit, with nothing stored or sent."""

from __future__ import annotations

import pytest

from agents.models import AgentRun
from catalog.models import Provider
from tests.agents.test_per_target_fit import SMALL_OUTPUT, SMALL_WINDOW, long_input, with_small_fallback
from tests.fakes.provider_server import FakeProvider, server_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_fake():
    with FakeProvider() as fake:
        yield fake


def test_the_skip_is_listed_in_the_run_detail(
    fake_provider, small_fake, make_caller, django_capture_on_commit_callbacks
):
    configuration, _ = with_small_fallback(fake_provider, small_fake)
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    fake_provider.script(server_error())

    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post(
            "/api/v1/runs",
            {"configuration": configuration.identifier, "input": long_input(15_000), "max_tokens": 4_096},
        )

    assert response.status_code == 202, response.content
    detail = caller.get(response["Location"]).json()
    assert detail["status"] == "failed"
    [step] = detail["steps"]
    assert [(s["model"], s["reason"], s["window"]) for s in step["skipped_targets"]] == [
        ("gpt-4", "context_overflow", SMALL_WINDOW)
    ]
    assert small_fake.requests == []


@pytest.mark.parametrize("path", ["/api/v1/runs", "/api/v1/completions", "/api/v1/context/preview"])
def test_max_tokens_above_every_targets_limit_is_400_naming_the_limit(
    fake_provider, small_fake, make_caller, path
):
    configuration, _ = with_small_fallback(fake_provider, small_fake)
    caller = make_caller("runs:create", "configurations:use", configurations=(configuration,))
    fake_provider.script("Never sent.")

    response = caller.post(
        path, {"configuration": configuration.identifier, "input": "Hello.", "max_tokens": 16_385}
    )

    assert response.status_code == 400, response.content
    error = response.json()
    assert error["code"] == "max_tokens_too_large"
    assert error["extra"] == {"max_tokens": 16_385, "limit": 16_384, "model": "gpt-4o"}
    assert "16,384" in error["message"]
    assert AgentRun.objects.count() == 0
    assert (fake_provider.requests, small_fake.requests) == ([], [])


def test_a_switched_off_targets_limit_does_not_count(fake_provider, small_fake, make_caller):
    configuration, _ = with_small_fallback(fake_provider, small_fake)
    Provider.objects.filter(pk=configuration.model.provider_id).update(is_active=False)
    caller = make_caller("configurations:use", configurations=(configuration,))

    response = caller.post(
        "/api/v1/completions",
        {"configuration": configuration.identifier, "input": "Hello.", "max_tokens": 4_097},
    )

    assert response.status_code == 400, response.content
    assert response.json()["extra"] == {"max_tokens": 4_097, "limit": SMALL_OUTPUT, "model": "gpt-4"}
    assert (fake_provider.requests, small_fake.requests) == ([], [])
