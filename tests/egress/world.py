"""Random worlds for the egress properties: what is configured, who asks, and what they ask for.

The catalogue is a fixed **pool** built once per test function (:mod:`tests.egress.build`): a snippet
and a skill for every valid classification (class, declared ceiling never looser than the class
allows, enforce or observe), plus switched-off ones. Each snippet carries its own tag and one shared
tag. A :class:`World` is plain data drawn by hypothesis: the serving model's zone and its fallbacks'
zones (some targets switched off, some failing), a classified system prompt, which pool snippets the
configuration selects (by their own tags) and which pool skills it and the request name, an API client
with a zone and scopes, and a request (caller context items, task input, scripted provider replies with
tool calls).

Every text carries a **marker word** naming its part, so a receiver's bytes tell which parts reached
it, and many carry a **canary** (a fake secret, drawn at test time by ``tests/canaries.py``, one set
per session). The expected outcome is computed from the world alone (:mod:`tests.egress.oracle`), with
the zone and class tables restated here rather than imported from the code under test.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

from tests.canaries import Canary, generate_canaries
from tests.egress.profiles import CANARY_SEED

# --- the vocabulary, restated (docs/governance.md) ----------------------------------------------------

ZONES = ("local", "private_hosted", "external_eu", "external_global")
CLASSES = (
    "public_content",
    "editor_content",
    "source_code",
    "internal_configuration",
    "system_diagnostics",
    "secret_adjacent",
)
ZONE_RANK = {zone: rank for rank, zone in enumerate(ZONES)}
# The least trusted zone (as a rank) that accepts each class.
CLASS_CEILING_RANK = {
    "public_content": 3,
    "editor_content": 3,
    "source_code": 2,
    "internal_configuration": 2,
    "system_diagnostics": 1,
    "secret_adjacent": 0,
}
PER_ROW, ENFORCE_ALL = "per_row", "enforce_all"
SHARED_TAGS = ("alpha", "beta", "gamma")
TOOL_GROUPS = ("content", "skills")
SCOPES_USED = (
    "configurations:use",
    "runs:create",
    "runs:read",
    "snippets:read",
    "skills:read",
    "governance:read",
)

# --- canaries (one set per session) -------------------------------------------------------------------

CANARIES: tuple[Canary, ...] = tuple(generate_canaries(CANARY_SEED))
KINDS = tuple(c.kind for c in CANARIES)
BY_KIND = {c.kind: c for c in CANARIES}
# Canaries whose realistic line fits a name (one line, well under the 200 characters of an item name).
SHORT_KINDS = tuple(c.kind for c in CANARIES if len(c.context) <= 150 and "\n" not in c.context)
# Canaries whose bare value is a valid function name with a vendor prefix: a model may "call a tool"
# by that name, which the runtime then records and names in its events.
NAME_KINDS = tuple(
    kind
    for kind in (
        "github_classic_pat",
        "github_oauth_token",
        "github_server_token",
        "github_user_token",
        "npm_token",
        "huggingface_token",
        "stripe_test_secret_key",
        "slack_bot_token",
        "gitlab_pat",
        "aws_access_key_id",
    )
    if re.fullmatch(r"[A-Za-z0-9_-]{1,64}", BY_KIND[kind].value)
)

# --- classifications and the pool ---------------------------------------------------------------------


@dataclass(frozen=True)
class Classification:
    data_class: str
    ceiling: str  # declared; never looser than the class allows
    observe: bool  # a legacy row that predates classification

    @property
    def ceiling_rank(self) -> int:
        """The effective ceiling: the stricter of the declared one and the class's."""
        return min(ZONE_RANK[self.ceiling], CLASS_CEILING_RANK[self.data_class])


VALID = tuple(
    Classification(data_class, ceiling, observe)
    for data_class in CLASSES
    for ceiling in ZONES
    if ZONE_RANK[ceiling] <= CLASS_CEILING_RANK[data_class]
    for observe in (False, True)
)


@dataclass(frozen=True)
class PoolRow:
    """One pool snippet or skill: its classification, whether it is switched on, its canaries."""

    index: int
    classification: Classification
    active: bool  # a snippet's is_active, a skill's is_enabled
    canary: str | None  # planted in the text (a snippet's text, a skill's body)
    name_canary: str | None  # planted in a snippet's name

    @property
    def tag(self) -> str:
        return f"own{self.index}"

    @property
    def shared_tag(self) -> str:
        return SHARED_TAGS[self.index % len(SHARED_TAGS)]

    @property
    def skill_name(self) -> str:
        return f"egress-skill-{self.index}"


def _pool() -> tuple[PoolRow, ...]:
    rows = [(c, True) for c in VALID] + [(VALID[(7 * i) % len(VALID)], False) for i in range(6)]
    return tuple(
        PoolRow(
            index=i,
            classification=c,
            active=active,
            canary=None if i % 4 == 3 else KINDS[(7 * i) % len(KINDS)],
            name_canary=SHORT_KINDS[i % len(SHORT_KINDS)] if i % 5 == 0 else None,
        )
        for i, (c, active) in enumerate(rows)
    )


POOL = _pool()

