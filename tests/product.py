"""The product's top-level packages, read from the import contracts (pyproject.toml), so a test that
walks the product cannot miss an app added later."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PRODUCT_PACKAGES: tuple[str, ...] = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["root_packages"]
)
