"""Smoke checks of an upgraded database, run inside the new code's process (``manage.py shell -c``) by
tests/services/test_upgrade.py: admin pages, a completion through the API on the offline local
provider, a run, and the governance log. Prints one JSON document."""

from __future__ import annotations

import io
import json

from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client

from agents.models import AgentRun, RunMessage
from governance.models import GovernanceEvent

ADMIN_PAGES = (
    "/admin/",
    "/admin/catalog/configuration/",
    "/admin/snippets/snippet/",
    "/admin/agents/agentrun/",
    "/admin/agents/agentrun/retention/",
    "/admin/governance/governanceevent/",
)


def smoke(token: str, late_run: str) -> dict[str, object]:
    admin = Client()
    admin.force_login(User.objects.filter(is_superuser=True).order_by("pk").first())
    pages = {page: admin.get(page).status_code for page in ADMIN_PAGES}
    old_run = AgentRun.objects.order_by("created_at").first()
    pages["run"] = admin.get(f"/admin/agents/agentrun/{old_run.pk}/change/").status_code
    api = Client(headers={"Authorization": f"Bearer {token}"})
    body = {"configuration": "demo-assistant", "input": "Draft a launch note."}
    completion = api.post("/api/v1/completions", body, content_type="application/json")
    answer = completion.json()
    verify = io.StringIO()
    try:
        call_command("verify_governance_log", stdout=verify, stderr=verify)
        verified = 0
    except SystemExit as exit:
        verified = int(exit.code or 0)
    executor = MigrationExecutor(connection)
    return {
        "unapplied": len(executor.migration_plan(executor.loader.graph.leaf_nodes())),
        "pages": pages,
        "completion": [
            completion.status_code,
            answer.get("finish_reason"),
            answer.get("model"),
            bool(answer.get("governance_receipt")),
        ],
        "old_run": [old_run.status, RunMessage.objects.filter(run=old_run).count()],
        "late_run": [
            AgentRun.objects.get(pk=late_run).status,
            sorted(
                set(GovernanceEvent.objects.filter(correlation_id=late_run).values_list("key_id", flat=True))
            ),
        ],
        "verify": [verified, verify.getvalue()],
    }


def main(token: str, late_run: str) -> None:
    print(json.dumps(smoke(token, late_run)))
