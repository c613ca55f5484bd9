"""``/api/openai/v1``: the OpenAI Chat Completions API, governed.

Clients written against the OpenAI SDK, LangChain's ``ChatOpenAI`` or the OpenAI Agents SDK point
their base URL here and use their client token as the API key; ``model`` is a configuration
identifier. A chat completion is one governed call, exactly as ``POST /api/v1/completions``: the
configuration's system prompt, snippets and skills first, the caller's messages as caller context
(:mod:`agents.runtime.conversation`), then the same decision, fit, redaction and guard pass
(:mod:`agents.runtime.send`). The caller's ``tools`` are offered, never the configuration's, and
never run here: a reply that calls one ends with ``finish_reason: "tool_calls"`` and the caller runs
it and sends the result back as a ``tool`` message.

Unknown body fields are ignored, as OpenAI-compatible servers do; known ones are each forwarded
(``response_format``, ``tool_choice``, ``seed``, ``parallel_tool_calls``, ``stop``, ``top_p``),
accepted and never forwarded (``user``, ``metadata``: the caller's data) or, where this service cannot
honour them (``n`` > 1, ``logprobs``, ``top_logprobs``, a ``service_tier`` other than the default), a
400 naming the parameter. Errors are in
OpenAI's shape (:mod:`gateway.apis.openai_errors`). ``X-Data-Class`` sets the class of every message
that does not declare its own ``data_class``; without it, the client's default class applies.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.runtime.conversation import Conversation, conversation_request
from catalog.models import ApiClient
from config.api import validated
from config.errors import ApplicationError
from config.exception_handler import api_exception_handler
from config.request_headers import header
from gateway.apis.context import MAX_OUTPUT_TOKENS, ReceiptSerializer, client_configuration, client_of
from gateway.apis.fields import ObjectList
from gateway.apis.openai_errors import error_response
from gateway.apis.openai_shapes import ChatChunks, completion_body
from gateway.apis.run_events import JsonErrorsNegotiation
from gateway.apis.serving import GovernedCallApi, Served
from gateway.services import CompletionCall
from governance.vocabulary import DataClass
from providers.values import CallOptions

TAG = "openai"
DATA_CLASS_HEADER = "X-Data-Class"
MAX_MESSAGES = 1000
MAX_TOOLS = 128
MAX_STOP_SEQUENCES = 4  # OpenAI's limit
# Stop sequences end a reply at a delimiter; none needs more. Bounded, so a parameter cannot carry text.
MAX_STOP_CHARS = 64
# The tiers a request may name: the provider's default, which the catalogue's prices are for.
DEFAULT_SERVICE_TIERS = ("auto", "default")


class UnsupportedParameter(ApplicationError):
    """A known OpenAI parameter this service cannot honour. ``extra["param"]`` names it."""

    code = "unsupported_parameter"


def openai_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """The API's one handler (so refusals count and throttle alike), its answer in OpenAI's shape."""
    response = api_exception_handler(exc, context)
    return error_response(response) if response is not None else None


class OpenAIErrors:
    """A view of ``/api/openai/v1``: the API's authentication, scopes and throttles; OpenAI's errors."""

    required_scope = "configurations:use"

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return openai_exception_handler


class OpenAIApiView(OpenAIErrors, APIView):
    """A read-only view of ``/api/openai/v1``."""


class ChatCompletionInputSerializer(serializers.Serializer):
    model = serializers.SlugField(max_length=100, help_text="A configuration identifier this client may use.")
    messages = ObjectList(
        max_length=MAX_MESSAGES,
        help_text="OpenAI chat messages: system, developer, user (text and text parts), assistant "
        "(with tool_calls), tool. Extension: data_class per message.",
    )
    tools = ObjectList(required=False, allow_null=True, max_length=MAX_TOOLS)
    tool_choice = serializers.JSONField(required=False, allow_null=True)
    max_tokens = serializers.IntegerField(
        min_value=1, max_value=MAX_OUTPUT_TOKENS, required=False, allow_null=True
    )
    max_completion_tokens = serializers.IntegerField(
        min_value=1, max_value=MAX_OUTPUT_TOKENS, required=False, allow_null=True
    )
    temperature = serializers.FloatField(min_value=0, max_value=2, required=False, allow_null=True)
    top_p = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True)
    stop = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text=f"A string or up to {MAX_STOP_SEQUENCES} strings of at most {MAX_STOP_CHARS} characters; "
        "classified as caller input (the X-Data-Class header's class, else the client's default).",
    )
    seed = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=-(2**63),
        max_value=2**63 - 1,
        help_text="Forwarded to OpenAI-compatible providers (Anthropic has no seed).",
    )
    parallel_tool_calls = serializers.BooleanField(
        required=False,
        allow_null=True,
        help_text="Forwarded beside tools; false is also held by the local provider (one call per reply).",
    )
    service_tier = serializers.CharField(
        max_length=32,
        required=False,
        allow_null=True,
        help_text="Only auto or default (the provider's default tier): another tier is priced otherwise, "
        "which the budget's estimate would not hold.",
    )
    response_format = serializers.DictField(required=False, allow_null=True)
    stream = serializers.BooleanField(required=False, allow_null=True, default=False)
    stream_options = serializers.DictField(required=False, allow_null=True)
    user = serializers.CharField(
        max_length=256,
        required=False,
        allow_null=True,
        allow_blank=True,
        help_text="Accepted and never forwarded: an end user's identifier is the caller's data.",
    )
    metadata = serializers.DictField(
        child=serializers.CharField(max_length=512),
        required=False,
        allow_null=True,
        help_text="Accepted and never forwarded.",
    )
    n = serializers.IntegerField(required=False, allow_null=True, help_text="Only 1.")
    logprobs = serializers.BooleanField(required=False, allow_null=True, help_text="Not supported.")
    top_logprobs = serializers.IntegerField(required=False, allow_null=True, help_text="Not supported.")

    class Meta:
        ref_name = "ChatCompletionInput"

    def validate_stop(self, value: Any) -> list[str]:
        stops = [value] if isinstance(value, str) else value
        if stops is None:
            return []
        if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
            raise serializers.ValidationError("Expected a string or a list of non-empty strings.")
        if len(stops) > MAX_STOP_SEQUENCES:
            raise serializers.ValidationError(f"At most {MAX_STOP_SEQUENCES} stop sequences.")
        if any(len(stop) > MAX_STOP_CHARS for stop in stops):
            raise serializers.ValidationError(f"A stop sequence has at most {MAX_STOP_CHARS} characters.")
        return stops

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if (attrs.get("n") or 1) != 1:
            raise UnsupportedParameter(
                "n > 1 is not supported: one choice per request.", extra={"param": "n"}
            )
        for name in ("logprobs", "top_logprobs"):
            if attrs.get(name):
                raise UnsupportedParameter(f"{name} is not supported.", extra={"param": name})
        if attrs.get("service_tier") not in (None, *DEFAULT_SERVICE_TIERS):
            raise UnsupportedParameter(
                f"service_tier {attrs['service_tier']!r} is not supported: only auto or default, the tier "
                "the configuration's prices are for.",
                extra={"param": "service_tier"},
            )
        return attrs


class OpenAIErrorSerializer(serializers.Serializer):
    class DetailSerializer(serializers.Serializer):
        message = serializers.CharField()
        type = serializers.CharField(help_text="invalid_request_error, authentication_error, ...")
        param = serializers.CharField(allow_null=True)
        code = serializers.CharField(allow_null=True)

        class Meta:
            ref_name = "OpenAIErrorDetail"

    error = DetailSerializer(
        help_text="Extensions: governance (context_refused), breakdown (context_length_exceeded), "
        "failure_class (provider errors), request_id."
    )

    class Meta:
        ref_name = "OpenAIError"


class ChatCompletionSerializer(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.CharField()
    created = serializers.IntegerField()
    model = serializers.CharField(help_text="The configuration identifier.")
    system_fingerprint = serializers.CharField(allow_null=True)
    choices = serializers.ListField(child=serializers.DictField())
    usage = serializers.DictField(
        help_text="prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details.cached_tokens, "
        "provenance (provider_reported or estimated)."
    )
    context_usage = serializers.DictField(
        help_text="used_tokens (value, provenance), context_window, breakdown."
    )
    governance = serializers.DictField(
        help_text="request_id, served_model, decision, redactions (counts by kind)."
    )
    governance_receipt = ReceiptSerializer(
        help_text="Extension: the answer's content-free receipt (decision id, zone, receiver zone, reply "
        "labels, sources by kind, identifier, class and pinned version, redaction counts, the model that "
        "served). When streamed, on the final chunk (the one with the finish_reason)."
    )

    class Meta:
        ref_name = "ChatCompletion"


def openai_errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """OpenAPI responses in OpenAI's error shape for ``statuses`` plus 401, 403 and 429."""
    text = {
        400: "invalid_request_error (invalid_value, unsupported_parameter, context_length_exceeded with "
        "error.breakdown)",
        401: "authentication_error (invalid_api_key)",
        403: "permission_error: context_refused (error.governance; nothing was sent) or a missing scope",
        404: "model_not_found: unknown, or not a configuration this client may use",
        409: "configuration_inactive or model_inactive (x-should-retry: false)",
        413: "the request body is too large",
        429: "rate_limit_error: this client's rate or the provider's (Retry-After), or budget_exhausted: "
        "the client's daily budget (error.budget with reset_at; Retry-After; nothing was sent)",
        502: "api_error: the provider failed (error.failure_class)",
    }
    wanted = sorted(set(statuses) | {401, 403, 429})
    return {status: OpenApiResponse(OpenAIErrorSerializer, description=text[status]) for status in wanted}


