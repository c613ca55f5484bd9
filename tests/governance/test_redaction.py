"""Secret redaction: full span, every occurrence, deterministic placeholders, fail closed."""

from __future__ import annotations

import json
import random
import string
import unicodedata

import pytest
from detect_secrets.plugins.github_token import GitHubTokenDetector
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from governance.guardrails import redaction
from governance.guardrails.redaction import Finding, RedactionFailed, redact, redact_json
from governance.guardrails.redaction.catalogue import catalogue_spans, lower_ascii
from governance.guardrails.redaction.normalise import normalised_views
from tests.canaries import (
    Canary,
    Negative,
    false_positives,
    generate_canaries,
    generate_negatives,
    reveal,
    summary,
)

SEEDS = (0, 1, 2, 7, 41)
CANARIES = [canary for seed in SEEDS for canary in generate_canaries(seed)]


def assert_gone(canary: Canary, text: str) -> None:
    assert canary.value not in text, canary.kind
    assert canary.leaks(text) == [], canary.kind


def covered(findings: tuple[Finding, ...], start: int, end: int) -> bool:
    return any(f.start <= start and end <= f.end for f in findings)


def test_canary_generator_yields_at_least_thirty_distinct_deterministic_shapes():
    first, again, other = generate_canaries(3), generate_canaries(3), generate_canaries(4)

    assert len({canary.kind for canary in first}) == len(first) >= 30
    assert first == again
    assert all(a.value != b.value for a, b in zip(first, other, strict=True))


@pytest.mark.parametrize("canary", CANARIES, ids=lambda canary: canary.kind)
def test_redaction_leaves_no_character_of_any_canary(canary: Canary):
    result = redact(canary.context)

    assert_gone(canary, result.text)
    assert "[REDACTED:" in result.text
    assert result.count == len(result.findings) >= 1


@pytest.mark.parametrize("canary", CANARIES, ids=lambda canary: canary.kind)
def test_findings_cover_every_occurrence_of_the_secret_in_the_original_text(canary: Canary):
    result = redact(canary.context)

    start = canary.context.find(canary.secret)
    while start != -1:
        assert covered(result.findings, start, start + len(canary.secret)), canary.kind
        start = canary.context.find(canary.secret, start + 1)


@pytest.mark.parametrize("canary", generate_canaries(11), ids=lambda canary: canary.kind)
def test_a_secret_planted_twice_and_mentioned_bare_is_redacted_everywhere(canary: Canary):
    text = f"{canary.context}\n\nAgain:\n{canary.context}\nand once more on its own: {canary.value} .\n"

    result = redact(text)

    assert_gone(canary, result.text)
    assert result.text.count("[REDACTED:") >= 3


@pytest.mark.parametrize("canary", generate_canaries(5), ids=lambda canary: canary.kind)
def test_redaction_is_idempotent(canary: Canary):
    once = redact(canary.context)
    twice = redact(once.text)

    assert twice.text == once.text
    assert twice.findings == ()


def test_findings_hold_kinds_and_offsets_never_the_secret():
    canary = next(c for c in generate_canaries(9) if c.kind == "github_classic_pat")

    result = redact(canary.context)

    start = canary.context.index(canary.value)
    assert result.findings == (Finding(kind="github_token", start=start, end=start + len(canary.value)),)
    assert canary.secret not in repr(result)
    assert result.counts_by_kind() == {"github_token": 1}


EXPECTED_KINDS = {
    "aws_access_key_id": "aws_access_key_id",
    "aws_secret_access_key": "aws_secret_access_key",
    "github_classic_pat": "github_token",
    "github_fine_grained_pat": "github_token",
    "gitlab_pat": "gitlab_token",
    "slack_bot_token": "slack_token",
    "slack_webhook": "slack_webhook",
    "stripe_live_secret_key": "stripe_key",
    "openai_project_key": "openai_api_key",
    "anthropic_key": "anthropic_api_key",
    "google_api_key": "google_api_key",
    "google_oauth_client_secret": "google_oauth_client_secret",
    "jwt": "jwt",
    "npm_token": "npm_token",
    "pypi_token": "pypi_token",
    "heroku_api_key": "heroku_api_key",
    "azure_storage_key": "azure_storage_key",
    "telegram_bot_token": "telegram_bot_token",
    "rsa_private_key": "private_key",
    "pgp_private_key_block": "private_key",
    "gcp_service_account_key": "private_key",
    "postgres_url_password": "password",
    "sqlserver_password": "password",
    "bearer_header": "bearer_token",
    "basic_auth_header": "basic_auth",
    "python_password_assignment": "password",
    "yaml_token": "token",
    "rsa_key_body_without_armour": "private_key",
    "pkcs8_key_on_one_line": "private_key",
    "ec_key_in_yaml_block": "private_key",
    "openssh_key_body_without_armour": "private_key",
    "encrypted_pkcs8_in_json": "private_key",
    "pem_file_base64_encoded": "private_key",
    "random_key_body_without_armour": "high_entropy_string",
    "github_token_zero_width_space": "github_token",
    "stripe_key_zero_width_non_joiner": "stripe_key",
    "aws_key_zero_width_joiner": "aws_access_key_id",
    "slack_token_word_joiner": "slack_token",
    "openai_key_byte_order_mark": "openai_api_key",
    "google_api_key_soft_hyphen": "google_api_key",
    "env_api_key_invisible_in_name": "api_key",
    "github_token_fullwidth": "github_token",
    "huggingface_token_fullwidth_tail": "huggingface_token",
    "github_token_percent_encoded_tail": "github_token",
    "github_token_percent_encoded_head": "github_token",
    "stripe_key_fully_percent_encoded": "stripe_key",
    "github_token_variation_selector_16": "github_token",
    "stripe_key_combining_grapheme_joiner": "stripe_key",
    "aws_key_hangul_choseong_filler": "aws_access_key_id",
    "github_token_hangul_jungseong_filler": "github_token",
    "stripe_key_hangul_filler": "stripe_key",
    "aws_key_halfwidth_hangul_filler": "aws_access_key_id",
    "github_token_khmer_inherent_vowel": "github_token",
    "stripe_key_mongolian_variation_selector": "stripe_key",
    "aws_key_variation_selector_supplement": "aws_access_key_id",
    "github_token_interlinear_annotation": "github_token",
    "stripe_key_musical_format": "stripe_key",
    "aws_key_egyptian_format": "aws_access_key_id",
    "github_token_shorthand_format": "github_token",
    "stripe_key_braille_blank": "stripe_key",
    "aws_key_invisible_times": "aws_access_key_id",
    "github_token_tag_character": "github_token",
    "stripe_key_python_long_escapes": "stripe_key",
    "aws_key_braced_unicode_escapes": "aws_access_key_id",
    "github_token_css_escapes": "github_token",
    "slack_token_percent_u_escapes": "slack_token",
    "google_api_key_decimal_references_without_semicolon": "google_api_key",
    "github_token_hex_references_without_semicolon": "github_token",
    "npm_token_quoted_printable": "token",
    "huggingface_token_octal_escapes": "huggingface_token",
    "github_token_spaced": "github_token",
    "stripe_key_dashed": "stripe_key",
    "github_token_in_hex": "github_token",
    "aws_key_hex_bytes": "aws_access_key_id",
    "openai_key_character_codes": "openai_api_key",
}


