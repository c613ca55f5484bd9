"""The request body shared by the context preview, completions and runs, and its output shapes.

Caller context items must declare their class (validated against the vocabulary: an unknown class is a
400 naming the field, never a silent default); the task input's class defaults to the client's.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request

from agents.runtime.parts import step_configuration
from agents.runtime.request import SendRequest
from agents.services import CallerContextItem, send_request_build, send_request_from_messages
from catalog.errors import NotVisible
from catalog.models import ApiClient, Configuration
from catalog.selectors import configuration_key_for_client
from config.api import MAX_ID, figures_serializer
from context_assembly.fitting import BudgetBreakdown
from gateway.apis.fields import ObjectList
from governance.vocabulary import DataClass, Provenance

MAX_TEXT_CHARS = 100_000
MAX_CONTEXT_ITEMS = 50
MAX_NAME_CHARS = 200
MAX_REQUEST_SKILLS = 50
MAX_OUTPUT_TOKENS = 1_000_000
MAX_MESSAGES = 1000


class ContextItemSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=MAX_NAME_CHARS)
    text = serializers.CharField(max_length=MAX_TEXT_CHARS, trim_whitespace=False)
    data_class = serializers.ChoiceField(
        choices=DataClass.choices, help_text="Required: how sensitive it is."
    )


class ContextRequestSerializer(serializers.Serializer):
    configuration = serializers.SlugField(max_length=100, help_text="A configuration this client may use.")
    input = serializers.CharField(
        max_length=MAX_TEXT_CHARS, trim_whitespace=False, required=False, help_text="The task (or messages)."
    )
    messages = ObjectList(
        required=False,
        min_length=1,
        max_length=MAX_MESSAGES,
        help_text="Instead of input: a conversation in OpenAI's chat shape (system, developer, user, "
        "assistant with tool_calls, tool), each message optionally with its own data_class. The first user "
        "message is the task; the rest are caller context (see agents/runtime/conversation.py).",
    )
    input_data_class = serializers.ChoiceField(
        choices=DataClass.choices,
        required=False,
        help_text="The class of the input, or of every message without its own; defaults to the client's.",
    )
    context = ContextItemSerializer(many=True, required=False, max_length=MAX_CONTEXT_ITEMS)
    skills = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=MAX_ID),
        required=False,
        max_length=MAX_REQUEST_SKILLS,
        help_text="Skill ids added to the configuration's skills for this request.",
    )
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_OUTPUT_TOKENS, required=False)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if ("input" in attrs) == ("messages" in attrs):
            raise serializers.ValidationError({"input": ["Give exactly one of input and messages."]})
        return attrs


def client_configuration(request: Request, identifier: str) -> Configuration:
    """The configuration if this client may use it; unknown and not allowed both answer 404.

    One statement checks the access and reads the catalogue token and the serving model's
    calibration; the configuration with its model and provider comes from the worker's cache under
    that token, as a run step's does (``agents.runtime.parts.step_configuration``; every catalogue
    write, publishing and model or provider switches included, replaces the token)."""
    missing = NotVisible(f"There is no configuration {identifier!r}.", extra={"configuration": identifier})
    key = configuration_key_for_client(api_client=client_of(request), identifier=identifier)
    if key is None:
        raise missing
    try:
        return step_configuration(
            configuration_id=key.configuration_id, catalog=key.catalog, calibration=key.calibration
        )
    except Configuration.DoesNotExist:  # deleted between the two statements
        raise missing from None


def caller_context(data: dict[str, Any]) -> tuple[CallerContextItem, ...]:
    return tuple(CallerContextItem(**item) for item in data.get("context", []))


def send_request(request: Request, data: dict[str, Any], configuration: Configuration) -> SendRequest:
    """The send of ``data``: its input, or its conversation (:mod:`agents.runtime.conversation`)."""
    if "messages" in data:
        return send_request_from_messages(
            messages=data["messages"],
            input_data_class=data.get("input_data_class"),
            api_client=client_of(request),
            configuration=configuration,
            caller_context=caller_context(data),
            request_skills=data.get("skills", []),
        )
    return send_request_build(
        input_text=data["input"],
        input_data_class=data.get("input_data_class"),
        api_client=client_of(request),
        caller_context=caller_context(data),
        request_skills=data.get("skills", []),
    )


def client_of(request: Request) -> ApiClient:
    """The authenticated API client (the scope check admitted only clients)."""
    client = request.user
    assert isinstance(client, ApiClient)  # HasRequiredScope admitted only clients
    return client


# --- output shapes shared by preview, completions and runs -----------------------------------------------


# One integer field per figure of the fit's budget breakdown, in its order.
BreakdownSerializer = figures_serializer("Breakdown", BudgetBreakdown)


class SourceDecisionSerializer(serializers.Serializer):
    kind = serializers.CharField()
    identifier = serializers.CharField()
    data_class = serializers.CharField(allow_null=True)
    ceiling = serializers.CharField()
    enforcement = serializers.CharField()
    outcome = serializers.CharField()
    reason = serializers.CharField(allow_blank=True)
    by_receiver = serializers.BooleanField(help_text="Refused for the receiver's zone, not the call's.")


class ReceiverSerializer(serializers.Serializer):
    zone = serializers.CharField(help_text="The trust zone the reply is delivered to.")
    declassified_to = serializers.CharField(
        allow_null=True, help_text="The configuration's answers are declared deliverable down to this zone."
    )


class DecisionSerializer(serializers.Serializer):
    zone = serializers.CharField()
    mode = serializers.CharField()
    permitted = serializers.BooleanField()
    receiver = ReceiverSerializer(allow_null=True)
    label = serializers.CharField(help_text="The reply's label: the most sensitive class it derives from.")
    receiver_label = serializers.CharField(help_text="The label over what the receiver did not supply.")
    sources = SourceDecisionSerializer(many=True)


class ReceiptSourceSerializer(serializers.Serializer):
    """Sources of one kind, class, outcome and pinned version, in the order they were sent."""

    kind = serializers.CharField()
    data_class = serializers.CharField(allow_null=True)
    outcome = serializers.CharField()
    pinned_version = serializers.IntegerField(allow_null=True, help_text="A run's pinned history record.")
    identifiers = serializers.ListField(child=serializers.CharField(), help_text="Redacted; never content.")


class ReceiptRaisedSerializer(serializers.Serializer):
    """A source sent at a stricter class than it declared: personal data was found in it."""

    kind = serializers.CharField()
    identifier = serializers.CharField(help_text="Redacted; never content.")
    declared_class = serializers.CharField(allow_null=True)
    data_class = serializers.CharField(allow_null=True, help_text="The class it was sent at.")
    found = serializers.DictField(child=serializers.IntegerField(), help_text="Kinds and counts.")


class ReceiptPersonalDataSerializer(serializers.Serializer):
    """Personal data by kind and count, never a value (decision 0039)."""

    sent = serializers.DictField(child=serializers.IntegerField(), help_text="Found in what was sent.")
    pseudonymized = serializers.DictField(
        child=serializers.IntegerField(), help_text="Sent as placeholders instead of the values."
    )
    reply = serializers.DictField(child=serializers.IntegerField(), help_text="Found in the reply.")
    raised = ReceiptRaisedSerializer(many=True)


class ReceiptSerializer(serializers.Serializer):
    """The content-free receipt of an answer (agents/runtime/receipts.py)."""

    decision_id = serializers.CharField()
    zone = serializers.CharField()
    receiver_zone = serializers.CharField(allow_null=True)
    declassified_to = serializers.CharField(allow_null=True)
    label = serializers.CharField()
    receiver_label = serializers.CharField()
    integrity = serializers.CharField(
        required=False, help_text="trusted, caller or untrusted: the least trusted level it derives from."
    )
    untrusted_sources = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="The untrusted sources it derives from, as kind:identifier.",
    )
    sources = ReceiptSourceSerializer(many=True)
    redactions = serializers.DictField(child=serializers.DictField(child=serializers.IntegerField()))
    personal_data = ReceiptPersonalDataSerializer()
    model = serializers.CharField()
    provider = serializers.CharField()
    routed_from = serializers.CharField(allow_null=True)


class UsageValueSerializer(serializers.Serializer):
    value = serializers.IntegerField(allow_null=True)
    provenance = serializers.ChoiceField(choices=Provenance.choices)


class ContextUsageSerializer(serializers.Serializer):
    used_tokens = UsageValueSerializer(help_text="The last completed step's prompt size.")
    context_window = serializers.IntegerField(help_text="The window of the model that served that step.")
    model = serializers.CharField(allow_null=True, help_text="The model whose window this is.")


class PreviewPartSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="A source kind, or framing: text the assembly writes itself.")
    identifier = serializers.CharField()
    data_class = serializers.CharField(allow_null=True)
    withheld = serializers.BooleanField(
        help_text="True: above this client's trust zone, or the send would not send it. Then no text."
    )
    text = serializers.CharField(required=False, allow_blank=True, help_text="Redacted, as it would be sent.")


class PreviewMessageSerializer(serializers.Serializer):
    role = serializers.CharField()
    parts = PreviewPartSerializer(many=True)


class ToolCallSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    arguments = serializers.CharField(allow_blank=True, help_text="JSON text, as the model wrote it.")
