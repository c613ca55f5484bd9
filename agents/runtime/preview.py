"""The context preview: what a send would assemble, decide and fit, without recording or sending.

The preview API and the admin preview page call this; it builds the same :class:`SendPlan` and runs
the same :func:`governance.policy.decide` and :func:`context_assembly.fitting.fit` as a real send.
A preview is a simulation: it records no governance event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agents.models import Configuration
from agents.runtime.plan import SendPlan, SendRequest, send_plan
from context_assembly.estimator import Estimator
from context_assembly.fitting import FitResult, fit
from governance.policy import ContextDecision, decide, enforcement_mode
from governance.services import decision_as_dict


@dataclass(frozen=True)
class ContextPreview:
    plan: SendPlan
    decision: ContextDecision
    fitted: FitResult

    @property
    def would_send(self) -> bool:
        return self.decision.permitted and not self.fitted.overflow

    def as_dict(self) -> dict[str, Any]:
        plan = self.plan
        return {
            "configuration": plan.configuration.identifier,
            "model": plan.model.model_id,
            "provider": plan.model.provider.identifier,
            "zone": plan.zone.value,
            "would_send": self.would_send,
            "overflow": self.fitted.overflow,
            "messages": [message.to_openai() for message in self.fitted.messages],
            "tools": [spec.to_openai() for spec in plan.assembled.tool_specs],
            "decision": decision_as_dict(self.decision),
            "breakdown": self.fitted.breakdown.as_dict(),
            "unknown_tags": list(plan.unknown_tags),
            "empty_tags": list(plan.empty_tags),
            "dropped_skills": [{"skill": skill, "reason": reason} for skill, reason in plan.dropped_skills],
            "denied_tools": [{"tool": v.name, "reason": v.denial.value} for v in plan.denied_tools],
            "redactions": plan.redactions,
        }


def context_preview(
    *, configuration: Configuration, request: SendRequest, max_tokens: int | None = None
) -> ContextPreview:
    """Assemble, decide and fit for ``configuration`` and ``request``; messages are redacted."""
    plan = send_plan(configuration=configuration, request=request)
    decision = decide(plan.sources, plan.zone, enforcement_mode())
    fitted = fit(plan.assembled, estimator=Estimator(plan.profile), max_tokens=max_tokens)
    return ContextPreview(plan=plan, decision=decision, fitted=fitted)
