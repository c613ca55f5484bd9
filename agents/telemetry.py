"""The log context of a step task: every record logged while a step runs (Celery's own lines about the
task included) carries the run id, the step index and the run id as correlation id (``config/logs.py``).

Bound through Celery's ``task_prerun``/``task_postrun`` signals rather than inside the task body, so
that the worker's "received"/"succeeded"/"retry" lines of the task ("succeeded", "retry", a failure's traceback) carry them too; in the embedded
default the eager task runs inside the API request and adds to its context.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from typing import Any, TypeVar

from celery.signals import task_postrun, task_prerun
from opentelemetry.util.types import AttributeValue

from agents.metrics import step_counted
from agents.models import AgentRun, AgentStep
from config.logs import log_context
from config.tracing import span_annotate, traced_span

Task = TypeVar("Task", bound=Callable[..., Any])

_open_scopes: dict[str, ExitStack] = {}  # by task id; each entry lives for one task execution
_step_tasks: set[str] = set()


def _step_arguments(args: tuple[Any, ...] | None, kwargs: dict[str, Any] | None) -> tuple[str, int]:
    arguments = dict(zip(("run_id", "step_index"), args or (), strict=False)) | (kwargs or {})
    return str(arguments["run_id"]), int(arguments["step_index"])


def _step_started(*, sender: Any, task_id: str, args: Any, kwargs: Any, **_: Any) -> None:
    if getattr(sender, "name", None) not in _step_tasks:
        return
    run_id, step_index = _step_arguments(args, kwargs)
    scope = ExitStack()
    scope.enter_context(log_context(run_id=run_id, step_index=step_index, correlation_id=run_id))
    _open_scopes[task_id] = scope


def _step_ended(*, task_id: str, **_: Any) -> None:
    scope = _open_scopes.pop(task_id, None)
    if scope is not None:
        scope.close()


def step_log_context_connect(task_name: str) -> None:
    """Bind the log context around every execution of the task registered as ``task_name`` (which
    takes ``run_id, step_index``). By name: ``shared_task`` hands out a proxy, not the task object
    the signals name as their sender."""
    _step_tasks.add(task_name)
    task_prerun.connect(_step_started, weak=False, dispatch_uid="agents.telemetry.step_started")
    task_postrun.connect(_step_ended, weak=False, dispatch_uid="agents.telemetry.step_ended")


def step_traced(task: Task) -> Task:
    """Wrap a step task's body (``self, run_id, step_index``) in its ``step {index}`` span. Inside the
    body, so the span is a child of Celery's consumer span, whatever order the signals run in."""

    @functools.wraps(task)
    def body(self: Any, run_id: str, step_index: int, *args: Any, **kwargs: Any) -> Any:
        attributes: dict[str, AttributeValue] = {
            "govctx.run.id": str(run_id),
            "govctx.step.index": int(step_index),
        }
        with traced_span(f"step {step_index}", attributes=attributes):
            return task(self, run_id, step_index, *args, **kwargs)

    return body  # type: ignore[return-value]


def step_observed(*, action: str, reason: str) -> None:
    """A step task's outcome: counted, and set on its span."""
    step_counted(action=action, reason=reason)
    span_annotate(
        {
            "govctx.step.status": action,
            "govctx.run.termination_reason": reason if action == "finished" else None,
        }
    )


def step_record_observed(step: AgentStep) -> None:
    """The recorded step's context usage on its span: its prompt size (as reported, else as estimated)
    beside the model's window, as the API shows it."""
    used = (
        step.reported_prompt_tokens
        if step.reported_prompt_tokens is not None
        else step.estimated_prompt_tokens
    )
    span_annotate(
        {
            "govctx.context.used_tokens": used,
            "govctx.context.used_tokens.provenance": step.usage_provenance,
            "govctx.context.window": step.model.context_window if step.model else None,
        }
    )


def run_span_attributes(run: AgentRun) -> Mapping[str, AttributeValue]:
    return {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": run.configuration.identifier,
        "govctx.run.id": str(run.id),
    }
