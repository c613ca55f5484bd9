"""The front matter's fields, each read and checked by the rules of docs/architecture.md and the
catalogue in :mod:`skills.parsing`: ``name``, ``description``, ``license``, ``compatibility``,
``metadata``, ``allowed-tools``, and the keys outside the spec. Pure: no I/O, no models."""

from __future__ import annotations

import math
from typing import Any

from skills.errors import SkillParseRule
from skills.names import is_well_formed, mixed_script_word, normalise_folder, normalise_name

MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

Rule = SkillParseRule


class Invalid(Exception):
    """Raised inside the parser without the path; :func:`parse_skill_md` adds it."""

    def __init__(self, rule: SkillParseRule, detail: str, line: int | None = None) -> None:
        super().__init__(detail)
        self.rule = rule
        self.line = line


def name(data: dict[str, Any], folder_name: str | None) -> str:
    """The name, NFKC-normalised, in any script (skills/names.py)."""
    value = data.get("name")
    if value is None or value == "":
        raise Invalid(Rule.NAME_MISSING, "'name' is required")
    if not isinstance(value, str):
        raise Invalid(Rule.NAME_INVALID, f"'name' must be a string, not {kind(value)}")
    name = normalise_name(value)
    if not name:
        raise Invalid(Rule.NAME_MISSING, "'name' is required")
    if len(name) > MAX_NAME_CHARS:
        raise Invalid(Rule.NAME_TOO_LONG, f"'name' has {len(name)} characters; max {MAX_NAME_CHARS}")
    if not is_well_formed(name):
        raise Invalid(
            Rule.NAME_INVALID,
            "'name' may contain only lowercase letters and digits (of any script) and single hyphens, "
            "and must not start or end with a hyphen",
        )
    word = mixed_script_word(name)
    if word is not None:
        raise Invalid(
            Rule.NAME_MIXED_SCRIPT,
            f"'name' mixes letters of different scripts in the word {word!r} (a look-alike of another name)",
        )
    if folder_name is not None and name != normalise_folder(folder_name):
        raise Invalid(Rule.NAME_FOLDER_MISMATCH, f"'name' is {name!r} but the folder is {folder_name!r}")
    return name


def description(data: dict[str, Any]) -> str:
    value = data.get("description")
    if value is not None and not isinstance(value, str):
        raise Invalid(Rule.DESCRIPTION_INVALID, f"'description' must be a string, not {kind(value)}")
    text = (value or "").strip()
    if not text:
        raise Invalid(Rule.DESCRIPTION_MISSING, "'description' is required and must not be blank")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise Invalid(
            Rule.DESCRIPTION_TOO_LONG,
            f"'description' has {len(text)} characters; max {MAX_DESCRIPTION_CHARS}",
        )
    if "<" in text or ">" in text:
        raise Invalid(Rule.DESCRIPTION_INVALID, "'description' must not contain '<' or '>' (no XML tags)")
    return text


def optional_text(data: dict[str, Any], key: str, rule: SkillParseRule) -> str | None:
    """An optional free-text field: absent or null is None; otherwise a non-blank string, stripped."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise Invalid(rule, f"'{key}' must be a string, not {kind(value)}")
    if not value.strip():
        raise Invalid(rule, f"'{key}' must not be blank when present")
    return value.strip()


def compatibility(data: dict[str, Any]) -> str | None:
    text = optional_text(data, "compatibility", Rule.COMPATIBILITY_INVALID)
    if text is not None and len(text) > MAX_COMPATIBILITY_CHARS:
        raise Invalid(
            Rule.COMPATIBILITY_TOO_LONG,
            f"'compatibility' has {len(text)} characters; max {MAX_COMPATIBILITY_CHARS}",
        )
    return text


def metadata(data: dict[str, Any]) -> dict[str, str]:
    value = data.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise Invalid(Rule.METADATA_INVALID, f"'metadata' must map strings to strings, not {kind(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise Invalid(Rule.METADATA_INVALID, f"'metadata' key is {kind(key)}, not a string")
        if not isinstance(item, str):
            raise Invalid(Rule.METADATA_INVALID, f"'metadata' value of {key!r:.60} is {kind(item)}")
    return dict(value)


def allowed_tools(data: dict[str, Any]) -> tuple[tuple[str, ...], bool]:
    """A string (tools separated by spaces or commas outside parentheses) or a list of such strings.

    Null declares no tools, like an empty string: deny rather than guess. Duplicates are dropped, order kept.
    """
    if "allowed-tools" not in data:
        return (), False
    value = data["allowed-tools"]
    if value is None:
        return (), True
    if isinstance(value, str):
        return tuple(dict.fromkeys(_split_tools(value))), True
    if not isinstance(value, list):
        raise Invalid(Rule.ALLOWED_TOOLS_INVALID, f"'allowed-tools' is {kind(value)}, not a string or list")
    tools: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise Invalid(Rule.ALLOWED_TOOLS_INVALID, f"'allowed-tools' item is {kind(item)}, not a string")
        names = _split_tools(item)
        if not names:
            raise Invalid(Rule.ALLOWED_TOOLS_INVALID, "'allowed-tools' has an empty item")
        tools.extend(names)
    return tuple(dict.fromkeys(tools)), True


def _split_tools(value: str) -> list[str]:
    # Separators inside parentheses belong to the tool pattern: "Bash(git add:*)" is one tool.
    tools: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        depth += (char == "(") - (char == ")")
        if depth < 0:
            break
        if depth == 0 and (char.isspace() or char == ","):
            tools.extend(["".join(current)] if current else [])
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise Invalid(Rule.ALLOWED_TOOLS_INVALID, "'allowed-tools' has unbalanced parentheses")
    return tools + (["".join(current)] if current else [])


def extra_front_matter(data: dict[str, Any]) -> dict[str, Any]:
    extra = {key: value for key, value in data.items() if key not in SPEC_KEYS}
    for key, value in extra.items():
        if not _is_json(value):
            raise Invalid(
                Rule.FRONT_MATTER_VALUE_INVALID,
                f"the value of {key!r:.60} has no JSON form (a non-string key, NaN or infinity)",
            )
    return extra


def _is_json(value: Any) -> bool:
    # Recursion is bounded: the loader refuses nesting deeper than MAX_YAML_DEPTH.
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(item) for item in value)
    if isinstance(value, dict):
        return all(isinstance(key, str) and _is_json(item) for key, item in value.items())
    return False


def kind(value: Any) -> str:
    """The YAML-ish name of a value's type, for messages that must not quote the value."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a mapping"}
    if value is None:
        return "null"
    return kinds.get(type(value), f"a {type(value).__name__}")
