"""The README's "Using the API" examples run against a live server, so they cannot rot.

Each ``sh`` and ``python`` block of that section is executed as written, with ``BASE_URL``, ``TOKEN``
and ``CONFIGURATION`` set in the environment the way the README tells a reader to set them (against
the demo rows ``make run`` seeds). Only loopback traffic: the server is pytest-django's live server
and the demo's provider is the offline ``local`` one.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents.models import AgentRun
from editors.demo import DEMO_CONFIGURATION, demo_seed

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_blocks() -> list[tuple[str, str]]:
    text = README.read_text()
    section = text.split("\n## Using the API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(sh|python)\n(.*?)```", section, flags=re.S)


def test_the_section_has_shell_and_python_examples():
    languages = [language for language, _ in readme_blocks()]
    assert languages == ["sh", "sh", "sh", "python", "sh"]


@pytest.fixture
def environment(live_server):
    credentials = demo_seed()
    return {
        **os.environ,
        "BASE_URL": live_server.url,
        "TOKEN": credentials.api_token,
        "CONFIGURATION": DEMO_CONFIGURATION,
    }


def run_block(language: str, code: str, environment: dict[str, str]) -> str:
    shell = ["bash", "-euo", "pipefail", "-c", code]
    command = shell if language == "sh" else [sys.executable, "-c", code]
    result = subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{language} block failed:\n{code}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_readme_examples_run_against_a_live_server(environment):
    outputs = [run_block(language, code, environment) for language, code in readme_blocks()]
    listing, completion, run_shell, python, approval = outputs
    assert f'"identifier":"{DEMO_CONFIGURATION}"' in listing
    assert '"would_send":true' in listing  # the preview follows the listing in the first block
    assert '"finish_reason"' in completion
    assert "event: step" in run_shell
    assert "event: run" in run_shell
    assert '"status":"completed"' in run_shell
    assert "run completed" in python
    assert '"decision":"approved"' in approval.replace(" ", "")
    assert AgentRun.objects.filter(configuration__identifier="demo-approvals").count() == 1
