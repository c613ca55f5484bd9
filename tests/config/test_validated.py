"""``config/api.py``'s ``validated``: one serializer per thread and request shape validates every body,
and nothing of one validation reaches the next (an error, a field, the instance a thread keeps)."""

from __future__ import annotations

import threading

import pytest
from rest_framework import serializers

from config import api
from config.api import validated


class Shape(serializers.Serializer):
    name = serializers.CharField(max_length=5)
    count = serializers.IntegerField(required=False, min_value=1)


def test_a_body_after_a_refused_one_is_validated_on_its_own():
    with pytest.raises(serializers.ValidationError) as refused:
        validated(Shape, {"name": "far too long", "count": 0})
    assert refused.value.detail == {
        "name": ["Ensure this field has no more than 5 characters."],
        "count": ["Ensure this value is greater than or equal to 1."],
    }
    assert validated(Shape, {"name": "ok"}) == {"name": "ok"}
    assert validated(Shape, {"name": "also", "count": 2}) == {"name": "also", "count": 2}


def test_the_detail_is_what_is_valid_would_raise():
    body = {"count": "x"}
    serializer = Shape(data=body)
    assert not serializer.is_valid()
    with pytest.raises(serializers.ValidationError) as refused:
        validated(Shape, body)
    assert refused.value.detail == serializer.errors


def test_each_thread_keeps_its_own_serializer():
    kept = []

    def validate() -> None:
        validated(Shape, {"name": "a"})
        kept.append(api._KEPT.serializers[Shape])

    threads = [threading.Thread(target=validate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    validate()
    validate()
    assert len(kept) == 4 and kept[2] is kept[3]
    assert len({id(kept[0]), id(kept[1]), id(kept[2])}) == 3
