"""``manage.py count_tokens --model MODEL_ID --messages FILE [--tools FILE] [--max-tokens N]``.

Prints, as JSON, our estimate of an OpenAI-format request and its breakdown: per message, tool specs,
reply priming, total, how it sits in the model's budget, and what the model's API accepts.
``MODEL_ID`` is an ``LlmModel`` row's model id, else an entry of the built-in catalogue (whose figures
name their vendor source); a dated snapshot id (``gpt-4-0613``, ``gpt-4o-2024-08-06``) takes its
family's entry, by the rule of ``context_assembly.profiles.snapshot_family``.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents.runtime.plan import model_profile
from catalog.models import LlmModel
from config.errors import ApplicationError
from context_assembly.estimator import Estimator
from context_assembly.fitting import budget_for
from context_assembly.messages import Message, ToolSpec
from context_assembly.profiles import ModelCapabilities, ModelProfile, catalogue_get


class Command(BaseCommand):
    help = "Estimate the prompt tokens of an OpenAI-format request (messages and tool specs as JSON files)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--model", required=True, help="An LlmModel's model id, or a catalogue model id.")
        parser.add_argument(
            "--messages", required=True, type=Path, help="JSON file: a list of chat messages."
        )
        parser.add_argument("--tools", type=Path, help="JSON file: a list of tool specs.")
        parser.add_argument("--max-tokens", type=int, help="The request's max output tokens (the reserve).")

    def handle(self, *args: Any, **options: Any) -> None:
        profile, capabilities, resolved_from = self._profile(options["model"])
        raw_messages = _load_list(options["messages"], "messages")
        raw_tools = _load_list(options["tools"], "tools") if options["tools"] else []
        try:
            messages = [Message.from_openai(item) for item in raw_messages]
            tools = [ToolSpec.from_openai(item) for item in raw_tools]
            budget = budget_for(profile, max_tokens=options["max_tokens"])
        except (ApplicationError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        estimator = Estimator(profile)
        per_message = [estimator.count_message(message) for message in messages]
        tool_tokens = estimator.count_tools(tools)
        total = sum(per_message) + estimator.reply_priming + tool_tokens
        report = {
            "model": options["model"],
            "resolved_from": resolved_from,
            "profile_model": profile.model_id,
            "capabilities": asdict(capabilities),
            "tokenizer": profile.tokenizer,
            "exact": estimator.is_exact,
            "estimated": total,
            "breakdown": {
                "messages": [
                    {"index": i, "role": m.role, "tokens": n}
                    for i, (m, n) in enumerate(zip(messages, per_message, strict=True))
                ],
                "messages_total": sum(per_message),
                "reply_priming": estimator.reply_priming,
                "tool_specs": tool_tokens,
            },
            "budget": {
                "window": budget.window,
                "reserve": budget.reserve,
                "safety": budget.safety,
                "budget": budget.budget,
                "remaining": budget.budget - total,
            },
        }
        self.stdout.write(json.dumps(report, indent=2))

    def _profile(self, model_id: str) -> tuple[ModelProfile, ModelCapabilities, str]:
        rows = list(LlmModel.objects.select_related("provider").filter(model_id=model_id))
        if len(rows) > 1:
            providers = ", ".join(row.provider.identifier for row in rows)
            raise CommandError(f"Model id {model_id!r} is served by several providers ({providers}).")
        if rows:
            row = rows[0]
            return model_profile(row), row.capabilities, f"llm_model:{row.provider.identifier}/{model_id}"
        entry = catalogue_get(model_id)
        if entry is None:
            raise CommandError(
                f"Unknown model {model_id!r}: no LlmModel row and not in the built-in catalogue."
            )
        return entry.profile, entry.capabilities, f"catalogue: {entry.source}"


def _load_list(path: Path, what: str) -> list[Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CommandError(f"Cannot read {what} file {path}: {exc.strerror}.") from None
    except json.JSONDecodeError as exc:
        raise CommandError(f"{what} file {path} is not JSON: {exc.msg} (line {exc.lineno}).") from None
    if isinstance(data, dict) and isinstance(data.get(what), list):
        data = data[what]  # a whole request body is accepted too
    if not isinstance(data, list):
        raise CommandError(f"{what} file {path} must hold a JSON list (or an object with a {what!r} list).")
    return data
