"""What each receiver may get, computed from a :class:`~tests.egress.world.World` alone.

Every planted text carries a marker word naming its part (:func:`parts`: the system prompt, every
pool snippet and skill, the caller's items and input). The oracle says which parts a send assembles,
whether the decision refuses, and which markers each receiver may see:

* the provider wire (receiver zone: the call's zone, the least trusted of the active targets): a part whose
  effective ceiling does not admit the zone only when its row is ``observe`` under ``per_row``;
* an API client (receiver zone: the client's ``trust_zone``): a part only when that zone is within
  its effective ceiling (whatever its enforcement), and never a part the decision refused;
* governance events: no caller free text at all (item names and texts, the task input);
* the reply's receiver (the client): the send is refused when a part the client did not supply is
  above the client's zone (whatever its enforcement), unless the configuration's answers are
  declassified down to the client's zone or a less trusted one (never for a secret_adjacent part). The
  provider echoes everything it is sent, so an answer holds only the client's own parts, parts within
  its zone, or (declassified) what was sent below secret_adjacent.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from tests.egress.world import (
    CLASS_CEILING_RANK,
    PER_ROW,
    POOL,
    ZONE_RANK,
    ZONES,
    Classification,
    World,
)

SYSTEM = "system_prompt"
SNIPPET = "snippet"
SKILL_DESCRIPTION = "skill_description"
SKILL_BODY = "skill_body"
ITEM_NAME = "caller_name"
ITEM_TEXT = "caller_text"
TASK_INPUT = "task_input"
REPLY = "reply"
CALLER_KINDS = (ITEM_NAME, ITEM_TEXT, TASK_INPUT)
_SHORT = {
    SYSTEM: "sys",
    SNIPPET: "snip",
    SKILL_DESCRIPTION: "skd",
    SKILL_BODY: "skb",
    ITEM_NAME: "name",
    ITEM_TEXT: "text",
    TASK_INPUT: "input",
    REPLY: "reply",
}


@dataclass(frozen=True)
class Part:
    marker: str
    kind: str
    index: int | None
    data_class: str
    ceiling_rank: int  # the effective ceiling, as a zone rank
    observe: bool

    @property
    def caller(self) -> bool:
        return self.kind in CALLER_KINDS


def marker(kind: str, index: int | None = None) -> str:
    """A word naming one part; the closing ``x`` keeps one marker from being a prefix of another."""
    return f"mk{_SHORT[kind]}{'' if index is None else index}x"


def _classified(kind: str, index: int | None, c: Classification) -> Part:
    return Part(marker(kind, index), kind, index, c.data_class, c.ceiling_rank, c.observe)


def _caller(kind: str, index: int | None, data_class: str) -> Part:
    return Part(marker(kind, index), kind, index, data_class, CLASS_CEILING_RANK[data_class], False)


@functools.cache
def pool_parts() -> dict[str, Part]:
    found = [_classified(SNIPPET, row.index, row.classification) for row in POOL]
    for row in POOL:
        found.append(_classified(SKILL_DESCRIPTION, row.index, row.classification))
        found.append(_classified(SKILL_BODY, row.index, row.classification))
    return {part.marker: part for part in found}


def input_class(world: World) -> str:
    return world.input_class or world.client_default_class


def parts(world: World) -> dict[str, Part]:
    """Every part by marker: the pool's, the configuration's prompt, the caller's."""
    found = {**pool_parts()}
    system = _classified(SYSTEM, None, world.system_prompt)
    found[system.marker] = system
    for i, item in enumerate(world.items):
        for part in (_caller(ITEM_NAME, i, item.data_class), _caller(ITEM_TEXT, i, item.data_class)):
            found[part.marker] = part
    task = _caller(TASK_INPUT, None, input_class(world))
    found[task.marker] = task
    return found


# --- the send -----------------------------------------------------------------------------------------


def call_zone_rank(world: World) -> int:
    """The least trusted zone of the serving model and its fallbacks (one hop), among those switched
    on (a switched-off target is never called); with none on, of them all (the stricter reading)."""
    active = [target for target in world.targets if target.active] or world.targets
    return max(ZONE_RANK[target.zone] for target in active)


def call_zone(world: World) -> str:
    return ZONES[call_zone_rank(world)]


def has_active_target(world: World) -> bool:
    return any(target.active for target in world.targets)


def skill_visible(world: World, index: int | None) -> bool:
    """Whether the client may name this skill in a request: it exists and is enabled, the client may
    read skills, and the skill's effective ceiling admits the client's zone."""
    if index is None or not POOL[index].active or "skills:read" not in world.client_scopes:
        return False
    return ZONE_RANK[world.client_zone] <= POOL[index].classification.ceiling_rank


def request_skills_valid(world: World) -> bool:
    """Whether every skill the request names may be named (else the request is an error, the same
    for an unknown id as for one the client may not see)."""
    return all(skill_visible(world, index) for index in world.request_skills)


