"""What a governance change would do before it is saved: the sends it would refuse or newly allow.

A change (:data:`Change`) is a snippet's, skill's or configuration prompt's classification, a provider's
trust zone (the zone of every model it serves), an LLM model's provider (so its zone), an API client's
trust zone, a configuration's declassification of its answers, a snippet tag's rename or deletion,
or a snippet's deletion (which also list the snippets each configuration would stop or start
sending). :func:`what_if` decides every configuration (active or not, as the
readiness report does: one can be switched back on) the way a send decides it, twice: with the rows as
stored and with the change applied to unsaved copies. Its sources are
:func:`agents.selectors.configuration_sources`, its zone :func:`agents.runtime.plan.send_zone`, its
receiver :func:`agents.runtime.plan.send_receiver`, and where its own zone refuses and it names a
trusted model, the trusted model's zone (:func:`agents.runtime.plan.routes_to_trusted`); the verdict
is :func:`governance.policy.decide` under the enforcement mode in effect. Each configuration is decided
for the provider call alone (no receiver) and for each API client that may use it.

The most recent :data:`RUN_LIMIT` runs are decided the same way over what they were built from: their
pinned snippets and skills (the live rows' classification, as every step reads it), their task input
and caller context (a conversation's messages are not re-read), and the receiver zone stored on the run (a client's zone change reaches its next
run, not a stored one). A run whose pinned versions are gone from the history is counted, not decided.

Only what changes is listed. Nothing is saved, recorded or sent.
"""

from editors.what_if.changes import (
    PROVIDER_CALL,
    RUN_LIMIT,
    Change,
    ClientZoneChange,
    DeclassificationChange,
    ModelProviderChange,
    ProviderZoneChange,
    RunEffect,
    SelectionEffect,
    SendEffect,
    SnippetRemoval,
    SourceChange,
    TagChange,
    Verdict,
    WhatIf,
    ZoneChange,
)
from editors.what_if.effects import what_if

__all__ = [
    "PROVIDER_CALL",
    "RUN_LIMIT",
    "Change",
    "ClientZoneChange",
    "DeclassificationChange",
    "ModelProviderChange",
    "ProviderZoneChange",
    "RunEffect",
    "SelectionEffect",
    "SendEffect",
    "SnippetRemoval",
    "SourceChange",
    "TagChange",
    "Verdict",
    "WhatIf",
    "ZoneChange",
    "what_if",
]
