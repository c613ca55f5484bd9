"""The agents app's models: the catalogue (providers, models, configurations, clients) and runs."""

from agents.models.approvals import ApprovalDecision, ToolApproval
from agents.models.catalog import (
    CatalogVersion,
    Configuration,
    ConfigurationFallback,
    ConfigurationSkill,
    ContextStrategy,
    ContextUsageNote,
    LlmModel,
    Provider,
    ProviderKind,
    Tokenizer,
)
from agents.models.clients import ApiClient
from agents.models.evaluations import (
    Evaluation,
    EvaluationCase,
    EvaluationResult,
    EvaluationSide,
    EvaluationStatus,
    ResultOutcome,
)
from agents.models.mcp import McpServer, McpTransport
from agents.models.responses import StoredResponse
from agents.models.runs import (
    AgentRun,
    AgentStep,
    RunClaim,
    RunMessage,
    RunStatus,
    StepKind,
    StepStatus,
    TerminationReason,
    ToolCallRecord,
    ToolCallStatus,
    ToolSetting,
)
from agents.models.usage import ClientDailyUsage, CompletionRecord

__all__ = [
    "AgentRun",
    "AgentStep",
    "ApiClient",
    "ApprovalDecision",
    "CatalogVersion",
    "ClientDailyUsage",
    "CompletionRecord",
    "Configuration",
    "ConfigurationFallback",
    "ConfigurationSkill",
    "ContextStrategy",
    "ContextUsageNote",
    "Evaluation",
    "EvaluationCase",
    "EvaluationResult",
    "EvaluationSide",
    "EvaluationStatus",
    "LlmModel",
    "McpServer",
    "McpTransport",
    "Provider",
    "ProviderKind",
    "ResultOutcome",
    "RunClaim",
    "RunMessage",
    "RunStatus",
    "StepKind",
    "StepStatus",
    "StoredResponse",
    "TerminationReason",
    "Tokenizer",
    "ToolApproval",
    "ToolCallRecord",
    "ToolCallStatus",
    "ToolSetting",
]
