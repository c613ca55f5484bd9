from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.models import AgentRun

pytestmark = pytest.mark.django_db(transaction=True)  # steps run when the run's creation commits


def test_run_agent_prints_each_step_with_usage_and_breakdown():
    call_command("seed_demo", stdout=StringIO())
    out = StringIO()
    call_command(
        "run_agent",
        "--configuration",
        "demo-assistant",
        "--input",
        "Hello there",
        "--timeout",
        "20",
        stdout=out,
    )
    lines = out.getvalue().splitlines()
    run = AgentRun.objects.get()
    assert lines[0] == f"Run {run.id} (demo-assistant, in-process)"
    assert lines[1].startswith("Step 0 [completed] context usage: ")
    assert "of 32,768 tokens (provider_reported)" in lines[1]
    assert lines[2].startswith("  budget 29,736 (window 32,768 - reserve 2,048 - safety 984): system_prompt ")
    assert lines[3] == "Status: completed (completed)"
    assert lines[4].startswith("Answer: Local model (offline)")


def test_run_agent_refuses_an_unknown_configuration():
    with pytest.raises(CommandError, match="Unknown configuration 'nope'"):
        call_command("run_agent", "--configuration", "nope", "--input", "x", stdout=StringIO())
    assert AgentRun.objects.count() == 0