@pytest.mark.parametrize(("canary_kind", "placeholder"), sorted(EXPECTED_KINDS.items()))
def test_placeholder_names_the_shape_of_the_secret(canary_kind: str, placeholder: str):
    canary = next(c for c in generate_canaries(13) if c.kind == canary_kind)

    result = redact(canary.context)

    assert f"[REDACTED:{placeholder}]" in result.text
    assert {finding.kind for finding in result.findings} == {placeholder}


def test_private_key_block_is_replaced_whole_armour_included():
    canary = next(c for c in generate_canaries(2) if c.kind == "openssh_private_key")

    result = redact(canary.context)

    assert result.text == "Here is the deploy key:\n[REDACTED:private_key]\nKeep it safe."


def test_url_password_is_redacted_and_user_and_host_stay():
    canary = next(c for c in generate_canaries(2) if c.kind == "postgres_url_password")

    assert redact(canary.context).text == (
        "DATABASE_URL=postgres://app_user:[REDACTED:password]@db.internal:5432/app"
    )


NEGATIVES = [negative for seed in (0, 1, 2) for negative in generate_negatives(seed)]


@pytest.mark.parametrize("negative", NEGATIVES, ids=lambda negative: negative.name)
def test_negatives_are_left_unchanged(negative: Negative):
    result = redact(negative.text)

    assert result.text == negative.text
    assert result.findings == ()


def test_false_positive_count_over_the_negatives_is_zero():
    assert len(generate_negatives()) >= 45
    assert false_positives(redact) == []
    assert summary(redact) == "positives: 565, missed: 0; negatives: 55, false positives: 0"


# --- secrets written so that patterns miss them ---------------------------------------------------------

UNARMOURED = (
    "rsa_key_body_without_armour",
    "pkcs8_key_on_one_line",
    "ec_key_in_yaml_block",
    "openssh_key_body_without_armour",
    "encrypted_pkcs8_in_json",
    "pem_file_base64_encoded",
    "random_key_body_without_armour",
)
INVISIBLE = (
    "github_token_zero_width_space",
    "stripe_key_zero_width_non_joiner",
    "aws_key_zero_width_joiner",
    "slack_token_word_joiner",
    "openai_key_byte_order_mark",
    "google_api_key_soft_hyphen",
    "env_api_key_invisible_in_name",
    "github_token_variation_selector_16",
    "stripe_key_combining_grapheme_joiner",
    "aws_key_hangul_choseong_filler",
    "github_token_hangul_jungseong_filler",
    "stripe_key_hangul_filler",
    "aws_key_halfwidth_hangul_filler",
    "github_token_khmer_inherent_vowel",
    "stripe_key_mongolian_variation_selector",
    "aws_key_variation_selector_supplement",
    "github_token_interlinear_annotation",
    "stripe_key_musical_format",
    "aws_key_egyptian_format",
    "github_token_shorthand_format",
    "stripe_key_braille_blank",
    "aws_key_invisible_times",
    "github_token_tag_character",
)
FOLDED_OR_ESCAPED = (
    "github_token_fullwidth",
    "huggingface_token_fullwidth_tail",
    "github_token_percent_encoded_tail",
    "github_token_percent_encoded_head",
    "stripe_key_fully_percent_encoded",
    "stripe_key_python_long_escapes",
    "aws_key_braced_unicode_escapes",
    "github_token_css_escapes",
    "slack_token_percent_u_escapes",
    "google_api_key_decimal_references_without_semicolon",
    "github_token_hex_references_without_semicolon",
    "npm_token_quoted_printable",
    "huggingface_token_octal_escapes",
)
SPELT = (
    "github_token_spaced",
    "stripe_key_dashed",
    "github_token_in_hex",
    "aws_key_hex_bytes",
    "openai_key_character_codes",
)


