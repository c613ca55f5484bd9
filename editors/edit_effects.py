"""What an edit would cost before it is saved: the live token badge's figures.

A snippet edit is assembled and fitted for every active configuration that selects the snippet (by its
saved tags or its edited ones) through the same :func:`agents.runtime.plan.send_plan` and
:func:`context_assembly.fitting.fit` a send uses, once as saved and once with the edit in place
(``agents/runtime/content.py``, ``edited_content``), so the two figures differ by exactly what the edit changes. The request
is a one-word task input (a first user message cannot be empty) with no context or transcript: the
figures are what the configuration always sends. Nothing is recorded or sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents.runtime.content import edited_content
from agents.runtime.plan import model_profile, send_plan
from agents.runtime.request import SendRequest
from catalog.models import Configuration
from context_assembly.badges import TokenBadge, token_badge
from context_assembly.estimator import Estimator
from context_assembly.fitting import fit
from governance.vocabulary import DataClass
from snippets.models import normalise_tag
from snippets.selectors import SnippetEdit

SAMPLE_INPUT = "Hello."


@dataclass(frozen=True)
class BudgetShare:
    """A configuration's context as fitted: its snippet block, the whole estimate, and the budget (the
    model's window less the output reserve and the safety margin, all in tokens of that model)."""

    snippets: int
    estimated: int
    budget: int
    window: int
    reserve: int
    safety: int

    @property
    def share(self) -> float:
        """Percent of the budget the context takes (a display figure)."""
        return 100 * self.estimated / max(self.budget, 1)

    def as_dict(self) -> dict[str, object]:
        return {
            "snippets": self.snippets,
            "estimated": self.estimated,
            "budget": self.budget,
            "window": self.window,
            "reserve": self.reserve,
            "safety": self.safety,
            "share": f"{self.share:.2f}%",
        }


@dataclass(frozen=True)
class EditEffect:
    configuration: str
    model: str
    before: BudgetShare
    after: BudgetShare

    def as_dict(self) -> dict[str, object]:
        return {
            "configuration": self.configuration,
            "model": self.model,
            "before": self.before.as_dict(),
            "after": self.after.as_dict(),
        }


def snippet_edit_effects(*, edit: SnippetEdit, saved_tags: Iterable[str]) -> tuple[EditEffect, ...]:
    """Each active configuration selecting any of ``saved_tags`` or the edit's tags, by identifier."""
    tags = edit.tag_names | {normalise_tag(tag) for tag in saved_tags}
    configurations = Configuration.objects.filter(is_active=True).select_related("model__provider")
    return tuple(
        EditEffect(
            configuration=configuration.identifier,
            model=configuration.model.model_id,
            before=_budget_share(configuration, ()),
            after=_budget_share(configuration, (edit,)),
        )
        for configuration in configurations.order_by("identifier")
        if tags & {normalise_tag(tag) for tag in configuration.snippet_tags}
    )


def system_prompt_badge(*, text: str, configuration: Configuration) -> TokenBadge | None:
    """The badge of a configuration's system prompt, counted for the configuration's own model."""
    return token_badge(text, model_profile(configuration.model))


def _budget_share(configuration: Configuration, edits: tuple[SnippetEdit, ...]) -> BudgetShare:
    request = SendRequest(task_input=SAMPLE_INPUT, input_data_class=DataClass.PUBLIC_CONTENT)
    plan = send_plan(
        configuration=configuration, request=request, content=edited_content(configuration, edits)
    )
    breakdown = fit(plan.assembled, estimator=Estimator(plan.profile)).breakdown
    return BudgetShare(
        snippets=breakdown.snippets,
        estimated=breakdown.estimated,
        budget=breakdown.budget,
        window=breakdown.window,
        reserve=breakdown.reserve,
        safety=breakdown.safety,
    )
