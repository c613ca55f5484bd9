"""The send that writes a summary of a run's older turns, planned like every other send.

A summary is a governed send of its own (docs/decisions/0021-compaction-is-a-governed-send.md): its
plan goes through :class:`agents.runtime.send.GovernedCall` as a step's does, so it passes the one
check (``decide()``, for the summary model's zone and the run's receiver), the redaction and the guard
pass over the serialised body, the fit and the client's budget. Its sources are the turns it
summarises, each at its class (a reply at its label), so a model whose zone does not admit one of them
is refused before anything is sent, and the summary's label is the most sensitive class among them.

On the wire: a system message with :data:`SUMMARY_INSTRUCTIONS` and one user message holding the run's
task and the turns as text (tool calls and results named), so any provider takes it without tools.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.models import AgentRun
from agents.runtime.plan import SendPlan, model_profile, plan_of, receiver_name, serving
from agents.runtime.redactions import Redactions
from agents.runtime.request import SendRequest, TranscriptEntry
from agents.runtime.screening import PartScreen
from agents.selectors import run_client_name
from catalog.models import Configuration, LlmModel
from context_assembly.assembly import AssemblyInputs
from context_assembly.messages import Message, TextPart
from governance.policy import Source
from governance.services import EventContext
from governance.vocabulary import DataClass, Enforcement, SourceKind, TrustZone

SUMMARY_INSTRUCTIONS = (
    "You compact the working memory of an agent. Summarise the conversation below so that the agent "
    "can continue its task from the summary alone: keep every fact, figure, decision and open question "
    "the task still needs, name the tools called and what they returned, and leave out repetition. "
    "Reply with the summary only."
)
INSTRUCTIONS_IDENTIFIER = "compaction_instructions"


def summary_model(configuration: Configuration) -> LlmModel:
    """The model that writes the configuration's summaries: its summary model, else its own."""
    return configuration.summary_model or configuration.model


def rendered_turns(messages: Sequence[Message]) -> str:
    """``messages`` as text, one block per message, in order."""
    blocks = []
    for message in messages:
        text = _text(message)
        if message.role == "tool":
            blocks.append(f"[tool result {message.tool_call_id}]\n{text}")
            continue
        if text:
            blocks.append(f"[{message.role}]\n{text}")
        for call in message.tool_calls:
            blocks.append(f"[{message.role} calls {call.name} as {call.id}]\n{call.arguments}")
    return "\n\n".join(blocks)


def _text(message: Message) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))


def summary_plan(
    *,
    run: AgentRun,
    configuration: Configuration,
    entries: Sequence[TranscriptEntry],
) -> SendPlan:
    """The plan of the send that summarises ``entries`` (a prefix of the run's compacted transcript,
    with their labels) for ``run``, served by the configuration's summary model alone."""
    served = serving(configuration, (summary_model(configuration),))
    redactions = Redactions()
    task = f"The agent's task:\n{run.input_text}\n\nThe conversation to summarise:\n\n{rendered_turns([entry.message for entry in entries])}"
    request = SendRequest(
        task_input=task,
        input_data_class=run.input_data_class,
        receiver_zone=TrustZone.parse(run.receiver_zone),
        receiver_name=receiver_name(run.api_client),
    )
    # What the summary model reads is screened as every send is: a turn holding personal data is
    # raised (a summary never pseudonymizes: its output replaces what it read).
    screen = PartScreen()
    _, turns = screen.entries(entries, [redactions.message(entry.message) for entry in entries])
    task_input, task_found = screen.text(redactions.text(task), own=False)
    sources = (
        Source(
            SourceKind.SYSTEM_PROMPT,
            INSTRUCTIONS_IDENTIFIER,
            DataClass.PUBLIC_CONTENT,
            None,
            Enforcement.ENFORCE,
        ),
        *turns,
    )
    inputs = AssemblyInputs(
        profile=model_profile(served.model),
        task_input=task_input,
        task_input_data_class=run.input_data_class,
        system_prompt=SUMMARY_INSTRUCTIONS,
        sources=sources,
    )
    return plan_of(
        configuration=configuration,
        serving=served,
        inputs=inputs,
        request=request,
        redactions=redactions,
        screen=screen,
        added_found=(task_found,),
    )


def summary_events(run: AgentRun, model: LlmModel, step_index: int) -> EventContext:
    return EventContext(
        correlation_id=str(run.id),
        provider=model.provider.identifier,
        model=model.model_id,
        configuration=run.configuration.identifier,
        api_client=run_client_name(run),
        run=str(run.id),
        step=step_index,
    )
