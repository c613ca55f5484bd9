"""Tools shipped with the project. Each one filters what it returns by the step's trust zone, so a
tool can never hand the model content the context check would have refused.

They sit beside ``agents/tools/`` rather than in it: they read the runtime's parts, while the runtime
imports the tool registry and gate, so keeping them apart keeps the import arrow one way.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from typing import Any

from agents.models import AgentRun
from agents.runtime.parts import configuration_skills, snippet_selection
from agents.runtime.pins import pinned_skills, run_pins
from agents.runtime.plan import LOAD_SKILL_TOOL
from governance.policy import SourceDecision, decide
from governance.vocabulary import DataClass, EnforcementMode, Outcome, TrustZone
from skills.composition import SkillMode, skill_block, skill_sources
from skills.models import Skill
from skills.parsing import MAX_BODY_BYTES, MAX_FRONT_MATTER_BYTES
from skills.selectors import skills_in_order
from snippets.composition import snippet_block, snippet_sources
from tools.registry import REGISTRY, Tool, ToolContext, ToolEffect, ToolOutput

notices = logging.getLogger("agents.notices")

MAX_TAGS = 10
MAX_NOTICE_CHARS = 500
# One whole skill, fenced: a body within the parser's cap, a name and description within the front
# matter's cap, and the guard preamble and markers (well under 1 KiB). The skill block's own bound
# (SKILL_BLOCK_MAX_BYTES) is for the first user message, not for a skill asked for by name.
LOAD_SKILL_MAX_BYTES = MAX_BODY_BYTES + MAX_FRONT_MATTER_BYTES + 1024


def covering_class(verdicts: Iterable[SourceDecision]) -> DataClass:
    """The class of a tool result holding these rows: the least sensitive class whose ceiling admits
    no zone that any row's class or effective ceiling does not. A result is shown to later receivers
    (an API client reading the run) by its class alone, so the class carries each row's ceiling."""
    verdicts = tuple(verdicts)
    rank = min((verdict.ceiling.rank for verdict in verdicts), default=TrustZone.EXTERNAL_GLOBAL.rank)
    by_ceiling = next(c for c in DataClass if c.ceiling.rank <= rank)
    classes = [verdict.data_class or DataClass.SECRET_ADJACENT for verdict in verdicts]
    return max([by_ceiling, *classes], key=lambda data_class: data_class.rank)


def snippets_by_tag(context: ToolContext, arguments: dict[str, Any]) -> str | ToolOutput:
    tags = arguments.get("tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
        return "Error: 'tags' must be a non-empty list of strings."
    selection = snippet_selection(tags[:MAX_TAGS], context.catalog)
    # Every returned snippet is checked as if enforced, whatever its row says: a tool result
    # is always enforced (docs/governance.md, "Sources").
    decision = decide(snippet_sources(selection.snippets), context.zone, EnforcementMode.ENFORCE_ALL)
    allowed = [
        (snippet, verdict)
        for snippet, verdict in zip(selection.snippets, decision.sources, strict=True)
        if verdict.outcome == Outcome.ALLOWED
    ]
    permitted = [snippet for snippet, _ in allowed]
    withheld = len(selection.snippets) - len(permitted)
    parts = [snippet_block(permitted) if permitted else "No snippets found."]
    if withheld:
        parts.append(f"({withheld} snippet(s) withheld: not permitted in this trust zone.)")
    if selection.unknown_tags:
        parts.append(f"(Unknown tags: {', '.join(selection.unknown_tags)}.)")
    return ToolOutput(text="\n\n".join(parts), data_class=covering_class(verdict for _, verdict in allowed))


SNIPPETS_BY_TAG = Tool(
    name="snippets_by_tag",
    description="Look up the editors' prompt snippets carrying any of the given tags.",
    parameters={
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags to look up"}
        },
        "required": ["tags"],
    },
    group="content",
    effect=ToolEffect.READ_ONLY,
    handler=snippets_by_tag,
    data_class=DataClass.EDITOR_CONTENT,
    consequential=False,
    trusted=True,  # published snippets, as the system message holds them
)


