"""Plain-text tables for the reports the management commands print."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table_lines(columns: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    """``columns`` and ``rows`` as left-aligned columns two spaces apart, a rule under the header."""
    table = [tuple(columns), *(tuple(row) for row in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(columns))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in table
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return lines
