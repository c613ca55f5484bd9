from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.models import AgentRun
from governance.vocabulary import DataClass, TrustZone
from tests.factories import snippet_make

pytestmark = pytest.mark.django_db(transaction=True)  # steps run when the run's creation commits


def printed_run(out: StringIO) -> AgentRun:
    """The run the command started (its first line names it; the demo seeds runs of its own)."""
    return AgentRun.objects.get(pk=out.getvalue().split()[1])


def test_run_agent_prints_each_step_with_usage_and_breakdown():
    call_command("seed_demo", stdout=StringIO())
    out = StringIO()
    call_command(
        "run_agent",
        "--configuration",
        "demo-assistant",
        "--input",
        "Hello there, in our tone of voice",
        "--timeout",
        "20",
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    run = printed_run(out)
    assert lines[0] == f"Run {run.id} (demo-assistant, in-process)"
    steps = list(run.steps.order_by("index"))
    assert [s.status for s in steps] == [
        "completed",
        "completed",
    ]  # the demo script: a tool call, then the answer
    for number, step in enumerate(steps):
        assert lines[1 + 2 * number] == (
            f"Step {number} [completed] context usage: {step.reported_prompt_tokens:,} of 32,768 tokens "
            f"(provider_reported); completion {step.completion_tokens:,}; {step.duration_ms} ms"
        )
        assert lines[2 + 2 * number].startswith(
            "  budget 29,736 (window 32,768 - reserve 2,048 - safety 984): system_prompt 14, "
        )
    assert lines[5] == "Status: completed (completed)"
    assert lines[6] == "Answer: Here is a draft in our house tone: short sentences, warm and direct."


def test_run_agent_refuses_an_unknown_configuration():
    with pytest.raises(CommandError, match="Unknown configuration 'nope'"):
        call_command("run_agent", "--configuration", "nope", "--input", "x", stdout=StringIO())
    assert AgentRun.objects.count() == 0


def test_run_agent_gates_every_step_for_the_receiver_zone_it_names():
    call_command("seed_demo", stdout=StringIO())
    snippet_make(
        identifier="tone-internal",
        text="Internal escalation list.",
        tags=("tone",),
        data_class=DataClass.INTERNAL_CONFIGURATION,
        ceiling=TrustZone.EXTERNAL_EU,
    )
    endings = {}
    for zone in ("local", "external_eu", "external_global"):
        out = StringIO()
        command = ["--configuration", "demo-assistant", "--input", "Hello there", "--receiver-zone", zone]
        call_command("run_agent", *command, "--timeout", "20", stdout=out)
        run = printed_run(out)
        assert run.receiver_zone == zone
        endings[zone] = (run.status, run.termination_reason, run.error_code)
    assert endings == {
        "local": ("completed", "completed", ""),
        "external_eu": ("completed", "completed", ""),
        "external_global": ("failed", "policy_denied", "context_refused"),
    }
