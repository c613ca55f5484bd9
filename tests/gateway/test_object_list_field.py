"""The list-of-objects field the API's request serializers share: DRF's errors, each object as parsed."""

import pytest
from rest_framework import serializers

from gateway.apis.fields import ObjectList


class _Input(serializers.Serializer):
    items = ObjectList(max_length=2, min_length=1)


def _errors(data: object) -> object:
    serializer = _Input(data={"items": data})
    assert not serializer.is_valid()
    return serializer.errors["items"]


@pytest.mark.parametrize("data", ["text", {"role": "user"}, 3])
def test_anything_but_a_list_is_refused_as_drf_refuses_it(data: object) -> None:
    assert _errors(data) == [f'Expected a list of items but got type "{type(data).__name__}".']


def test_an_item_that_is_not_an_object_is_named_by_its_index() -> None:
    assert _errors([{"role": "user"}, "text"]) == {1: ['Expected a dictionary of items but got type "str".']}


def test_the_length_limits_hold() -> None:
    assert _errors([{}, {}, {}]) == ["Ensure this field has no more than 2 elements."]
    assert _errors([]) == ["Ensure this field has at least 1 elements."]


def test_each_object_is_kept_as_it_was_parsed() -> None:
    first, second = {"role": "user", "content": "hi"}, {"role": "assistant", "content": None}
    serializer = _Input(data={"items": [first, second]})
    assert serializer.is_valid()
    assert serializer.validated_data["items"] == [first, second]
    assert serializer.validated_data["items"][0] is first
