"""How a run and its steps look in the API (run detail, run creation and the event stream)."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from agents.models import AgentRun, AgentStep, RunMessage, RunStatus, StepStatus, TerminationReason
from agents.runtime.transcript import run_usage, step_usage
from catalog.models import LlmModel
from gateway.apis.approval_output import ToolApprovalSerializer, approval_bodies
from gateway.apis.context import ContextUsageSerializer, ReceiptSerializer, ToolCallSerializer
from gateway.apis.costs import cost_field
from governance.policy import Source, receiver_may_read
from governance.vocabulary import Enforcement, Provenance, SourceKind, TrustZone


class StepUsageSerializer(serializers.Serializer):
    reported_prompt_tokens = serializers.IntegerField(allow_null=True)
    estimated_prompt_tokens = serializers.IntegerField(allow_null=True)
    cached_tokens = serializers.IntegerField(
        allow_null=True, help_text="Prompt tokens read from the provider's cache (part of the prompt)."
    )
    cache_write_tokens = serializers.IntegerField(
        allow_null=True, help_text="Prompt tokens written to the provider's cache (part of the prompt)."
    )
    completion_tokens = serializers.IntegerField(allow_null=True)
    provenance = serializers.ChoiceField(choices=Provenance.choices)
    cost = cost_field(
        "At the serving model's prices; null when the provider reported no usage.", allow_null=True
    )


class SkippedTargetSerializer(serializers.Serializer):
    provider = serializers.CharField()
    model = serializers.CharField()
    reason = serializers.CharField(help_text="context_overflow: the model's window cannot hold the floor.")
    estimated = serializers.IntegerField(help_text="The context's floor, counted for this model.")
    budget = serializers.IntegerField(help_text="This model's budget: window - reply limit - safety.")
    window = serializers.IntegerField()

    class Meta:
        ref_name = "SkippedTarget"


class PinSerializer(serializers.Serializer):
    kind = serializers.CharField(help_text="configuration, snippet or skill.")
    identifier = serializers.CharField()
    id = serializers.IntegerField(help_text="The row's id.")
    history_id = serializers.IntegerField(help_text="The id of the row's history record: the version.")

    class Meta:
        ref_name = "PinnedVersion"


class ClearedResultSerializer(serializers.Serializer):
    position = serializers.IntegerField(help_text="The tool result's position in the transcript.")
    tool = serializers.CharField()
    tokens = serializers.IntegerField(help_text="The tokens cleared.")

    class Meta:
        ref_name = "ClearedToolResult"


class CompactionSerializer(serializers.Serializer):
    strategy = serializers.CharField(help_text="clear_tool_results or summarise.")
    cleared = ClearedResultSerializer(many=True, required=False, help_text="The tool results cleared.")
    tokens = serializers.IntegerField(required=False, help_text="The tokens cleared in all.")
    through = serializers.IntegerField(
        required=False, help_text="A summary replaces the transcript's messages before this position."
    )
    summary = serializers.CharField(required=False, help_text="Left out when withheld (or not written).")
    summary_withheld = serializers.BooleanField(
        required=False,
        help_text="True: the summary's label for the run's receiver is above this client's trust zone.",
    )

    class Meta:
        ref_name = "Compaction"


class StepSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.ChoiceField(choices=StepStatus.choices)
    model = serializers.CharField(allow_null=True)
    provider = serializers.CharField(allow_blank=True)
    usage = StepUsageSerializer()
    context_usage = ContextUsageSerializer(
        help_text="This step's prompt size beside the window of the model that served it."
    )
    breakdown = serializers.DictField(
        child=serializers.IntegerField(),
        allow_null=True,
        help_text="The fit's budget breakdown, for the model that served the step.",
    )
    max_tokens = serializers.IntegerField(allow_null=True, help_text="The reply limit the model was sent.")
    max_tokens_clamped = serializers.BooleanField(
        help_text="True: the run's max_tokens was above this model's output limit and was lowered to it."
    )
    skipped_targets = SkippedTargetSerializer(
        many=True, help_text="Fallbacks not sent this step: its context could not fit their window."
    )
    pins = PinSerializer(
        many=True, help_text="The content versions this step's context was built from, in assembly order."
    )
    finish_reason = serializers.CharField(allow_blank=True)
    duration_ms = serializers.IntegerField()
    error_code = serializers.CharField(allow_blank=True)
    label = serializers.CharField(
        allow_blank=True, help_text="The reply's label: the most sensitive class it derives from."
    )
    receiver_label = serializers.CharField(
        allow_blank=True, help_text="The reply's label for the run's receiver (what it did not supply)."
    )
    integrity = serializers.CharField(
        allow_blank=True,
        help_text="The reply's integrity: trusted, caller, or untrusted when untrusted content (a tool "
        "result, an unreviewed skill) was in its context; then a consequential tool call it asks for "
        "waits for approval or is refused.",
    )
    governance_receipt = ReceiptSerializer(allow_null=True, help_text="Null for a step that sent nothing.")
    compaction = CompactionSerializer(
        allow_null=True, help_text="A compaction step's record; null otherwise."
    )
    created_at = serializers.DateTimeField()


class RunMessageSerializer(serializers.Serializer):
    position = serializers.IntegerField()
    step_index = serializers.IntegerField()
    role = serializers.CharField()
    content = serializers.CharField(allow_blank=True, required=False, help_text="Left out when withheld.")
    tool_calls = ToolCallSerializer(many=True)
    tool_call_id = serializers.CharField(allow_blank=True)
    tool_name = serializers.CharField(allow_blank=True)
    data_class = serializers.CharField(
        allow_blank=True, help_text="A tool result's class; an assistant turn's label; blank otherwise."
    )
    integrity = serializers.CharField(
        allow_blank=True,
        help_text="A tool result's or an assistant turn's integrity (trusted, caller, untrusted); blank "
        "for one stored before levels were kept, which reads as untrusted.",
    )
    withheld = serializers.BooleanField(
        help_text="True: a tool result, or an assistant turn, classified above this client's trust zone; "
        "its content and tool calls are left out."
    )


class RunTotalsSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    cached_tokens = serializers.IntegerField()
    cache_write_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    cost = cost_field("The sum of the steps' costs.")


class RunErrorSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField(allow_blank=True)


class RunSummarySerializer(serializers.Serializer):
    id = serializers.UUIDField()
    configuration = serializers.CharField()
    status = serializers.ChoiceField(choices=RunStatus.choices)
    termination_reason = serializers.ChoiceField(choices=TerminationReason.choices, allow_blank=True)
    error = RunErrorSerializer(allow_null=True)
    input_data_class = serializers.CharField()
    totals = RunTotalsSerializer(help_text="Cumulative over steps; not the context fill.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class RunDetailSerializer(RunSummarySerializer):
    context_usage = ContextUsageSerializer(help_text="The last completed step's prompt size.")
    pins = PinSerializer(
        many=True,
        help_text="The content versions the run started with and every step uses (classification is "
        "read live at each step).",
    )
    steps = StepSerializer(many=True)
    messages = RunMessageSerializer(many=True, help_text="The transcript after the first user message.")
    approvals = ToolApprovalSerializer(
        many=True, help_text="Tool calls that needed a person's approval, pending or decided, oldest first."
    )


def step_body(
    step: AgentStep, default_model: LlmModel, receiver_zone: TrustZone = TrustZone.EXTERNAL_GLOBAL
) -> dict[str, Any]:
    """One step as a reader in ``receiver_zone`` may see it: a compaction's summary only when its
    label for the run's receiver is within that zone."""
    return {
        "index": step.index,
        "kind": step.kind,
        "status": step.status,
        "model": step.model.model_id if step.model is not None else None,
        "provider": step.provider,
        "usage": {
            "reported_prompt_tokens": step.reported_prompt_tokens,
            "estimated_prompt_tokens": step.estimated_prompt_tokens,
            "cached_tokens": step.cached_tokens,
            "cache_write_tokens": step.cache_write_tokens,
            "completion_tokens": step.completion_tokens,
            "provenance": step.usage_provenance or Provenance.UNAVAILABLE,
            "cost": step.cost,
        },
        "context_usage": step_usage(step, default_model).as_dict(),
        "breakdown": step.breakdown or None,
        "max_tokens": step.max_tokens,
        "max_tokens_clamped": step.max_tokens_clamped,
        "skipped_targets": step.skipped_targets,
        "pins": step.pins,
        "finish_reason": step.finish_reason,
        "duration_ms": step.duration_ms,
        "error_code": step.error_code,
        "label": step.label,
        "receiver_label": step.receiver_label,
        "integrity": step.integrity,
        "governance_receipt": step.receipt or None,
        "compaction": compaction_body(step, receiver_zone),
        "created_at": step.created_at,
    }


