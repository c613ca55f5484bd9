"""``/api/anthropic/v1``: Anthropic's Messages API, governed exactly as a chat completion.

Clients written for Anthropic's API (the ``anthropic`` SDK, LangChain's ``ChatAnthropic``, Claude
Code through ``ANTHROPIC_BASE_URL``) point their base URL here and use their client token as the API
key, sent as ``x-api-key`` or ``Authorization: Bearer``; ``model`` is a configuration identifier. A
message is translated into the conversation a chat completion governs
(:mod:`gateway.apis.anthropic_input`) and sent as the same :class:`~gateway.services.CompletionCall`:
the same decision and receiver gate, fit, redaction, guard pass, budget, metrics and receipt. Its
answer is shaped as a message, or streamed as Anthropic's events (:mod:`gateway.apis.anthropic_shapes`);
errors are in Anthropic's shape (:mod:`gateway.apis.anthropic_errors`).

The caller's tools are offered, never the configuration's, and never run here: a reply that calls
one ends with ``stop_reason: "tool_use"`` and the caller sends the ``tool_result`` back.
``stop_sequences`` are passed on (classified as caller input, as on the OpenAI API); ``metadata`` is
never forwarded (its ``user_id`` is the caller's data). Extended thinking:
``{"type": "enabled", "budget_tokens": N}`` (at least 1,024, below ``max_tokens``) is passed on to a
model whose catalogue capabilities declare ``thinking`` (a 400 naming ``thinking`` and the model
otherwise, before anything is sent); its thinking blocks come back first in the reply, redacted and
screened as its text is, and are accepted back in an assistant turn, sent on unchanged.
``{"type": "disabled"}`` and ``{"type": "adaptive"}`` (the model may think, and here it does not; Claude
Code sends it on every request) are accepted and ask for nothing. ``top_k``, ``container`` and ``mcp_servers`` are a 400
naming the parameter; other unknown fields are ignored, as Anthropic-compatible servers do.

``POST messages/count_tokens`` answers ``input_tokens`` from the one estimator: the prompt this
request would send (the configuration's prompt, snippets and skills, the caller's messages and tools),
assembled, decided and fitted exactly as a send would, recording nothing and sending nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from agents.runtime.conversation import Conversation
from agents.runtime.plan import SendRequest
from agents.runtime.preview import context_preview
from catalog.models import Configuration
from config.api import validated
from gateway.apis.anthropic_errors import anthropic_exception_handler
from gateway.apis.anthropic_input import (
    chat_tool_choice,
    chat_tools,
    message_entries,
    output_format,
    system_entry,
)
from gateway.apis.anthropic_shapes import MessageEvents, message_body, new_message_id
from gateway.apis.context import MAX_MESSAGES, MAX_OUTPUT_TOKENS, client_configuration, client_of
from gateway.apis.fields import ObjectList
from gateway.apis.openai_compat import (
    MAX_STOP_CHARS,
    MAX_TOOLS,
    UnsupportedParameter,
    data_class_header,
    declared_class,
)
from gateway.apis.responses_input import ResponsesConversation, send_request
from gateway.apis.run_events import JsonErrorsNegotiation
from gateway.apis.serving import GovernedCallApi, Served
from gateway.authentication import ApiKeyHeaderAuthentication, BearerTokenAuthentication
from gateway.services import CompletionCall
from providers.values import CallOptions

TAG = "anthropic"
MAX_STOP_SEQUENCES = 4  # as on the OpenAI API: every provider behind a configuration must accept them
_THINKING_ACCEPTED = ("disabled", "adaptive")
MIN_THINKING_BUDGET = 1024  # Anthropic's minimum
_REFUSED = ("top_k", "container", "mcp_servers")


class AnthropicErrors:
    """A view of ``/api/anthropic/v1``: the API's scopes and throttles, its token in ``x-api-key`` or
    ``Authorization: Bearer``, Anthropic's errors."""

    required_scope = "configurations:use"
    authentication_classes = [BearerTokenAuthentication, ApiKeyHeaderAuthentication]

    def get_exception_handler(self) -> Callable[[Exception, dict[str, Any]], Response | None]:
        return anthropic_exception_handler


