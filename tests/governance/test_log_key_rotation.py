"""The governance log's keys have ids: each link records the id of the key that signed it, a
rotation adds a key without breaking what the old one signed, and a link whose key is gone is
reported as signed by an unknown key, not as edited (docs/decisions/0033-governance-log-keys-have-ids.md).
"""

from __future__ import annotations

import io
import json
import secrets

import pytest
from django.core.management import call_command
from dotenv import dotenv_values

from governance.chain.keys import key_id, secret_derived_key
from governance.chain.verify import EDITED, UNKNOWN_KEY, Break, governance_log_verify
from governance.chain.writes import anchor_record
from governance.models import GovernanceAnchor, GovernanceEvent
from tests.governance.log_tamper import (
    ANCHORS,
    BOTH,
    EVENTS,
    anchor_file,
    as_attacker,
    events_write,
    verify_command,
)

pytestmark = [BOTH, pytest.mark.django_db(transaction=True)]


def rotate(settings) -> dict[str, str]:
    """Run the rotation command and apply what it prints, read as a .env file is read."""
    out = io.StringIO()
    call_command("rotate_governance_log_key", stdout=out)
    values = {name: value or "" for name, value in dotenv_values(stream=io.StringIO(out.getvalue())).items()}
    assert sorted(values) == ["GOVERNANCE_LOG_KEY", "GOVERNANCE_LOG_OLD_KEYS"]
    settings.GOVERNANCE_LOG_KEY = values["GOVERNANCE_LOG_KEY"]
    settings.GOVERNANCE_LOG_OLD_KEYS = values["GOVERNANCE_LOG_OLD_KEYS"].split(",")
    return values


@pytest.fixture
def first_key(settings) -> str:
    settings.GOVERNANCE_LOG_KEY = secrets.token_urlsafe(32)
    settings.GOVERNANCE_LOG_OLD_KEYS = []
    return settings.GOVERNANCE_LOG_KEY


def test_after_a_rotation_old_and_new_links_verify_each_under_its_own_key(database, settings, first_key):
    old = events_write(2)
    anchor_record()
    values = rotate(settings)
    new = events_write(2)
    anchor_record()

    assert values["GOVERNANCE_LOG_KEY"] != first_key
    assert values["GOVERNANCE_LOG_OLD_KEYS"] == first_key
    first_id, new_id = key_id(first_key.encode()), key_id(values["GOVERNANCE_LOG_KEY"].encode())
    assert [e.key_id for e in old + new] == [first_id, first_id, new_id, new_id]
    assert list(GovernanceAnchor.objects.order_by("seq").values_list("key_id", flat=True)) == [
        first_id,
        new_id,
    ]
    lines = anchor_file().read_text().splitlines()
    assert [json.loads(line)["key_id"] for line in lines] == [first_id, new_id]
    assert governance_log_verify().breaks == []
    assert verify_command()[0] == 0


def test_links_of_a_removed_key_are_signed_by_an_unknown_key_not_edited(database, settings, first_key):
    old = events_write(2)
    anchor_record()
    rotate(settings)
    events_write(1)
    settings.GOVERNANCE_LOG_OLD_KEYS = []

    first_id = key_id(first_key.encode())
    unknown = f"signed by an unknown key {first_id}"
    assert governance_log_verify().breaks == [
        Break(UNKNOWN_KEY, unknown, event_id=old[0].pk, chain=old[0].chain, seq=1),
        Break(UNKNOWN_KEY, unknown, event_id=old[1].pk, chain=old[1].chain, seq=2),
        Break(UNKNOWN_KEY, unknown, anchor=1),  # the anchor in the database
        Break(UNKNOWN_KEY, unknown, anchor=1),  # and its copy in the anchor file
    ]
    code, _, err = verify_command()
    assert code == 1
    assert f"chain {old[0].chain} position 1: unknown_key: {unknown}" in err


def test_an_edit_is_still_an_edit_under_the_old_key_and_the_new(database, settings, first_key):
    old = events_write(1)
    rotate(settings)
    new = events_write(1)
    with as_attacker() as cursor:
        cursor.execute(
            f"UPDATE {EVENTS} SET api_client = %s WHERE id IN (%s, %s)", ["other", old[0].pk, new[0].pk]
        )

    edited = "its content does not match its digest"
    assert governance_log_verify().breaks == [
        Break(EDITED, edited, event_id=old[0].pk, chain=old[0].chain, seq=1),
        Break(EDITED, edited, event_id=new[0].pk, chain=new[0].chain, seq=2),
    ]


def test_links_written_before_key_ids_verify_under_any_configured_key(database, settings, first_key):
    events_write(2)
    anchor_record()
    with as_attacker() as cursor:  # as an upgraded database holds them: no key id
        cursor.execute(f"UPDATE {EVENTS} SET key_id = ''")
        cursor.execute(f"UPDATE {ANCHORS} SET key_id = ''")
    lines = [json.loads(line) for line in anchor_file().read_text().splitlines()]
    anchor_file().write_text(
        "".join(json.dumps({k: v for k, v in d.items() if k != "key_id"}) + "\n" for d in lines)
    )
    rotate(settings)
    events_write(1)
    assert set(GovernanceEvent.objects.values_list("key_id", flat=True)) == {
        "",
        key_id(settings.GOVERNANCE_LOG_KEY.encode()),
    }
    assert governance_log_verify().breaks == []

    # Without the key that signed them they cannot be told from edited ones.
    settings.GOVERNANCE_LOG_OLD_KEYS = []
    assert {b.kind for b in governance_log_verify().breaks} == {EDITED}


def test_rotating_the_secret_key_leaves_a_log_keyed_by_it_verifiable(database, settings):
    # The embedded default keys the log by its secret key; the rotation names that key as an old one.
    settings.GOVERNANCE_LOG_KEY, settings.GOVERNANCE_LOG_OLD_KEYS = "", []
    settings.SECRET_KEY = secrets.token_urlsafe(50) + "$#!"
    old = events_write(2)
    assert {e.key_id for e in old} == {key_id(secret_derived_key(settings.SECRET_KEY))}
    values = rotate(settings)
    assert values["GOVERNANCE_LOG_OLD_KEYS"] == "secret:" + settings.SECRET_KEY
    settings.SECRET_KEY = secrets.token_urlsafe(50)
    events_write(1)
    assert governance_log_verify().breaks == []
