"""Views whose provider call waits on the event loop under ASGI (docs/decisions/0011-streaming.md).

The view reads what the call needs in its request thread and returns a pending response
(``agents/apis/sse.py``); the project's ASGI handler awaits it once the middleware chain has
returned. A whole answer is then rendered, and an error before it answered, as the view would have
done, in a request thread again.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpResponseBase
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.apis.sse import PendingAnswer


class LoopAnswers(APIView):
    """An API view some of whose answers wait on the event loop."""

    def answer_on_loop(
        self, request: Request, body: Callable[[], Awaitable[dict[str, Any]]]
    ) -> PendingAnswer:
        """The answer with ``await body()`` as its data, the wait on the loop."""

        async def answer() -> HttpResponseBase:
            data = await body()
            return await sync_to_async(self._rendered, thread_sensitive=True)(request, Response(data))

        return PendingAnswer(answer, failed=partial(self.error_answer, request))

    def error_answer(self, request: Request, error: Exception) -> HttpResponseBase:
        """The answer to ``error`` raised after this view returned, made as the view makes it for an
        error raised inside it."""
        return self._rendered(request, self.handle_exception(error))

    def _rendered(self, request: Request, response: Response) -> HttpResponseBase:
        response = self.finalize_response(request, response)
        assert isinstance(response, Response)
        return response.render()
