"""A completion calibrates the serving model's estimate from the provider-reported prompt size, through
the same store as a run step (one ``UPDATE … RETURNING``), so both paths move the factor alike."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.models import AgentStep
from catalog.models import LlmModel, Tokenizer
from context_assembly.calibration import CalibrationState, calibration_update
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration, run_to_end
from tests.fakes.provider_server import Reply, server_error
from tests.gateway.test_inactive_targets import with_fallback

pytestmark = pytest.mark.django_db

COMPLETIONS = "/api/v1/completions"


def body(configuration) -> dict[str, str]:
    return {"configuration": configuration.identifier, "input": "Summarise the launch."}


def calibration(model: LlmModel) -> tuple[float, int]:
    model.refresh_from_db()
    return model.calibration_factor, model.calibration_samples


def test_a_completion_calibrates_the_serving_model(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU)
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="ok", prompt_tokens=1_000))
    response = caller.post(COMPLETIONS, body(configuration))
    assert response.status_code == 200
    estimated = response.json()["breakdown"]["estimated"]
    expected = calibration_update(CalibrationState(), reported=1_000, estimated=estimated)
    assert expected.factor != 1.0
    assert calibration(configuration.model) == (expected.factor, 1)
    assert configuration.model.calibration_updated_at is not None


def test_a_completion_on_an_approximate_model_samples_the_estimate_before_the_factor(
    fake_provider, make_caller
):
    configuration = fake_configuration(
        fake_provider,
        zone=TrustZone.EXTERNAL_EU,
        model_tokenizer=Tokenizer.APPROXIMATE,
        model_calibration_factor=1.25,
        model_calibration_samples=3,
    )
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="ok", prompt_tokens=900))
    response = caller.post(COMPLETIONS, body(configuration))
    assert response.status_code == 200
    estimated = response.json()["breakdown"]["estimated"]  # calibrated: the factor applied
    state = CalibrationState(factor=1.25, samples=3)
    expected = calibration_update(state, reported=900, estimated=round(estimated / 1.25))
    assert calibration(configuration.model) == (expected.factor, 4)


def test_a_completion_and_a_step_move_the_factor_alike(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    """The same call, once as a run step and once as a completion: each adds the same sample."""
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_EU, allowed_tool_groups=[])
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(Reply(text="ok", prompt_tokens=1_000), Reply(text="ok", prompt_tokens=1_000))
    run = run_to_end(django_capture_on_commit_callbacks, configuration, input_text="Summarise the launch.")
    step = AgentStep.objects.get(run=run)
    after_step = calibration(configuration.model)
    first = calibration_update(CalibrationState(), reported=1_000, estimated=step.estimated_prompt_tokens)
    assert after_step == (first.factor, 1)
    response = caller.post(COMPLETIONS, body(configuration))
    assert response.status_code == 200
    assert response.json()["breakdown"]["estimated"] == step.estimated_prompt_tokens  # the same payload
    second = calibration_update(first, reported=1_000, estimated=step.estimated_prompt_tokens)
    assert calibration(configuration.model) == (second.factor, 2)


def test_a_completion_without_reported_usage_or_served_by_a_fallback_takes_no_sample(
    fake_provider, make_caller
):
    configuration, fallback = with_fallback(fake_provider)
    caller = make_caller("configurations:use", configurations=(configuration,))
    fake_provider.script(
        Reply(text="ok", include_usage=False),
        server_error(),
        replace(Reply(text="ok"), prompt_tokens=1_000),
    )
    assert caller.post(COMPLETIONS, body(configuration)).status_code == 200  # no usage reported
    assert caller.post(COMPLETIONS, body(configuration)).status_code == 200  # the fallback served
    assert [request.body["model"] for request in fake_provider.requests] == [
        "gpt-4o",
        "gpt-4o",
        "gpt-4o-mini",
    ]
    assert calibration(configuration.model) == (1.0, 0)
    assert calibration(fallback) == (1.0, 0)


def test_a_refused_completion_takes_no_sample(fake_provider, make_caller):
    configuration = fake_configuration(fake_provider, zone=TrustZone.EXTERNAL_GLOBAL)
    caller = make_caller("configurations:use", configurations=(configuration,))
    response = caller.post(COMPLETIONS, {**body(configuration), "input_data_class": "secret_adjacent"})
    assert response.status_code == 403
    assert fake_provider.requests == []
    assert calibration(configuration.model) == (1.0, 0)