@pytest.mark.parametrize("canary_kind", UNARMOURED + INVISIBLE + FOLDED_OR_ESCAPED + SPELT)
@pytest.mark.parametrize("seed", [4, 17])
def test_a_hidden_or_unarmoured_secret_is_one_finding_over_its_original_span(canary_kind: str, seed: int):
    canary = next(c for c in generate_canaries(seed) if c.kind == canary_kind)
    kind = EXPECTED_KINDS[canary_kind]

    result = redact(canary.context)

    start = canary.context.index(canary.value)
    assert result.text == canary.context.replace(canary.value, f"[REDACTED:{kind}]")
    assert result.findings == (Finding(kind=kind, start=start, end=start + len(canary.value)),)


def test_a_token_hidden_several_ways_is_redacted_at_every_occurrence():
    value = next(c for c in generate_canaries(8) if c.kind == "github_classic_pat").value
    invisible = value[:9] + "\u200b" + value[9:]
    escaped = value[:-5] + "".join(f"%25{ord(c):02x}" for c in value[-5:])  # encoded twice
    fullwidth = "".join(chr(ord(c) + 0xFEE0) for c in value)
    text = f"bare {value}, split {invisible}, escaped {escaped}, wide {fullwidth}."

    result = redact(text)

    placeholder = "[REDACTED:github_token]"
    assert (
        result.text == f"bare {placeholder}, split {placeholder}, escaped {placeholder}, wide {placeholder}."
    )
    assert result.counts_by_kind() == {"github_token": 4}


def test_a_secret_percent_encoded_in_one_string_of_a_json_payload_is_removed_from_the_others():
    value = next(c for c in generate_canaries(8) if c.kind == "stripe_live_secret_key").value
    escaped = "".join(f"%{ord(c):02X}" for c in value)

    redacted, counts = redact_json({"url": f"https://pay.example.com/?k={escaped}", "note": f"key {value}"})

    assert redacted == {
        "url": "https://pay.example.com/?k=[REDACTED:stripe_key]",
        "note": "key [REDACTED:stripe_key]",
    }
    assert counts == {"stripe_key": 2}


def test_the_normalised_view_maps_every_character_back_to_its_original_span():
    text = "a\u200bb%41\uff43\ufb01d"  # a, zero-width space, b, an escaped A, fullwidth c, the fi ligature, d

    (view,) = normalised_views(text)

    assert view.text == "abAcfid"
    spans = [view.original_span(i, i + 1) for i in range(len(view.text))]
    assert spans == [(0, 1), (2, 3), (3, 6), (6, 7), (7, 8), (7, 8), (8, 9)]
    assert view.original_span(1, 3) == (2, 6)
    assert view.soft_starts == frozenset({1})


def test_an_html_character_reference_maps_back_to_the_whole_reference():
    text = "x&#x41;&lowbar;&#66;y"

    (view,) = normalised_views(text)

    assert view.text == "xA_By"
    spans = [view.original_span(i, i + 1) for i in range(len(view.text))]
    assert spans == [(0, 1), (1, 7), (7, 15), (15, 20), (20, 21)]


def test_every_secret_holding_a_slash_is_removed_whole_when_json_escapes_its_slashes():
    # Some JSON encoders (PHP's by default) write every "/" as "\/": a key body, an AWS secret or a
    # webhook URL then reads, as written, as pieces between backslashes.
    for seed in range(3):
        for canary in [c for c in generate_canaries(seed) if "/" in c.value]:
            in_place = canary.context.replace(canary.value, canary.value.replace("/", "\\/"))
            document = json.dumps({"note": canary.context}).replace("/", "\\/")

            for text in (in_place, document):
                assert canary.leaks(redact(text).text) == [], (seed, canary.kind, text[:40])


# Found by the test above: in a JSON string a key body's first line follows its "\n" escape and was read
# with that "n", one character longer than the lines under it, so the lines were never joined into the
# block and the last, shorter one was handed on; JSON in a JSON string escapes the "\n" again.
@pytest.mark.parametrize(
    ("kind", "placeholder"),
    [
        ("rsa_key_body_without_armour", "private_key"),
        ("openssh_key_body_without_armour", "private_key"),
        ("random_key_body_without_armour", "high_entropy_string"),
    ],
)
def test_a_key_body_in_a_json_string_is_removed_whole_once_or_twice_encoded(kind, placeholder):
    value = next(c for c in generate_canaries(0) if c.kind == kind).value
    once = json.dumps({"note": f"Key:\n{value}\nKeep it safe."})

    assert redact(once).text == json.dumps({"note": f"Key:\n[REDACTED:{placeholder}]\nKeep it safe."})
    assert redact(json.dumps({"tool_result": once})).text == json.dumps(
        {"tool_result": json.dumps({"note": f"Key:\n[REDACTED:{placeholder}]\nKeep it safe."})}
    )


def test_a_secret_spelt_in_hex_escapes_in_a_string_literal_is_removed_whole():
    value = next(c for c in generate_canaries(8) if c.kind == "stripe_live_secret_key").value
    escaped = "".join(f"\\x{ord(char):02x}" for char in value)

    result = redact(f'charge(key=b"{escaped}")\n')

    assert result.text == 'charge(key=b"[REDACTED:stripe_key]")\n'
    assert result.counts_by_kind() == {"stripe_key": 1}


def test_a_secret_written_as_html_character_references_is_removed_whole():
    value = next(c for c in generate_canaries(8) if c.kind == "stripe_live_secret_key").value
    referenced = "".join(_html_reference(char, n) for n, char in enumerate(value))

    result = redact(f"<p>Key: <code>{referenced}</code> &amp; more</p>")

    assert result.text == "<p>Key: <code>[REDACTED:stripe_key]</code> &amp; more</p>"
    assert result.counts_by_kind() == {"stripe_key": 1}


