"""Words of the skills app that other layers' models name, kept free of parsing and composition so a
model module can import them cheaply."""

from __future__ import annotations

from enum import StrEnum


class SkillMode(StrEnum):
    """How a configuration puts its skills in the skill block."""

    FULL = "full"  # every included skill's body
    PROGRESSIVE = "progressive"  # names and descriptions; bodies through the load_skill tool
