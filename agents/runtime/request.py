"""What a send is asked to carry beyond its configuration: the caller's input and context, and the
transcript, one entry per message with the label it is sent under.

Every driver builds one: a run's step (``agents/runtime/transcript.py``), a caller's conversation
(``agents/runtime/conversation.py``), the completions API and the preview (``agents/services/runs.py``),
a compaction's summary (``agents/runtime/summary.py``) and an evaluation. The planner
(``agents/runtime/plan.py``) turns it and the configuration's content into what is sent.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from context_assembly.assembly import TASK_INPUT_IDENTIFIER, ContextItem
from context_assembly.messages import Message, ToolSpec
from context_assembly.parts import FilePart, ImagePart
from governance.policy import Source
from governance.vocabulary import Enforcement, SourceKind, TrustZone
from providers.values import NO_OPTIONS, CallOptions
from skills.models import Skill


@dataclass(frozen=True)
class TranscriptEntry:
    """One message of a transcript and the label it is sent under.

    A message the caller sent (``caller``: a conversation's message, or one a run was started with) is
    caller context at its class. A run's own rows are labelled by what they are: a tool result at its
    tool's class, an earlier reply at its label, beside its label for the run's receiver
    (``receiver_class``; blank: the same) and whether that label came from a row sent under observe. A
    reply stored without a label (before labels were kept) reads as ``secret_adjacent`` downstream.
    ``identifier`` names the entry's source; None: by its place (a tool result by its call id, a reply
    by its position in the transcript sent). ``integrity``: the level the row was stored with (a tool
    result's, a reply's); empty: the level its kind implies, ``untrusted`` for a run's own rows stored
    before levels were kept."""

    message: Message
    data_class: str
    caller: bool = False
    identifier: str | None = None
    receiver_class: str = ""
    observed: bool = False
    integrity: str = ""
    # Whether ``message`` outlives this send (a run's transcript, held between its steps; a plain
    # message of a conversation, kept parsed for the requests that send it again): its redaction and
    # screening are then remembered by its identity. A message parsed for this one send is not:
    # remembering it would only fill the memos.
    held: bool = True

    def source(self, index: int) -> Source | None:
        """The entry's source at position ``index`` of the transcript sent; None for a message of the
        run's own that is no source (none is stored today but replies and tool results)."""
        if self.caller:
            identifier = self.identifier or f"transcript[{index}]"
            return Source(SourceKind.CALLER_CONTEXT, identifier, self.data_class, None, Enforcement.ENFORCE)
        if self.message.role == "tool":
            identifier = self.identifier or self.message.tool_call_id or ""
            return Source(
                SourceKind.TOOL_OUTPUT,
                identifier,
                self.data_class,
                None,
                Enforcement.ENFORCE,
                None,
                self.integrity,
            )
        if self.message.role == "assistant":
            return Source(
                SourceKind.ASSISTANT_TURN,
                self.identifier or f"transcript[{index}]",
                self.data_class,
                None,
                Enforcement.OBSERVE if self.observed else Enforcement.ENFORCE,
                receiver_class=self.receiver_class or self.data_class,
                integrity=self.integrity,
            )
        return None


def transcript_sources(entries: Iterable[TranscriptEntry]) -> list[Source]:
    """The sources of a transcript, in order (the entries that are none left out)."""
    return [source for index, entry in enumerate(entries) if (source := entry.source(index)) is not None]


@dataclass(frozen=True)
class MediaInput:
    """An image or PDF the caller sent, and the source it is governed as: its own declared class, else
    its message's (``identifier``: ``messages[0].content[1]``)."""

    part: ImagePart | FilePart
    data_class: str
    identifier: str

    def source(self) -> Source:
        return Source(SourceKind.CALLER_CONTEXT, self.identifier, self.data_class, None, Enforcement.ENFORCE)


@dataclass(frozen=True)
class SendRequest:
    """The per-request part of a send: what the caller asked for, plus the transcript.

    A caller's conversation (:mod:`agents.runtime.conversation`) may set ``system_override`` (caller
    system text that replaces the configuration's system prompt, only where the configuration allows
    it), and may bring its own tools: ``client_tools`` not None replaces the configuration's tools (the
    caller runs them; nothing is executed here), classified by ``client_tools_class``. ``options`` are
    passed on to the provider, redacted like every other part.
    """

    task_input: str
    input_data_class: str
    caller_context: tuple[ContextItem, ...] = ()
    transcript: tuple[TranscriptEntry, ...] = ()
    request_skills: tuple[Skill, ...] = ()
    tail_note: str | None = None
    task_input_identifier: str = TASK_INPUT_IDENTIFIER
    system_override: tuple[ContextItem, ...] = ()
    client_tools: tuple[ToolSpec, ...] | None = None
    client_tools_class: str = ""
    options: CallOptions = NO_OPTIONS
    # How many more messages the run's own transcript holds than ``transcript`` shows: those a
    # compaction's summary stands for (agents/runtime/compacted.py).
    compacted_messages: int = 0
    # Who the reply is for (DESIGN §4, "Information flow"): the API client's zone, or the zone a run's
    # operator named. None only where no reply is delivered to anyone (an edit's cost, a comparison).
    receiver_zone: TrustZone | None = None
    receiver_name: str = ""
    # Whose placeholders a pseudonymizing configuration sends (agents/runtime/pseudonyms.py): a run's
    # id, so every step of it uses the same ones; empty: this send's own.
    pseudonym_scope: str = ""
    # The caller's images and PDFs: those of the task input (sent after its text, in the first user
    # message) and those already inside transcript messages (carried here for their sources).
    task_input_media: tuple[MediaInput, ...] = ()
    transcript_media: tuple[MediaInput, ...] = ()

    @property
    def media_sources(self) -> list[Source]:
        return [media.source() for media in (*self.task_input_media, *self.transcript_media)]

    @property
    def caller_messages(self) -> int:
        """How many entries at the transcript's front the caller sent (a run's stored conversation)."""
        return sum(1 for _ in itertools.takewhile(lambda entry: entry.caller, self.transcript))

    @property
    def messages(self) -> tuple[Message, ...]:
        """The transcript's messages, in order."""
        return tuple(entry.message for entry in self.transcript)
