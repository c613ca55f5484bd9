"""Read the YAML front matter of a SKILL.md: strict, with one lenient reading of a common slip.

:class:`FrontMatterLoader` is ``yaml.safe_load`` made stricter (skills/parsing.py states the contract).

The slip: ``description: Cleans exports: trims cells`` is not YAML, because ``: `` inside a plain scalar
starts a mapping, yet people write it all the time (and Claude Code's loader accepts it). When the strict
reading fails *only* there, :func:`read_front_matter` reads that line's value as plain text and reads the
document again, strictly, and reports the key. The leniency is narrow on purpose:

- only the error "mapping values are not allowed here", pointing into the value of a top-level line
  ``key: value`` (column 0) whose value is a plain scalar containing a colon followed by a space or tab;
  a value that starts with a quote, bracket, brace, block indicator, anchor, alias, tag or comment, and
  any nested key, stays strict;
- the value is the rest of the line, verbatim but for surrounding blanks: a ``#`` in it is text, not a
  comment (the author wrote text; YAML's own reading was already lost), quotes and further colons too;
- one line becomes one line, so line numbers in any later error still point at the author's file, and
  whatever else is wrong with the document (a duplicate key, a tab, a continuation line the plain text
  cannot carry) is still refused by the strict reading that follows.
"""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

MAX_YAML_DEPTH = 20

_MAPPING_IN_PLAIN_SCALAR = "mapping values are not allowed here"
# A top-level key, then a plain scalar: its first character is not a YAML indicator.
_TOP_LEVEL_PLAIN = re.compile(
    r"(?P<key>[A-Za-z_][A-Za-z0-9_.-]*):[ \t]+(?P<value>[^\s'\"\[\]{}#&*!|>%@`,?:-].*?)[ \t]*"
)
_COLON_SPACE = re.compile(r":[ \t]")


class FrontMatterLoader(yaml.SafeLoader):
    """``safe_load`` that also refuses aliases, tags, duplicate keys and deep nesting (skills/parsing.py)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event: Any = self.peek_event()
        problem = None
        if isinstance(event, yaml.AliasEvent):
            problem = "aliases (*name) are not allowed"
        # Explicit tags (!!binary, !!set, !!int abc, ...) are never needed in front matter, and some make
        # PyYAML raise plain ValueError/KeyError; only the non-specific "!" (force a string) is allowed.
        elif getattr(event, "tag", None) not in (None, "!"):
            problem = "explicit tags are not allowed"
        elif self._depth >= MAX_YAML_DEPTH:
            problem = f"nesting deeper than {MAX_YAML_DEPTH} levels"
        if problem is not None:
            raise yaml.composer.ComposerError(None, None, problem, event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: the base class reports it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r:.60}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


# Without the timestamp resolver a date stays the string the author wrote (and JSON can store it).
FrontMatterLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def read_front_matter(text: str) -> tuple[Any, tuple[str, ...]]:
    """The YAML value of ``text`` and the top-level keys whose values were read as plain text, in order.

    Raises the ``yaml.YAMLError`` of the strict reading when the document fails for any other reason.
    Each lenient pass turns a plain line into a quoted one, so there are at most as many passes as lines.
    """
    lines = text.split("\n")
    lenient: list[str] = []
    while True:
        try:
            return yaml.load("\n".join(lines), Loader=FrontMatterLoader), tuple(
                lenient
            )  # SafeLoader subclass
        except yaml.YAMLError as exc:
            slip = _plain_text_slip(exc, lines)
            if slip is None:
                raise
            index, key, value = slip
            lines[index] = f"{key}: {json.dumps(value, ensure_ascii=False)}"
            lenient.append(key)


def _plain_text_slip(exc: yaml.YAMLError, lines: list[str]) -> tuple[int, str, str] | None:
    """(line index, key, value) when ``exc`` is the slip the module docstring describes, else None."""
    if not isinstance(exc, yaml.scanner.ScannerError) or exc.problem != _MAPPING_IN_PLAIN_SCALAR:
        return None
    mark = exc.problem_mark
    if mark is None or mark.line >= len(lines):
        return None
    match = _TOP_LEVEL_PLAIN.fullmatch(lines[mark.line])
    if match is None or mark.column < match.start("value") or not _COLON_SPACE.search(match["value"]):
        return None
    return mark.line, match["key"], match["value"]
