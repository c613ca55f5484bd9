"""Egress of the context preview API: what it shows a client, and that it sends and records nothing."""

from __future__ import annotations

import pytest
from hypothesis import given

from governance.models import GovernanceEvent
from tests.egress import oracle
from tests.egress.build import request_body
from tests.egress.profiles import egress_settings
from tests.egress.world import worlds

pytestmark = pytest.mark.django_db

PREVIEW = "/api/v1/context/preview"


@egress_settings("preview")
@given(world=worlds())
def test_the_preview_shows_a_client_only_what_its_zone_admits(egress, world):
    with egress.example(world) as example:
        response = example.api("POST", PREVIEW, request_body(example.built), label="preview")
        if "configurations:use" not in world.client_scopes:
            assert response.status_code == 403
        elif not oracle.request_skills_valid(world):
            example.check_refused_skills_alike("POST", PREVIEW, response)
        elif not oracle.has_active_target(world):
            assert (response.status_code, response.json()["code"]) == (409, "model_inactive")
        else:
            assert response.status_code == 200, response.content
            preview = response.json()
            assert preview["decision"]["permitted"] is not oracle.refused(world)
            shown = response.received.markers(oracle.parts(world))
            beyond = shown - oracle.client_may_see(world)
            assert not beyond, f"the preview shows parts beyond the client's zone or refused: {beyond}"
        example.check_wire(expect_send=False)
        # A preview records nothing (the world's own declassification is recorded when it is built).
        assert GovernanceEvent.objects.exclude(decision="reclassified").count() == 0
        example.check_everything()
