"""The API's renderer writes the same bytes as DRF's JSON renderer, through orjson."""

from __future__ import annotations

import datetime
import decimal
import json
import uuid

import pytest
from django.utils.translation import gettext_lazy
from rest_framework.renderers import JSONRenderer

from config.json_renderer import OrjsonRenderer
from governance.vocabulary import DataClass

UTC = datetime.UTC


def _both(data, media_type=None):
    return OrjsonRenderer().render(data, media_type, {}), JSONRenderer().render(data, media_type, {})


@pytest.mark.parametrize(
    "data",
    [
        {"id": "chatcmpl-1", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Done."}}]},
        {"text": "naïve café ✓ 日本 \U0001f600", "quote": 'a "b" \\ c', "controls": "\n\t\r\x00\x1f\x7f"},
        {"separators": "line\u2028paragraph\u2029end"},
        {"numbers": [0, -1, 2**63 - 1, 1.5, 0.1, 123456.789, True, False, None], "empty": {}, "list": []},
        {"at": datetime.datetime(2026, 12, 6, 23, 5, 58, 123456, tzinfo=UTC)},
        {"naive": datetime.datetime(2026, 12, 6, 23, 5, 58), "day": datetime.date(2026, 12, 6)},
        {"time": datetime.time(9, 30, 15, 250)},
        {"amount": decimal.Decimal("1.25"), "id": uuid.UUID(int=7), "lazy": gettext_lazy("Not found.")},
        {"class": DataClass.PUBLIC_CONTENT, DataClass.PERSONAL_DATA: 1, "tuple": (1, "two")},
        {"big": 2**70, "negative_big": -(2**70)},  # past 64 bits: DRF's renderer writes them
        {2: "integer key", None: "null key", False: "boolean key", 1.5: "float key"},
        ["a", {"nested": [[["deep"]]]}],
    ],
)
def test_the_same_bytes_as_drf(data):
    ours, drf = _both(data)
    assert ours == drf


def test_a_small_float_is_the_same_number_written_otherwise():
    ours, drf = _both({"small": 1e-7, "large": 1e21, "cost": 2.5e-05})
    assert ours == b'{"small":1e-7,"large":1e+21,"cost":0.000025}'
    assert drf == b'{"small":1e-07,"large":1e+21,"cost":2.5e-05}'
    assert json.loads(ours) == json.loads(drf)


def test_keys_that_are_not_strings_are_written_without_drfs_renderer(monkeypatch):
    def refused(*args, **kwargs):
        raise AssertionError("DRF's renderer was called")

    monkeypatch.setattr(JSONRenderer, "render", refused)
    rendered = OrjsonRenderer().render({DataClass.PERSONAL_DATA: 1, 2: [None]})
    assert rendered == b'{"personal_data":1,"2":[null]}'


def test_indented_json_asked_for_is_drfs():
    ours, drf = _both({"a": [1, 2]}, "application/json; indent=2")
    assert ours == drf == b'{\n  "a": [\n    1,\n    2\n  ]\n}'


def test_nothing_renders_as_an_empty_body():
    assert _both(None) == (b"", b"")


def test_a_value_neither_can_encode_raises_as_drf_does():
    with pytest.raises(TypeError):
        OrjsonRenderer().render({"value": object()})


def test_the_api_renders_with_it():
    from rest_framework.settings import api_settings

    from gateway.apis.run_events import JsonErrorsNegotiation

    assert [cls.__name__ for cls in api_settings.DEFAULT_RENDERER_CLASSES] == ["OrjsonRenderer"]
    # The completion APIs' negotiation, whatever the client accepts, picks it too.
    renderer, media_type = JsonErrorsNegotiation().select_renderer(None, [])
    assert (type(renderer), media_type) == (OrjsonRenderer, "application/json")
