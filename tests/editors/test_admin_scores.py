"""Scores in admin: per configuration and score name, a chart of the scores over time with one line
per published version and a summary per version; runs are filtered by their scores."""

from __future__ import annotations

import re

import pytest

from agents.models import AgentRun
from catalog.services import api_client_create
from gateway.models import Score, ScoreKind
from governance.vocabulary import DataClass
from tests.factories import configuration_make

pytestmark = pytest.mark.django_db


def run_of(configuration, client) -> AgentRun:
    return AgentRun.objects.create(
        configuration=configuration, api_client=client, input_text="x", input_data_class="public_content"
    )


def score(run: AgentRun, *, version: int, kind: str, **value) -> Score:
    return Score.objects.create(
        api_client=run.api_client,
        run=run,
        configuration=run.configuration,
        configuration_version=version,
        label=DataClass.PUBLIC_CONTENT,
        name="helpful",
        kind=kind,
        **value,
    )


@pytest.fixture
def scored():
    configuration = configuration_make(identifier="support")
    client = api_client_create(name="scorer", scopes=["scores:write"]).client
    runs = [run_of(configuration, client) for _ in range(4)]
    score(runs[0], version=7, kind=ScoreKind.NUMERIC, numeric_value=2)
    score(runs[1], version=7, kind=ScoreKind.NUMERIC, numeric_value=4)
    score(runs[2], version=9, kind=ScoreKind.BOOLEAN, boolean_value=True)
    return runs


def test_the_scores_page_charts_each_version_with_axes_and_a_summary(admin_client, scored):
    response = admin_client.get("/admin/gateway/score/")
    html = response.content.decode()

    assert response.status_code == 200
    assert "<h2>support — helpful</h2>" in html
    assert ">Score (yes = 1)</text>" in html and ">Scored (UTC)</text>" in html
    assert re.findall(r'class="y-tick"[^>]*>([^<]+)</text>', html) == ["0", "1", "2", "3", "4"]
    assert len(re.findall(r'<circle class="score-point', html)) == 3
    assert len(re.findall(r'<polyline class="line"', html)) == 1  # version 7's two scores; 9 has one
    assert re.findall(r'class="value-label"[^>]*>([^<]+)</text>', html) == ["v7", "v9"]
    rows = re.findall(r"<tr><td>(version \d+)</td><td>(\d+)</td>\s*<td>([^<]+)</td>\s*<td>([^<]+)</td>", html)
    assert rows == [("version 7", "2", "3.00", "—"), ("version 9", "1", "1.00", "100%")]


@pytest.mark.parametrize(
    ("choice", "expected"),
    [("any", {0, 1, 2}), ("none", {3}), ("yes", {2}), ("no", set()), ("below:4", {0})],
)
def test_runs_are_filtered_by_score(admin_client, scored, choice, expected):
    response = admin_client.get("/admin/agents/agentrun/", {"score": choice})

    assert response.status_code == 200
    shown = {str(run.pk) for run in response.context["cl"].result_list}
    assert shown == {str(scored[i].pk) for i in expected}
