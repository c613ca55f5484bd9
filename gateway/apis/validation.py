"""Request bodies validated by one serializer instance per thread, through DRF's public
``Serializer.run_validation``.

DRF builds a serializer's fields for every instance by deep-copying each declared field, so a request
shape of twenty fields pays for twenty field constructions before it validates anything: about 0.4 ms
per chat completion, against 0.06 ms for the validation itself. A serializer used only to validate
keeps nothing between calls: ``run_validation`` returns the validated data, or raises the
``ValidationError`` whose detail ``is_valid(raise_exception=True)`` would raise, and sets no attribute
of the instance. Each thread therefore keeps one instance per serializer class (threads never share
one: a field's ``parent`` is its serializer) and validates every body with it.
"""

from __future__ import annotations

import threading
from typing import Any

from rest_framework import serializers

_KEPT = threading.local()


def validated(serializer_class: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """``data`` validated by ``serializer_class``; raises ``ValidationError`` (or what the
    serializer's own ``validate`` raises) as ``is_valid(raise_exception=True)`` would."""
    kept: dict[type[serializers.Serializer], serializers.Serializer] | None = getattr(
        _KEPT, "serializers", None
    )
    if kept is None:
        kept = _KEPT.serializers = {}
    serializer = kept.get(serializer_class)
    if serializer is None:
        serializer = kept[serializer_class] = serializer_class()
    return dict(serializer.run_validation(data))