class CountTokensInputSerializer(serializers.Serializer):
    model = serializers.SlugField(max_length=100, help_text="A configuration identifier this client may use.")
    messages = ObjectList(
        max_length=MAX_MESSAGES,
        help_text="Anthropic messages: user (text and tool_result blocks), assistant (text and tool_use "
        "blocks). Extension: data_class per message.",
    )
    system = serializers.JSONField(
        required=False,
        allow_null=True,
        help_text="A string or a list of text blocks (cache_control accepted).",
    )
    tools = ObjectList(required=False, allow_null=True, max_length=MAX_TOOLS)
    tool_choice = serializers.JSONField(required=False, allow_null=True)
    thinking = serializers.DictField(
        required=False,
        allow_null=True,
        help_text="enabled (with budget_tokens; for a model that declares thinking), disabled or adaptive "
        "(asks for nothing).",
    )

    class Meta:
        ref_name = "AnthropicCountTokensInput"

    def validate_thinking(self, value: Any) -> Any:
        if value is None or value.get("type") in _THINKING_ACCEPTED:
            return value
        budget = value.get("budget_tokens")
        if value.get("type") != "enabled" or isinstance(budget, bool) or not isinstance(budget, int):
            raise UnsupportedParameter(
                'thinking must be {"type": "enabled", "budget_tokens": N}, disabled or adaptive.',
                extra={"param": "thinking"},
            )
        if budget < MIN_THINKING_BUDGET:
            raise UnsupportedParameter(
                f"thinking.budget_tokens must be at least {MIN_THINKING_BUDGET}.",
                extra={"param": "thinking"},
            )
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        budget = thinking_budget(attrs)
        if budget is not None and "max_tokens" in attrs and budget >= attrs["max_tokens"]:
            raise UnsupportedParameter(
                "thinking.budget_tokens must be below max_tokens (the thinking is part of the reply).",
                extra={"param": "thinking"},
            )
        return attrs


class MessageInputSerializer(CountTokensInputSerializer):
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_OUTPUT_TOKENS)
    stop_sequences = serializers.ListField(
        child=serializers.CharField(max_length=MAX_STOP_CHARS, trim_whitespace=False),
        required=False,
        allow_null=True,
        max_length=MAX_STOP_SEQUENCES,
        help_text="Classified as caller input (the X-Data-Class header's class, else the client's default).",
    )
    stream = serializers.BooleanField(required=False, allow_null=True, default=False)
    temperature = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True)
    top_p = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True)
    metadata = serializers.DictField(required=False, allow_null=True, help_text="Never forwarded.")
    output_config = serializers.DictField(
        required=False, allow_null=True, help_text="format (json_schema) is passed on; effort is a hint."
    )
    top_k = serializers.IntegerField(required=False, allow_null=True, help_text="Not supported.")
    container = serializers.JSONField(required=False, allow_null=True, help_text="Not supported.")
    mcp_servers = serializers.JSONField(required=False, allow_null=True, help_text="Not supported.")

    class Meta:
        ref_name = "AnthropicMessageInput"

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        for name in _REFUSED:
            if attrs.get(name) is not None:
                raise UnsupportedParameter(f"{name} is not supported.", extra={"param": name})
        for name in ("temperature", "top_p"):
            if attrs.get(name) is not None and thinking_budget(attrs) is not None:
                raise UnsupportedParameter(
                    f"{name} cannot be set beside extended thinking.", extra={"param": name}
                )
        return attrs


class AnthropicMessageSerializer(serializers.Serializer):
    id = serializers.CharField()
    type = serializers.CharField()
    role = serializers.CharField()
    model = serializers.CharField(help_text="The configuration identifier.")
    content = serializers.ListField(child=serializers.DictField(), help_text="text and tool_use blocks.")
    stop_reason = serializers.CharField(help_text="end_turn, tool_use, max_tokens or refusal.")
    stop_sequence = serializers.CharField(allow_null=True)
    usage = serializers.DictField(
        help_text="input_tokens, output_tokens, cache_read_input_tokens, cache_creation_input_tokens, "
        "provenance (provider_reported or estimated)."
    )
    context_usage = serializers.DictField(
        help_text="used_tokens (value, provenance), context_window, breakdown."
    )
    governance = serializers.DictField(help_text="request_id, served_model, decision, redactions.")
    governance_receipt = serializers.DictField(
        help_text="Extension: the answer's content-free receipt. When streamed, on message_delta."
    )

    class Meta:
        ref_name = "AnthropicMessage"


class CountTokensSerializer(serializers.Serializer):
    input_tokens = serializers.IntegerField(help_text="The one estimator's count of what would be sent.")
    context_window = serializers.IntegerField(help_text="Extension: the serving model's window.")
    breakdown = serializers.DictField(help_text="Extension: the fit's budget breakdown.")

    class Meta:
        ref_name = "AnthropicCountTokens"


class AnthropicErrorSerializer(serializers.Serializer):
    class DetailSerializer(serializers.Serializer):
        type = serializers.CharField(help_text="invalid_request_error, permission_error, ...")
        message = serializers.CharField()
        code = serializers.CharField(help_text="Extension: the API's stable error code.")

        class Meta:
            ref_name = "AnthropicErrorDetail"

    type = serializers.CharField(help_text="Always error.")
    error = DetailSerializer(
        help_text="Extensions: governance and request_id (context_refused), breakdown (context_overflow), "
        "failure_class (provider errors), budget, param."
    )

    class Meta:
        ref_name = "AnthropicError"


_ERRORS = {
    400: "invalid_request_error: a field, an unsupported parameter (error.param), or a context that "
    "cannot fit (error.breakdown)",
    401: "authentication_error: no token, or not a valid one",
    403: "permission_error: context_refused (error.governance names the sources; nothing was sent), or a "
    "missing scope",
    404: "not_found_error: no configuration this client may use",
    409: "configuration_inactive or model_inactive (x-should-retry: false)",
    413: "request_too_large",
    429: "rate_limit_error: this client's rate, the provider's, or its daily budget (nothing was sent)",
    502: "api_error: the provider failed (error.failure_class)",
}


