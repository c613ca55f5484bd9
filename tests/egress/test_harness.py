"""The egress harness's own detectors: a check that cannot see a leak would prove nothing."""

from __future__ import annotations

import json
from dataclasses import replace

from tests.egress import oracle
from tests.egress.receivers import Received, canaries_in, canary_leaks, json_texts
from tests.egress.world import BY_KIND, VALID, Classification, ItemSpec, Target, World

GITHUB = BY_KIND["github_classic_pat"]
PEM = BY_KIND["rsa_private_key"]


def test_a_canary_is_found_whole_escaped_split_or_percent_encoded():
    secret = GITHUB.secret
    assert set(canaries_in(f"token {GITHUB.value} here")) == {GITHUB.kind}
    assert set(canaries_in("".join(json_texts(json.dumps({"a": PEM.context}))))) == {PEM.kind}
    assert set(canaries_in(secret[:18] + "\u200b" + secret[18:])) == {GITHUB.kind}
    assert set(canaries_in(secret[:10] + "".join(f"%{ord(c):02X}" for c in secret[10:]))) == {GITHUB.kind}


def test_a_redacted_canary_or_a_short_piece_is_not_a_leak():
    assert canaries_in("token [REDACTED:github_token] here") == {}
    assert canaries_in(f"token {GITHUB.secret[:11]}") == {}


def test_leaks_name_the_receiver():
    received = [Received("clean", ["nothing here"]), Received("leaky", [PEM.context])]
    assert set(canary_leaks(received)) == {"leaky"}
    assert Received("r", ["see mksnip12x and mkname0x, not mksnip1"]).markers() == {"mksnip12x", "mkname0x"}


def _world(zones: tuple[str, ...], prompt: Classification, item_class: str) -> World:
    return World(
        mode="per_row",
        targets=tuple(Target(zone, "openai_compatible", True, True, False) for zone in zones),
        system_prompt=prompt,
        system_canary=None,
        snippets=(),
        own_skills=(),
        request_skills=(),
        progressive=False,
        tool_groups=(),
        client_zone="local",  # a receiver that adds nothing: these worlds test the call's zone
        client_scopes=frozenset(),
        client_default_class="public_content",
        items=(ItemSpec(item_class, None, None),),
        input_class=None,
        input_canary=None,
        replies=(),
    )


def test_the_oracle_takes_the_least_trusted_target_and_lets_observed_rows_through():
    secret_local = Classification("secret_adjacent", "local", False)
    assert oracle.call_zone(_world(("local", "external_eu"), VALID[0], "public_content")) == "external_eu"
    assert oracle.refused(_world(("local", "external_eu"), secret_local, "public_content"))
    assert not oracle.refused(_world(("local",), secret_local, "public_content"))
    # The reply's receiver is part of the send: below the prompt's ceiling it is refused, unless the
    # configuration's answers are declassified down to the receiver's zone and the prompt is not
    # secret_adjacent (never declassified).
    outside = replace(_world(("local",), secret_local, "public_content"), client_zone="external_global")
    assert oracle.refused_parts(outside) == {"mksysx"}
    assert oracle.refused_parts(replace(outside, declassified_to="external_global")) == {"mksysx"}
    diagnostics = replace(
        outside, system_prompt=Classification("system_diagnostics", "private_hosted", False)
    )
    assert oracle.refused_parts(diagnostics) == {"mksysx"}
    assert not oracle.refused(replace(diagnostics, declassified_to="external_global"))
    observed = Classification("secret_adjacent", "local", True)
    assert not oracle.refused(_world(("external_global",), observed, "public_content"))
    assert oracle.refused_parts(_world(("external_global",), observed, "source_code")) == {
        "mktext0x",
        "mkname0x",
    }
