"""Tools shipped with the project. Each one filters what it returns by the step's trust zone, so a
tool can never hand the model content the context check would have refused.

They sit beside ``agents/tools/`` rather than in it: they read the runtime's parts, while the runtime
imports the tool registry and gate, so keeping them apart keeps the import arrow one way.
"""

from __future__ import annotations

from typing import Any

from agents.models import AgentRun
from agents.runtime.parts import snippet_selection
from agents.runtime.plan import LOAD_SKILL_TOOL, configuration_skill_block
from agents.tools.registry import REGISTRY, Tool, ToolContext, ToolEffect, ToolOutput
from governance.policy import decide
from governance.vocabulary import DataClass, EnforcementMode, Outcome
from skills.composition import skill_block, skill_sources
from skills.selectors import skills_in_order
from snippets.composition import snippet_block, snippet_sources

MAX_TAGS = 10


def snippets_by_tag(context: ToolContext, arguments: dict[str, Any]) -> str:
    tags = arguments.get("tags")
    if not isinstance(tags, list) or not tags or not all(isinstance(t, str) for t in tags):
        return "Error: 'tags' must be a non-empty list of strings."
    selection = snippet_selection(tags[:MAX_TAGS], context.catalog)
    # Every returned snippet is checked as if enforced, whatever its row says: a tool result
    # is always enforced (docs/governance.md, "Sources").
    decision = decide(snippet_sources(selection.snippets), context.zone, EnforcementMode.ENFORCE_ALL)
    permitted = [
        snippet
        for snippet, verdict in zip(selection.snippets, decision.sources, strict=True)
        if verdict.outcome == Outcome.ALLOWED
    ]
    withheld = len(selection.snippets) - len(permitted)
    parts = [snippet_block(permitted) if permitted else "No snippets found."]
    if withheld:
        parts.append(f"({withheld} snippet(s) withheld: not permitted in this trust zone.)")
    if selection.unknown_tags:
        parts.append(f"(Unknown tags: {', '.join(selection.unknown_tags)}.)")
    return "\n\n".join(parts)


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
)


def load_skill(context: ToolContext, arguments: dict[str, Any]) -> str | ToolOutput:
    """The full body of one of the run's skills (progressive mode), if it is still eligible and its
    class may go to the step's zone. Only the run's own skills can be loaded, never any other."""
    name = arguments.get("name")
    if not isinstance(name, str) or not name:
        return "Error: 'name' must be the name of one of the listed skills."
    run = AgentRun.objects.select_related("configuration").get(id=context.run.run_id)
    block = configuration_skill_block(run.configuration, skills_in_order(skill_ids=run.request_skills))
    skill = next((s for s in block.included if s.name == name), None)
    if skill is None:
        return f"Error: no skill named {name!r} is available to this run."
    verdict = decide(skill_sources([skill]), context.zone, EnforcementMode.ENFORCE_ALL).sources[0]
    if verdict.outcome != Outcome.ALLOWED:
        return f"Error: skill {name!r} may not be loaded in this trust zone."
    data_class = DataClass.parse(skill.data_class) or DataClass.SECRET_ADJACENT
    return ToolOutput(text=skill_block([skill]).text, data_class=data_class)


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
)


def register_builtins() -> None:
    for tool in (SNIPPETS_BY_TAG, LOAD_SKILL):
        if REGISTRY.get(tool.name) is None:
            REGISTRY.register(tool)
