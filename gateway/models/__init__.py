"""What the gateway keeps of what it served: one record per completion, and stored Responses."""

from gateway.models.responses import StoredResponse
from gateway.models.usage import CompletionRecord

__all__ = ["CompletionRecord", "StoredResponse"]
