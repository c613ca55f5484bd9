"""Tokens an image or a PDF costs, by the rule its provider publishes (the estimator's media lines).

* OpenAI images (vision guide, "Calculating costs"): ``low`` detail costs 85 tokens; ``high`` scales
  the image to fit 2048x2048, then its shortest side down to 768px, and costs 170 per 512px tile plus
  85. ``auto`` is charged as ``high``. Unknown size: the documented maximum for the detail level, 85
  for ``low`` and 1445 (8 tiles, a 768x2048 image) otherwise. (Some models, e.g. gpt-4o-mini, bill
  images at another rate; calibration absorbs that.)
* Anthropic images (vision guide, "Calculate image costs"): ``tokens = width * height / 750``, after
  an image whose long edge exceeds 1568px, or that would cost more than about 1,600 tokens, is scaled
  down (aspect kept) to fit. Rounded up, as the guide's table rounds (200x200 ~54, 1000x1000 ~1334,
  1092x1092 ~1590). Unknown size: 1,600.
* PDFs: both providers put the extracted text *and* an image of each page into the context (OpenAI
  guide "File inputs"; Anthropic "PDF support", "Estimate your costs": text tokens plus "the same
  image-based cost calculations" per page). A document costs its text's tokens plus one page image per
  page at the rule's maximum image cost (the page is rendered at a size we do not see).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

from context_assembly.parts import FilePart, ImagePart

OPENAI_TILES = "openai_tiles"
ANTHROPIC_PIXELS = "anthropic_pixels"
IMAGE_RULES = (OPENAI_TILES, ANTHROPIC_PIXELS)

LOW_DETAIL_IMAGE_TOKENS = 85
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
_IMAGE_MAX_TILES = 8  # a 768x2048 image after scaling: 2 x 4 tiles
MAX_HIGH_DETAIL_IMAGE_TOKENS = IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * _IMAGE_MAX_TILES

ANTHROPIC_PIXELS_PER_TOKEN = 750
ANTHROPIC_MAX_LONG_EDGE = 1568
ANTHROPIC_MAX_IMAGE_TOKENS = 1600


def image_tokens(part: ImagePart) -> int:
    """Tokens OpenAI charges for one image part (see the module docstring)."""
    if part.detail == "low":
        return LOW_DETAIL_IMAGE_TOKENS
    if part.width is None or part.height is None:
        return MAX_HIGH_DETAIL_IMAGE_TOKENS
    # Exact fractions: float scaling can land a hair above a tile boundary and add a whole tile.
    width, height = Fraction(part.width), Fraction(part.height)
    fit = min(Fraction(1), Fraction(2048) / max(width, height))
    width, height = width * fit, height * fit
    shrink = min(Fraction(1), Fraction(768) / min(width, height))
    width, height = width * shrink, height * shrink
    tiles = math.ceil(width / 512) * math.ceil(height / 512)
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


def anthropic_image_tokens(part: ImagePart) -> int:
    """Tokens Anthropic charges for one image part (see the module docstring); ``detail`` is OpenAI's
    alone and does not change the figure."""
    if part.width is None or part.height is None:
        return ANTHROPIC_MAX_IMAGE_TOKENS
    width, height = Fraction(part.width), Fraction(part.height)
    fit = min(Fraction(1), Fraction(ANTHROPIC_MAX_LONG_EDGE) / max(width, height))
    pixels = width * height * fit * fit
    return min(ANTHROPIC_MAX_IMAGE_TOKENS, math.ceil(pixels / ANTHROPIC_PIXELS_PER_TOKEN))


def page_image_tokens(rule: str) -> int:
    """What one rendered PDF page costs as an image under ``rule``: the rule's maximum."""
    return ANTHROPIC_MAX_IMAGE_TOKENS if rule == ANTHROPIC_PIXELS else MAX_HIGH_DETAIL_IMAGE_TOKENS


def media_tokens(part: ImagePart | FilePart, rule: str, count_text: Callable[[str], int]) -> int:
    """Tokens of one image or PDF part under ``rule``; ``count_text`` counts a PDF's extracted text."""
    if isinstance(part, FilePart):
        return count_text(part.text) + part.pages * page_image_tokens(rule)
    return anthropic_image_tokens(part) if rule == ANTHROPIC_PIXELS else image_tokens(part)