def compaction_body(step: AgentStep, receiver_zone: TrustZone) -> dict[str, Any] | None:
    """A compaction step's record; its summary is withheld from a reader its receiver label does not
    admit (a label left blank reads as ``secret_adjacent``, as for any turn)."""
    if not step.compaction:
        return None
    body = {
        key: value for key, value in step.compaction.items() if key not in ("summary", "observed", "messages")
    }
    if "summary" in step.compaction:
        source = Source(
            SourceKind.ASSISTANT_TURN, f"step {step.index}", step.receiver_label, None, Enforcement.ENFORCE
        )
        shown = receiver_may_read([source], receiver_zone)[0]
        body["summary_withheld"] = not shown
        if shown:
            body["summary"] = step.compaction["summary"]
    return body


def run_summary_body(run: AgentRun) -> dict[str, Any]:
    error = {"code": run.error_code, "message": run.error_message} if run.error_code else None
    return {
        "id": run.id,
        "configuration": run.configuration.identifier,
        "status": run.status,
        "termination_reason": run.termination_reason,
        "error": error,
        "input_data_class": run.input_data_class,
        "totals": {
            "prompt_tokens": run.prompt_tokens_total,
            "cached_tokens": run.cached_tokens_total,
            "cache_write_tokens": run.cache_write_tokens_total,
            "completion_tokens": run.completion_tokens_total,
            "cost": run.cost_total,
        },
        "created_at": run.created_at,
        "finished_at": run.finished_at,
    }


