"""The README's "Anthropic Messages API" example runs against a live server, so it cannot rot: its
``python`` block is executed as written against the demo rows ``make run`` seeds (the offline
``local`` provider), with ``BASE_URL``, ``TOKEN`` and ``CONFIGURATION`` set as the README says."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from editors.demo import DEMO_CONFIGURATION, LOCAL_ANSWER, demo_seed

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.django_db(transaction=True)
def test_the_anthropic_sdk_example_runs_against_a_live_server(live_server):
    section = README.read_text().split("\n## Anthropic Messages API\n", 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    credentials = demo_seed()
    environment = {
        **os.environ,
        "BASE_URL": live_server.url,
        "TOKEN": credentials.api_token,
        "CONFIGURATION": DEMO_CONFIGURATION,
    }

    result = subprocess.run(
        [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120
    )

    assert result.returncode == 0, f"{result.stdout}\n{result.stderr}"
    answer, counted = result.stdout.splitlines()
    assert answer.startswith("end_turn [TextBlock(")
    assert LOCAL_ANSWER in answer
    assert re.fullmatch(
        r"MessageTokensCount\(input_tokens=\d+, context_window=\d+, breakdown=\{.*\}\)", counted
    )
