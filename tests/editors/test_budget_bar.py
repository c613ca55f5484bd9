"""The stacked budget bar: exact figures, drawn from the breakdown alone."""

from __future__ import annotations

from editors.admin.budget_bar import budget_bar

BREAKDOWN = {
    "window": 1000, "reserve": 100, "safety": 30, "budget": 870, "system_prompt": 50, "snippets": 120,
    "skills": 80, "caller_context": 20, "tool_specs": 40, "transcript": 60, "tail_note": 0,
    "estimated": 370, "remaining": 500, "dropped_turns": 0,
}  # fmt: skip


def test_segments_fill_the_window_exactly_in_wire_order():
    bar = budget_bar(BREAKDOWN)
    assert [(s.key, s.tokens) for s in bar.segments] == [
        ("system_prompt", 50), ("snippets", 120), ("skills", 80), ("caller_context", 20), ("tool_specs", 40),
        ("transcript", 60), ("tail_note", 0), ("reserve", 100), ("safety", 30), ("free", 500),
    ]  # fmt: skip
    assert sum(s.tokens for s in bar.segments) == 1000
    assert [s.width_css for s in bar.segments][:2] == ["5.0000%", "12.0000%"]
    assert bar.segments[1].share_label == "12.00%"
    assert [s.key for s in bar.drawn] == [s.key for s in bar.segments if s.key != "tail_note"]
    assert bar.over == 0


def test_an_overflowing_context_is_drawn_against_what_it_needs():
    bar = budget_bar({**BREAKDOWN, "transcript": 690, "estimated": 1000, "remaining": -130})
    assert bar.over == 130
    assert {s.key: s.tokens for s in bar.segments}["free"] == 0
    assert bar.segments[0].width_css == f"{100 * 50 / 1130:.4f}%"
    assert bar.segments[0].share_label == "5.00%"
