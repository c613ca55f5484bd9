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
from governance.drafts_admin import form_field_initial
from governance.vocabulary import UntrustedActionPolicy
from skills.models import Skill
from skills.selectors import skills_in_order

_IN_PARENTHESES = re.compile(r".*\(([^()]+)\)\s*")
LIST_FIELDS = ("snippet_tags", "allowed_tool_groups", "allowed_tools")


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
        for name in LIST_FIELDS:
            if name in self.fields:
                self.fields[name].help_text = 'A JSON list of strings, e.g. ["a", "b"]; empty: none.'
        if "untrusted_action" in self.fields:
            # A form that does not send it (an older page, a script) keeps the stored policy.
            self.fields["untrusted_action"].required = False

    def _live_skill_ids(self) -> list[int]:
        return list(self.instance.skill_links.order_by("position").values_list("skill_id", flat=True))

    def clean_skill_list(self) -> list[int]:
        return skill_ids_parse(self.cleaned_data.get("skill_list") or "")

    def _empty_list(self, name: str) -> Any:
        value = self.cleaned_data.get(name)
        return [] if value in (None, "") else value

    def clean_allowed_tool_groups(self) -> Any:
        return self._empty_list("allowed_tool_groups")

    def clean_allowed_tools(self) -> Any:
        return self._empty_list("allowed_tools")

    def clean_untrusted_action(self) -> str:
        value = self.cleaned_data.get("untrusted_action")
        return str(value or self.instance.untrusted_action or UntrustedActionPolicy.APPROVE)