@pytest.mark.parametrize(
    "text",
    [
        "plain ASCII, 100% sure, caf%C3%A9, a%20b, a%3A b",
        "\u8bf4\u660e\uff1a\u8fd9\u662f a\uff1a b",
        "Wait\u00a0for it\u2026 \uff08\u7ea6\uff09\uff0c\u3000done",
        "na\u00efve caf\u00e9 \u2014 \u201cquoted\u201d",
        "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3002",
        "Tom &amp; Jerry, &lt;b&gt;, &#169; caf&eacute;&nbsp;&hellip; &#1114112; &#0;",
        "print('\\x1b[0m') and C:\\xfiles\\x0",
    ],
)
def test_a_text_with_nothing_to_undo_gets_no_normalised_view(text: str):
    assert normalised_views(text) == ()


@pytest.mark.parametrize(
    "text",
    [
        "a%41b",
        "a%2541b",
        "zero\u200bwidth",
        "\uff21\uff30\uff29",
        "soft\u00adhyphen",
        "\uff3f",
        "x\U0001d41a",
        "123%3AAB",
        "123\uff1aAB",
        "123\\u003aAB",
        "\uff3cn",
        "key:\n  %20  MHcC",
        "MHcC\\u000aAwEH",
        "blob\\u005cnAwEH",
        "a\\x41b",
        "123\\x3aAB",
        "MHcC\\x0aAwEH",
        "abcDEF123\\/ghiJKL456",
        "a&#x41;b",
        "a&#65;b",
        "123&#58;AB",
        "123&colon;AB",
        "zero&#x200B;width",
        "MHcC&NewLine;AwEH",
        "&Aopf;&Popf;&Iopf;",
    ],
)
def test_a_text_with_an_escape_an_invisible_or_a_compatibility_character_gets_a_view(text: str):
    assert len(normalised_views(text)) == 1


@pytest.mark.parametrize(
    ("seed", "canary_kind", "placeholder"),
    [
        (263, "json_client_secret", "secret"),  # a value starting 'mY-' read as a 'my-password' placeholder
        (421, "env_api_key", "api_key"),  # 'PWd' across its letters read as a reference to a variable
        (1459, "json_client_secret", "secret"),  # 'keY' across its letters, the same
        (691, "env_api_key", "api_key"),  # a dotted value read as settings.NAME
    ],
)
def test_a_random_value_is_not_taken_for_a_placeholder_or_a_reference(
    seed: int, canary_kind: str, placeholder: str
):
    canary = next(c for c in generate_canaries(seed) if c.kind == canary_kind)

    result = redact(canary.context)

    assert result.text == canary.context.replace(canary.value, f"[REDACTED:{placeholder}]")


def test_library_only_shape_is_redacted_as_a_full_token_run(monkeypatch: pytest.MonkeyPatch):
    # With our catalogue disabled, the detect-secrets GitHub rule still finds the token, reports only
    # its prefix, and the span is widened to the whole token.
    monkeypatch.setattr(redaction.catalogue, "_CATALOGUE", ())
    canary = next(c for c in generate_canaries(3) if c.kind == "github_classic_pat")

    result = redact(canary.context)

    assert_gone(canary, result.text)
    assert result.text == "Use token [REDACTED:secret] for the deploy."


def test_high_entropy_quoted_string_is_redacted_through_the_entropy_plugin():
    rng = random.Random(17)
    value = "".join(rng.sample(string.ascii_letters + string.digits, 40))

    result = redact(f'fixture = "{value}"')

    assert result.text == 'fixture = "[REDACTED:high_entropy_string]"'


def _password_like(seed: int) -> str:
    rng = random.Random(seed)
    return (
        "".join(rng.choice(string.ascii_letters) for _ in range(6)) + str(rng.randrange(10**6, 10**7)) + "&x"
    )


def test_redact_json_redacts_every_string_and_counts_by_kind():
    canaries = {c.kind: c for c in generate_canaries(21)}
    password = _password_like(21)
    github, bearer = canaries["github_classic_pat"], canaries["bearer_header"]
    payload = {
        "model": "local-small",
        "max_tokens": 256,
        "messages": [
            {"role": "system", "content": "You are a careful assistant."},
            {"role": "user", "content": github.context},
            {"role": "tool", "content": ["ok", bearer.context, {"note": f"cached {github.value}"}]},
        ],
        "metadata": {"pass" + "word": password, "temperature": 0.2, "stream": False},
    }

    redacted, counts = redact_json(payload)

    wire = json.dumps(redacted)
    assert github.value not in wire and bearer.value not in wire and password not in wire
    assert counts == {"bearer_token": 1, "github_token": 2, "password": 1}
    assert redacted["model"] == "local-small" and redacted["max_tokens"] == 256
    assert redacted["messages"][0] == {"role": "system", "content": "You are a careful assistant."}
    assert redacted["messages"][2]["content"][2] == {"note": "cached [REDACTED:github_token]"}
    assert redacted["metadata"] == {
        "pass" + "word": "[REDACTED:password]",
        "temperature": 0.2,
        "stream": False,
    }


def test_redact_json_carries_a_secret_found_in_one_string_into_the_others():
    secret = _password_like(5)
    payload = ["DB_PASS" + f'WORD = "{secret}"', f"the value {secret} appeared in a log line"]

    redacted, counts = redact_json(payload)

    assert redacted == [
        "DB_PASS" + 'WORD = "[REDACTED:password]"',
        "the value [REDACTED:password] appeared in a log line",
    ]
    assert counts == {"password": 2}


