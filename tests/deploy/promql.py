"""Just enough PromQL to check the shipped alert rules and dashboard without Prometheus: the series an
expression names, with its brackets balanced and its functions known. Not a full parser: an
expression it accepts may still be wrong in ways only ``promtool`` sees (operand types, for one).

A name is a series unless it is a function or aggregation (followed by ``(``, or by ``by`` or
``without``), a keyword, a label
(inside ``{...}``, or in the ``(...)`` after ``by``, ``without``, ``on``, ``ignoring``,
``group_left``, ``group_right``), or a duration (``5m``). Grafana's ``$__rate_interval`` and
``$__interval`` read as a duration.
"""

from __future__ import annotations

import re

FUNCTIONS = frozenset(
    # Aggregations, then the functions this project's rules and dashboard could reasonably use.
    [
        "sum",
        "min",
        "max",
        "avg",
        "group",
        "stddev",
        "stdvar",
        "count",
        "count_values",
        "bottomk",
        "topk",
        "quantile",
        "abs",
        "absent",
        "absent_over_time",
        "ceil",
        "changes",
        "clamp",
        "clamp_max",
        "clamp_min",
        "day_of_month",
        "day_of_week",
        "days_in_month",
        "delta",
        "deriv",
        "exp",
        "floor",
        "histogram_quantile",
        "holt_winters",
        "hour",
        "idelta",
        "increase",
        "irate",
        "label_join",
        "label_replace",
        "ln",
        "log2",
        "log10",
        "minute",
        "month",
        "predict_linear",
        "rate",
        "resets",
        "round",
        "scalar",
        "sgn",
        "sort",
        "sort_desc",
        "sqrt",
        "time",
        "timestamp",
        "vector",
        "year",
        "avg_over_time",
        "min_over_time",
        "max_over_time",
        "sum_over_time",
        "count_over_time",
        "quantile_over_time",
        "stddev_over_time",
        "stdvar_over_time",
        "last_over_time",
        "present_over_time",
    ]
)
LABEL_LIST_KEYWORDS = frozenset(["by", "without", "on", "ignoring", "group_left", "group_right"])
KEYWORDS = LABEL_LIST_KEYWORDS | frozenset(["and", "or", "unless", "bool", "offset", "inf", "nan"])
PAIRS = {"(": ")", "{": "}", "[": "]"}

TOKEN = re.compile(
    r"""
    (?P<space>\s+)
    |(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<duration>(?:\d+(?:ms|[smhdwy]))+(?![a-zA-Z0-9_:]))
    |(?P<number>\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)
    |(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)
    |(?P<open>[({\[])
    |(?P<close>[)}\]])
    |(?P<operator>==|!=|=~|!~|>=|<=|[-+*/%^<>=,:])
    """,
    re.VERBOSE,
)
GRAFANA_INTERVALS = re.compile(r"\$__(?:rate_)?interval")


class PromQLError(ValueError):
    pass


def _tokens(expression: str) -> list[tuple[str, str]]:
    text = GRAFANA_INTERVALS.sub("5m", expression)
    tokens, position = [], 0
    while position < len(text):
        match = TOKEN.match(text, position)
        if match is None:
            raise PromQLError(f"cannot read {text[position : position + 20]!r} in {expression!r}")
        if match.lastgroup != "space":
            tokens.append((match.lastgroup or "", match.group()))
        position = match.end()
    return tokens


def series_names(expression: str) -> set[str]:
    """The series ``expression`` reads. Raises :class:`PromQLError` for unbalanced brackets, an
    unknown function, or an expression that names no series."""
    tokens = _tokens(expression)
    stack: list[tuple[str, bool]] = []  # (opening bracket, holds label names)
    names: set[str] = set()
    for index, (kind, text) in enumerate(tokens):
        following = tokens[index + 1][1] if index + 1 < len(tokens) else ""
        in_labels = bool(stack) and stack[-1][1]
        if kind == "open":
            previous = tokens[index - 1][1] if index else ""
            stack.append((text, text == "{" or (text == "(" and previous in LABEL_LIST_KEYWORDS)))
        elif kind == "close":
            if not stack or PAIRS[stack.pop()[0]] != text:
                raise PromQLError(f"unbalanced {text!r} in {expression!r}")
        elif kind == "name" and not in_labels and text not in KEYWORDS:
            if following == "(" or (following in ("by", "without") and text in FUNCTIONS):
                if text not in FUNCTIONS:
                    raise PromQLError(f"unknown function {text!r} in {expression!r}")
            else:
                names.add(text)
    if stack:
        raise PromQLError(f"unclosed {stack[-1][0]!r} in {expression!r}")
    if not names:
        raise PromQLError(f"no series named in {expression!r}")
    return names
