"""The README's "OpenAI-compatible API" examples run against a live server, so they cannot rot.

Each ``python`` block of that section is executed as written against the demo rows ``make run`` seeds
(its provider is the offline ``local`` one), with ``BASE_URL``, ``TOKEN`` and ``CONFIGURATION`` set
as the README tells a reader to set them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from editors.demo import DEMO_CONFIGURATION, LOCAL_ANSWER, demo_seed
from gateway.models import StoredResponse

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_blocks() -> list[str]:
    text = README.read_text()
    section = text.split("\n## OpenAI-compatible API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


@pytest.mark.django_db(transaction=True)
def test_the_openai_sdk_and_langchain_examples_run_against_a_live_server(live_server):
    credentials = demo_seed()
    environment = {
        **os.environ,
        "BASE_URL": live_server.url,
        "TOKEN": credentials.api_token,
        "CONFIGURATION": DEMO_CONFIGURATION,
    }
    blocks = readme_blocks()
    assert len(blocks) == 3

    outputs = []
    for code in blocks:
        result = subprocess.run(
            [sys.executable, "-c", code], env=environment, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, f"{code}\n{result.stdout}\n{result.stderr}"
        outputs.append(result.stdout)

    sdk, langchain, responses = outputs
    # The demo model calls only tools a request offers, and these requests offer none: it answers.
    assert sdk.startswith(f"stop {LOCAL_ANSWER}\n")
    assert "'provenance': 'provider_reported'" in sdk
    assert langchain.count(LOCAL_ANSWER) == 2
    assert "snippets_by_tag" not in sdk + langchain + responses
    # The follow-up continued the stored response: its conversation came before the new input.
    first, follow_up = StoredResponse.objects.order_by("created_at", "pk")
    assert [entry["kind"] for entry in follow_up.conversation] == [
        "caller",
        "assistant_turn",
        "caller",
        "assistant_turn",
    ]
    assert [e["message"] for e in follow_up.conversation[:2]] == [e["message"] for e in first.conversation]
    assert responses == f"{follow_up.conversation[-1]['message']['content']} {follow_up.input_tokens}\n"
