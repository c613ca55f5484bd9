"""A view whose answer is awaited on the event loop after it returns, under uvicorn.

The view prepares its call in the request's thread (everything that reads the database), then returns
at once a streaming response over :meth:`AnsweredLater.answered_later`: the answer is awaited on the
server's event loop, its status line held until then (``config/deferred_start.py``), and it goes out
as one chunk with its own status and headers, rendered by DRF as ``dispatch`` would render it. An
error on the way is answered as DRF's ``dispatch`` answers it (the view's exception handler, so its
API's error shape). No thread waits on the provider (docs/decisions/0011-streaming.md).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

from asgiref.sync import sync_to_async
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.utils.log import log_response
from rest_framework.response import Response

from config.deferred_start import DeferredStart
from gateway.apis.sse import EventStreamApi

JSON = "application/json"


class AnsweredLater(EventStreamApi):
    """An API view that may answer after it returns (see the module docstring)."""

    def answer_later(
        self, start: DeferredStart, answer: Callable[[], Awaitable[HttpResponseBase]]
    ) -> StreamingHttpResponse:
        """The response this view returns now for what ``answer()`` (awaited on the loop) renders."""
        start.defer()
        return StreamingHttpResponse(self.answered_later(start, answer), content_type=JSON)

    async def answered_later(
        self, start: DeferredStart, answer: Callable[[], Awaitable[HttpResponseBase]]
    ) -> AsyncIterator[bytes]:
        """``answer()``'s response as the one chunk of the held response; an error raised on the way as
        :meth:`rendered_error` answers it."""
        try:
            response = await answer()
        except Exception as error:
            response = await sync_to_async(self.rendered_error, thread_sensitive=True)(error)
        yield answered_with(start, response)

    def rendered(self, response: Response) -> HttpResponseBase:
        """``response`` as DRF's ``dispatch`` would have finished and rendered it."""
        finished = self.finalize_response(self.request, response)
        finished.render()
        return finished

    def rendered_error(self, error: Exception) -> HttpResponseBase:
        """The response DRF's ``dispatch`` gives ``error`` (the view's exception handler, its API's error
        shape), rendered and logged as Django logs a 4xx or 5xx answer; an error no handler answers is
        raised again (the server answers 500)."""
        response = self.rendered(self.handle_exception(error))
        if isinstance(response, HttpResponse) and response.status_code >= 400:
            log_response(
                "%s: %s", response.reason_phrase, self.request.path, response=response, request=self.request
            )
        return response


def answered_with(start: DeferredStart, response: HttpResponseBase) -> bytes:
    """``response``'s body, its status and headers (and its length) sent in place of the held ones."""
    content = response.content  # type: ignore[attr-defined]  # a rendered DRF response
    start.answer_with(response.status_code, [*response.items(), ("Content-Length", str(len(content)))])
    return content