def anthropic_errors(*statuses: int) -> dict[int, OpenApiResponse]:
    wanted = sorted(set(statuses) | {401, 403, 429})
    return {
        status: OpenApiResponse(AnthropicErrorSerializer, description=_ERRORS[status]) for status in wanted
    }


def _validated(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    return dict(validated(serializer_class, request.data))


def _completion_request(request: Request, data: dict[str, Any], configuration: Configuration) -> SendRequest:
    """The send of ``data``: its system and messages as the chat path's conversation."""
    default_class = declared_class(request, client_of(request))
    system = system_entry(data.get("system"), default_class)
    conversation = ResponsesConversation(
        instructions=None,
        new=((system,) if system is not None else ()) + message_entries(data["messages"], default_class),
    )
    chat = Conversation(
        default_class=default_class,
        allow_system_override=configuration.allow_system_override,
        allow_remote_media=configuration.allow_remote_media,
        tools=chat_tools(data.get("tools")) or [],  # the configuration's tools are never offered here
        tool_choice=chat_tool_choice(data.get("tool_choice")),
        options=CallOptions(
            top_p=data.get("top_p"),
            stop=tuple(data.get("stop_sequences") or ()),
            response_format=output_format(data.get("output_config")),
            thinking_budget=thinking_budget(data),
            # metadata.user_id is never forwarded: an end user's identifier is the caller's data.
        ),
    )
    return send_request(conversation, chat)


def thinking_budget(data: dict[str, Any]) -> int | None:
    """The budget of the extended thinking ``data`` asks for; None: none asked."""
    thinking = data.get("thinking") or {}
    return thinking["budget_tokens"] if thinking.get("type") == "enabled" else None


class MessagesApi(AnthropicErrors, GovernedCallApi):
    content_negotiation_class = JsonErrorsNegotiation

    @extend_schema(
        tags=[TAG],
        summary="Create a message (Anthropic Messages API, governed)",
        operation_id="anthropic_messages_create",
        description=(
            "Anthropic's Messages API; ``model`` is a configuration identifier and the API key (``x-api-key`` "
            "or ``Authorization: Bearer``) the client token. One governed call, as a chat completion: the "
            "configuration's prompt, snippets and skills, then ``system`` and ``messages`` as caller "
            "context. The caller's tools are offered, never run here. With ``stream: true`` the answer is "
            "Anthropic's events (message_start, ping, content_block_start/delta/stop, message_delta, "
            "message_stop). Extension fields: ``context_usage``, ``governance``, ``governance_receipt``; "
            'errors are ``{"type": "error", "error": {"type", "message"}}``.'
        ),
        request=MessageInputSerializer,
        parameters=[data_class_header("messages")],
        responses={
            (200, "application/json"): OpenApiResponse(
                AnthropicMessageSerializer, description="stream: false"
            ),
            (200, "text/event-stream"): OpenApiResponse(
                OpenApiTypes.STR, description="stream: true: message_start ... message_stop."
            ),
            **anthropic_errors(400, 404, 409, 413, 502),
        },
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = _validated(MessageInputSerializer, request)
        configuration = client_configuration(request, data["model"])
        completion = CompletionCall(
            configuration=configuration,
            api_client=client_of(request),
            request=_completion_request(request, data, configuration),
            max_tokens=data["max_tokens"],
            temperature=data.get("temperature"),
        )
        message_id, model = new_message_id(), configuration.identifier
        body = partial(message_body, message_id=message_id, model=model)
        stream = MessageEvents(message_id=message_id, model=model) if data.get("stream") else None
        return self.answer(Served(completion, body, stream=stream))


class CountTokensApi(AnthropicErrors, APIView):
    @extend_schema(
        tags=[TAG],
        summary="Count a message's input tokens (Anthropic Messages API, the one estimator)",
        operation_id="anthropic_messages_count_tokens",
        description=(
            "The one estimator's count of the prompt this request would send: the configuration's prompt, "
            "snippets and skills, the caller's system, messages and tools, assembled and fitted as a send "
            "would. Records nothing and sends nothing."
        ),
        request=CountTokensInputSerializer,
        parameters=[data_class_header("messages")],
        responses={200: CountTokensSerializer, **anthropic_errors(400, 404, 409, 413)},
    )
    def post(self, request: Request) -> Response:
        data = _validated(CountTokensInputSerializer, request)
        configuration = client_configuration(request, data["model"])
        preview = context_preview(
            configuration=configuration, request=_completion_request(request, data, configuration)
        )
        breakdown = preview.fitted.breakdown
        return Response(
            {
                "input_tokens": breakdown.estimated,
                "context_window": preview.plan.model.context_window,
                "breakdown": breakdown.as_dict(),
            }
        )
