"""The run detail lists the content versions the run pinned and those each step used."""

from __future__ import annotations

import pytest

from snippets.models import Snippet
from tests.agents.runs import fake_configuration
from tests.factories import snippet_make
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db


def test_run_detail_lists_the_pinned_versions_of_the_run_and_of_each_step(
    fake_provider, make_caller, django_capture_on_commit_callbacks
):
    configuration = fake_configuration(fake_provider, snippet_tags=["tone"])
    snippet = snippet_make(tags=("tone",), identifier="tone", text="Write warmly.")
    caller = make_caller("runs:create", "runs:read", configurations=(configuration,))
    fake_provider.script(Reply.tools(("c1", "snippets_by_tag", {"tags": ["tone"]})), Reply(text="Done."))

    with django_capture_on_commit_callbacks(execute=True):
        response = caller.post("/api/v1/runs", {"configuration": configuration.identifier, "input": "Go."})

    detail = caller.get(response["Location"]).json()
    expected = [
        {
            "kind": "configuration",
            "identifier": configuration.identifier,
            "id": configuration.pk,
            "history_id": configuration.history.latest("history_id").history_id,
        },
        {
            "kind": "snippet",
            "identifier": "tone",
            "id": snippet.pk,
            "history_id": Snippet.history.filter(id=snippet.pk).latest("history_id").history_id,
        },
    ]
    assert detail["status"] == "completed"
    assert detail["pins"] == expected
    assert [step["pins"] for step in detail["steps"]] == [expected, expected]
