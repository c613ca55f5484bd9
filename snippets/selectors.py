"""Reads for snippets: selection by tag for a configuration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from snippets.models import Snippet, Tag, normalise_tag


@dataclass(frozen=True)
class SnippetSelection:
    snippets: tuple[Snippet, ...]
    unknown_tags: tuple[str, ...]  # no such tag exists
    empty_tags: tuple[str, ...]  # the tag exists, but no active snippet carries it


def snippet_select(*, tags: Sequence[str]) -> SnippetSelection:
    """Active snippets for ``tags``: in tag order, then sorting, then name; deduplicated by identifier
    (a snippet carrying two selected tags appears once, at its first tag). Two queries."""
    wanted = list(dict.fromkeys(normalise_tag(tag) for tag in tags if normalise_tag(tag)))
    known = set(Tag.objects.filter(name__in=wanted).values_list("name", flat=True))
    candidates = (
        Snippet.objects.filter(is_active=True, tags__name__in=wanted).prefetch_related("tags").distinct()
    )
    by_tag: dict[str, list[Snippet]] = {tag: [] for tag in wanted}
    for snippet in candidates:
        for carried in snippet.tags.all():
            if carried.name in by_tag:
                by_tag[carried.name].append(snippet)
    selected: dict[str, Snippet] = {}
    for tag in wanted:
        for snippet in sorted(by_tag[tag], key=lambda s: (s.sorting, s.name, s.identifier)):
            selected.setdefault(snippet.identifier, snippet)
    return SnippetSelection(
        snippets=tuple(selected.values()),
        unknown_tags=tuple(tag for tag in wanted if tag not in known),
        empty_tags=tuple(tag for tag in wanted if tag in known and not by_tag[tag]),
    )


def snippet_query(
    *,
    tag: str | None = None,
    data_class: str | None = None,
    enforcement: str | None = None,
    is_active: bool | None = None,
) -> QuerySet[Snippet]:
    """Snippets matching every given filter (a tag matches after normalisation), ordered by sorting,
    name and identifier, tags prefetched."""
    snippets = Snippet.objects.prefetch_related("tags").order_by("sorting", "name", "identifier")
    if tag is not None:
        snippets = snippets.filter(tags__name=normalise_tag(tag))
    if data_class is not None:
        snippets = snippets.filter(data_class=data_class)
    if enforcement is not None:
        snippets = snippets.filter(enforcement=enforcement)
    if is_active is not None:
        snippets = snippets.filter(is_active=is_active)
    return snippets


def snippet_get(*, identifier: str) -> Snippet | None:
    return Snippet.objects.prefetch_related("tags").filter(identifier=identifier).first()