def test_scanner_failure_raises_redaction_failed_without_content(monkeypatch: pytest.MonkeyPatch):
    def explode(line: str):
        raise RuntimeError(f"cannot parse {line}")

    github_rule = next(p for p in redaction.library._TOKEN_PLUGINS if isinstance(p, GitHubTokenDetector))
    monkeypatch.setattr(github_rule, "analyze_string", explode)
    canary = next(c for c in generate_canaries(1) if c.kind == "github_classic_pat")

    with pytest.raises(RedactionFailed) as raised:
        redact(canary.context)

    assert raised.value.code == "redaction_failed"
    assert raised.value.extra == {"error": "RuntimeError"}
    assert canary.value not in str(raised.value.as_dict())
    assert raised.value.__cause__ is None


_FILLER = st.text(
    alphabet=st.sampled_from(string.ascii_letters + string.digits + " .,;:!?()-\n"), min_size=0, max_size=200
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(min_value=0, max_value=10_000),
    index=st.integers(min_value=0, max_value=200),
    before=_FILLER,
    after=_FILLER,
    joiner=st.sampled_from([" ", "\n", "\n\n"]),
)
# The kind inside a placeholder read as a key: "=[REDACTED:aws_secret_access_key] :0000000A".
@example(seed=0, index=1, before="", after=":0000000A", joiner=" ")
def test_property_canary_inside_random_text_is_always_removed(seed, index, before, after, joiner):
    canaries = generate_canaries(seed)
    canary = canaries[index % len(canaries)]

    result = redact(f"{before}{joiner}{canary.context}{joiner}{after}")

    assert_gone(canary, result.text)
    assert redact(result.text).text == result.text


def test_a_kind_inside_a_placeholder_is_not_read_as_a_key():
    text = "[REDACTED:aws_secret_access_key] :0000000A and [REDACTED:api_key]=ab12cd34ef"

    assert redact(text).text == text


_INVISIBLES = ("\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad")
# Issue 26: every format character, variation selector and filler, not only the six above.
_SKIPPED = (
    "\ufe0f", "\ufe00", "\U000e0100", "\U000e01ef", "\u034f", "\u115f", "\u1160", "\u3164", "\uffa0",
    "\u17b4", "\u17b5", "\u180b", "\u180f", "\ufff9", "\ufffb", "\U0001d173", "\U0001d17a",
    "\U00013430", "\U00013438", "\U0001bca0", "\U0001bca3", "\u2800", "\u2062", "\u0600", "\u06dd",
    "\U000e0041", "\U000110bd",
)  # fmt: skip
# Spellings of the whole value (a slice of a token spelt apart is two words, not one spelt token).
_WHOLE = {
    "spaced": " ".join,
    "dashed": "-".join,
    "dotted": ".".join,
    "hex": lambda value: value.encode().hex(),
    "hex_bytes": lambda value: " ".join(f"{byte:02x}" for byte in value.encode()),
    "character_codes": lambda value: ", ".join(str(byte) for byte in value.encode()),
}
# Quoted-printable escapes are read inside a word where it spells a known shape: "PORT=5432" is no
# escape.
_SHAPES_ONLY = {*_WHOLE, "quoted_printable"}
# One character at a time: a format string of its code point, or a function of the character.
_PER_CHARACTER = {
    "long_escape": "\\U{:08x}",
    "braced_escape": "\\u{{{:x}}}",
    "percent_u": "%u{:04x}",
    "octal_escape": "\\{:03o}",
}


def hide(value: str, how: str, at: int, length: int, mark: str) -> str:
    """``value`` with one invisible character inserted, or a slice percent-encoded, written as
    ``\\uXXXX`` or ``\\xXX`` escapes or HTML character references (hexadecimal, decimal, named) or made
    fullwidth."""
    start = at % len(value)
    end = min(len(value), start + 1 + length)
    if how == "invisible":
        return value[:start] + mark + value[start:]
    if how in _WHOLE:
        return _WHOLE[how](value)
    if how == "soft_line_break":
        return value[:start] + "=\n" + value[start:]
    if how in _PER_CHARACTER:
        middle = "".join(
            _PER_CHARACTER[how].format(ord(c)) if how != "octal_escape" or c.isascii() else c
            for c in value[start:end]
        )
    elif how == "css_escape":
        middle = "".join(f"\\{ord(c):x} " if "!" <= c <= "~" else c for c in value[start:end])
    elif how == "quoted_printable":
        middle = "".join(f"={ord(c):02X}" if "!" <= c <= "~" else c for c in value[start:end])
    elif how == "reference_without_semicolon":
        middle = "".join(
            _bare_reference(c, value[n + 1 : n + 2]) for n, c in enumerate(value[start:end], start)
        )
    elif how == "percent":
        middle = "".join(f"%{ord(c):02X}" if c.isascii() else c for c in value[start:end])
    elif how == "unicode_escape":
        middle = "".join(f"\\u{ord(c):04x}" for c in value[start:end])
    elif how == "hex_escape":
        middle = "".join(f"\\x{ord(c):02x}" if c.isascii() else c for c in value[start:end])
    elif how == "html_reference":
        middle = "".join(_html_reference(c, n) for n, c in enumerate(value[start:end]))
    else:
        middle = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value[start:end])
    return value[:start] + middle + value[end:]


