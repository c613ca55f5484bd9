"""Arithmetic written once in Python and rendered as double-precision SQL (:class:`Float`), so that a
rule evaluates to the same IEEE-754 result on floats and in the database: the calibration update
(``LlmModelQuerySet.calibrate`` in ``catalog/models/catalog.py``) blends a model's stored factor with
the very definition ``context_assembly.calibration`` applies to floats."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.db.backends.base.base import BaseDatabaseWrapper


def _operator(symbol: str, *, reflected: bool = False) -> Callable[[Float, Float | float], Float]:
    """The method behind ``Float <symbol> other``; ``reflected``: behind ``other <symbol> Float``."""

    def apply(self: Float, other: Float | float) -> Float:
        return Float._combine(other, symbol, self) if reflected else Float._combine(self, symbol, other)

    return apply


@dataclass(frozen=True)
class Float:
    """A double-precision SQL expression with its parameters.

    ``+ - * /`` with a float or another :class:`Float` build a parenthesised expression; every operand
    is cast to ``DOUBLE PRECISION`` (REAL on SQLite), so a rule written once in Python evaluates to
    the same IEEE-754 result on floats and in the database (PostgreSQL would otherwise read a Python
    float parameter as ``numeric``). :class:`FloatFunctions` adds ``max`` and ``min``.
    """

    sql: str
    params: tuple[object, ...] = ()

    @classmethod
    def of(cls, value: Float | float) -> Float:
        if isinstance(value, Float):
            return value
        return cls("CAST(%s AS DOUBLE PRECISION)", (float(value),))

    @classmethod
    def column(cls, column: str) -> Float:
        return cls(f"CAST({column} AS DOUBLE PRECISION)")

    @staticmethod
    def _combine(left: Float | float, operator: str, right: Float | float) -> Float:
        left, right = Float.of(left), Float.of(right)
        return Float(f"({left.sql} {operator} {right.sql})", left.params + right.params)

    __add__, __radd__ = _operator("+"), _operator("+", reflected=True)
    __sub__, __rsub__ = _operator("-"), _operator("-", reflected=True)
    __mul__, __rmul__ = _operator("*"), _operator("*", reflected=True)
    __truediv__, __rtruediv__ = _operator("/"), _operator("/", reflected=True)


class FloatFunctions:
    """Python's two-argument ``max`` and ``min`` over :class:`Float` on one connection (SQLite spells
    them ``MAX``/``MIN``, PostgreSQL ``GREATEST``/``LEAST``; no operand here is ever NULL)."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        sqlite = connection.vendor == "sqlite"
        self._greatest, self._least = ("MAX", "MIN") if sqlite else ("GREATEST", "LEAST")

    def greatest(self, a: Float | float, b: Float | float) -> Float:
        return self._call(self._greatest, a, b)

    def least(self, a: Float | float, b: Float | float) -> Float:
        return self._call(self._least, a, b)

    @staticmethod
    def _call(name: str, a: Float | float, b: Float | float) -> Float:
        left, right = Float.of(a), Float.of(b)
        return Float(f"{name}({left.sql}, {right.sql})", left.params + right.params)
