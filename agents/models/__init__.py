"""The runtime's models: runs, their steps and messages, tool calls and their approvals, and what each
API client consumed per day (the catalogue they run against lives in ``catalog/models/``)."""

from agents.models.approvals import ApprovalDecision, ToolApproval
from agents.models.runs import AgentRun, RunClaim, RunStatus, TerminationReason
from agents.models.steps import AgentStep, RunMessage, StepKind, StepStatus
from agents.models.tool_calls import ToolCallRecord, ToolCallStatus
from agents.models.usage import ClientDailyUsage

__all__ = [
    "AgentRun",
    "AgentStep",
    "ApprovalDecision",
    "ClientDailyUsage",
    "RunClaim",
    "RunMessage",
    "RunStatus",
    "StepKind",
    "StepStatus",
    "TerminationReason",
    "ToolApproval",
    "ToolCallRecord",
    "ToolCallStatus",
]
