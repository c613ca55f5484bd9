"""Serializer fields the API views share."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers


class ObjectList(serializers.ListField):
    """A list of JSON objects (``ListField(child=DictField())``, as the schema shows it), each kept as it
    was parsed: the view's own parser reads every object and names a bad field in it
    (``agents/runtime/conversation.py``). DRF's ``DictField`` would copy every object key by key, some
    0.7 ms of CPU for a 50-message conversation on every request (docs/results.md, "Per request"). Its
    errors are DRF's: not a list, too few or too many items, an item that is not an object (by index)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(child=serializers.DictField(), **kwargs)

    def to_internal_value(self, data: Any) -> list[dict[str, Any]]:
        if isinstance(data, str | Mapping) or not isinstance(data, list | tuple):
            self.fail("not_a_list", input_type=type(data).__name__)
        if not self.allow_empty and len(data) == 0:
            self.fail("empty")
        not_a_dict = self.child.error_messages["not_a_dict"]
        errors = {
            index: [not_a_dict.format(input_type=type(item).__name__)]
            for index, item in enumerate(data)
            if not isinstance(item, dict)
        }
        if errors:
            raise serializers.ValidationError(errors)
        return list(data)
