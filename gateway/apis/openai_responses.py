"""``POST /api/openai/v1/responses``: OpenAI's Responses API, governed exactly as a chat completion.

A Responses request is translated into the conversation a chat completion governs
(:mod:`gateway.apis.responses_input`) and sent as the same :class:`~agents.services.CompletionCall`: the
same decision and receiver gate, fit, redaction, guard pass, budget and metrics. Its answer is shaped
as a response object, or streamed as the Responses events (:mod:`gateway.apis.responses_shapes`).

Function tools are the caller's, offered and never run here, as on the chat endpoint. An answered
response is stored for its client (``store: false`` stores nothing) with its reply's labels; a
continuation (``previous_response_id``) may name only its own client's stored responses, and any
other id is a 404 before anything is sent (docs/decisions/0024-the-responses-api.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

from django.http import HttpResponseBase
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request

from agents.runtime.conversation import Conversation
from agents.runtime.outcome import Answered
from agents.runtime.redactions import Redactions
from catalog.models import ApiClient, Configuration
from config.api import validated
from gateway.apis.context import MAX_OUTPUT_TOKENS, ReceiptSerializer, client_configuration, client_of
from gateway.apis.fields import ObjectList
from gateway.apis.openai_compat import (
    MAX_TOOLS,
    TAG,
    OpenAIErrors,
    UnsupportedParameter,
    data_class_header,
    declared_class,
    governed_call_responses,
)
from gateway.apis.responses_input import (
    Entry,
    ResponsesConversation,
    Tools,
    chat_tool_choice,
    chat_tools,
    input_entries,
    response_format,
    send_request,
)
from gateway.apis.responses_shapes import ResponseEvents, ResponseFrame, new_id, reply_message, reply_output
from gateway.apis.run_events import JsonErrorsNegotiation
from gateway.apis.serving import GovernedCallApi, Served
from gateway.errors import PreviousResponseNotFound
from gateway.selectors import stored_response_get_for_client
from gateway.services import Completion, CompletionCall, stored_response_create
from providers.values import CallOptions

MAX_INPUT_ITEMS = 1000
# What a Responses request may ask to include, and the reasoning summaries it may ask for: this
# service answers no reasoning item (its replies are messages and function calls), so asking for
# either changes nothing in the answer (Codex CLI always asks for both).
INCLUDABLE = ("reasoning.encrypted_content",)
REASONING_SUMMARIES = ("auto", "concise", "detailed")
MAX_INSTRUCTIONS_CHARS = 1_000_000


RESPONSE_ID = r"^[A-Za-z0-9_-]+\Z"


class ResponseInputSerializer(serializers.Serializer):
    model = serializers.SlugField(max_length=100, help_text="A configuration identifier this client may use.")
    input = serializers.JSONField(
        help_text="A string (one user message) or a list of items: message (text parts), function_call, "
        "function_call_output. Extension: data_class per item."
    )
    instructions = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=MAX_INSTRUCTIONS_CHARS,
    )
    # Ids are exact: a CharField trims white space, so "resp_… " continued resp_… unasked.
    previous_response_id = serializers.RegexField(
        RESPONSE_ID,
        required=False,
        allow_null=True,
        max_length=64,
        trim_whitespace=False,
        error_messages={
            "invalid": "A response id is exact: letters, digits, '_' and '-' only, with nothing around it."
        },
        help_text="One of this client's stored responses.",
    )
    tools = ObjectList(required=False, allow_null=True, max_length=MAX_TOOLS)
    tool_choice = serializers.JSONField(required=False, allow_null=True)
    parallel_tool_calls = serializers.BooleanField(required=False, allow_null=True)
    max_output_tokens = serializers.IntegerField(
        min_value=1, max_value=MAX_OUTPUT_TOKENS, required=False, allow_null=True
    )
    temperature = serializers.FloatField(min_value=0, max_value=2, required=False, allow_null=True)
    top_p = serializers.FloatField(min_value=0, max_value=1, required=False, allow_null=True)
    text = serializers.DictField(
        required=False, allow_null=True, help_text="format: text, json_object or json_schema."
    )
    stream = serializers.BooleanField(required=False, allow_null=True, default=False)
    store = serializers.BooleanField(required=False, allow_null=True, default=True)
    truncation = serializers.ChoiceField(choices=["auto", "disabled"], required=False, allow_null=True)
    include = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        allow_null=True,
        help_text=f"Only {', '.join(INCLUDABLE)} (Codex CLI asks for it): no reasoning item is answered, so "
        "there is nothing encrypted to include.",
    )
    metadata = serializers.DictField(
        child=serializers.CharField(max_length=512),
        required=False,
        allow_null=True,
        help_text="Never forwarded.",
    )
    user = serializers.CharField(
        max_length=256, required=False, allow_null=True, allow_blank=True, help_text="Never forwarded."
    )
    reasoning = serializers.DictField(
        required=False,
        allow_null=True,
        help_text="Only summary (auto, concise, detailed): no reasoning item is answered, so there is nothing "
        "to summarise. effort is not supported.",
    )
    background = serializers.BooleanField(required=False, allow_null=True, help_text="Not supported.")
    top_logprobs = serializers.IntegerField(required=False, allow_null=True, help_text="Not supported.")
    max_tool_calls = serializers.IntegerField(required=False, allow_null=True, help_text="Not supported.")

    class Meta:
        ref_name = "ResponseInput"

    def validate_input(self, value: Any) -> Any:
        if isinstance(value, list) and len(value) > MAX_INPUT_ITEMS:
            raise serializers.ValidationError(f"At most {MAX_INPUT_ITEMS} items.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        for name in ("background", "top_logprobs", "max_tool_calls"):
            if attrs.get(name):
                raise UnsupportedParameter(f"{name} is not supported.", extra={"param": name})
        for value in attrs.get("include") or ():
            if value not in INCLUDABLE:
                raise UnsupportedParameter(f"include {value!r} is not supported.", extra={"param": "include"})
        reasoning = {key: value for key, value in (attrs.get("reasoning") or {}).items() if value is not None}
        if set(reasoning) - {"summary"} or reasoning.get("summary", "auto") not in REASONING_SUMMARIES:
            raise UnsupportedParameter(
                "reasoning is not supported beyond summary (auto, concise, detailed).",
                extra={"param": "reasoning"},
            )
        return attrs


class ResponseSerializer(serializers.Serializer):
    id = serializers.CharField()
    object = serializers.CharField()
    created_at = serializers.IntegerField()
    status = serializers.CharField(help_text="completed, or incomplete (incomplete_details.reason)")
    model = serializers.CharField(help_text="The configuration identifier.")
    output = serializers.ListField(
        child=serializers.DictField(), help_text="message and function_call items."
    )
    usage = serializers.DictField(
        help_text="input_tokens, output_tokens, total_tokens, input_tokens_details.cached_tokens, "
        "provenance (provider_reported or estimated)."
    )
    context_usage = serializers.DictField(
        help_text="used_tokens (value, provenance), context_window, breakdown."
    )
    governance = serializers.DictField(
        help_text="request_id, served_model, decision, redactions (counts by kind)."
    )
    governance_receipt = ReceiptSerializer(
        help_text="Extension: the answer's content-free receipt. When streamed, on response.completed."
    )

    class Meta:
        ref_name = "OpenAIResponse"


class ResponseCall(CompletionCall):
    """A chat path's governed call whose finish (in the request's thread, under both drivers) also
    stores the answered response for its client, when ``keep`` is given."""

    __slots__ = ("keep",)

    def __init__(self, *, keep: Callable[[Completion], None] | None, **fields: Any) -> None:
        super().__init__(**fields)
        self.keep = keep

    def finished(self, answered: Answered) -> Completion:
        completion = super().finished(answered)
        if self.keep is not None:
            self.keep(completion)
        return completion


class ResponsesApi(OpenAIErrors, GovernedCallApi):
    content_negotiation_class = JsonErrorsNegotiation

    @extend_schema(
        tags=[TAG],
        summary="Create a response (OpenAI Responses API, governed)",
        operation_id="openai_responses_create",
        description=(
            "OpenAI's Responses API; ``model`` is a configuration identifier and the API key is the client "
            "token. Governed exactly as a chat completion: the configuration's prompt, snippets and skills, "
            "then ``instructions`` and ``input`` as caller context. Function tools are offered, never run "
            "here. ``previous_response_id`` continues one of this client's stored responses (its reply is a "
            "source at its label). With ``stream: true`` the answer is the Responses server-sent events. "
            "Extension fields: ``context_usage``, ``governance``, ``governance_receipt``."
        ),
        request=ResponseInputSerializer,
        parameters=[data_class_header("input items")],
        responses=governed_call_responses(
            ResponseSerializer, streamed="response.created ... response.completed."
        ),
    )
    def post(self, request: Request) -> HttpResponseBase:
        data = dict(validated(ResponseInputSerializer, request.data))
        configuration = client_configuration(request, data["model"])
        client = client_of(request)
        default_class = declared_class(request, client)
        previous: tuple[Entry, ...] = ()
        if data.get("previous_response_id"):
            previous = _previous(client, data["previous_response_id"])
        conversation = ResponsesConversation(
            instructions=data.get("instructions") or None,
            previous=previous,
            new=input_entries(data["input"], default_class),
        )
        tools = chat_tools(data.get("tools"))
        chat = Conversation(
            default_class=default_class,
            allow_system_override=configuration.allow_system_override,
            allow_remote_media=configuration.allow_remote_media,
            tools=tools.offered or [],  # the configuration's tools are never offered here
            tool_choice=chat_tool_choice(data.get("tool_choice")),
            options=CallOptions(
                top_p=data.get("top_p"),
                response_format=response_format(data.get("text")),
                parallel_tool_calls=data.get("parallel_tool_calls"),
            ),
        )
        frame = ResponseFrame(new_id("resp"), int(time.time()), configuration.identifier, _echo(data, tools))
        keep = partial(
            _kept, frame=frame, conversation=conversation, api_client=client, configuration=configuration
        )
        completion = ResponseCall(
            configuration=configuration,
            api_client=client,
            request=send_request(conversation, chat),
            max_tokens=data.get("max_output_tokens"),
            temperature=data.get("temperature"),
            keep=None if data.get("store") is False else keep,
        )
        body = partial(_answered, frame=frame)
        return self.answer(
            Served(completion, body, stream=ResponseEvents(frame) if data.get("stream") else None)
        )


def _answered(completion: Completion, *, frame: ResponseFrame) -> dict[str, Any]:
    return frame.answered(completion, reply_output(completion.reply))


def _kept(
    completion: Completion,
    *,
    frame: ResponseFrame,
    conversation: ResponsesConversation,
    api_client: ApiClient,
    configuration: Configuration,
) -> None:
    """Store the answered response for its client (a request with ``store: false`` has no keeper)."""
    stored_response_create(
        response_id=frame.id,
        api_client=api_client,
        configuration=configuration,
        completion=completion,
        conversation=[entry.stored() for entry in conversation.previous + conversation.new],
        reply_message=reply_message(completion.reply),
    )


def _previous(client: ApiClient, response_id: str) -> tuple[Entry, ...]:
    """The stored conversation ``response_id`` ends, its caller messages named by their place in it."""
    stored = stored_response_get_for_client(api_client=client, response_id=response_id)
    if stored is None:
        raise PreviousResponseNotFound(
            f"Previous response with id {response_id!r} not found.", extra={"param": "previous_response_id"}
        )
    return tuple(
        Entry.from_stored(entry, name=f"previous[{index}]") for index, entry in enumerate(stored.conversation)
    )


def _echo(data: dict[str, Any], tools: Tools) -> dict[str, Any]:
    """What a response echoes of its request, its caller text redacted as everything that leaves is:
    its tools as offered (function tools), and those not offered under ``tools_not_offered``."""
    redactions = Redactions()
    keys = ("instructions", "max_output_tokens", "previous_response_id", "store", "temperature", "top_p")
    echo = {key: data.get(key) for key in keys}
    offered = [tool for tool in data.get("tools") or [] if tool.get("type") == "function"]
    echo |= {"tools": offered, "tool_choice": data.get("tool_choice"), "text": data.get("text")}
    if tools.not_offered:
        echo["tools_not_offered"] = list(tools.not_offered)
    echo |= {"parallel_tool_calls": data.get("parallel_tool_calls"), "truncation": data.get("truncation")}
    echo["metadata"] = data.get("metadata")
    return _redacted_json(echo, redactions)


def _redacted_json(value: Any, redactions: Redactions) -> Any:
    if isinstance(value, str):
        return redactions.text(value)
    if isinstance(value, dict):
        return {key: _redacted_json(item, redactions) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted_json(item, redactions) for item in value]
    return value