# --- the world ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    zone: str
    kind: str  # openai_compatible | anthropic
    provider_active: bool
    model_active: bool
    fails: bool  # answers a retryable error (so the next target is tried)

    @property
    def active(self) -> bool:
        return self.provider_active and self.model_active


@dataclass(frozen=True)
class ItemSpec:
    data_class: str
    name_canary: str | None
    text_canary: str | None


@dataclass(frozen=True)
class ReplySpec:
    """One scripted provider reply. ``tool``: None, a built-in tool, ``"unknown"``, or ``"canary"`` (a
    tool named by the bare value of the canary kind in ``argument``); ``argument`` is otherwise a tag
    or a skill name. ``argument_canary`` is planted in the call's arguments."""

    text_canary: str | None
    tool: str | None
    argument: str
    argument_canary: str | None


@dataclass(frozen=True)
class World:
    mode: str
    targets: tuple[Target, ...]  # the serving model first, then its fallbacks in order
    system_prompt: Classification
    system_canary: str | None
    snippets: tuple[int, ...]  # pool rows the configuration selects, by their own tags, in order
    own_skills: tuple[int, ...]  # pool rows linked to the configuration, in order
    request_skills: tuple[int | None, ...]  # pool rows named in the request; None: an unknown id
    progressive: bool
    tool_groups: tuple[str, ...]
    client_zone: str
    client_scopes: frozenset[str]
    client_default_class: str
    items: tuple[ItemSpec, ...]
    input_class: str | None  # None: the client's default
    input_canary: str | None
    replies: tuple[ReplySpec, ...]
    declassified_to: str | None = None  # the configuration's answers are declared deliverable there

    @property
    def configuration_tags(self) -> tuple[str, ...]:
        return tuple(POOL[i].tag for i in self.snippets)


# --- strategies (few, coarse draws: each draw costs) --------------------------------------------------

# Weighted towards worlds that send something (trusted zones, less sensitive caller classes), so that
# the wire, the tools and the run transcript are exercised as often as the refusals.
_TARGETS = tuple(
    Target(zone, kind, state != "provider_off", state != "model_off", state == "fails")
    for zone in ("local", "local", "local", "private_hosted", "private_hosted", *ZONES[2:])
    for kind in ("openai_compatible", "anthropic")
    for state in ("ok", "ok", "ok", "ok", "ok", "ok", "provider_off", "model_off", "fails")
)
caller_classes = st.sampled_from((*CLASSES[:2], *CLASSES[:2], *CLASSES))
canaries = st.sampled_from((None, *KINDS))
short_canaries = st.sampled_from((None, *SHORT_KINDS))
pool_rows = st.integers(0, len(POOL) - 1)


@st.composite
def replies(draw: st.DrawFn, world_skills: tuple[int, ...]) -> ReplySpec:
    tool = draw(st.sampled_from((None, None, "snippets_by_tag", "load_skill", "unknown", "canary")))
    if tool == "load_skill":
        names = [POOL[i].skill_name for i in world_skills]
        argument = draw(st.sampled_from([*names, POOL[draw(pool_rows)].skill_name, "no-such-skill"]))
    elif tool == "canary":
        argument = draw(st.sampled_from(NAME_KINDS))
    else:
        argument = draw(st.sampled_from((*SHARED_TAGS, POOL[draw(pool_rows)].tag)))
    return ReplySpec(draw(canaries), tool, argument, draw(short_canaries) if tool else None)


@st.composite
def worlds(draw: st.DrawFn, *, max_replies: int = 3) -> World:
    own_skills = tuple(draw(st.lists(pool_rows, unique=True, max_size=2)))
    request_skills: tuple[int | None, ...] = ()
    if draw(st.integers(0, 3)) == 0:
        request_skills = tuple(draw(st.lists(pool_rows | st.sampled_from((None,)), min_size=1, max_size=2)))
    scopes = SCOPES_USED
    if draw(st.integers(0, 4)) == 0:
        scopes = tuple(draw(st.lists(st.sampled_from(SCOPES_USED), unique=True, min_size=1)))
    known_skills = own_skills + tuple(i for i in request_skills if i is not None)
    return World(
        mode=draw(st.sampled_from((PER_ROW, PER_ROW, ENFORCE_ALL))),
        targets=tuple(draw(st.lists(st.sampled_from(_TARGETS), min_size=1, max_size=3))),
        system_prompt=draw(st.sampled_from(VALID)),
        system_canary=draw(canaries),
        snippets=tuple(draw(st.lists(pool_rows, unique=True, max_size=4))),
        own_skills=own_skills,
        request_skills=request_skills,
        progressive=draw(st.booleans()),
        tool_groups=draw(st.sampled_from(((), ("content",), ("skills",), TOOL_GROUPS, TOOL_GROUPS))),
        client_zone=draw(st.sampled_from(ZONES)),
        client_scopes=frozenset(scopes),
        client_default_class=draw(caller_classes),
        items=tuple(
            ItemSpec(draw(caller_classes), draw(short_canaries), draw(canaries))
            for _ in range(draw(st.integers(0, 3)))
        ),
        input_class=draw(st.none() | caller_classes),
        input_canary=draw(canaries),
        replies=tuple(draw(st.lists(replies(known_skills), min_size=1, max_size=max_replies))),
        declassified_to=draw(st.sampled_from((None, None, None, *ZONES))),
    )