def run_detail_body(run: AgentRun, *, receiver_zone: TrustZone) -> dict[str, Any]:
    """The run with its steps and transcript as a receiver in ``receiver_zone`` may see it: a tool
    result classified above that zone, and an assistant turn whose label for the run's receiver is
    above it (:func:`readable_messages`), are listed without their content."""
    messages = list(run.messages.all())
    readable = readable_messages(messages, receiver_zone)
    return {
        **run_summary_body(run),
        "context_usage": run_usage(run).as_dict(),
        "pins": run.pins,
        "steps": [
            step_body(step, run.configuration.model, receiver_zone)
            for step in run.steps.select_related("model")
        ],
        "messages": [message_body(m, readable.get(m.pk, True)) for m in messages],
        "approvals": approval_bodies(run, receiver_zone),
    }


def readable_messages(messages: list[RunMessage], receiver_zone: TrustZone) -> dict[int, bool]:
    """By message id, whether a receiver in ``receiver_zone`` may read a tool result (its tool's
    class) or an assistant turn (its label for the run's receiver; a turn stored without a label reads
    as ``secret_adjacent``). Other messages are the receiver's own and are not listed."""
    labelled = [message for message in messages if message.role in ("tool", "assistant")]
    sources = [_message_source(m) for m in labelled]
    return dict(zip((m.pk for m in labelled), receiver_may_read(sources, receiver_zone), strict=True))


def _message_source(message: RunMessage) -> Source:
    if message.role == "tool":
        return Source(
            SourceKind.TOOL_OUTPUT, message.tool_call_id, message.data_class, None, Enforcement.ENFORCE
        )
    return Source(
        SourceKind.ASSISTANT_TURN, str(message.position), message.receiver_class, None, Enforcement.ENFORCE
    )


def message_body(message: RunMessage, shown: bool) -> dict[str, Any]:
    body = {
        "position": message.position,
        "step_index": message.step_index,
        "role": message.role,
        "tool_calls": message.tool_calls if shown else [],
        "tool_call_id": message.tool_call_id,
        "tool_name": message.tool_name,
        "data_class": message.data_class,
        "integrity": message.integrity,
        "withheld": not shown,
    }
    if shown:
        body["content"] = message.content
    return body