def load_skill(context: ToolContext, arguments: dict[str, Any]) -> str | ToolOutput:
    """The whole fenced body of one of the run's skills (progressive mode), in the version the run
    pinned, if it is still eligible (enabled, not orphaned, at or above the trust floor, checksum
    intact) and its live class may go to the step's zone. Only the run's own skills can be loaded,
    never any other. Never an empty text."""
    name = arguments.get("name")
    if not isinstance(name, str) or not name:
        return "Error: 'name' must be the name of one of the listed skills."
    run = AgentRun.objects.select_related("configuration").get(id=context.run.run_id)
    skill = _eligible_skill(run, name)
    if skill is None:
        return f"Error: no skill named {name!r} is available to this run."
    verdict = decide(skill_sources([skill]), context.zone, EnforcementMode.ENFORCE_ALL).sources[0]
    if verdict.outcome != Outcome.ALLOWED:
        return f"Error: skill {name!r} may not be loaded in this trust zone."
    text = skill_block([skill], max_bytes=LOAD_SKILL_MAX_BYTES).text
    if not text:  # the checksum stopped matching since the lookup above
        return f"Error: skill {name!r} could not be loaded."
    return ToolOutput(text=text, data_class=covering_class([verdict]))


def _eligible_skill(run: AgentRun, name: str) -> Skill | None:
    """The run's skill called ``name`` among those the configuration's rules admit. Unbounded in
    bytes: the listing in the first user message may have dropped a skill for space, the tool may
    still load it. A run with pins loads the skill's pinned version, as its steps list it
    (agents/runtime/pins.py); whether it may be loaded is decided on the live row."""
    pins = run_pins(run)
    if pins:
        configuration, own = pinned_skills(configuration=run.configuration, pins=pins)
        requested: list[Skill] = []  # the request's skills are among the pins
    else:
        configuration = run.configuration
        own = configuration_skills(configuration)
        requested = skills_in_order(skill_ids=run.request_skills)
    eligible = skill_block(
        own,
        requested,
        trust_floor=configuration.skill_trust_floor,
        max_bytes=sys.maxsize,
        mode=SkillMode.PROGRESSIVE,
    )
    return next((skill for skill in eligible.included if skill.name == name), None)


LOAD_SKILL = Tool(
    name=LOAD_SKILL_TOOL,
    description="Load the full instructions of one of the skills listed in the skill block, by name.",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The skill's name"}},
        "required": ["name"],
    },
    group="skills",
    effect=ToolEffect.READ_ONLY,
    handler=load_skill,
    data_class=DataClass.EDITOR_CONTENT,
    consequential=False,
    # Not trusted: a skill's body may come from a source nobody reviewed (the skill block fences it
    # as untrusted data for the same reason).
)


def notify_editors(context: ToolContext, arguments: dict[str, Any]) -> str | ToolOutput:
    """Post a notice to the editors (a line in the ``agents.notices`` log). It changes the world, so
    it runs only once a person approved the call (agents/runtime/approvals.py)."""
    message = arguments.get("message")
    if not isinstance(message, str) or not message.strip():
        return "Error: 'message' must be a non-empty text."
    notices.info("run %s: %s", context.run.run_id, message[:MAX_NOTICE_CHARS])
    return "The editors were notified."


NOTIFY_EDITORS = Tool(
    name="notify_editors",
    description="Post a short notice to the editors. A person approves each notice before it is sent.",
    parameters={
        "type": "object",
        "properties": {"message": {"type": "string", "description": "The notice, in a few sentences"}},
        "required": ["message"],
    },
    group="editing",
    effect=ToolEffect.NON_IDEMPOTENT_WRITE,
    handler=notify_editors,
    data_class=DataClass.EDITOR_CONTENT,
    requires_approval=True,
    consequential=True,  # it posts to people
)


def register_builtins() -> None:
    from agents.runtime.quarantine import READ_RESULT  # it sends through the runtime: imported late

    for tool in (SNIPPETS_BY_TAG, LOAD_SKILL, NOTIFY_EDITORS, READ_RESULT):
        if REGISTRY.get(tool.name) is None:
            REGISTRY.register(tool)
