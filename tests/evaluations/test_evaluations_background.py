"""In the embedded mode an evaluation runs on the in-process pool (agents/runtime/queue.py): the admin
answers at once, and the evaluation's page shows its progress and refreshes itself until it is done.

The test commits for real (``transaction=True``): the evaluation runs on another thread, with its own
database connection, so it must see what the request committed.
"""

from __future__ import annotations

import threading

import pytest

from agents.runtime.queue import BACKGROUND
from evaluations.models import Evaluation, EvaluationCase, EvaluationStatus
from governance.vocabulary import DataClass
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)

WAIT_SECONDS = 60  # an upper bound for a loaded machine, never a measured figure
REFRESH = '<meta http-equiv="refresh" content="2">'


@pytest.fixture(autouse=True)
def in_background(settings):
    settings.AGENT_RUNS_IN_BACKGROUND = True
    yield
    assert BACKGROUND.wait(WAIT_SECONDS), "background tasks still running after the test"


def test_an_evaluation_started_in_admin_runs_in_the_background_and_its_page_shows_its_progress(
    fake_provider, admin_client
):
    configuration = fake_configuration(fake_provider, identifier="support", allowed_tool_groups=[])
    EvaluationCase.objects.create(
        configuration=configuration,
        name="parcel",
        input="Where is my parcel?",
        data_class=DataClass.PUBLIC_CONTENT,
    )
    gate = threading.Event()
    fake_provider.script(Reply(text="On its way.", gate=gate), "Arriving soon.")

    started = admin_client.post(
        f"/admin/catalog/configuration/{configuration.pk}/evaluate/", {"model": configuration.model_id}
    )

    evaluation = Evaluation.objects.get()
    assert (started.status_code, started["Location"]) == (
        302,
        f"/admin/evaluations/evaluation/{evaluation.pk}/change/",
    )
    assert not gate.is_set()  # the request answered while the provider held its first reply
    running = admin_client.get(started["Location"]).content.decode()
    assert REFRESH in running
    assert '<dd id="evaluation-progress">0 of 2 sends</dd>' in running
    gate.set()
    assert BACKGROUND.wait(WAIT_SECONDS)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.done, evaluation.passed) == (EvaluationStatus.FINISHED, 2, True)
    finished = admin_client.get(started["Location"]).content.decode()
    assert REFRESH not in finished
    assert '<dd id="evaluation-progress">2 of 2 sends</dd>' in finished
