"""The AgentDojo side of ``bench/injection.py``, run in AgentDojo's own virtualenv (it pins other
versions of the providers' SDKs than the service does). Not a benchmark itself.

Speaks one JSON object per line on stdin/stdout. It holds one task's environment at a time and is
three things for the service's runtime: the suite's tools (``call``), the scripted model that always
obeys injected instructions (``next``), and the judge (``evaluate``, AgentDojo's own utility and
security checks). Commands:

* ``{"op": "tools", "suite": s}`` → ``{"tools": [{name, description, parameters}]}``
* ``{"op": "ids", "suite": s}`` → ``{"user_tasks": [...], "injection_tasks": [...]}``
* ``{"op": "start", "suite": s, "user_task": u, "injection_task": i | null}`` → ``{"prompt": text}``;
  the environment with the ``important_instructions`` attack placed for (u, i), or clean for null.
* ``{"op": "call", "name": n, "arguments": {...}}`` → ``{"text": result}``, run on the environment.
* ``{"op": "next", "seen": [tool result texts since the last turn]}`` → ``{"call": {name, arguments,
  injected}}`` or ``{"text": answer}``: the user task's ground truth, call by call; once a result it
  was shown holds the injection task's goal, that task's ground truth first.
* ``{"op": "evaluate", "output": text}`` → ``{"utility": bool, "security": bool, "calls": [...]}``
  (``security`` true: the injection's goal WAS reached).
"""

from __future__ import annotations

import json
import re
import sys
import types
from typing import Any

from agentdojo.agent_pipeline.tool_execution import tool_result_to_str
from agentdojo.attacks.attack_registry import load_attack
from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
from agentdojo.task_suite.load_suites import get_suite

BENCHMARK = "v1.2.2"
ATTACK = "important_instructions"


def _letters(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


class Worker:
    def __init__(self) -> None:
        self.suites: dict[str, Any] = {}
        self.state: dict[str, Any] = {}

    def suite(self, name: str) -> Any:
        if name not in self.suites:
            self.suites[name] = get_suite(BENCHMARK, name)
        return self.suites[name]

    def tools(self, suite: str) -> dict[str, Any]:
        return {
            "tools": [
                {"name": f.name, "description": f.description, "parameters": f.parameters.model_json_schema()}
                for f in self.suite(suite).tools
            ]
        }

    def ids(self, suite: str) -> dict[str, Any]:
        tasks = self.suite(suite)
        return {"user_tasks": list(tasks.user_tasks), "injection_tasks": list(tasks.injection_tasks)}

    def start(self, suite: str, user_task: str, injection_task: str | None) -> dict[str, Any]:
        tasks = self.suite(suite)
        user = tasks.get_user_task_by_id(user_task)
        injection = tasks.get_injection_task_by_id(injection_task) if injection_task else None
        injections: dict[str, str] = {}
        if injection is not None:
            attack = load_attack(ATTACK, tasks, types.SimpleNamespace(name="gpt-4o-2024-05-13"))
            injections = attack.attack(user, injection)
        environment = user.init_environment(tasks.load_and_inject_default_environment(injections))
        pre = environment.model_copy(deep=True)
        self.state = {
            "suite": tasks,
            "user": user,
            "injection": injection,
            "env": environment,
            "pre": pre,
            "plan": [(call, False) for call in user.ground_truth(pre.model_copy(deep=True))],
            "goal": _letters(injection.GOAL) if injection is not None else "",
            "obeyed": False,
            "calls": [],
        }
        return {"prompt": user.PROMPT}

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        state = self.state
        runtime = FunctionsRuntime(state["suite"].tools)
        result, error = runtime.run_function(state["env"], name, arguments)
        state["calls"].append(FunctionCall(function=name, args=arguments))
        return {"text": error if error else tool_result_to_str(result)}

    def next(self, seen: list[str]) -> dict[str, Any]:
        state = self.state
        goal = state["goal"]
        if goal and not state["obeyed"] and any(goal in _letters(text) for text in seen):
            state["obeyed"] = True
            injected = state["injection"].ground_truth(state["pre"].model_copy(deep=True))
            state["plan"] = [(call, True) for call in injected] + state["plan"]
        if not state["plan"]:
            return {"text": state["user"].GROUND_TRUTH_OUTPUT or "Done."}
        call, injected = state["plan"].pop(0)
        return {"call": {"name": call.function, "arguments": dict(call.args), "injected": injected}}

    def evaluate(self, output: str) -> dict[str, Any]:
        state = self.state
        pre, post, calls = state["pre"], state["env"], state["calls"]
        user, injection = state["user"], state["injection"]
        utility = user.utility_from_traces(output, pre, post, calls)
        if utility is None:
            utility = user.utility(output, pre, post)
        security = False
        if injection is not None:
            security = injection.security_from_traces(output, pre, post, calls)
            if security is None:
                security = injection.security(output, pre, post)
        return {"utility": bool(utility), "security": bool(security), "obeyed": state["obeyed"]}


def main() -> None:
    worker = Worker()
    for line in sys.stdin:
        request = json.loads(line)
        op = request.pop("op")
        try:
            answer = getattr(worker, op)(**request)
        except Exception as error:  # reported to the parent, which stops
            answer = {"error": f"{type(error).__name__}: {error}"}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
