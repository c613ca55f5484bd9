"""Selection for a configuration: tag order, then sorting, then name; deduplicated; unknown tags reported."""

from __future__ import annotations

import pytest

from governance.vocabulary import DataClass, Enforcement, SourceKind
from snippets.composition import snippet_block, snippet_sources
from snippets.models import Tag
from snippets.selectors import snippet_select
from tests.factories import snippet_make

pytestmark = pytest.mark.django_db


def identifiers(selection) -> list[str]:
    return [s.identifier for s in selection.snippets]


def test_selects_in_tag_order_then_sorting_then_name():
    snippet_make(identifier="tone-b", name="B tone", tags=("tone",), sorting=1)
    snippet_make(identifier="tone-a", name="A tone", tags=("tone",), sorting=1)
    snippet_make(identifier="tone-first", name="Z first", tags=("tone",), sorting=0)
    snippet_make(identifier="legal", name="Legal", tags=("legal",))
    selection = snippet_select(tags=["legal", "tone"])
    assert identifiers(selection) == ["legal", "tone-first", "tone-a", "tone-b"]


def test_snippet_with_two_selected_tags_appears_once_at_its_first_tag():
    snippet_make(identifier="both", tags=("tone", "legal"))
    snippet_make(identifier="legal-only", name="AAA", tags=("legal",))
    assert identifiers(snippet_select(tags=["legal", "tone"])) == ["legal-only", "both"]


def test_inactive_snippets_are_excluded():
    snippet_make(identifier="on", tags=("tone",))
    snippet_make(identifier="off", tags=("tone",), is_active=False)
    assert identifiers(snippet_select(tags=["tone"])) == ["on"]


def test_unknown_and_empty_tags_are_reported_not_silently_empty():
    snippet_make(identifier="off", tags=("retired",), is_active=False)
    selection = snippet_select(tags=["Tone ", "retired", "nope"])
    assert selection.snippets == ()
    assert selection.unknown_tags == ("tone", "nope")
    assert selection.empty_tags == ("retired",)


def test_tags_are_normalised_on_entry_and_on_selection():
    snippet = snippet_make(identifier="x", tags=("  Brand   Voice ", "brand voice", "LEGAL"))
    assert sorted(snippet.tags.values_list("name", flat=True)) == ["brand-voice", "legal"]
    assert Tag.objects.count() == 2
    assert identifiers(snippet_select(tags=["BRAND VOICE"])) == ["x"]


def test_block_renders_named_sections_and_sources_carry_the_rows_classification():
    a = snippet_make(identifier="a", name="Tone", text="Be warm.\n", tags=("t",))
    b = snippet_make(
        identifier="b",
        name="Legal",
        text="No promises.",
        tags=("t",),
        data_class="",
        ceiling="",
        enforcement=Enforcement.OBSERVE,
    )
    assert snippet_block([a, b]) == "Tone:\nBe warm.\n\nLegal:\nNo promises."
    sources = snippet_sources([a, b])
    assert [(s.kind, s.identifier, s.data_class, s.ceiling, s.enforcement) for s in sources] == [
        (SourceKind.SNIPPET, "a", DataClass.PUBLIC_CONTENT, "external_global", "enforce"),
        (SourceKind.SNIPPET, "b", "", "", "observe"),
    ]
