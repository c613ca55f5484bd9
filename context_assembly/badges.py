"""Token badges: what a piece of editor content costs in a model's window, by the one estimator."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from context_assembly.estimator import Estimator
from context_assembly.profiles import ModelProfile, catalogue_get


@dataclass(frozen=True)
class TokenBadge:
    model_id: str
    tokens: int
    context_window: int

    @property
    def label(self) -> str:
        # A display share for editors; usage facts elsewhere carry no fraction
        # (docs/architecture.md, "Context usage").
        share = 100 * self.tokens / self.context_window
        return f"{self.tokens:,} tokens · {share:.2f}% of the {self.context_window:,}-token window of {self.model_id}"


def badge_profile() -> ModelProfile | None:
    """The profile badges are shown for: the catalogue entry named by ``TOKEN_BADGE_MODEL``."""
    entry = catalogue_get(str(settings.TOKEN_BADGE_MODEL or ""))
    return entry.profile if entry is not None else None


def token_badge(text: str, profile: ModelProfile | None = None) -> TokenBadge | None:
    """The cost of ``text`` as message content (without message framing); None without a profile."""
    profile = profile or badge_profile()
    if profile is None:
        return None
    tokens = Estimator(profile).count_text(text)
    return TokenBadge(model_id=profile.model_id, tokens=tokens, context_window=profile.context_window)
