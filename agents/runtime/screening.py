"""Personal data in the parts of one send: what each part holds, and what the send does with it.

The planner (``agents/runtime/plan.py``) asks a :class:`PartScreen` about every part it sends, after
secret redaction: the system prompt, each snippet and skill, the caller's context and input, the
caller's PDFs (file name and extracted text), each transcript message, the caller's tools and options. A part that holds personal data either keeps its
text and is sent at the stricter of its class and ``personal_data`` (the gate decides: refuse, or
route), or, where the configuration pseudonymizes and the part's receivers may not read personal
data, is sent with placeholders at its declared class (``agents/runtime/pseudonyms.py``).

A run re-sends its transcript every step: what a message holds is memoized by the message's identity
(as ``agents/runtime/redactions.py`` memoizes its redacted form), so a step screens only what is new.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

from agents.runtime.pseudonyms import Pseudonyms, request_key, run_key
from agents.runtime.redactions import Redactions
from agents.runtime.request import SendRequest, TranscriptEntry
from catalog.models import Configuration
from config.caches import cache_register
from config.lru import LruCache
from context_assembly.assembly import ContextItem
from context_assembly.messages import ContentPart, FilePart, Message, TextPart, ThinkingBlock, ToolCall
from governance.guardrails.personal_data import Finding
from governance.policy import Receiver, Source
from governance.screening import counted, found_in, raised
from governance.vocabulary import DataClass, Enforcement, PersonalDataOutcome, SourceKind, TrustZone

# A message's findings: per text of it (content, content parts, each call's arguments), by position.
_MessageFindings = tuple[tuple[Finding, ...], ...]
_MESSAGES: LruCache[int, tuple[Message, _MessageFindings]] = LruCache(16_384)
cache_register(
    _MESSAGES,
    name="screened_messages",
    key="id() of a transcript Message, held by its entry, so the id cannot be reused while it is stored",
    invalidation="none needed: Messages are immutable; a lookup checks the entry holds the very object",
)


@dataclass
class PartScreen:
    """The screening of one send's parts. ``pseudonyms`` is set where the configuration pseudonymizes
    personal data that the call's zone may not receive (``call_admits`` False) or that a receiver may
    not read (``receiver_admits`` False, for what the receiver did not supply itself)."""

    pseudonyms: Pseudonyms | None = None
    call_admits: bool = True
    receiver_admits: bool = True
    found: dict[str, int] = field(default_factory=dict)  # what was sent as found, by kind

    def text(self, text: str, *, own: bool) -> tuple[str, dict[str, int]]:
        """``text`` as sent and what it holds, by kind, where the part is raised for it (empty when
        nothing was found, or all was pseudonymized). ``own``: the receiver supplied the part."""
        findings = found_in(text)
        if not findings:
            return text, {}
        if self.pseudonymizes(own=own):
            assert self.pseudonyms is not None
            return self.pseudonyms.replaced(text, findings, restorable=own or self.receiver_admits), {}
        counts = counted(findings)
        self._add(counts)
        return text, counts

    def message(
        self, message: Message, *, own: bool, remember: bool = True
    ) -> tuple[Message, dict[str, int]]:
        """:meth:`text` for every text of a transcript message (its content and tool-call arguments);
        with ``remember`` (the message outlives this send), a message seen before is looked up by
        identity, not screened again."""
        findings = _message_findings(message) if remember else _findings(message)
        if not any(findings):
            return message, {}
        return self._screened(message, findings, own=own)

    def _screened(
        self, message: Message, findings: _MessageFindings, *, own: bool
    ) -> tuple[Message, dict[str, int]]:
        """:meth:`message` of a message whose texts hold ``findings`` (some)."""
        if not self.pseudonymizes(own=own):
            counts = counted(finding for texts in findings for finding in texts)
            self._add(counts)
            return message, counts
        assert self.pseudonyms is not None
        restorable = own or self.receiver_admits
        texts = iter(_replaced(self.pseudonyms, _texts(message), findings, restorable))
        return _rebuilt(message, texts), {}

    def part(self, part: ContentPart, *, own: bool) -> tuple[ContentPart, dict[str, int]]:
        """:meth:`text` for a caller's image or PDF part (a PDF's file name and extracted text): a
        PDF that holds personal data to pseudonymize is sent as its text with placeholders."""
        texts = _part_texts(part)
        findings = tuple(found_in(text) for text in texts)
        if not any(findings):
            return part, {}
        if not self.pseudonymizes(own=own):
            counts = counted(finding for found in findings for finding in found)
            self._add(counts)
            return part, counts
        assert self.pseudonyms is not None
        replaced = _replaced(self.pseudonyms, texts, findings, own or self.receiver_admits)
        return _part_rebuilt(part, iter(replaced)), {}

    def block(self, text: str, items: Sequence[str]) -> tuple[str, list[dict[str, int]]]:
        """A composed block of editor-owned items (snippets, skills) as sent, and what each item holds
        where the items are raised for it: pseudonymized whole, or screened item by item."""
        if self.pseudonymizes(own=False):
            return self.text(text, own=False)[0], [{} for _ in items]
        return text, [self.count(item) for item in items]

    def count(self, text: str) -> dict[str, int]:
        """What ``text`` holds, by kind, counted as found (a part that is never pseudonymized: the
        caller's tools and options, an item of a block)."""
        counts = counted(found_in(text))
        self._add(counts)
        return counts

    def entries(
        self, entries: Sequence[TranscriptEntry], messages: Sequence[Message]
    ) -> tuple[tuple[Message, ...], list[Source]]:
        """A transcript's ``messages`` (redacted, in the order of ``entries``) as sent, and the entries'
        sources, raised where their message holds personal data that is not pseudonymized. A held
        entry's message is remembered (see :meth:`message`)."""
        sent, sources = [], []
        for index, (entry, message) in enumerate(zip(entries, messages, strict=True)):
            # :meth:`message` inline for the common case, a message that holds nothing.
            findings = _message_findings(message) if entry.held else _findings(message)
            screened, counts = (
                self._screened(message, findings, own=entry.caller) if any(findings) else (message, None)
            )
            sent.append(screened)
            source = entry.source(index)
            if source is not None:
                sources.append(raised(source, counts) if counts else source)
        return tuple(sent), sources

    def pseudonymizes(self, *, own: bool) -> bool:
        """Whether personal data in a part is sent as placeholders (``own``: the receiver supplied it)."""
        return self.pseudonyms is not None and (not self.call_admits or not (own or self.receiver_admits))

    def _add(self, counts: dict[str, int]) -> None:
        self.found = merged_counts(self.found, counts)


def _texts(message: Message) -> list[str]:
    """Every text of ``message`` that is screened, in order: its content (a text part's text; a PDF's
    file name and extracted text, as redaction reads them), then each tool call's arguments."""
    content = message.content
    texts = (
        [content] if isinstance(content, str) else [text for part in content for text in _part_texts(part)]
    )
    return texts + [call.arguments for call in message.tool_calls]


def _part_texts(part: ContentPart) -> list[str]:
    if isinstance(part, TextPart):
        return [part.text]
    if isinstance(part, FilePart):
        return [part.filename, part.text]
    return []


def _message_findings(message: Message) -> _MessageFindings:
    entry = _MESSAGES.get(id(message))
    if entry is not None and entry[0] is message:
        return entry[1]
    findings = _findings(message)
    _MESSAGES.put(id(message), (message, findings))
    return findings


def _findings(message: Message) -> _MessageFindings:
    return tuple(found_in(text) for text in _texts(message))


def _replaced(
    pseudonyms: Pseudonyms, texts: list[str], findings: _MessageFindings, restorable: bool
) -> list[str]:
    return [
        pseudonyms.replaced(text, found, restorable=restorable) if found else text
        for text, found in zip(texts, findings, strict=True)
    ]


def _rebuilt(message: Message, it: Iterator[str]) -> Message:
    """``message`` with its texts taken in order from ``it`` (one per text of :func:`_texts`)."""
    content = message.content
    content = next(it) if isinstance(content, str) else tuple(_part_rebuilt(part, it) for part in content)
    calls = tuple(replace(call, arguments=next(it)) for call in message.tool_calls)
    return replace(message, content=content, tool_calls=calls)


def _part_rebuilt(part: ContentPart, it: Iterator[str]) -> ContentPart:
    """A content part with its texts taken from ``it``. A PDF whose name or text changed cannot be
    sent as its bytes (the values are in them): it is sent as its text, as redaction sends one that
    held a secret (``agents/runtime/redactions.py``)."""
    if isinstance(part, TextPart):
        return TextPart(next(it))
    if not isinstance(part, FilePart):
        return part
    name, text = next(it), next(it)
    if name == part.filename and text == part.text:
        return part
    label = json.dumps(name, ensure_ascii=False)
    return TextPart(f"Document {label} (its text; personal data as placeholders):\n{text}")


def part_screen(
    configuration: Configuration, zone: TrustZone, receiver: Receiver | None, scope: str
) -> PartScreen:
    """The screen of a send of ``configuration`` to ``zone`` for ``receiver``: it pseudonymizes where
    the configuration says so, with the placeholders of ``scope`` (a run's: the same at every step;
    empty: this send's own)."""
    call_admits = zone.permits(DataClass.PERSONAL_DATA)
    receiver_admits = receiver is None or receiver.admits(DataClass.PERSONAL_DATA)
    pseudonyms = None
    if configuration.personal_data_outcome == PersonalDataOutcome.PSEUDONYMIZE and not (
        call_admits and receiver_admits
    ):
        pseudonyms = Pseudonyms(run_key(scope) if scope else request_key())
    return PartScreen(pseudonyms, call_admits=call_admits, receiver_admits=receiver_admits)


def merged_counts(*counts: dict[str, int]) -> dict[str, int]:
    merged: dict[str, int] = {}
    for each in counts:
        for kind, count in each.items():
            merged[kind] = merged.get(kind, 0) + count
    return merged


def json_strings(value: object) -> Iterator[str]:
    """Every string in a JSON value (frozen or plain), keys included: what is screened of a caller's
    tool specs and options."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield str(key)
            yield from json_strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from json_strings(item)


@dataclass(frozen=True)
class ScreenedReply:
    """A reply as delivered: its placeholders restored for the receiver where the send pseudonymized,
    with the personal data the provider's reply held (by kind, before any restore) and whether a
    value was put back."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    found: dict[str, int]
    restored: bool


def reply_screened(
    pseudonyms: Pseudonyms | None,
    text: str,
    calls: tuple[ToolCall, ...],
    thinking: tuple[ThinkingBlock, ...] = (),
) -> ScreenedReply:
    """Screen a (redacted) reply and restore its placeholders: in its text, and in each tool call's
    arguments as JSON text (a call the service runs gets the values; so does a caller that runs its
    own tools: it is the receiver). Its thinking is screened (what it holds raises the reply's label)
    and left as the provider wrote it: it goes back to the provider unchanged on the next turn."""
    found = merged_counts(
        counted(found_in(text)),
        *(counted(found_in(call.arguments)) for call in calls),
        *(counted(found_in(block.thinking)) for block in thinking),
    )
    if pseudonyms is None or not pseudonyms.restoring:
        return ScreenedReply(text, calls, found, restored=False)
    restored_text = pseudonyms.restore(text)
    restored_calls = tuple(
        replace(call, arguments=pseudonyms.restore(call.arguments, json_text=True)) for call in calls
    )
    changed = restored_text != text or restored_calls != calls
    return ScreenedReply(restored_text, restored_calls, found, restored=changed)


def caller_context_screened(
    request: SendRequest, redactions: Redactions, screen: PartScreen
) -> tuple[tuple[ContextItem, ...], list[dict[str, int]]]:
    """The caller's context items as sent (redacted, screened), and what each holds where it is
    raised for it."""
    items, found = [], []
    for item in request.caller_context:
        name, name_found = screen.text(redactions.text(item.name), own=True)
        text, text_found = screen.text(redactions.text(item.text), own=True)
        items.append(ContextItem(name, text, item.data_class, item.identifier))
        found.append(merged_counts(name_found, text_found))
    return tuple(items), found


def media_screened(
    request: SendRequest, redactions: Redactions, screen: PartScreen
) -> tuple[tuple[ContentPart, ...], list[Source]]:
    """The task input's images and PDFs as sent (redacted, screened), and the sources of every media
    part of the request, raised by what a PDF's text holds. A transcript message's media are sent,
    screened and counted with their message (:meth:`PartScreen.entries`); their own sources are raised
    here for the same findings, not counted twice."""
    parts, sources = [], []
    for media in request.task_input_media:
        part, counts = screen.part(redactions.part(media.part), own=True)
        parts.append(part)
        sources.append(raised(media.source(), counts))
    for media in request.transcript_media:
        counts = {}
        if not screen.pseudonymizes(own=True):
            texts = _part_texts(Redactions().part(media.part))  # counted with its message already
            counts = counted(finding for text in texts for finding in found_in(text))
        sources.append(raised(media.source(), counts))
    return tuple(parts), sources


def caller_sources(request: SendRequest, screen: PartScreen, prompt_found: dict[str, int]) -> list[Source]:
    """The caller's system text that overrides the prompt (raised by what the joined text holds), and
    the caller's tool specs, response format and stop sequences (caller text sent to the provider,
    classified like the rest of the request, raised by what each holds)."""
    sources = [
        raised(
            Source(
                SourceKind.CALLER_CONTEXT,
                item.identifier or "system",
                item.data_class,
                None,
                Enforcement.ENFORCE,
            ),
            prompt_found,
        )
        for item in request.system_override
    ]
    if request.client_tools:
        specs = [(spec.name, spec.description, spec.parameters) for spec in request.client_tools]
        found = screen.count("\n".join(json_strings(specs)))
        sources.append(
            raised(
                Source(
                    SourceKind.CALLER_CONTEXT, "tools", request.client_tools_class, None, Enforcement.ENFORCE
                ),
                found,
            )
        )
    option_class = request.client_tools_class or request.input_data_class
    options = request.options
    for name, present, text in (
        (
            "response_format",
            options.response_format is not None,
            "\n".join(json_strings(options.response_format)),
        ),
        ("stop", bool(options.stop), "\n".join(options.stop)),
    ):
        if present:
            source = Source(SourceKind.CALLER_CONTEXT, name, option_class, None, Enforcement.ENFORCE)
            sources.append(raised(source, screen.count(text)))
    return sources
