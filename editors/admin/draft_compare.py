"""The preview's comparison of the live assembly with live + my drafts.

"My drafts" are the current editor's drafts (``governance.drafts``): of snippets, applied as
edits of the send's content (``agents/runtime/content.py``, ``edited_content``: the mechanism the live
token badge uses), and of the previewed configuration, applied to an unsaved copy of it
(``agents.selectors.configuration_drafted``; its drafted skills in place of its linked ones). Both
sides are the same :func:`agents.runtime.preview.context_preview` a send's plan and fit come from, so
the figures differ by exactly what the drafts change. Like the preview, nothing is recorded and no
provider is called: drafts never leave the service.

Per part: the budget breakdown's lines, and each snippet's block as the one estimator counts its text
(a snippet only one side selects is absent, "—", on the other); the total, the window share and the
verdict of each side.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.runtime.content import edited_content
from agents.runtime.preview import ContextPreview, context_preview, preview_parts
from agents.runtime.request import SendRequest
from catalog.models import Configuration
from catalog.selectors import configuration_drafted
from config.errors import ApplicationError
from context_assembly.estimator import Estimator
from editors.admin.budget_bar import BudgetBar, budget_bar
from governance.vocabulary import SourceKind
from snippets.selectors import snippet_draft_edits

NO_PART = "—"

# (breakdown key, label) in wire order; each snippet's row follows "snippets".
_LINES = (
    ("system_prompt", "System prompt"),
    ("snippets", "Snippets"),
    ("skills", "Skills"),
    ("caller_context", "Caller context"),
    ("tool_specs", "Tools"),
    ("transcript", "Transcript"),  # in a preview: the task input (and the reply priming)
    ("tail_note", "Tail note"),
)


@dataclass(frozen=True)
class PartDelta:
    """One part's tokens on each side (None: the side has no such part) and the change."""

    key: str
    label: str
    live: int | None
    drafted: int | None
    snippet: bool = False

    @property
    def delta(self) -> int:
        return (self.drafted or 0) - (self.live or 0)

    @property
    def delta_label(self) -> str:
        return f"{self.delta:+,}" if self.delta else "0"

    @property
    def live_label(self) -> str:
        return NO_PART if self.live is None else f"{self.live:,}"

    @property
    def drafted_label(self) -> str:
        return NO_PART if self.drafted is None else f"{self.drafted:,}"


@dataclass(frozen=True)
class Side:
    preview: ContextPreview
    bar: BudgetBar

    @property
    def share(self) -> float:
        """Percent of the window the context takes."""
        breakdown = self.preview.fitted.breakdown
        return 100 * breakdown.estimated / max(breakdown.window, 1)

    @property
    def verdict(self) -> str:
        return "Would send" if self.preview.would_send else "Would not send"


@dataclass(frozen=True)
class DraftComparison:
    live: Side
    drafted: Side | None  # None when the drafted side could not be previewed (``error`` says why)
    error: str
    applied: tuple[str, ...]  # "snippet <identifier>", "configuration <identifier>"
    rows: tuple[PartDelta, ...]

    @property
    def share_delta_label(self) -> str:
        points = (self.drafted.share - self.live.share) if self.drafted else 0.0
        return f"{points:+.2f} points" if round(points, 2) else "0"


def draft_comparison(
    *,
    live: ContextPreview,
    configuration: Configuration,
    request: SendRequest,
    max_tokens: int | None,
    author_id: int,
) -> DraftComparison:
    """``live`` (the page's preview of ``request``) beside the same request with the drafts by the
    user ``author_id`` in place."""
    edits = snippet_draft_edits(author_id=author_id)
    drafted = configuration_drafted(configuration=configuration, author_id=author_id)
    applied = tuple(f"snippet {edit.snippet.identifier}" for edit in edits)
    if drafted is not None:
        applied = (f"configuration {configuration.identifier}", *applied)
    live_side = Side(live, budget_bar(live.fitted.breakdown.as_dict()))
    try:
        preview = context_preview(
            configuration=drafted.configuration if drafted else configuration,
            request=request,
            max_tokens=max_tokens,
            content=edited_content(
                drafted.configuration if drafted else configuration,
                edits,
                drafted.skills if drafted else None,
            ),
        )
    except ApplicationError as exc:
        return DraftComparison(live_side, None, exc.message, applied, part_deltas(live, None))
    side = Side(preview, budget_bar(preview.fitted.breakdown.as_dict()))
    return DraftComparison(live_side, side, "", applied, part_deltas(live, preview))


def snippet_tokens(preview: ContextPreview) -> dict[str, int]:
    """Each selected snippet's block (as redacted for the send), counted by the one estimator."""
    estimator = Estimator(preview.plan.profile)
    return {
        part.identifier: estimator.count_text(part.text)
        for part in preview_parts(preview.plan, preview.provenance)
        if part.kind == SourceKind.SNIPPET
    }


def part_deltas(live: ContextPreview, drafted: ContextPreview | None) -> tuple[PartDelta, ...]:
    before = live.fitted.breakdown.as_dict()
    after = drafted.fitted.breakdown.as_dict() if drafted is not None else {}
    live_snippets = snippet_tokens(live)
    drafted_snippets = snippet_tokens(drafted) if drafted is not None else {}
    rows: list[PartDelta] = []
    for key, label in _LINES:
        if key == "tail_note" and not (before[key] or after.get(key)):
            continue
        rows.append(PartDelta(key, label, before[key], after.get(key)))
        if key == "snippets":
            for identifier in dict.fromkeys([*live_snippets, *drafted_snippets]):
                rows.append(
                    PartDelta(
                        f"snippet:{identifier}",
                        identifier,
                        live_snippets.get(identifier),
                        drafted_snippets.get(identifier),
                        snippet=True,
                    )
                )
    rows.append(PartDelta("estimated", "Total", before["estimated"], after.get("estimated")))
    rows.append(PartDelta("budget", "Budget", before["budget"], after.get("budget")))
    return tuple(rows)
