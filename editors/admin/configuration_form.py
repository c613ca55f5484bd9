"""The configuration change form: its skills, in order, as lines of text, and its tool settings.

A configuration's own skills are links with a position; the form edits them as one line per skill
(``skill_list``, a form field, not a model field), so that a change is a value of the form like any
other and is saved as part of the configuration's draft (``governance.drafts_admin``) until it is
published. The skill mode, trust floor and allowed tools are model fields and are drafted the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from django import forms

from catalog.models import Configuration
from config.string_list import StringListField
from governance.drafts_admin import form_field_initial
from governance.vocabulary import UntrustedActionPolicy
from skills.models import Skill
from skills.selectors import skills_in_order
from snippets.models import Tag, normalise_tag
from tools.mcp import GROUP_PREFIX, PREFIX
from tools.models import McpServer
from tools.registry import REGISTRY

_IN_PARENTHESES = re.compile(r".*\(([^()]+)\)\s*")
_TAG_FIELD = Tag._meta.get_field("name")
assert isinstance(_TAG_FIELD.max_length, int)  # a CharField's
TAG_LENGTH: int = _TAG_FIELD.max_length


def tool_groups() -> list[str]:
    """The groups a configuration may allow: those of the tools in code, and each MCP server's."""
    servers = McpServer.objects.order_by("name").values_list("name", flat=True)
    return sorted({tool.group for tool in REGISTRY.all()}) + [f"{GROUP_PREFIX}{name}" for name in servers]


def tool_names() -> list[str]:
    """The tools a configuration may allow by name: those in code, and any tool of a registered MCP
    server (its tools are listed by the server when it is called: mcp__<server>__<tool>)."""
    servers = McpServer.objects.order_by("name").values_list("name", flat=True)
    return [tool.name for tool in REGISTRY.all()] + [f"{PREFIX}{name}__<tool>" for name in servers]


def unknown_tools(names: Sequence[str]) -> list[str]:
    code = {tool.name for tool in REGISTRY.all()}
    servers = set(McpServer.objects.values_list("name", flat=True))
    return [name for name in names if name not in code and _mcp_server(name) not in servers]


def _mcp_server(name: str) -> str | None:
    server, separator, tool = name.removeprefix(PREFIX).partition("__")
    return server if name.startswith(PREFIX) and separator and server and tool else None


def unknown_groups(names: Sequence[str]) -> list[str]:
    known = set(tool_groups())
    return [name for name in names if name not in known]


def long_tags(names: Sequence[str]) -> list[str]:
    return [name for name in names if len(name) > TAG_LENGTH]


def skill_lines(skills: Iterable[Skill]) -> str:
    """Skills as the form shows them: one ``name (identifier)`` per line."""
    return "\n".join(str(skill) for skill in skills)


def skill_names(skill_ids: Sequence[int]) -> str:
    """Skills as the publish page shows them: their names in order."""
    return ", ".join(skill.name for skill in skills_in_order(skill_ids=skill_ids))


def skill_ids_parse(text: str) -> list[int]:
    """The skills named one per line: ``name (identifier)`` as the form shows them, an identifier
    (``source:path``), or a name only one skill has. Raises ``ValidationError`` naming every line
    that matches no skill, or more than one, and any skill named twice."""
    candidates = Skill.objects.filter(is_orphaned=False).select_related("source")
    by_identifier = {skill.identifier: skill for skill in candidates}
    by_name: dict[str, list[Skill]] = {}
    for candidate in by_identifier.values():
        by_name.setdefault(candidate.name, []).append(candidate)
    chosen: list[int] = []
    problems: list[str] = []
    for line in (line.strip() for line in text.splitlines()):
        if not line:
            continue
        match = _IN_PARENTHESES.fullmatch(line)
        skill = by_identifier.get(match.group(1).strip()) if match else None
        skill = skill or by_identifier.get(line)
        named = by_name.get(line, [])
        if skill is None and len(named) == 1:
            skill = named[0]
        if skill is None:
            problems.append(f"{line!r}: " + ("several skills have this name" if named else "no such skill"))
        elif skill.pk in chosen:
            problems.append(f"{line!r}: named twice")
        else:
            chosen.append(skill.pk)
    if problems:
        raise forms.ValidationError("; ".join(problems))
    return chosen


class ConfigurationForm(forms.ModelForm):
    snippet_tags = StringListField(
        label="Snippet tags",
        normalise=normalise_tag,
        unknown=long_tags,
        what=f"tags (longer than {TAG_LENGTH} characters)",
        help_text="Comma-separated, in order: snippets are selected in this tag order, then by sorting and "
        "name. Tags are lower-cased and matched exactly.",
    )
    allowed_tool_groups = StringListField(
        label="Allowed tool groups",
        unknown=unknown_groups,
        known=tool_groups,
        what="tool groups",
        help_text="Comma-separated: every tool of each group may be offered. Empty: none.",
    )
    allowed_tools = StringListField(
        label="Allowed tools",
        unknown=unknown_tools,
        known=tool_names,
        what="tools",
        help_text="Comma-separated tool names (an MCP server's as mcp__<server>__<tool>). Empty: none.",
    )
    skill_list = forms.CharField(
        label="Skills",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 80}),
        help_text=(
            "One skill per line, in the order they are composed: name (identifier), the identifier "
            "(source:path), or a name only one skill has."
        ),
    )

    class Meta:
        model = Configuration
        fields = (
            "identifier",
            "name",
            "model",
            "is_active",
            "snippet_tags",
            "system_prompt",
            "system_prompt_data_class",
            "system_prompt_ceiling",
            "system_prompt_enforcement",
            "allow_system_override",
            "skill_mode",
            "skill_trust_floor",
            "allowed_tool_groups",
            "allowed_tools",
            "untrusted_action",
            "quarantine_untrusted",
            "max_iterations",
            "context_usage_note",
            "context_strategy",
            "compaction_threshold",
            "compaction_keep",
            "summary_model",
            "require_passing_evaluation",
            "require_no_regression",
        )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        skill_ids = form_field_initial(self, "skill_list", self._live_skill_ids, [])
        self.fields["skill_list"].initial = skill_lines(skills_in_order(skill_ids=skill_ids))
        if "untrusted_action" in self.fields:
            # A form that does not send it (an older page, a script) keeps the stored policy.
            self.fields["untrusted_action"].required = False

    def _live_skill_ids(self) -> list[int]:
        return list(self.instance.skill_links.order_by("position").values_list("skill_id", flat=True))

    def clean_skill_list(self) -> list[int]:
        return skill_ids_parse(self.cleaned_data.get("skill_list") or "")

    def clean_untrusted_action(self) -> str:
        value = self.cleaned_data.get("untrusted_action")
        return str(value or self.instance.untrusted_action or UntrustedActionPolicy.APPROVE)