def governed_call_responses(answer: type[serializers.Serializer], *, streamed: str) -> dict[Any, Any]:
    """OpenAPI responses of a governed call: its ``answer``, the events it is ``streamed`` as with
    ``stream: true``, and its errors in OpenAI's shape."""
    return {
        (200, "application/json"): OpenApiResponse(answer, description="stream: false"),
        (200, "text/event-stream"): OpenApiResponse(
            OpenApiTypes.STR, description=f"stream: true: {streamed}"
        ),
        **openai_errors(400, 404, 409, 413, 502),
    }


def data_class_header(items: str) -> OpenApiParameter:
    """The ``X-Data-Class`` header of a request whose ``items`` may declare their own class."""
    return OpenApiParameter(
        DATA_CLASS_HEADER,
        str,
        OpenApiParameter.HEADER,
        description=f"The class of {items} without their own data_class (default: the client's).",
        enum=DataClass.values,
    )


def declared_class(request: Request, client: ApiClient) -> str:
    """The class ``request``'s ``X-Data-Class`` header declares for its items, else ``client``'s
    default input class; a value outside the vocabulary is a 400 naming the header."""
    declared = header(request, DATA_CLASS_HEADER)
    if declared is None:
        return client.default_input_data_class
    if declared not in DataClass.values:
        raise serializers.ValidationError(
            {DATA_CLASS_HEADER: [f"Must be one of {', '.join(DataClass.values)}."]}
        )
    return declared