def test_a_key_quoted_printable_from_its_armour_into_its_body_is_removed_whole():
    canary = next(c for c in generate_canaries(0) if c.kind == "pkcs8_private_key")
    hidden = hide(canary.value, "quoted_printable", 0, 53, "")
    text = canary.context.replace(canary.value, hidden)
    start = text.index(hidden)
    first_line_end = text.index("\n", text.index("\n", start) + 1)
    assert text[start:first_line_end].startswith("=2D=2D=2D=2D=2D=42=45=47=49=4E =50")

    result = redact(text)

    assert result.findings[0] == Finding(kind="private_key", start=start, end=first_line_end)
    assert result.text == (
        text[:start]
        + "[REDACTED:private_key]\n[REDACTED:high_entropy_string]\n"
        + text[text.index("-----END PRIVATE KEY-----") :]
    )
    assert canary.leaks(result.text) == []


_NAMED_REFERENCES = {
    ":": "&colon;",
    "_": "&lowbar;",
    "=": "&equals;",
    "+": "&plus;",
    "/": "&sol;",
    "\n": "&NewLine;",
}


def known_shape(value: str) -> bool:
    """Whether ``value`` is one of the catalogue's shapes, whole."""
    return any(end - start == len(value) for start, end, _ in catalogue_spans(value, lower_ascii(value)))


def _bare_reference(char: str, following: str) -> str:
    """``char`` as a decimal reference without its semicolon, unless the next character would be read
    as one more digit."""
    return f"&#{ord(char)}" + (";" if following and following in string.digits else "")


def _html_reference(char: str, n: int) -> str:
    """``char`` as an HTML character reference: its name where it has one, else hexadecimal and
    decimal in turns."""
    if char in _NAMED_REFERENCES:
        return _NAMED_REFERENCES[char]
    return f"&#x{ord(char):x};" if n % 2 == 0 else f"&#{ord(char)};"


