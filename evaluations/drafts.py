"""What an evaluation's drafted side sends: live + the pending drafts that change a configuration.

The drafts are every pending draft (whoever wrote it) of the configuration itself and of the snippets
its tags select, live or drafted (docs/decisions/0025-evaluating-drafts.md). They are applied as the
preview's comparison applies an editor's own drafts (editors/admin/draft_compare.py): the configuration
as an unsaved copy, the snippets as edits (``agents.runtime.content.edited_content``). A draft's classification applies
only where it loosens nothing (:func:`governance.drafts.classification_held`): a draft is sent under
the stricter of its own and the live classification, field by field.

Each applied draft is listed with the digest of its values, so an evaluation names exactly which
version of each draft it used, and a draft saved again afterwards is no longer the one evaluated.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from catalog.models import Configuration, LlmModel
from catalog.selectors import configuration_drafted
from governance.classified import ClassifiedBase
from governance.drafts import classification_held, draft_digest, draft_kind, drafts_of
from skills.models import Skill
from snippets.models import Snippet, normalise_tag
from snippets.selectors import SnippetEdit, snippet_draft_edits


@dataclass(frozen=True)
class DraftedSide:
    """The configuration (an unsaved copy when drafted), its drafted skills (None: the linked ones),
    the snippet edits, and the drafts applied: ``{"kind", "identifier", "object_id", "digest"}``."""

    configuration: Configuration
    own_skills: tuple[Skill, ...] | None
    snippet_edits: tuple[SnippetEdit, ...]
    applied: tuple[dict[str, Any], ...]


def drafted_side(configuration: Configuration) -> DraftedSide:
    """``configuration`` as its pending drafts and those of the snippets it selects would make it."""
    drafted = configuration_drafted(configuration=configuration, author_id=None)
    applied: list[dict[str, Any]] = []
    side = configuration
    skills = None
    if drafted is not None:
        side = drafted.configuration
        _hold(configuration, side)
        skills = drafted.skills
        applied.append(_listed(configuration))
    tags = set(side.snippet_tags) | set(configuration.snippet_tags)
    digests = {draft.object_id: draft for draft in drafts_of(Snippet)}
    edits = []
    all_edits = snippet_draft_edits(author_id=None)
    live_rows = Snippet.objects.prefetch_related("tags").in_bulk([edit.snippet.pk for edit in all_edits])
    for edit in all_edits:
        live = live_rows.get(edit.snippet.pk)
        draft = digests.get(str(edit.snippet.pk))
        if live is None or draft is None:
            continue
        live_tags = {tag.name for tag in live.tags.all()}
        if not (tags & (live_tags | {normalise_tag(tag) for tag in edit.tags})):
            continue  # a draft of a snippet this configuration selects neither live nor drafted
        _hold(live, edit.snippet)
        edits.append(edit)
        applied.append(
            {
                "kind": draft_kind(live),
                "identifier": live.identifier,
                "object_id": str(live.pk),
                "digest": draft_digest(draft),
            }
        )
    return DraftedSide(side, skills, tuple(edits), tuple(applied))


def _listed(row: Configuration) -> dict[str, Any]:
    draft = drafts_of(Configuration).get(object_id=str(row.pk))
    return {
        "kind": draft_kind(row),
        "identifier": row.identifier,
        "object_id": str(row.pk),
        "digest": draft_digest(draft),
    }


def _hold(live: ClassifiedBase, drafted: ClassifiedBase) -> None:
    """Give ``drafted`` (unsaved) the stricter of its and ``live``'s classification, field by field."""
    drafted.classify(classification_held(live.classification, drafted.classification))


def with_model(configuration: Configuration, model: LlmModel) -> Configuration:
    """``configuration`` (a copy when the model differs) served by ``model`` instead of its own; its
    fallbacks stay, so the call's zone is still the least trusted of every model it may reach."""
    if model.pk == configuration.model_id:
        return configuration
    served = copy.copy(configuration)
    served.model = model
    return served
