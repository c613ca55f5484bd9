"""The shipped Prometheus alert rules (``deploy/prometheus/alerts.yml``) and Grafana dashboard
(``deploy/grafana/dashboard.json``): the rules have Prometheus's rule-group shape, every expression
reads (``tests/deploy/promql.py``), and every series either names is one ``/metrics`` exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from tests.deploy.promql import PromQLError, series_names

ROOT = Path(__file__).resolve().parents[2]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "dashboard.json"
DURATION = re.compile(r"(?:\d+(?:ms|[smhdwy]))+")
RULE_KEYS = {"alert", "expr", "for", "labels", "annotations"}
# The sample names each metric type's TYPE line stands for, in the text format /metrics serves.
SAMPLES = {"counter": ("",), "gauge": ("",), "histogram": ("_bucket", "_sum", "_count")}


def _rules() -> list[dict]:
    document = yaml.safe_load(ALERTS.read_text())
    assert list(document) == ["groups"]
    return [rule for group in document["groups"] for rule in group["rules"]]


def _dashboard_expressions() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [target["expr"] for panel in panels for target in panel["targets"]]


def _exported(client) -> dict[str, set[str]]:
    """Every metric /metrics serves, with the sample names it stands for, from the TYPE lines (a
    labelled series that has not counted yet has its TYPE line and no sample)."""
    response = client.get("/metrics")
    assert response.status_code == 200
    types = re.findall(r"^# TYPE (\S+) (\S+)$", response.content.decode(), re.MULTILINE)
    return {name: {name + suffix for suffix in SAMPLES.get(kind, ("",))} for name, kind in types}


def test_the_alert_rules_have_prometheus_rule_group_shape():
    groups = yaml.safe_load(ALERTS.read_text())["groups"]
    assert len({group["name"] for group in groups}) == len(groups) == 3
    for group in groups:
        assert set(group) == {"name", "rules"}
    rules = _rules()
    assert len({rule["alert"] for rule in rules}) == len(rules) == 10
    for rule in rules:
        assert set(rule) <= RULE_KEYS and {"alert", "expr", "labels", "annotations"} <= set(rule), rule
        assert re.fullmatch(r"Govctx[A-Z][A-Za-z]+", rule["alert"])
        assert "for" not in rule or DURATION.fullmatch(rule["for"]), rule
        assert rule["labels"]["severity"] in {"critical", "warning", "info"}
        assert set(rule["annotations"]) == {"summary", "description"}
        assert series_names(rule["expr"])


def test_the_dashboard_queries_prometheus_through_its_datasource_variable():
    dashboard = json.loads(DASHBOARD.read_text())
    panels = dashboard["panels"]
    assert len({panel["id"] for panel in panels}) == len(panels) == 15
    assert [variable["name"] for variable in dashboard["templating"]["list"]] == ["datasource"]
    for panel in panels:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert panel["targets"], panel["title"]


@pytest.mark.django_db
def test_every_series_the_rules_and_the_dashboard_name_is_exported(client):
    metrics = _exported(client)
    named_by_rules = {name for rule in _rules() for name in series_names(rule["expr"])}
    named_by_dashboard = {
        name for expression in _dashboard_expressions() for name in series_names(expression)
    }
    exported = set().union(*metrics.values())
    assert named_by_rules - exported == set()
    assert named_by_dashboard - exported == set()
    # And the dashboard shows every metric of the project's own (its own _created gauges aside).
    ours = {name for name in metrics if name.startswith("govctx_") and not name.endswith("_created")}
    assert {name for name in ours if not metrics[name] & named_by_dashboard} == set()


def test_the_series_a_check_finds_and_what_it_refuses():
    expression = 'sum by (le) (rate(a_bucket{job="x", le!="1"}[5m])) / on (job) group_left (le) b > 0.5'
    assert series_names(expression) == {"a_bucket", "b"}
    assert series_names("sum(increase(c_total[$__rate_interval])) offset 1h") == {"c_total"}
    for broken in ("rate(a_total[5m]", "sum(a_total]", "rat(a_total[5m])", "sum(rate(vector(1)[5m]))"):
        with pytest.raises(PromQLError):
            series_names(broken)
