"""Injection screening of a tool's untrusted result, as a signal (issue 37, item 4; decision 0040).

A result the runtime stores as ``untrusted`` is scanned (governance/guardrails/injection.py) with the
names of the tools the configuration names. When something injection-shaped is found, the rules are
stored on the result's message (``RunMessage.screening``), counted in
``govctx_untrusted_injection_flagged_total`` and the result is fenced as untrusted data, as the skill
block fences skills, before it is stored and sent. Screening never changes a level: a flagged result is
as untrusted as a clean one, and the gate holds or refuses consequential calls from either alike.
A trusted result (a tool declared trusted) is not scanned.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agents.metrics import injection_flagged
from governance.guardrails.fencing import fenced
from governance.guardrails.injection import injection_rules
from governance.vocabulary import Integrity
from skills.composition import GUARD_PREAMBLE, PROGRESSIVE_NOTE


@dataclass(frozen=True, slots=True)
class Screened:
    content: str  # fenced when anything was found
    rules: tuple[str, ...]  # the rules found, sorted, each once; empty: nothing found (or not scanned)

    @property
    def stored(self) -> str:
        """The rules as ``RunMessage.screening`` holds them."""
        return ",".join(self.rules)


def screened(content: str, integrity: Integrity, tool: str, tool_names: Iterable[str]) -> Screened:
    """``content``, returned by ``tool`` with ``integrity``, screened (see the module)."""
    if integrity != Integrity.UNTRUSTED:
        return Screened(content, ())
    # The skill block's own framing (a loaded skill's result holds it) addresses the model by design:
    # it is ours, not the result's, so it is not what is screened. Both its sentences say "skill".
    own = content.replace(GUARD_PREAMBLE, "").replace(PROGRESSIVE_NOTE, "") if "skill" in content else content
    rules = injection_rules(own, tool_names=tool_names)
    if not rules:
        return Screened(content, ())
    injection_flagged(rules)
    return Screened(fenced(content, f"the tool {tool}"), rules)
