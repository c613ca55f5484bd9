"""Views whose provider call waits on the event loop under ASGI (docs/decisions/0011-streaming.md).

The view reads what the call needs in its request thread and returns a pending response
(``agents/apis/sse.py``); the project's ASGI handler awaits it once the middleware chain has
returned. A whole answer is then rendered, and an error before it answered, as the view would have
done, in a request thread again.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.http import HttpResponseBase
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.apis.sse import PendingAnswer
from agents.services import Completion, CompletionStart


class LoopAnswers(APIView):
    """An API view some of whose answers wait on the event loop."""

    def answer_on_loop(
        self, request: Request, start: CompletionStart, body: Callable[[Completion], dict[str, Any]]
    ) -> PendingAnswer:
        """The answer with ``body(completion)`` as its data: the provider's wait on the loop, the
        completion's finish and the answer's rendering in one call on the request's thread."""

        async def answer() -> HttpResponseBase:
            return await start.complete(
                lambda completion: self._rendered(request, Response(body(completion)))
            )

        return PendingAnswer(answer, failed=partial(self.error_answer, request))

    def error_answer(self, request: Request, error: Exception) -> HttpResponseBase:
        """The answer to ``error`` raised after this view returned, made as the view makes it for an
        error raised inside it."""
        return self._rendered(request, self.handle_exception(error))

    def _rendered(self, request: Request, response: Response) -> HttpResponseBase:
        response = self.finalize_response(request, response)
        assert isinstance(response, Response)
        return response.render()