HOWS = [
    "invisible",
    "percent",
    "unicode_escape",
    "hex_escape",
    "html_reference",
    "fullwidth",
    "reference_without_semicolon",
    "css_escape",
    "quoted_printable",
    "soft_line_break",
    *_PER_CHARACTER,
    *_WHOLE,
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Found by this test: the backslash of a JSON "\n" inside an encrypted key, percent-encoded, split the
# block in two; the escape now calls for the decoded view, where the block is whole again.
@example(seed=0, index=173, how="percent", at=1318, length=0, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: a fullwidth dot inside a bearer token ended the match there; the dot, like any
# fullwidth token character, now calls for the normalised view.
@example(seed=76, index=161, how="fullwidth", at=31, length=0, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: the colon of a Telegram bot token, percent-encoded or fullwidth, was no reason to
# build the view, so the token's two halves were read apart; an escaped or fullwidth colon between token
# characters now calls for it.
@example(seed=0, index=28, how="percent", at=9, length=0, mark="\u200b", before="", after="", joiner=" ")
@example(seed=0, index=28, how="fullwidth", at=9, length=0, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: a fullwidth backslash in a JSON "\n" split an encrypted key as an escaped one did,
# and an escaped space in the indentation of a YAML key block split that block.
@example(seed=0, index=55, how="fullwidth", at=64, length=0, mark="\u200b", before="", after="", joiner=" ")
@example(seed=1, index=53, how="percent", at=65, length=0, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: a ``\\uXXXX`` escape of a line break, of the indentation or of the backslash of
# a JSON "\\n" split a key block as a percent-escape did; what those escapes stand for is now read in
# the view.
@example(
    seed=0, index=54, how="unicode_escape", at=70, length=0, mark="\u200b", before="", after="", joiner=" "
)
@example(
    seed=0, index=57, how="unicode_escape", at=64, length=0, mark="\u200b", before="", after="", joiner=" "
)
@example(
    seed=0, index=53, how="unicode_escape", at=134, length=3, mark="\u200b", before="", after="", joiner=" "
)
@example(
    seed=0, index=55, how="unicode_escape", at=64, length=0, mark="\u200b", before="", after="", joiner=" "
)
# An octal escape followed by a hex letter (``\\101\\113\\111AY0…``) was read as a CSS escape of a
# character that hides nothing, so the token stayed split.
@example(seed=0, index=0, how="octal_escape", at=0, length=2, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: an octal escape followed by a digit or a hex letter (``\\0602`` in
# ``…4\\0602W…``, ``\\061C`` in a key body) is also the CSS escape of an invisible character (U+0602,
# U+061C), which dropped the escaped character and the one after it; both readings are searched now.
@example(
    seed=2, index=65, how="octal_escape", at=16, length=0, mark="\u200b", before="", after="", joiner=" "
)
@example(
    seed=2, index=55, how="octal_escape", at=1597, length=3, mark="\u200b", before="", after="", joiner=" "
)
# A soft line break right after the space before a value (``token: =\nxbH…``) was not read as one, so
# the assignment's value stood on a line of its own.
@example(
    seed=0, index=47, how="soft_line_break", at=0, length=0, mark="\u200b", before="", after="", joiner=" "
)
# Quoted-printable escapes over a key's armour and into its first body line: the armour no longer read
# as one and the first line no longer as base64, while each word alone spelt no shape.
@example(
    seed=0, index=30, how="quoted_printable", at=0, length=53, mark="\u200b", before="", after="", joiner=" "
)
# Found by this test: a token split into string literals, its closing quote percent-escaped
# (``'ghs_…%27 + '…'``): the escape called for no view, so the literals were not joined again.
@example(seed=0, index=66, how="percent", at=65, length=0, mark="\u200b", before="", after="", joiner=" ")
# Found by this test: a soft line break right after the "=" of ``API_KEY=`` (``API_\u200bKEY==\n…``)
# was taken for base64 padding "==", so the value stood on a line of its own.
@example(
    seed=0, index=58, how="soft_line_break", at=0, length=0, mark="\u200b", before="", after="", joiner=" "
)
# Found by this test: the "n" of a JSON "\\n" in an encrypted key written as an octal escape
# (``\\\\156``) was read as one escape escaped again, "n", so the key's last lines lost their line
# break and were read apart from the rest.
@example(
    seed=2, index=55, how="octal_escape", at=1517, length=0, mark="\u200b", before="", after="", joiner=" "
)
# Found by this test: a soft line break hidden twice, before the line break of a key split over two
# lines (``AKIA…=\n\nK5``) or between the blanks and the line break of the soft line break a token
# already holds (``…B= \t=\n\nX…``), was read as no soft line break at all.
@example(
    seed=3, index=129, how="soft_line_break", at=1026, length=0, mark="\u200b", before="", after="",
    joiner=" ",
)  # fmt: skip
@example(
    seed=1485, index=59, how="soft_line_break", at=1917, length=1, mark="\u200b", before="", after="",
    joiner=" ",
)  # fmt: skip
@given(
    seed=st.integers(min_value=0, max_value=10_000),
    index=st.integers(min_value=0, max_value=200),
    how=st.sampled_from(HOWS),
    at=st.integers(min_value=0, max_value=4096),
    length=st.integers(min_value=0, max_value=80),
    mark=st.sampled_from(_INVISIBLES + _SKIPPED),
    before=_FILLER,
    after=_FILLER,
    joiner=st.sampled_from([" ", "\n", "\n\n"]),
)
def test_property_a_canary_hidden_anywhere_is_still_removed_whole(
    seed, index, how, at, length, mark, before, after, joiner
):
    canaries = [canary for canary in generate_canaries(seed) if reveal(canary.value) == canary.value]
    canaries = [canary for canary in canaries if canary.kind not in FOLDED_OR_ESCAPED + SPELT]
    if how in _SHAPES_ONLY:  # spelt out, a token counts where what it spells is a known shape
        canaries = [canary for canary in canaries if known_shape(canary.value)]
    canary = canaries[index % len(canaries)]
    context = canary.context.replace(canary.value, hide(canary.value, how, at, length, mark))

    result = redact(f"{before}{joiner}{context}{joiner}{after}")

    assert canary.leaks(result.text) == [], canary.kind
    assert redact(result.text).text == result.text


@pytest.mark.parametrize("escape", ["%0A", "%0D%0A", "%5Cn"])
def test_a_key_block_with_one_escaped_line_break_is_redacted_whole(escape):
    rng = random.Random(7)
    lines = [
        "".join(rng.choice(string.ascii_letters + string.digits + "+/") for _ in range(64)) for _ in range(12)
    ]
    armour = "-----{} ENCRYPTED " + "PRIVATE KEY-----"
    block = "\n".join([armour.format("BEGIN"), *lines, armour.format("END")])
    escaped = (
        block.replace("\n", escape, 1)
        if escape != "%5Cn"
        else json.dumps(block)[1:-1].replace("\\n", escape, 1)
    )

    result = redact(f"backup={escaped}")

    assert result.text == "backup=[REDACTED:private_key]"


# --- issue 26: what a second attack round got through ----------------------------------------------------

TOKEN_LINE = "Use token {} for the deploy."
# Every format character (Cf) of the planes that have any, and what Unicode gives no category of its
# own to, as the issue lists them: variation selectors, fillers and blanks.
SKIPPED_BY_READERS = sorted(
    {
        chr(code)
        for code in [*range(0x20000), *range(0xE0000, 0xE1000)]
        if unicodedata.category(chr(code)) == "Cf"
    }
    | set(map(chr, [0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x17B5, 0x2800]))
    | set(map(chr, [*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)]))
    | set(map(chr, [*range(0xFFF9, 0xFFFC), *range(0x1D173, 0x1D17B), *range(0x13430, 0x13439)]))
    | set(map(chr, range(0x1BCA0, 0x1BCA4)))
)


def test_every_format_character_variation_selector_and_filler_inside_a_token_is_read_through():
    tokens = {
        "github_token": next(c for c in generate_canaries(26) if c.kind == "github_classic_pat").value,
        "stripe_key": next(c for c in generate_canaries(26) if c.kind == "stripe_live_secret_key").value,
        "aws_access_key_id": next(c for c in generate_canaries(26) if c.kind == "aws_access_key_id").value,
    }
    missed = []
    for char in SKIPPED_BY_READERS:
        for kind, token in tokens.items():
            text = TOKEN_LINE.format(token[:10] + char + token[10:])
            result = redact(text)
            if result.text != TOKEN_LINE.format(f"[REDACTED:{kind}]") or len(result.findings) != 1:
                missed.append((f"U+{ord(char):04X}", kind))
    assert len(SKIPPED_BY_READERS) > 420
    assert missed == []


ESCAPED = {
    "python_long": lambda c: f"\\U{ord(c):08x}",
    "braced": lambda c: f"\\u{{{ord(c):x}}}",
    "braced_perl": lambda c: f"\\x{{{ord(c):x}}}",
    "java_double_u": lambda c: f"\\uu{ord(c):04x}",
    "escaped_twice": lambda c: f"\\\\u{ord(c):04x}",
    "named": lambda c: f"\\N{{{unicodedata.name(c)}}}",
    "css": lambda c: f"\\{ord(c):x} ",
    "css_six_digits": lambda c: f"\\{ord(c):06x} ",
    "percent_u": lambda c: f"%u{ord(c):04X}",
    "octal": lambda c: f"\\{ord(c):03o}",
    "decimal_reference_bare": lambda c: f"&#{ord(c)}",
    "hex_reference_bare": lambda c: f"&#x{ord(c):x}",
}


@pytest.mark.parametrize("form", sorted(ESCAPED))
@pytest.mark.parametrize("part", ["whole", "middle"])
def test_a_token_written_in_any_escape_syntax_is_redacted_over_its_written_span(form: str, part: str):
    value = next(c for c in generate_canaries(26) if c.kind == "github_classic_pat").value
    escape = ESCAPED[form]
    written = (
        "".join(map(escape, value))
        if part == "whole"
        else value[:9] + "".join(map(escape, value[9:15])) + value[15:]
    )
    text = TOKEN_LINE.format(written)

    result = redact(text)

    assert result.text == TOKEN_LINE.format("[REDACTED:github_token]")
    start = text.index(written)
    assert result.findings == (Finding("github_token", start, start + len(written)),)


SPELLINGS = {
    "spaces": " ".join,
    "tabs": "\t".join,
    "no_break_spaces": "\u00a0".join,
    "dashes": "-".join,
    "dots": ".".join,
    "commas": ",".join,
    "hex": lambda v: v.encode().hex(),
    "hex_upper_prefixed": lambda v: "0x" + v.encode().hex().upper(),
    "hex_pairs_spaced": lambda v: " ".join(f"{b:02x}" for b in v.encode()),
    "hex_pairs_colons": lambda v: ":".join(f"{b:02X}" for b in v.encode()),
    "hex_bytes_c": lambda v: ", ".join(f"0x{b:02x}" for b in v.encode()),
    "character_codes": lambda v: ",".join(str(b) for b in v.encode()),
    "quoted_printable": lambda v: "".join(f"={b:02X}" for b in v.encode()),
    "soft_line_breaks": lambda v: "=\n".join(v[i : i + 9] for i in range(0, len(v), 9)),
}


@pytest.mark.parametrize("form", sorted(SPELLINGS))
@pytest.mark.parametrize("canary_kind", ["github_classic_pat", "aws_access_key_id", "stripe_live_secret_key"])
def test_a_token_spelt_out_is_redacted_over_its_written_span(form: str, canary_kind: str):
    value = next(c for c in generate_canaries(26) if c.kind == canary_kind).value
    written = SPELLINGS[form](value)
    text = TOKEN_LINE.format(written)

    result = redact(text)

    assert result.text == TOKEN_LINE.format(f"[REDACTED:{EXPECTED_KINDS[canary_kind]}]")
    start = text.index(written)
    assert result.findings == (Finding(EXPECTED_KINDS[canary_kind], start, start + len(written)),)


def test_a_token_after_its_public_prefix_spelt_apart_is_redacted_without_the_next_word():
    value = next(c for c in generate_canaries(26) if c.kind == "github_classic_pat").value

    result = redact(f"Use {value[:4]} {' '.join(value[4:])} and go.")

    assert result.text == "Use [REDACTED:github_token] and go."


@pytest.mark.parametrize(
    "text",
    [
        "PORT=5432 REDIS=6379 TIMEOUT=30 RETRIES=3 WORKERS=4F",
        "pattern = r'\\d{3}-\\d{4}\\b' and C:\\Users\\deploy\\2024\\abc",
        "a b c d e f g h i j k l m n o p q r s t u v w x y z",
        "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20",
        "- - - - - - - - - - - - - - - -\n----------------------------------",
        "sha256 " + "9f" * 32 + " and bytes de ad be ef 00 11 22 33 44 55 66 77 88 99 aa bb",
        "[255, 128, 64, 32, 16, 8, 4, 2, 1, 0, 100, 200, 150, 175, 225, 250]",
        "content: '\\201C'; quotes: '\\2018' '\\2019'; font: 12px/1.5;",
        "Subject: =?utf-8?q?caf=C3=A9?= and soft=\nbreak in mail",
        "Tom &#38 Jerry &#169 2024, &#x2014 and &#8230",
        "version 1.2.3.4.5.6.7.8.9 or v-1-2-3-4-5-6-7-8-9",
        "emoji \U0001f3f3\ufe0f\u200d\U0001f308 and \u2764\ufe0f, Hangul \u3164 filler, \u2800 blank",
    ],
)
def test_texts_that_only_look_spelt_out_or_escaped_are_left_unchanged(text: str):
    assert redact(text).text == text


# --- tokens split in two, in JSON text and HTML -----------------------------------------------------------


@pytest.mark.parametrize(
    "separator", ["\\u00a0", "\\u2028", "\\u2029", "\\u0085", "&nbsp;", "&#160;", "&#x2028;", "\u2028"]
)
def test_a_key_split_by_an_escaped_blank_or_line_separator_is_redacted_whole(separator: str):
    # JSON text (a tool call's arguments, a serialised body) writes a no-break space or a line
    # separator as an escape: the two runs were read apart, and the key passed.
    key = next(c for c in generate_canaries(12) if c.kind == "aws_access_key_id").value
    text = f'{{"note": "use {key[:6]}{separator}{key[6:]} for the backup"}}'

    assert redact(text).text == '{"note": "use [REDACTED:aws_access_key_id] for the backup"}'


def test_a_no_break_space_reference_calls_for_the_view_only_between_token_characters():
    assert normalised_views("Tom &nbsp; Jerry, &nbsp;alone, the end.&nbsp;") == ()
    assert len(normalised_views("AKIA12&nbsp;3456")) == 1


def test_a_telegram_bot_token_at_the_start_of_a_text_is_named_as_such():
    # The digits before its colon were not taken for a left part when nothing stood before them.
    value = next(c for c in generate_canaries(12) if c.kind == "telegram_bot_token").value

    assert redact(value).counts_by_kind() == {"telegram_bot_token": 1}
    assert redact(value).text == "[REDACTED:telegram_bot_token]"
