"""The README's shell blocks marked runnable work as written, so the docs cannot rot.

A block preceded by ``<!-- runnable -->`` is run with bash from the repository's root, on a fresh
embedded default as ``make run`` leaves it (migrated and seeded, in a temporary ``APP_VAR_DIR``) and
with none of the service's variables set: what a reader who has just run ``make run`` would type.
``.venv/bin/`` is this interpreter's folder. Each must succeed and print nothing on standard error.

A block preceded by ``<!-- runnable: demo -->`` is run against a live server seeded with the demo,
with ``BASE_URL`` and ``TOKEN`` set as the README tells the reader to set them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from editors.demo import demo_seed
from governance.models import GovernanceEvent

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent


def marked_blocks(marker: str) -> list[str]:
    return re.findall(rf"^{re.escape(marker)}\n```sh\n(.*?)```", README.read_text(), flags=re.S | re.M)


def run(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", code.replace(".venv/bin/", f"{BIN}/")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def fresh_environment(var_dir: Path) -> dict[str, str]:
    prefixes = ("DJANGO_", "DATABASE_", "REDIS_", "CELERY_", "PROMETHEUS_", "APP_")
    environment = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {**environment, "APP_VAR_DIR": str(var_dir)}


def test_the_readme_marks_its_commands_runnable():
    commands = [re.findall(r"manage\.py (\w+)", block) for block in marked_blocks("<!-- runnable -->")]
    assert commands == [
        ["governance_report", "governance_report"],
        ["cost_report", "cost_report"],
        ["check"],
        ["create_api_client"],
    ]
    assert len(marked_blocks("<!-- runnable: demo -->")) == 1


def test_the_readmes_runnable_blocks_work_as_written_on_the_embedded_default(tmp_path):
    env = fresh_environment(tmp_path / "var")
    setup = run(".venv/bin/python manage.py migrate -v0 && .venv/bin/python manage.py seed_demo", env)
    assert setup.returncode == 0, setup.stderr
    outputs = []
    for block in marked_blocks("<!-- runnable -->"):
        result = run(block, env)
        assert (result.returncode, result.stderr) == (0, ""), f"{block}\n{result.stdout}\n{result.stderr}"
        outputs.append(result.stdout)
    report, costs, deploy_check, client = outputs
    assert report.startswith("No observe rows: every classified source is enforced.\n{")
    assert json.loads(report.split("\n", 1)[1])["summary"] == {
        "observe_rows": 0,
        "would_refuse": 0,
        "personal_data_findings": 0,
    }
    assert costs.startswith("No model calls from 2026-03-01 to 2026-03-31.\n{")
    # The demo's first run on the offline model (a tool call, then the answer): two calls, free.
    assert json.loads(costs.split("\n", 1)[1])["total"] == {"calls": 2, "cost": "0E-10"}
    assert deploy_check == "System check identified no issues (0 silenced).\n"
    assert client.splitlines()[0] == "Created API client 'reporting'. Token (shown once):"
    assert re.fullmatch(r"gca_[A-Za-z0-9_-]{40,}", client.splitlines()[1])


@pytest.mark.django_db(transaction=True)
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_the_demo_refusal_block_answers_context_refused(live_server):
    credentials = demo_seed()
    env = {**os.environ, "BASE_URL": live_server.url, "TOKEN": credentials.api_token}
    (block,) = marked_blocks("<!-- runnable: demo -->")
    result = run(block, env)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert answer["code"] == "context_refused"
    assert answer["message"] == (
        "snippet 'incident-runbook' may not be sent to zone external_global: "
        "external_global is less trusted than ceiling external_eu."
    )
    assert list(GovernanceEvent.objects.values_list("decision", "outcome", "source_identifier")) == [
        ("context_blocked", "enforced", "incident-runbook")
    ]
