"""The editors' charts (editors/admin/charts.py): axes with titles, units and tick values, each point's
figure, and a scale that says when the window is above it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from context_assembly.usage import UNAVAILABLE, UsageValue
from editors.admin.charts import UsagePoint, percent, round_ticks, usage_chart, value_axis, window_fill_chart
from editors.dashboard import FillPoint
from governance.vocabulary import Provenance

START = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
REPORTED, ESTIMATED = Provenance.PROVIDER_REPORTED, Provenance.ESTIMATED


def labels(ticks) -> list[str]:
    return [tick.label for tick in ticks]


def test_round_ticks_end_at_or_above_the_peak():
    assert round_ticks(8_800) == (0, 2_500, 5_000, 7_500, 10_000)
    assert round_ticks(1_500) == (0, 500, 1_000, 1_500)
    assert round_ticks(3.2) == (0, 1, 2, 3, 4)
    assert round_ticks(160) == (0, 50, 100, 150, 200)
    # A token axis never has two ticks that read the same.
    assert round_ticks(1, whole=True) == (0, 1)
    assert round_ticks(9, whole=True) == (0, 5, 10)
    assert round_ticks(3, whole=True) == (0, 1, 2, 3)


def test_the_value_axis_runs_to_the_window_unless_the_figures_are_far_below_it():
    full, above = value_axis(40_000, 128_000)
    assert (full.top, full.ticks, above) == (128_000, (0, 32_000, 64_000, 96_000, 128_000), False)
    zoomed, above = value_axis(8_800, 128_000)
    assert (zoomed.top, above) == (10_000, True)
    over, above = value_axis(156.25, 100)
    assert (over.ticks, above) == ((0, 50, 100, 150, 200), False)
    assert value_axis(0, 100)[0].ticks == (0, 25, 50, 75, 100)


def test_percent_labels_keep_the_digits_that_matter():
    assert [percent(v) for v in (0, 0.0039, 0.05, 0.39, 1.96, 7.8125, 25, 156.25)] == [
        "0%", "0.0039%", "0.05%", "0.39%", "2%", "7.8%", "25%", "156%",
    ]  # fmt: skip


def test_the_run_chart_has_token_and_share_axes_the_window_and_each_steps_figure():
    points = [
        UsagePoint(0, UsageValue(4_000, REPORTED)),
        UsagePoint(1, UNAVAILABLE),
        UsagePoint(2, UsageValue(6_000, ESTIMATED)),
        UsagePoint(3, UsageValue(8_000, REPORTED)),
    ]
    chart = usage_chart(points, 16_000)

    assert (chart.y_title, chart.y2_title, chart.x_title) == (
        "Context used (tokens)", "Share of the window", "Step",
    )  # fmt: skip
    assert labels(chart.y_ticks) == ["0", "4,000", "8,000", "12,000", "16,000"]
    assert [tick.secondary for tick in chart.y_ticks] == ["0%", "25%", "50%", "75%", "100%"]
    assert labels(chart.x_ticks) == ["0", "1", "2", "3"]
    assert chart.limit is not None and chart.limit.label == "window 16,000 tokens"
    assert chart.limit.position == chart.box.top
    assert [(mark.css, mark.label, mark.filled) for mark in chart.marks] == [
        ("used-point provider_reported", "4,000", True),
        ("used-point estimated", "6,000", False),
        ("used-point provider_reported", "8,000", True),
    ]
    assert chart.marks[1].title == "Step 2: 6,000 of 16,000 tokens (38% of the window), estimated"
    assert len(chart.lines) == 1  # step 1 is unknown: no line from step 0 to step 2
    assert chart.lines[0].count(",") == 2 and chart.note == ""
    # 8,000 of 16,000 is half way up the axis.
    assert chart.marks[2].y == (chart.box.top + chart.box.bottom) / 2


def test_a_run_far_below_its_window_is_drawn_on_a_scale_that_says_so():
    chart = usage_chart(
        [UsagePoint(0, UsageValue(1_234, REPORTED)), UsagePoint(1, UsageValue(1_500, REPORTED))], 128_000
    )
    assert labels(chart.y_ticks) == ["0", "500", "1,000", "1,500"]
    assert [tick.secondary for tick in chart.y_ticks] == ["0%", "0.39%", "0.78%", "1.2%"]
    assert chart.limit is None
    assert chart.note == (
        "The window, 128,000 tokens, is above this scale: the axis ends at 1,500 tokens (1.2% of the window)."
    )


def test_a_tiny_run_in_a_large_window_has_distinct_ticks_and_shares():
    chart = usage_chart([UsagePoint(0, UsageValue(3, REPORTED))], 128_000)
    assert labels(chart.y_ticks) == ["0", "1", "2", "3"]
    assert [tick.secondary for tick in chart.y_ticks] == ["0%", "0.00078%", "0.0016%", "0.0023%"]


def test_a_long_run_writes_the_first_last_and_largest_figures_only():
    values = [100 * (i + 1) for i in range(12)]
    values[5] = 5_000
    chart = usage_chart([UsagePoint(i, UsageValue(v, REPORTED)) for i, v in enumerate(values)], 8_000)
    assert [mark.label for mark in chart.marks if mark.label] == ["100", "5,000", "1,200"]
    assert len(chart.marks) == 12


def test_the_run_chart_html_carries_the_axes_and_figures():
    chart = usage_chart([UsagePoint(0, UsageValue(4_000, REPORTED))], 16_000)
    html = chart.html()
    assert html.lstrip().startswith("<figure")
    for text in (
        '<svg class="usage-chart" role="img"', ">Context used (tokens)</text>", ">Share of the window</text>",
        ">Step</text>", 'class="y-tick"', ">16,000</text>", ">100%</text>", ">window 16,000 tokens</text>",
        'class="value-label"', ">4,000</text>",
    ):  # fmt: skip
        assert text in html, text


def test_the_fill_chart_has_a_percent_axis_a_time_axis_and_marks_provenance():
    points = [
        FillPoint("a", START, UsageValue(32_000, REPORTED), 128_000),
        FillPoint("b", START + timedelta(minutes=30), UsageValue(64_000, ESTIMATED), 128_000),
        FillPoint("c", START + timedelta(minutes=60), UsageValue(200_000, ESTIMATED), 128_000),
    ]
    chart = window_fill_chart(points)

    assert (chart.y_title, chart.x_title, chart.y2_title) == ("Window fill (%)", "Run started (UTC)", "")
    # 156% is past the window: the axis goes on past 100% and the window line stays drawn.
    assert labels(chart.y_ticks) == ["0%", "50%", "100%", "150%", "200%"]
    assert chart.limit is not None and chart.limit.label == "window"
    assert labels(chart.x_ticks) == ["30 Nov 09:00", "30 Nov 09:30", "30 Nov 10:00"]
    assert [tick.anchor for tick in chart.x_ticks] == ["start", "middle", "end"]
    assert [(mark.css, mark.filled, mark.label) for mark in chart.marks] == [
        ("fill-point provider_reported", True, "25%"),
        ("fill-point estimated", False, "50%"),
        ("fill-point estimated", False, "156%"),
    ]
    assert chart.marks[0].title == "2026-11-30 09:00 UTC: 32,000 of 128,000 tokens (25%), provider reported"
    assert chart.marks[0].x < chart.marks[1].x < chart.marks[2].x
    assert chart.marks[0].y > chart.marks[1].y > chart.marks[2].y


def test_a_fill_far_below_the_window_zooms_and_says_where_the_window_is():
    chart = window_fill_chart([FillPoint("a", START, UsageValue(1_000, REPORTED), 128_000)])
    assert labels(chart.y_ticks) == ["0%", "0.2%", "0.4%", "0.6%", "0.8%"]
    assert labels(chart.x_ticks) == ["30 Nov 09:00"]
    assert chart.limit is None
    assert chart.note == "The full window is above this scale: the axis ends at 0.8%."


def test_the_value_axis_title_clears_its_widest_tick_label():
    from editors.admin.charts import FONT_SIZE, TICK_GAP, TITLE_DESCENT, label_width

    fill = [
        FillPoint("a", START, UsageValue(960, REPORTED), 100_000)
    ]  # 0.96%: ticks to 1%, "0.75%" the widest
    usage = [UsagePoint(0, UsageValue(15_500, REPORTED))]
    for chart in (window_fill_chart(fill), usage_chart(usage, 16_000)):
        widest = max(label_width(tick.label) for tick in chart.y_ticks)
        title_reaches = chart.y_title_x + TITLE_DESCENT
        ticks_start = chart.box.left - TICK_GAP - widest
        assert title_reaches + 4 <= ticks_start, (chart.css, title_reaches, ticks_start)
        assert chart.y_title_x - FONT_SIZE >= 0  # the title's glyphs stay inside the drawing
    assert labels(window_fill_chart(fill).y_ticks) == ["0%", "0.25%", "0.5%", "0.75%", "1%"]


def test_a_label_is_estimated_no_narrower_than_a_browser_draws_it():
    from editors.admin.charts import label_width

    # Widths DejaVu Sans draws at 11 px (what headless Chromium uses here), rounded up.
    assert label_width("0.75%") >= 31 and label_width("16,000") >= 33 and label_width("100%") >= 28
