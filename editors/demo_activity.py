"""What the demo has to read from its first start: evaluation cases and a few runs.

The cases are an evaluation set per demo configuration, written once (editors may change them after):
on ``demo-assistant`` they pass (the offline model answers them with its scripted text); on
``demo-external`` the case is refused by governance before anything is sent, and passes because what
it must never show (the internal runbook) is not in any answer.

The runs go through the real runtime (``agents.services.run_create``, every step governed like any
other), once, when no demo configuration has a run yet: one completed on ``demo-assistant`` (a tool
call, then the answer) and one refused on ``demo-external``, so the dashboard's window-fill chart and
refusal counts show at once. ``make run`` seeds with steps run in the seeding process
(``AGENT_RUNS_IN_BACKGROUND=0``), so they have ended before the server starts.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.models import AgentRun
from agents.services import run_create
from catalog.models import Configuration
from evaluations.models import EvaluationCase
from governance.vocabulary import DataClass, TrustZone

RUNBOOK_TEXT = "Restart the queue workers"  # the demo's internal_configuration snippet begins so


@dataclass(frozen=True)
class DemoCase:
    name: str
    input: str
    must_contain: str = ""
    must_not_contain: str = ""
    max_tokens: int | None = None
    must_be_permitted: bool = False


ASSISTANT_CASES = (
    DemoCase(
        "launch note",
        "Draft a launch note for the new search page.",
        must_contain="house tone",
        max_tokens=60,
        must_be_permitted=True,
    ),
    DemoCase(
        "customer reply",
        "Reply to a customer who asks when their order ships.",
        must_contain="warm and direct",
        must_not_contain=RUNBOOK_TEXT,
        must_be_permitted=True,
    ),
)
EXTERNAL_CASES = (
    # Refused: the configuration's "operations" snippet may not reach an external_global model.
    DemoCase("launch note, refused", "Draft a launch note.", must_not_contain=RUNBOOK_TEXT),
)
RUN_INPUTS = (
    ("demo-assistant", "Summarise our tone of voice for a launch note."),
    ("demo-external", "Draft a launch note."),
)


def demo_cases_seed(*, configuration: Configuration, external: Configuration) -> None:
    """Create the demo cases that are missing (by configuration and name); existing ones stay."""
    for owner, cases in ((configuration, ASSISTANT_CASES), (external, EXTERNAL_CASES)):
        for position, case in enumerate(cases):
            if EvaluationCase.objects.filter(configuration=owner, name=case.name).exists():
                continue
            row = EvaluationCase(
                configuration=owner,
                name=case.name,
                input=case.input,
                data_class=DataClass.PUBLIC_CONTENT,
                must_contain=case.must_contain,
                must_not_contain=case.must_not_contain,
                max_tokens=case.max_tokens,
                must_be_permitted=case.must_be_permitted,
                position=position,
            )
            row.full_clean()
            row.save()


def demo_runs_seed() -> list[AgentRun]:
    """Start the demo runs when no demo configuration has a run yet (else start none); each run's
    steps are enqueued as any run's are. Returns the runs started."""
    identifiers = [identifier for identifier, _ in RUN_INPUTS]
    if AgentRun.objects.filter(configuration__identifier__in=identifiers).exists():
        return []
    configurations = Configuration.objects.select_related("model__provider").in_bulk(
        identifiers, field_name="identifier"
    )
    return [
        run_create(
            configuration=configurations[identifier],
            input_text=text,
            input_data_class=DataClass.PUBLIC_CONTENT,
            receiver_zone=TrustZone.LOCAL,
        )
        for identifier, text in RUN_INPUTS
        if identifier in configurations
    ]
