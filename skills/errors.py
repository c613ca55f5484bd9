"""Typed skill errors with stable codes.

A SKILL.md that breaks a rule raises :class:`SkillParseError` (code ``skill_invalid``). Its ``rule`` is one
of :class:`SkillParseRule`; both the code and the rule values are API and are never renamed.
"""

from __future__ import annotations

from enum import StrEnum

from config.errors import ApplicationError


class SkillParseRule(StrEnum):
    """Which rule a SKILL.md broke. One value per distinct fix an editor has to make."""

    FILE_TOO_LARGE = "file_too_large"
    NOT_UTF8 = "not_utf8"
    FRONT_MATTER_MISSING = "front_matter_missing"
    FRONT_MATTER_UNTERMINATED = "front_matter_unterminated"
    FRONT_MATTER_TOO_LARGE = "front_matter_too_large"
    BODY_TOO_LARGE = "body_too_large"
    YAML_INVALID = "yaml_invalid"
    FRONT_MATTER_EMPTY = "front_matter_empty"
    FRONT_MATTER_NOT_MAPPING = "front_matter_not_mapping"
    FRONT_MATTER_KEY_INVALID = "front_matter_key_invalid"
    FRONT_MATTER_VALUE_INVALID = "front_matter_value_invalid"
    NAME_MISSING = "name_missing"
    NAME_INVALID = "name_invalid"
    NAME_TOO_LONG = "name_too_long"
    NAME_FOLDER_MISMATCH = "name_folder_mismatch"
    DESCRIPTION_MISSING = "description_missing"
    DESCRIPTION_INVALID = "description_invalid"
    DESCRIPTION_TOO_LONG = "description_too_long"
    LICENSE_INVALID = "license_invalid"
    COMPATIBILITY_INVALID = "compatibility_invalid"
    COMPATIBILITY_TOO_LONG = "compatibility_too_long"
    METADATA_INVALID = "metadata_invalid"
    ALLOWED_TOOLS_INVALID = "allowed_tools_invalid"


class SkillParseError(ApplicationError):
    """A SKILL.md broke a rule. The message names the file and the rule; it never quotes the body.

    ``extra`` is ``{"path", "rule"}`` plus ``"line"`` (1-based, in the file) when the rule points at a line.
    """

    code = "skill_invalid"

    def __init__(self, *, path: str, rule: SkillParseRule, detail: str, line: int | None = None) -> None:
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(
            f"{where}: {detail} (rule {rule.value})",
            extra={"path": path, "rule": rule.value} | ({"line": line} if line is not None else {}),
        )
        self.path = path
        self.rule = rule
        self.detail = detail
        self.line = line
