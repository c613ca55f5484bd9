"""Parse one SKILL.md into a :class:`ParsedSkill` (docs/architecture.md). Pure: no I/O, no models.

Contract of :func:`parse_skill_md`:

- Bytes must be UTF-8; one leading BOM is stripped. CRLF and lone CR become LF before anything else, so
  sizes, the body and the checksum never depend on the author's line endings.
- The file starts with a ``---`` line; the front matter runs to the next ``---`` line. Trailing spaces or
  tabs on either delimiter line are tolerated. Front matter (the lines between the delimiters, newlines
  included) is at most 8 KiB of UTF-8, the body (everything after the closing line, verbatim) at most 64 KiB.
- YAML is read with a ``yaml.SafeLoader`` subclass (``safe_load`` semantics, skills/front_matter.py) that
  is stricter: duplicate keys (PyYAML would silently keep the last), aliases (so no "billion laughs"), explicit tags such as
  ``!!binary`` and nesting deeper than 20 levels are ``yaml_invalid``; timestamps stay text, so
  ``2024-05-01`` is kept as written. A kept unknown value is therefore JSON-representable unless it holds
  NaN, an infinity or a non-string nested key, which is ``front_matter_value_invalid``.
- One slip is read leniently (skills/front_matter.py): a top-level plain value holding ``: ``, such as
  ``description: Cleans exports: trims cells``, is read as plain text and flagged with the warning
  ``front_matter_lenient: value of 'description' read as plain text``; any other YAML error is ``yaml_invalid``.
- ``name`` follows the Agent Skills reference validator (skills/names.py): NFKC-normalised, lowercase
  letters and digits of any script in single-hyphen-separated runs, equal to the NFKC-normalised folder
  name; a word mixing scripts is ``name_mixed_script``. The stored name is the normalised one.
- ``allowed-tools`` (a string, or a list of strings) is split on whitespace and commas outside
  parentheses, so ``Bash(git add:*), Read`` is two tools; ``declares_allowed_tools`` tells an empty
  declaration ("no tools") from an absent key ("no opinion").
- The spec core is enforced; any other top-level key is kept in ``extra_front_matter``, listed in
  ``unknown_keys`` and flagged with the warning ``unknown_keys``. An empty body is allowed and flagged
  ``body_empty``; a body over the spec's recommended 500 lines is flagged ``body_over_500_lines``.
- Checks run in the order of the catalogue below; the first failure is raised.

``SkillParseError`` catalogue (``code = "skill_invalid"``, ``rule`` is one of):

=============================  ===================================================================
``file_too_large``             raw size beyond twice the two caps: no valid file can be that big
``not_utf8``                   bytes are not UTF-8
``front_matter_missing``       the first line is not ``---``
``front_matter_unterminated``  no closing ``---`` line
``front_matter_too_large``     front matter over 8 KiB
``body_too_large``             body over 64 KiB
``yaml_invalid``               YAML syntax (tabs, indentation), duplicate key, alias, tag, deep nesting
``front_matter_empty``         nothing but whitespace or comments between the delimiters
``front_matter_not_mapping``   the YAML is a list or a scalar
``front_matter_key_invalid``   a top-level key that is not a string
``front_matter_value_invalid`` an unknown key's value JSON cannot hold (NaN, infinity, non-string key)
``name_missing``               ``name`` absent, null or empty
``name_invalid``               not a string, or not lowercase letters and digits in single-hyphen-separated runs
``name_too_long``              over 64 characters
``name_mixed_script``          a word of the name mixes scripts (a Cyrillic ``\u0430`` in a Latin word)
``name_folder_mismatch``       differs from the folder name (checked only when a folder is given)
``description_missing``        absent, null or blank
``description_invalid``        not a string, or contains ``<`` or ``>``
``description_too_long``       over 1024 characters (after stripping surrounding whitespace)
``license_invalid``            present but not a non-blank string
``compatibility_invalid``      present but not a non-blank string
``compatibility_too_long``     over 500 characters
``metadata_invalid``           not a mapping of string to string
``allowed_tools_invalid``      not a string or list of strings, empty list item, unbalanced parentheses
=============================  ===================================================================
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from typing import Any

import yaml

from skills.errors import SkillParseError, SkillParseRule
from skills.front_matter import read_front_matter
from skills.names import is_well_formed, mixed_script_word, normalise_folder, normalise_name

MAX_FRONT_MATTER_BYTES = 8 * 1024
MAX_BODY_BYTES = 64 * 1024
# CRLF normalisation can halve a file, so nothing larger than this can pass both caps: refuse before decoding.
MAX_FILE_BYTES = 2 * (MAX_FRONT_MATTER_BYTES + MAX_BODY_BYTES) + 64
MAX_NAME_CHARS = 64
MAX_DESCRIPTION_CHARS = 1024
MAX_COMPATIBILITY_CHARS = 500
RECOMMENDED_MAX_BODY_LINES = 500

WARNING_BODY_EMPTY = "body_empty"
WARNING_BODY_OVER_500_LINES = "body_over_500_lines"
WARNING_UNKNOWN_KEYS = "unknown_keys"
WARNING_FRONT_MATTER_LENIENT = "front_matter_lenient"

SPEC_KEYS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

_BOM = b"\xef\xbb\xbf"
_DELIMITER = re.compile(r"^---[ \t]*$", re.MULTILINE)
# A relative path under a resource folder, not preceded by anything that would make it part of a URL,
# an absolute path or a ``../`` escape.
_REFERENCE = re.compile(r"(?<![\w./\\-])(?:\./)?((?:scripts|references|assets)/[\w./-]+)")

Rule = SkillParseRule


@dataclass(frozen=True)
class ParsedSkill:
    """A SKILL.md that passed every rule. ``metadata`` and ``extra_front_matter`` are fresh dicts (JSON-safe).

    ``allowed_tools`` is empty both when the key is absent and when it declares no tools;
    ``declares_allowed_tools`` tells them apart (an empty declaration means "no tools", absence "no opinion").
    ``checksum`` is the sha256 hex of the whole normalised text (front matter included) as UTF-8.
    """

    name: str
    description: str
    body: str
    license: str | None
    compatibility: str | None
    metadata: dict[str, str]
    allowed_tools: tuple[str, ...]
    declares_allowed_tools: bool
    unknown_keys: tuple[str, ...]
    extra_front_matter: dict[str, Any]
    warnings: tuple[str, ...]
    checksum: str
    references: tuple[str, ...]


class _Invalid(Exception):
    """Raised inside the parser without the path; :func:`parse_skill_md` adds it."""

    def __init__(self, rule: SkillParseRule, detail: str, line: int | None = None) -> None:
        super().__init__(detail)
        self.rule = rule
        self.line = line


def parse_skill_md(raw: bytes, *, path: str, folder_name: str | None) -> ParsedSkill:
    """Parse and validate one SKILL.md. ``path`` is only used in errors; ``folder_name`` None skips the
    folder check (a lone file). Raises :class:`SkillParseError` naming ``path`` and the broken rule."""
    try:
        return _parse(raw, folder_name)
    except _Invalid as invalid:
        raise SkillParseError(path=path, rule=invalid.rule, detail=str(invalid), line=invalid.line) from None


def _parse(raw: bytes, folder_name: str | None) -> ParsedSkill:
    text = _decode(raw)
    front_matter, body = _split(text)
    data, lenient_keys = _load_front_matter(front_matter)
    extra = _extra_front_matter(data)
    name = _name(data, folder_name)
    description = _description(data)
    license_ = _optional_text(data, "license", Rule.LICENSE_INVALID)
    compatibility = _compatibility(data)
    metadata = _metadata(data)
    allowed_tools, declares_allowed_tools = _allowed_tools(data)
    return ParsedSkill(
        name=name,
        description=description,
        body=body,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        allowed_tools=allowed_tools,
        declares_allowed_tools=declares_allowed_tools,
        unknown_keys=tuple(extra),
        extra_front_matter=extra,
        warnings=_warnings(body, extra, lenient_keys),
        checksum=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        references=_references(body),
    )


def _decode(raw: bytes) -> str:
    if len(raw) > MAX_FILE_BYTES:
        raise _Invalid(
            Rule.FILE_TOO_LARGE, f"the file is {len(raw)} bytes; none valid exceeds {MAX_FILE_BYTES}"
        )
    raw = raw.removeprefix(_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _Invalid(Rule.NOT_UTF8, f"the file is not UTF-8 (invalid byte at offset {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split(text: str) -> tuple[str, str]:
    """Return (front matter, body) and enforce both byte caps."""
    opening = _DELIMITER.match(text)
    if opening is None:
        raise _Invalid(Rule.FRONT_MATTER_MISSING, "the file must start with a '---' line (YAML front matter)")
    if opening.end() == len(text):
        raise _Invalid(Rule.FRONT_MATTER_UNTERMINATED, "the front matter has no closing '---' line")
    closing = _DELIMITER.search(text, opening.end() + 1)
    if closing is None:
        raise _Invalid(Rule.FRONT_MATTER_UNTERMINATED, "the front matter has no closing '---' line")
    front_matter = text[opening.end() + 1 : closing.start()]
    body = text[closing.end() + 1 :]
    _check_size(front_matter, MAX_FRONT_MATTER_BYTES, Rule.FRONT_MATTER_TOO_LARGE, "front matter")
    _check_size(body, MAX_BODY_BYTES, Rule.BODY_TOO_LARGE, "body")
    return front_matter, body


def _check_size(part: str, limit: int, rule: SkillParseRule, label: str) -> None:
    size = len(part.encode("utf-8"))
    if size > limit:
        raise _Invalid(rule, f"the {label} is {size} bytes; max {limit}")


def _load_front_matter(front_matter: str) -> tuple[dict[Any, Any], tuple[str, ...]]:
    """The front matter as a mapping with string keys, and the keys whose values were read leniently."""
    try:
        data, lenient_keys = read_front_matter(front_matter)
    except yaml.YAMLError as exc:
        raise _yaml_invalid(exc) from None
    if data is None:
        raise _Invalid(Rule.FRONT_MATTER_EMPTY, "the front matter is empty")
    if not isinstance(data, dict):
        raise _Invalid(Rule.FRONT_MATTER_NOT_MAPPING, f"front matter must be a mapping, not {_kind(data)}")
    for key in data:
        if not isinstance(key, str):
            raise _Invalid(Rule.FRONT_MATTER_KEY_INVALID, f"top-level keys must be strings, not {_kind(key)}")
    return data, lenient_keys


def _yaml_invalid(exc: yaml.YAMLError) -> _Invalid:
    """Summarise a YAML error without quoting the document (it may hold anything)."""
    line = None
    if isinstance(exc, yaml.MarkedYAMLError):
        problem = exc.problem or exc.context or "malformed YAML"
        mark = exc.problem_mark or exc.context_mark
        # +1 for a 1-based line, +1 for the opening '---' line.
        line = mark.line + 2 if mark is not None else None
    else:
        problem = str(exc).splitlines()[0]
    problem = problem.replace("\t", "\\t")
    if "'\\t'" in problem:  # PyYAML names the offending character with repr()
        problem += " (YAML does not allow tabs for indentation)"
    return _Invalid(Rule.YAML_INVALID, f"invalid YAML front matter: {problem}", line)


def _name(data: dict[str, Any], folder_name: str | None) -> str:
    """The name, NFKC-normalised, in any script (skills/names.py)."""
    value = data.get("name")
    if value is None or value == "":
        raise _Invalid(Rule.NAME_MISSING, "'name' is required")
    if not isinstance(value, str):
        raise _Invalid(Rule.NAME_INVALID, f"'name' must be a string, not {_kind(value)}")
    name = normalise_name(value)
    if not name:
        raise _Invalid(Rule.NAME_MISSING, "'name' is required")
    if len(name) > MAX_NAME_CHARS:
        raise _Invalid(Rule.NAME_TOO_LONG, f"'name' has {len(name)} characters; max {MAX_NAME_CHARS}")
    if not is_well_formed(name):
        raise _Invalid(
            Rule.NAME_INVALID,
            "'name' may contain only lowercase letters and digits (of any script) and single hyphens, "
            "and must not start or end with a hyphen",
        )
    word = mixed_script_word(name)
    if word is not None:
        raise _Invalid(
            Rule.NAME_MIXED_SCRIPT,
            f"'name' mixes letters of different scripts in the word {word!r} (a look-alike of another name)",
        )
    if folder_name is not None and name != normalise_folder(folder_name):
        raise _Invalid(Rule.NAME_FOLDER_MISMATCH, f"'name' is {name!r} but the folder is {folder_name!r}")
    return name


def _description(data: dict[str, Any]) -> str:
    value = data.get("description")
    if value is not None and not isinstance(value, str):
        raise _Invalid(Rule.DESCRIPTION_INVALID, f"'description' must be a string, not {_kind(value)}")
    text = (value or "").strip()
    if not text:
        raise _Invalid(Rule.DESCRIPTION_MISSING, "'description' is required and must not be blank")
    if len(text) > MAX_DESCRIPTION_CHARS:
        raise _Invalid(
            Rule.DESCRIPTION_TOO_LONG,
            f"'description' has {len(text)} characters; max {MAX_DESCRIPTION_CHARS}",
        )
    if "<" in text or ">" in text:
        raise _Invalid(Rule.DESCRIPTION_INVALID, "'description' must not contain '<' or '>' (no XML tags)")
    return text


def _optional_text(data: dict[str, Any], key: str, rule: SkillParseRule) -> str | None:
    """An optional free-text field: absent or null is None; otherwise a non-blank string, stripped."""
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Invalid(rule, f"'{key}' must be a string, not {_kind(value)}")
    if not value.strip():
        raise _Invalid(rule, f"'{key}' must not be blank when present")
    return value.strip()


def _compatibility(data: dict[str, Any]) -> str | None:
    text = _optional_text(data, "compatibility", Rule.COMPATIBILITY_INVALID)
    if text is not None and len(text) > MAX_COMPATIBILITY_CHARS:
        raise _Invalid(
            Rule.COMPATIBILITY_TOO_LONG,
            f"'compatibility' has {len(text)} characters; max {MAX_COMPATIBILITY_CHARS}",
        )
    return text


def _metadata(data: dict[str, Any]) -> dict[str, str]:
    value = data.get("metadata")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _Invalid(Rule.METADATA_INVALID, f"'metadata' must map strings to strings, not {_kind(value)}")
    for key, item in value.items():
        if not isinstance(key, str):
            raise _Invalid(Rule.METADATA_INVALID, f"'metadata' key is {_kind(key)}, not a string")
        if not isinstance(item, str):
            raise _Invalid(Rule.METADATA_INVALID, f"'metadata' value of {key!r:.60} is {_kind(item)}")
    return dict(value)


def _allowed_tools(data: dict[str, Any]) -> tuple[tuple[str, ...], bool]:
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
        raise _Invalid(Rule.ALLOWED_TOOLS_INVALID, f"'allowed-tools' is {_kind(value)}, not a string or list")
    tools: list[str] = []
    for item in value:
        if not isinstance(item, str):
            raise _Invalid(Rule.ALLOWED_TOOLS_INVALID, f"'allowed-tools' item is {_kind(item)}, not a string")
        names = _split_tools(item)
        if not names:
            raise _Invalid(Rule.ALLOWED_TOOLS_INVALID, "'allowed-tools' has an empty item")
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
        raise _Invalid(Rule.ALLOWED_TOOLS_INVALID, "'allowed-tools' has unbalanced parentheses")
    return tools + (["".join(current)] if current else [])


def _extra_front_matter(data: dict[str, Any]) -> dict[str, Any]:
    extra = {key: value for key, value in data.items() if key not in SPEC_KEYS}
    for key, value in extra.items():
        if not _is_json(value):
            raise _Invalid(
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


def _warnings(body: str, extra: dict[str, Any], lenient_keys: tuple[str, ...]) -> tuple[str, ...]:
    warnings = [
        f"{WARNING_FRONT_MATTER_LENIENT}: value of {key!r} read as plain text" for key in lenient_keys
    ]
    if extra:
        warnings.append(WARNING_UNKNOWN_KEYS)
    if not body.strip():
        warnings.append(WARNING_BODY_EMPTY)
    elif len(body.splitlines()) > RECOMMENDED_MAX_BODY_LINES:
        warnings.append(WARNING_BODY_OVER_500_LINES)
    return tuple(warnings)


def _references(body: str) -> tuple[str, ...]:
    """Relative paths under scripts/, references/ or assets/ that the body mentions, first mention first.

    A path with a ``..`` segment is left out: it points outside the skill's folder.
    """
    found: dict[str, None] = {}
    for match in _REFERENCE.finditer(body):
        candidate = match.group(1).rstrip("./")
        if ".." not in candidate.split("/") and candidate.count("/") >= 1:
            found.setdefault(candidate, None)
    return tuple(found)


def _kind(value: Any) -> str:
    """The YAML-ish name of a value's type, for messages that must not quote the value."""
    kinds = {bool: "a boolean", int: "an integer", float: "a number", list: "a list", dict: "a mapping"}
    if value is None:
        return "null"
    return kinds.get(type(value), f"a {type(value).__name__}")
