"""``{% load vocabulary_labels %}``: stored vocabulary values as the labels editors see in forms
(``{{ row.data_class|data_class_label }}``). An empty value reads "—"; a value the vocabulary does not
know is shown as stored (governance.admin.vocabulary_label)."""

from __future__ import annotations

from django import template

from governance.admin import vocabulary_label
from governance.vocabulary import DataClass, Outcome, SourceKind, TrustZone

register = template.Library()


@register.filter
def data_class_label(value: str) -> str:
    return vocabulary_label(DataClass, value)


@register.filter
def zone_label(value: str) -> str:
    return vocabulary_label(TrustZone, value)


@register.filter
def source_kind_label(value: str) -> str:
    return vocabulary_label(SourceKind, value)


@register.filter
def outcome_label(value: str) -> str:
    return vocabulary_label(Outcome, value)