def block_skills(world: World) -> list[int]:
    """The skills composed into the block: the configuration's, then the request's; enabled only."""
    chosen: list[int] = []
    for index in [*world.own_skills, *(i for i in world.request_skills if i is not None)]:
        if index not in chosen and POOL[index].active:
            chosen.append(index)
    return chosen


def selected_snippets(world: World) -> list[int]:
    return [i for i in world.snippets if POOL[i].active]


def assembled(world: World) -> list[Part]:
    """The parts the first send of a request assembles (before any tool result)."""
    by_marker = parts(world)
    chosen = [by_marker[marker(SYSTEM)]]
    chosen += [by_marker[marker(SNIPPET, i)] for i in selected_snippets(world)]
    for i in block_skills(world):
        chosen.append(by_marker[marker(SKILL_DESCRIPTION, i)])
        if not world.progressive:
            chosen.append(by_marker[marker(SKILL_BODY, i)])
    for i in range(len(world.items)):
        chosen += [by_marker[marker(ITEM_NAME, i)], by_marker[marker(ITEM_TEXT, i)]]
    chosen.append(by_marker[marker(TASK_INPUT)])
    return chosen


def admitted(part: Part, zone_rank: int) -> bool:
    return zone_rank <= part.ceiling_rank


def observed(world: World, part: Part) -> bool:
    return part.observe and world.mode == PER_ROW


def client_may_receive(world: World, part: Part) -> bool:
    """Whether a reply holding ``part`` may reach the client: within its zone, or declassified for it
    (a declassification never covers secret_adjacent)."""
    if within_client_zone(world, part):
        return True
    return declassified_for_client(world) and part.data_class != "secret_adjacent"


def declassified_for_client(world: World) -> bool:
    """Whether the configuration's answers are declared deliverable to the client's zone."""
    declared = world.declassified_to
    return declared is not None and ZONE_RANK[declared] >= ZONE_RANK[world.client_zone]


def refused_parts(world: World) -> set[str]:
    """Assembled parts the call's zone does not admit and that are not observed legacy rows, and
    parts the client did not supply that are above its zone (unless declassified for it)."""
    zone = call_zone_rank(world)
    found = {p.marker for p in assembled(world) if not admitted(p, zone) and not observed(world, p)}
    found |= {p.marker for p in assembled(world) if not p.caller and not client_may_receive(world, p)}
    return found


def answer_may_hold(world: World) -> set[str]:
    """Markers an answer (an echo of what was sent) may hold for the client: its own parts and parts
    within its zone; with a declassification covering its zone, whatever may be sent."""
    if declassified_for_client(world):
        sent = {m for m in wire_may_carry(world) if client_may_receive(world, parts(world)[m])}
        return sent | caller_markers(world) | reply_markers(world)
    own = {m for m, p in parts(world).items() if p.caller or within_client_zone(world, p)}
    return own | reply_markers(world)


def refused(world: World) -> bool:
    """Whether the decision for the first send refuses."""
    return bool(refused_parts(world))


def wire_may_carry(world: World) -> set[str]:
    """Markers that may reach the provider: admitted in the call's zone, or observed legacy rows."""
    zone = call_zone_rank(world)
    return {m for m, p in parts(world).items() if admitted(p, zone) or observed(world, p)}


def within_client_zone(world: World, part: Part) -> bool:
    """Whether the client's zone admits the part (its effective ceiling; observe never widens what a
    receiver other than the provider is shown)."""
    return ZONE_RANK[world.client_zone] <= part.ceiling_rank


def client_may_see(world: World) -> set[str]:
    """Markers an API client may read: class within its zone, never a part the decision refused."""
    refused_now = refused_parts(world)
    return {m for m, p in parts(world).items() if within_client_zone(world, p) and m not in refused_now}


def caller_markers(world: World) -> set[str]:
    return {m for m, p in parts(world).items() if p.caller}


def send_outcomes(world: World) -> set[str]:
    """How the first send ends: ``refused`` (the decision), ``inactive`` (no target switched on),
    ``failed`` (the only target left answered an error) or ``served``. Refused and inactive may both
    hold; either may then be reported."""
    outcomes = set()
    if refused(world):
        outcomes.add("refused")
    active = [target for target in world.targets if target.active]
    if not active:
        outcomes.add("inactive")
    if outcomes:
        return outcomes
    return {"failed"} if active[0].fails and len(active) == 1 else {"served"}


def reply_markers(world: World) -> set[str]:
    return {marker(REPLY, i) for i in range(len(world.replies))}


def readable(world: World, kinds: tuple[str, ...]) -> set[str]:
    """Markers of pool parts of ``kinds`` a client may read through the catalogue API: class within
    its zone (a read is not a send, so no decision applies)."""
    return {m for m, p in pool_parts().items() if p.kind in kinds and within_client_zone(world, p)}
