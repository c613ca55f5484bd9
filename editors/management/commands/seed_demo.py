"""``manage.py seed_demo``: create what is missing of the demo and print fresh credentials (safe to rerun)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from editors.demo import demo_seed


class Command(BaseCommand):
    help = "Seed the offline demo (local provider, models, a configuration, an admin, an API client)."

    def handle(self, *args: Any, **options: Any) -> None:
        credentials = demo_seed()
        self.stdout.write(self.style.SUCCESS("Demo data ready."))
        self.stdout.write(f"  admin user:     {credentials.admin_username}")
        self.stdout.write(f"  admin password: {credentials.admin_password}")
        self.stdout.write(f"  API token:      {credentials.api_token}")
