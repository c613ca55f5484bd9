"""Egress of the catalogue and governance reads: snippets, skills, the event log and readiness."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.egress import oracle
from tests.egress.harness import Example
from tests.egress.profiles import egress_settings
from tests.egress.world import pool_rows, worlds

pytestmark = pytest.mark.django_db

SNIPPET_PARTS = (oracle.SNIPPET,)
SKILL_PARTS = (oracle.SKILL_DESCRIPTION, oracle.SKILL_BODY)


@egress_settings("reads")
@given(world=worlds(max_replies=1), rows=st.lists(pool_rows, min_size=1, max_size=3, unique=True))
def test_catalogue_and_governance_reads_show_a_client_only_what_its_zone_admits(egress, world, rows):
    with egress.example(world) as example:
        if "snippets:read" in world.client_scopes:
            paths = ["/api/v1/snippets", *(f"/api/v1/snippets/egress-snippet-{i}" for i in rows)]
            _check_reads(example, paths, SNIPPET_PARTS)
        if "skills:read" in world.client_scopes:
            ids = [example.base.skills[i].pk for i in rows]
            _check_reads(example, ["/api/v1/skills", *(f"/api/v1/skills/{pk}" for pk in ids)], SKILL_PARTS)
        if "governance:read" in world.client_scopes:
            for path in ("/api/v1/governance/readiness", "/api/v1/governance/events"):
                response = example.api("GET", path, {"page_size": 100})
                assert response.status_code == 200
                assert response.received.markers() == set(), "governance reads show content"
        example.check_everything()


def _check_reads(example: Example, paths: list[str], kinds: tuple[str, ...]) -> None:
    may = oracle.readable(example.world, kinds)
    for path in paths:
        response = example.api("GET", path, {"page_size": 100})
        assert response.status_code == 200, response.content
        beyond = response.received.markers() - may
        assert not beyond, (
            f"{path} shows parts beyond the client's zone {example.world.client_zone}: {beyond}"
        )
