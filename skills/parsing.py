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
import re
from dataclasses import dataclass
from typing import Any

import yaml

from skills import front_matter_fields as fields
from skills.errors import SkillParseError, SkillParseRule
from skills.front_matter import read_front_matter
from skills.front_matter_fields import Invalid

MAX_FRONT_MATTER_BYTES = 8 * 1024
MAX_BODY_BYTES = 64 * 1024
# CRLF normalisation can halve a file, so nothing larger than this can pass both caps: refuse before decoding.
MAX_FILE_BYTES = 2 * (MAX_FRONT_MATTER_BYTES + MAX_BODY_BYTES) + 64
RECOMMENDED_MAX_BODY_LINES = 500

WARNING_BODY_EMPTY = "body_empty"
WARNING_BODY_OVER_500_LINES = "body_over_500_lines"
WARNING_UNKNOWN_KEYS = "unknown_keys"
WARNING_FRONT_MATTER_LENIENT = "front_matter_lenient"

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


def parse_skill_md(raw: bytes, *, path: str, folder_name: str | None) -> ParsedSkill:
    """Parse and validate one SKILL.md. ``path`` is only used in errors; ``folder_name`` None skips the
    folder check (a lone file). Raises :class:`SkillParseError` naming ``path`` and the broken rule."""
    try:
        return _parse(raw, folder_name)
    except Invalid as invalid:
        raise SkillParseError(path=path, rule=invalid.rule, detail=str(invalid), line=invalid.line) from None


def _parse(raw: bytes, folder_name: str | None) -> ParsedSkill:
    text = _decode(raw)
    front_matter, body = _split(text)
    data, lenient_keys = _load_front_matter(front_matter)
    extra = fields.extra_front_matter(data)
    name = fields.name(data, folder_name)
    description = fields.description(data)
    license_ = fields.optional_text(data, "license", Rule.LICENSE_INVALID)
    compatibility = fields.compatibility(data)
    metadata = fields.metadata(data)
    allowed_tools, declares_allowed_tools = fields.allowed_tools(data)
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
        raise Invalid(
            Rule.FILE_TOO_LARGE, f"the file is {len(raw)} bytes; none valid exceeds {MAX_FILE_BYTES}"
        )
    raw = raw.removeprefix(_BOM)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Invalid(Rule.NOT_UTF8, f"the file is not UTF-8 (invalid byte at offset {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split(text: str) -> tuple[str, str]:
    """Return (front matter, body) and enforce both byte caps."""
    opening = _DELIMITER.match(text)
    if opening is None:
        raise Invalid(Rule.FRONT_MATTER_MISSING, "the file must start with a '---' line (YAML front matter)")
    if opening.end() == len(text):
        raise Invalid(Rule.FRONT_MATTER_UNTERMINATED, "the front matter has no closing '---' line")
    closing = _DELIMITER.search(text, opening.end() + 1)
    if closing is None:
        raise Invalid(Rule.FRONT_MATTER_UNTERMINATED, "the front matter has no closing '---' line")
    front_matter = text[opening.end() + 1 : closing.start()]
    body = text[closing.end() + 1 :]
    _check_size(front_matter, MAX_FRONT_MATTER_BYTES, Rule.FRONT_MATTER_TOO_LARGE, "front matter")
    _check_size(body, MAX_BODY_BYTES, Rule.BODY_TOO_LARGE, "body")
    return front_matter, body


def _check_size(part: str, limit: int, rule: SkillParseRule, label: str) -> None:
    size = len(part.encode("utf-8"))
    if size > limit:
        raise Invalid(rule, f"the {label} is {size} bytes; max {limit}")


def _load_front_matter(front_matter: str) -> tuple[dict[Any, Any], tuple[str, ...]]:
    """The front matter as a mapping with string keys, and the keys whose values were read leniently."""
    try:
        data, lenient_keys = read_front_matter(front_matter)
    except yaml.YAMLError as exc:
        raise _yaml_invalid(exc) from None
    if data is None:
        raise Invalid(Rule.FRONT_MATTER_EMPTY, "the front matter is empty")
    if not isinstance(data, dict):
        raise Invalid(
            Rule.FRONT_MATTER_NOT_MAPPING, f"front matter must be a mapping, not {fields.kind(data)}"
        )
    for key in data:
        if not isinstance(key, str):
            raise Invalid(
                Rule.FRONT_MATTER_KEY_INVALID, f"top-level keys must be strings, not {fields.kind(key)}"
            )
    return data, lenient_keys


def _yaml_invalid(exc: yaml.YAMLError) -> Invalid:
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
    return Invalid(Rule.YAML_INVALID, f"invalid YAML front matter: {problem}", line)


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
