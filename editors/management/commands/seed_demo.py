"""``manage.py seed_demo``: create what is missing of the demo and print fresh credentials (safe to rerun)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from agents.models import AgentRun
from editors.demo import demo_seed
from editors.demo_activity import demo_runs_seed

# How long the command waits for the demo's first runs on the in-process pool (the offline model
# answers at once; this bounds a machine under load).
RUNS_WAIT_SECONDS = 60.0


class Command(BaseCommand):
    help = (
        "Seed the offline demo (local provider, models, configurations, evaluation cases, an admin, an API "
        "client) and, on a first start, a few runs."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = demo_seed()
        # After the seed's transaction: each run's first step is enqueued when its own commits.
        for run in demo_runs_seed():
            run = self._ended(run)
            self.stdout.write(f"  demo run {run.id} ({run.configuration.identifier}): {run.status}")
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        self.stdout.write(f"  admin user:     {credentials.admin_username}")
        self.stdout.write(f"  admin password: {credentials.admin_password}")
        self.stdout.write(f"  API token:      {credentials.api_token}")

    def _ended(self, run: AgentRun) -> AgentRun:
        """``run`` once it ended, when its steps run on this process's pool: the process must not
        exit under them. Elsewhere (in the call that enqueued them, or on workers) it is as it is."""
        background = settings.CELERY_TASK_ALWAYS_EAGER and settings.AGENT_RUNS_IN_BACKGROUND
        deadline = time.monotonic() + RUNS_WAIT_SECONDS
        run.refresh_from_db()
        while background and not run.is_terminal and time.monotonic() < deadline:
            time.sleep(0.1)
            run.refresh_from_db()
        return run
