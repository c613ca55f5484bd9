"""``manage.py run_agent --configuration ID --input TEXT``: run an agent on the current run mode and
print each step with its context usage and budget breakdown."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.models import AgentRun, AgentStep, ApprovalDecision, RunMessage, RunStatus, ToolApproval
from agents.services import CallerContextItem, run_create
from catalog.models import Configuration
from context_assembly.usage import usage_from_step
from governance.vocabulary import DataClass, TrustZone

BREAKDOWN_LINES = (
    "system_prompt",
    "snippets",
    "skills",
    "caller_context",
    "tool_specs",
    "transcript",
    "tail_note",
)


class Command(BaseCommand):
    help = "Run an agent and print every step with its context usage and budget breakdown."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--configuration", required=True)
        parser.add_argument("--input", required=True, dest="input_text")
        parser.add_argument("--input-data-class", default=DataClass.PUBLIC_CONTENT, choices=DataClass.values)
        parser.add_argument(
            "--context",
            nargs=3,
            action="append",
            default=[],
            metavar=("NAME", "DATA_CLASS", "TEXT"),
            help="A caller context item (repeatable).",
        )
        parser.add_argument(
            "--receiver-zone",
            default=TrustZone.LOCAL,
            choices=TrustZone.values,
            help="The zone the run's answers are delivered to; every step is gated for it (default: local).",
        )
        parser.add_argument(
            "--timeout", type=float, default=300.0, help="Seconds to wait for the run to end."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            configuration = Configuration.objects.select_related("model__provider").get(
                identifier=options["configuration"]
            )
        except Configuration.DoesNotExist:
            raise CommandError(f"Unknown configuration {options['configuration']!r}.") from None
        run = run_create(
            configuration=configuration,
            input_text=options["input_text"],
            input_data_class=options["input_data_class"],
            receiver_zone=TrustZone(options["receiver_zone"]),
            caller_context=[
                CallerContextItem(name, text, data_class) for name, data_class, text in options["context"]
            ],
        )
        mode = "in-process" if settings.CELERY_TASK_ALWAYS_EAGER else "on Celery workers"
        self.stdout.write(f"Run {run.id} ({configuration.identifier}, {mode})")
        run = self._wait(run, options["timeout"])
        for step in AgentStep.objects.filter(run=run).order_by("index"):
            self._print_step(step, configuration.model.context_window)
        answer = RunMessage.objects.filter(run=run, role="assistant").order_by("-position").first()
        self.stdout.write(f"Status: {run.status} ({run.termination_reason or 'running'})")
        if run.error_message:
            self.stdout.write(f"Reason: {run.error_message}")
        for approval in ToolApproval.objects.filter(run=run, decision=ApprovalDecision.PENDING):
            self.stdout.write(
                f"Waiting for approval: {approval.tool_name} ({approval.call_id}), approval {approval.id}"
            )
        if answer is not None and answer.content:
            self.stdout.write(f"Answer: {answer.content}")

    def _wait(self, run: AgentRun, timeout: float) -> AgentRun:
        deadline = time.monotonic() + timeout
        while True:
            run.refresh_from_db()
            if run.is_terminal or run.status == RunStatus.AWAITING_APPROVAL:
                return run
            if time.monotonic() > deadline:
                raise CommandError(f"Run {run.id} did not end within {timeout:g}s (status {run.status}).")
            time.sleep(0.5)

    def _print_step(self, step: AgentStep, window: int) -> None:
        usage = usage_from_step(step.reported_prompt_tokens, step.estimated_prompt_tokens)
        used = f"{usage.value:,}" if usage.value is not None else "unavailable"
        self.stdout.write(
            f"Step {step.index} [{step.status}] context usage: {used} of {window:,} tokens "
            f"({usage.provenance.value}); completion {step.completion_tokens or 0:,}; {step.duration_ms} ms"
        )
        if step.compaction:
            record = step.compaction
            what = (
                f"{len(record.get('cleared', []))} tool results cleared ({record.get('tokens', 0):,} tokens)"
                if record.get("strategy") == "clear_tool_results"
                else f"the first {record.get('through')} messages summarised"
            )
            self.stdout.write(f"  compaction ({record.get('strategy')}): {what}")
        breakdown = step.breakdown
        if breakdown:
            parts = ", ".join(f"{line} {breakdown[line]:,}" for line in BREAKDOWN_LINES)
            self.stdout.write(
                f"  budget {breakdown['budget']:,} (window {breakdown['window']:,} - reserve "
                f"{breakdown['reserve']:,} - safety {breakdown['safety']:,}): {parts}; "
                f"estimated {breakdown['estimated']:,}, remaining {breakdown['remaining']:,}, "
                f"dropped turns {breakdown['dropped_turns']}"
            )
