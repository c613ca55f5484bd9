"""The configurations API shows a configuration's context strategy."""

from __future__ import annotations

import pytest

from governance.vocabulary import TrustZone
from tests.factories import configuration_make, model_make

pytestmark = pytest.mark.django_db


def test_the_configurations_api_shows_the_strategy(make_caller):
    summarizer = model_make(model_id="gpt-4o-mini")
    configuration = configuration_make(
        context_strategy="summarise", compaction_threshold=0.7, compaction_keep=3, summary_model=summarizer
    )
    plain = configuration_make()
    caller = make_caller(
        "configurations:use", configurations=(configuration, plain), trust_zone=TrustZone.LOCAL
    )
    items = {item["identifier"]: item for item in caller.get("/api/v1/configurations").json()["results"]}
    fields = ("context_strategy", "compaction_threshold", "compaction_keep", "summary_model")
    assert [items[configuration.identifier][name] for name in fields] == ["summarise", 0.7, 3, "gpt-4o-mini"]
    assert [items[plain.identifier][name] for name in fields] == ["drop_oldest", 0.8, 2, None]
