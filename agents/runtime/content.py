"""What a send contains, resolved before it is planned (``agents/runtime/plan.py`` plans from it).

One of three sources, chosen by the caller, never by the plan:

* :func:`live_content`: the configuration's rows as they are now (a completion, a preview, a run
  without pins), with the skills a request adds;
* :func:`pinned_send_content`: a run's pinned versions (``agents/runtime/pins.py``): the configuration's
  pinned fields, snippets and skills in place of the live ones;
* :func:`edited_content`: an editor's unsaved edits, to show what they would do (the live token
  badge, ``editors/edit_effects.py``; the drafted side of a comparison, ``editors/admin/draft_compare.py``);
  sent only on an evaluation's drafted side (``evaluations/drafts.py``).

The configuration's models, fallbacks and disabled tools are always the live ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from agents.runtime.parts import compose_skills, configuration_parts
from agents.runtime.pins import PinnedContent
from catalog.models import Configuration, LlmModel
from skills.composition import SkillBlock
from skills.models import Skill
from snippets.selectors import SnippetEdit, SnippetSelection, snippet_select


@dataclass(frozen=True)
class SendContent:
    """The configuration as sent (a run's pinned fields applied), its fallbacks, snippet selection and
    composed skills, the tools switched off, and the run's pins it holds (None: live content)."""

    configuration: Configuration
    fallbacks: tuple[LlmModel, ...]
    selection: SnippetSelection
    skills: SkillBlock
    disabled_tools: frozenset[str]
    pinned: PinnedContent | None = None


def live_content(configuration: Configuration, request_skills: Sequence[Skill] = ()) -> SendContent:
    """The configuration's live content; ``request_skills`` composed after its own skills."""
    parts = configuration_parts(configuration)
    skills = (
        compose_skills(configuration, parts.own_skills, tuple(request_skills))
        if request_skills
        else parts.skills
    )
    return SendContent(configuration, parts.fallbacks, parts.selection, skills, parts.disabled_tools)


def pinned_send_content(configuration: Configuration, pinned: PinnedContent) -> SendContent:
    """A run's pinned content: the pinned configuration fields, snippets and skills (the tags the live
    selection found unknown or empty are still reported)."""
    parts = configuration_parts(configuration)
    return SendContent(
        pinned.configuration(configuration),
        parts.fallbacks,
        replace(parts.selection, snippets=pinned.snippets),
        pinned.skills,
        parts.disabled_tools,
        pinned,
    )


def edited_content(
    configuration: Configuration,
    snippet_edits: Sequence[SnippetEdit] = (),
    own_skills: Sequence[Skill] | None = None,
) -> SendContent:
    """The content with an editor's unsaved ``snippet_edits`` selected in place of the saved rows, and
    ``own_skills`` (a drafted configuration's) in place of its linked skills."""
    live = live_content(configuration)
    selection = (
        snippet_select(tags=configuration.snippet_tags, edits=snippet_edits)
        if snippet_edits
        else live.selection
    )
    skills = compose_skills(configuration, tuple(own_skills)) if own_skills is not None else live.skills
    return replace(live, selection=selection, skills=skills)
