"""The catalogue triggers on PostgreSQL (statement-level there, row-level on SQLite) and the in-place
calibration update: the same checks as the default suite's, run against the services database."""

from __future__ import annotations

import pytest
from django.db import connection

from catalog.models import CatalogVersion
from tests.catalog.test_calibration_store import test_each_stored_sample_matches_the_pure_update
from tests.catalog.test_catalog_cache import (
    test_a_calibration_update_leaves_the_token_alone,
    test_a_snippet_reclassified_between_steps_is_refused_at_the_next_step,
    test_every_write_path_of_the_catalogue_changes_the_token,
    test_resolving_a_configuration_reads_only_tables_the_triggers_watch,
)

pytestmark = [pytest.mark.services, pytest.mark.django_db]

__all__ = [
    "test_a_calibration_update_leaves_the_token_alone",
    "test_a_snippet_reclassified_between_steps_is_refused_at_the_next_step",
    "test_each_stored_sample_matches_the_pure_update",
    "test_every_write_path_of_the_catalogue_changes_the_token",
    "test_resolving_a_configuration_reads_only_tables_the_triggers_watch",
]


def test_the_services_database_is_postgresql():
    assert connection.vendor == "postgresql"


def test_truncating_a_catalogue_table_changes_the_token(fake_provider):
    before = CatalogVersion.objects.get(id=1).token
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE agents_toolsetting")
    assert CatalogVersion.objects.get(id=1).token != before
