"""Egress of the admin context preview: a staff user posts a request; the page shows it redacted."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given

from governance.models import GovernanceEvent
from tests.egress.build import request_body
from tests.egress.profiles import egress_settings
from tests.egress.receivers import Received, strings
from tests.egress.world import worlds

pytestmark = pytest.mark.django_db

SHOWN = ("messages_shown", "sources", "dropped_skills", "denied_tools", "redactions", "error", "unknown_tags")


def form_data(example) -> dict[str, object]:
    """The preview form for the world's request, as the page would post it."""
    body = request_body(example.built)
    items = body.get("context", [])
    data: dict[str, object] = {
        "task_input": body["input"],
        "input_data_class": body.get("input_data_class", example.world.client_default_class),
        "request_skills": [pk for pk in body.get("skills", []) if pk in {s.pk for s in example.base.skills}],
        "context-TOTAL_FORMS": str(len(items)),
        "context-INITIAL_FORMS": "0",
    }
    for i, item in enumerate(items):
        data |= {f"context-{i}-{key}": value for key, value in item.items()}
    return data


@egress_settings("admin")
@given(world=worlds(max_replies=1))
def test_the_admin_preview_posts_its_form_and_shows_no_secret(egress, world):
    with egress.example(world, staff=True) as example:
        url = f"/admin/catalog/configuration/{example.built.configuration.pk}/preview/"
        data = form_data(example)
        response = example.http.post(url, data)
        assert response.status_code == 200
        assert 'method="post"' in response.content.decode()
        form = response.context["form"]
        assert form.is_bound and form.data.get("task_input") == data["task_input"], (
            "the post was not previewed"
        )
        shown = [s for key in SHOWN for s in strings(_plain(response.context.get(key)))]
        example.received.append(Received("admin preview", shown))
        example.check_wire(expect_send=False)
        # A preview records nothing (the world's own declassification is recorded when it is built).
        assert GovernanceEvent.objects.exclude(decision="reclassified").count() == 0
        example.check_everything()


def _plain(value):
    """Context values as JSON-like data: dataclasses by their fields, anything else by its text."""
    if isinstance(value, str | int | float | bool | None):
        return value if not isinstance(value, str) else str(value)
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    return str(value)