class ChatCompletionsApi(OpenAIErrors, GovernedCallApi):
    content_negotiation_class = JsonErrorsNegotiation

    @extend_schema(
        tags=[TAG],
        summary="Create a chat completion (OpenAI-compatible, governed)",
        operation_id="openai_chat_completions_create",
        description=(
            "OpenAI's Chat Completions API; ``model`` is a configuration identifier and the API key is "
            "the client token. One governed call: the configuration's prompt, snippets and skills, then "
            "the caller's messages as caller context. The caller's tools are offered, never run here. "
            "With ``stream: true`` the answer is server-sent events in OpenAI's chunk format, ending "
            "``data: [DONE]``. Extension fields: ``context_usage``, ``governance``, ``governance_receipt`` (on the final chunk); errors are "
            '``{"error": {"message", "type", "param", "code"}}``.'
        ),
        request=ChatCompletionInputSerializer,
        parameters=[data_class_header("messages")],
        responses=governed_call_responses(
            ChatCompletionSerializer, streamed="chat.completion.chunk events, then [DONE]."
        ),
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = _validated(request)
        configuration = client_configuration(request, data["model"])
        conversation = Conversation(
            default_class=declared_class(request, client_of(request)),
            allow_system_override=configuration.allow_system_override,
            allow_remote_media=configuration.allow_remote_media,
            tools=data.get("tools") or [],  # the configuration's tools are never offered here
            tool_choice=data.get("tool_choice"),
            options=_options(data),
        )
        completion = CompletionCall(
            configuration=configuration,
            api_client=client_of(request),
            request=conversation_request(data["messages"], conversation),
            max_tokens=data.get("max_completion_tokens") or data.get("max_tokens"),
            temperature=data.get("temperature"),
        )
        model, created = configuration.identifier, int(time.time())
        body = partial(completion_body, model=model, created=created)
        if not data.get("stream"):
            return self.answer(Served(completion, body))
        include_usage = bool((data.get("stream_options") or {}).get("include_usage"))
        shape = ChatChunks(completion.request_id, model=model, created=created, include_usage=include_usage)
        return self.answer(Served(completion, body, stream=shape))


def _validated(request: Request) -> dict[str, Any]:
    return dict(validated(ChatCompletionInputSerializer, request.data))


def _options(data: dict[str, Any]) -> CallOptions:
    return CallOptions(
        top_p=data.get("top_p"),
        stop=tuple(data.get("stop") or ()),
        seed=data.get("seed"),
        response_format=data.get("response_format"),
        parallel_tool_calls=data.get("parallel_tool_calls"),
        # ``user`` is never forwarded: an end user's identifier (often an e-mail address) is the
        # caller's data, and as a parameter it would reach the provider outside every classified
        # source. ``metadata`` is not forwarded either (docs/governance.md lists what is).
    )
