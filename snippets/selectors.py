"""Reads for snippets: selection by tag for a configuration."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.db.models import QuerySet

from governance.drafts import draft_values_apply, drafts_by, drafts_of, with_has_draft
from snippets.models import Snippet, Tag, normalise_tag


@dataclass(frozen=True)
class SnippetSelection:
    snippets: tuple[Snippet, ...]
    unknown_tags: tuple[str, ...]  # no such tag exists
    empty_tags: tuple[str, ...]  # the tag exists, but no active snippet carries it


@dataclass(frozen=True)
class SnippetEdit:
    """An unsaved version of a snippet: its fields (``snippet``, not saved) and its tags as typed.

    Selected in place of the saved row with the same identifier, to show what an edit would do to the
    configurations that select it (the live token badge), and on an evaluation's drafted side.
    """

    snippet: Snippet
    tags: tuple[str, ...]

    @property
    def tag_names(self) -> frozenset[str]:
        return frozenset(normalise_tag(tag) for tag in self.tags if normalise_tag(tag))


def snippet_select(*, tags: Sequence[str], edits: Sequence[SnippetEdit] = ()) -> SnippetSelection:
    """Active snippets for ``tags``: in tag order, then sorting, then name; deduplicated by identifier
    (a snippet carrying two selected tags appears once, at its first tag). Two queries.

    With ``edits``, each edited snippet is selected by its edited fields and tags instead of its saved
    row (a new identifier is simply added), and the tags it carries count as known.
    """
    wanted = list(dict.fromkeys(normalise_tag(tag) for tag in tags if normalise_tag(tag)))
    known = set(Tag.objects.filter(name__in=wanted).values_list("name", flat=True))
    edited = {edit.snippet.identifier: edit for edit in edits}
    edited_rows = [edit.snippet.pk for edit in edits if edit.snippet.pk is not None]
    candidates = (
        Snippet.objects.filter(is_active=True, tags__name__in=wanted)
        .exclude(identifier__in=list(edited))
        .exclude(pk__in=edited_rows)  # an edit that renames a snippet replaces it too
        .prefetch_related("tags")
        .distinct()
    )
    by_tag: dict[str, list[Snippet]] = {tag: [] for tag in wanted}
    for snippet in candidates:
        for carried in snippet.tags.all():
            if carried.name in by_tag:
                by_tag[carried.name].append(snippet)
    for edit in edited.values():
        selecting = edit.tag_names & set(wanted)
        known |= selecting
        for name in selecting if edit.snippet.is_active else set():
            by_tag[name].append(edit.snippet)
    selected: dict[str, Snippet] = {}
    for tag in wanted:
        for snippet in sorted(by_tag[tag], key=lambda s: (s.sorting, s.name, s.identifier)):
            selected.setdefault(snippet.identifier, snippet)
    return SnippetSelection(
        snippets=tuple(selected.values()),
        unknown_tags=tuple(tag for tag in wanted if tag not in known),
        empty_tags=tuple(tag for tag in wanted if tag in known and not by_tag[tag]),
    )


def snippet_draft_edits(*, author_id: int | None) -> tuple[SnippetEdit, ...]:
    """The drafts of snippets by the user ``author_id`` (None: every pending draft), each as the edit
    it proposes (the live row with the draft's fields and tags), by identifier. For a preview, or for
    an evaluation of drafts (evaluations/services.py); never part of any other send."""
    pending = drafts_of(Snippet) if author_id is None else drafts_by(model=Snippet, author_id=author_id)
    drafts = {draft.object_id: draft for draft in pending}
    live = Snippet.objects.prefetch_related("tags").filter(pk__in=[int(pk) for pk in drafts])
    edits = []
    for row in live:
        values = drafts[str(row.pk)].values
        tags = [tag.name for tag in row.tags.all()]
        draft_values_apply(row, values)
        edits.append(
            SnippetEdit(snippet=row, tags=tuple(str(values.get("tag_names", ",".join(tags))).split(",")))
        )
    return tuple(sorted(edits, key=lambda edit: edit.snippet.identifier))


def snippet_query(
    *,
    tag: str | None = None,
    data_class: str | None = None,
    enforcement: str | None = None,
    is_active: bool | None = None,
) -> QuerySet[Snippet]:
    """Snippets matching every given filter (a tag matches after normalisation), ordered by sorting,
    name and identifier, tags prefetched, each annotated with ``has_draft`` (an editor's unpublished
    change is pending; the row itself is the live version)."""
    snippets = with_has_draft(Snippet.objects.prefetch_related("tags")).order_by(
        "sorting", "name", "identifier"
    )
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
    """The live snippet, annotated with ``has_draft``."""
    return with_has_draft(Snippet.objects.prefetch_related("tags")).filter(identifier=identifier).first()
