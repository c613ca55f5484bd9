"""What the gateway keeps of what it served: one record per completion, stored Responses, and the
scores clients give the answers they received."""

from gateway.models.responses import StoredResponse
from gateway.models.scores import Score, ScoreKind
from gateway.models.usage import CompletionRecord

__all__ = ["CompletionRecord", "Score", "ScoreKind", "StoredResponse"]
