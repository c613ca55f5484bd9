"""The estimator's image and PDF counts against the providers' published examples, and the header
reader that gives it an image's size."""

from __future__ import annotations

import pytest

from context_assembly.estimator import Estimator, TokenCache
from context_assembly.media import image_size, pdf_facts, sniffed_media_type
from context_assembly.media_costs import (
    ANTHROPIC_PIXELS,
    anthropic_image_tokens,
    image_tokens,
    media_tokens,
)
from context_assembly.messages import FilePart, ImagePart, Message, TextPart
from context_assembly.profiles import ModelProfile, capabilities_for
from tests.media_files import gif_header, jpeg_header, pdf, png, webp_header


def image(width: int, height: int, detail: str = "high") -> ImagePart:
    return ImagePart("data:image/png;base64,AA==", detail, width, height)


# OpenAI vision guide, "Calculating costs": a 1024x1024 square in high detail costs 765 tokens; a
# 2048x4096 image in high detail 1105; a 4096x8192 image in low detail 85.
@pytest.mark.parametrize(
    ("width", "height", "detail", "tokens"),
    [(1024, 1024, "high", 765), (2048, 4096, "high", 1105), (4096, 8192, "low", 85)],
)
def test_openai_image_tokens_match_the_published_examples(width, height, detail, tokens):
    assert image_tokens(image(width, height, detail)) == tokens


# Anthropic vision guide, "Calculate image costs" table: 200x200 (0.04 MP) ~54 tokens, 1000x1000
# (1 MP) ~1334, 1092x1092 (1.19 MP) ~1590; larger images are scaled down to about 1,600 tokens.
@pytest.mark.parametrize(
    ("width", "height", "tokens"),
    [(200, 200, 54), (1000, 1000, 1334), (1092, 1092, 1590), (4000, 3000, 1600), (1568, 100, 210)],
)
def test_anthropic_image_tokens_match_the_published_examples(width, height, tokens):
    assert anthropic_image_tokens(image(width, height)) == tokens


def test_a_pdf_costs_its_text_plus_a_page_image_per_page_within_anthropics_published_range():
    estimator = Estimator(
        ModelProfile("claude-sonnet-4-5", 200_000, 64_000, "approximate", 1.0, ANTHROPIC_PIXELS)
    )
    facts = pdf_facts(pdf("Quarterly report: revenue grew in every region."), "file")
    part = FilePart("AA==", "q3.pdf", facts.pages, facts.text)

    tokens = media_tokens(part, ANTHROPIC_PIXELS, estimator.count_text)

    assert (facts.pages, facts.text) == (1, "Quarterly report: revenue grew in every region.")
    assert tokens == estimator.count_text(facts.text) + 1600
    # Anthropic "PDF support", "Estimate your costs": each page typically uses 1,500-3,000 tokens.
    assert 1500 <= tokens <= 3000


def test_one_message_is_counted_by_each_profiles_rule_though_both_share_an_encoding():
    cache = TokenCache()
    message = Message(role="user", content=(TextPart("Look."), image(1000, 1000)))
    openai = Estimator(ModelProfile("m", 200_000, 1_000, "approximate", 1.0), cache=cache)
    claude = Estimator(ModelProfile("m", 200_000, 1_000, "approximate", 1.0, ANTHROPIC_PIXELS), cache=cache)

    assert openai.count_message(message) - openai.count_message(Message(role="user", content="Look.")) == 765
    assert claude.count_message(message) - claude.count_message(Message(role="user", content="Look.")) == 1334


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (png(300, 200), "image/png"),
        (jpeg_header(640, 480), "image/jpeg"),
        (gif_header(10, 20), "image/gif"),
        (webp_header(1000, 700), "image/webp"),
    ],
)
def test_image_sizes_are_read_from_the_headers(data, kind):
    assert sniffed_media_type(data) == kind
    assert image_size(data) == {"image/png": (300, 200), "image/jpeg": (640, 480), "image/gif": (10, 20)}.get(
        kind, (1000, 700)
    )


def test_bytes_of_no_known_type_have_no_type_and_no_size():
    assert sniffed_media_type(b"<svg xmlns='http://www.w3.org/2000/svg'/>") is None
    assert image_size(b"\x89PNG\r\n\x1a\n") is None


def test_the_catalogue_declares_which_models_read_images_and_pdfs():
    assert capabilities_for("gpt-4o-2024-08-06").input_modalities == ("image", "pdf")
    assert capabilities_for("claude-sonnet-4-5").input_modalities == ("image", "pdf")
    assert capabilities_for("o3-mini").input_modalities == ()
    assert capabilities_for("gpt-3.5-turbo").input_modalities == ()
    assert capabilities_for("gpt-3.5-turbo", input_modalities=["image"]).input_modalities == ("image",)
