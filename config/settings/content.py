"""The settings of what editors curate and what is kept: the skill block's bound, skill sources' token
variables, the token badges' model, and retention (read by ``config/settings/base.py``; every
variable is listed in ``.env.example``)."""

from __future__ import annotations

from config.env import env_int, env_names, env_str

# --- Retention (editors/retention.py, README "Retention") ------------------------------------
# Days each kind of stored content is kept after it ends; 0 keeps it forever (the default: nothing is
# purged that a deployment did not ask to purge). A purge removes content and keeps governance events,
# receipts and usage. Celery beat purges every RETENTION_PURGE_INTERVAL_SECONDS; `manage.py
# purge_expired` purges at once (the embedded default has no beat: run it from cron there).
RETENTION_STORED_RESPONSES_DAYS = env_int("RETENTION_STORED_RESPONSES_DAYS", 0, minimum=0)
RETENTION_RUN_TRANSCRIPTS_DAYS = env_int("RETENTION_RUN_TRANSCRIPTS_DAYS", 0, minimum=0)
RETENTION_EVALUATION_RESULTS_DAYS = env_int("RETENTION_EVALUATION_RESULTS_DAYS", 0, minimum=0)
RETENTION_PURGE_INTERVAL_SECONDS = env_int("RETENTION_PURGE_INTERVAL_SECONDS", 3600, minimum=60)

# The skill block's bound in UTF-8 bytes (the tail is dropped first, each drop reported).
SKILL_BLOCK_MAX_BYTES = env_int("SKILL_BLOCK_MAX_BYTES", 24_000, minimum=1_000)

# The only variable names a skill source's token_env may name (skills.tokens): a source must not be
# able to send any other server variable to GitHub as a token.
SKILL_SOURCE_TOKEN_ENVS = env_names("SKILL_SOURCE_TOKEN_ENVS", ["GITHUB_TOKEN"])

# Token badges in admin count for this catalogue model (context_assembly.profiles.CATALOGUE).
TOKEN_BADGE_MODEL = env_str("TOKEN_BADGE_MODEL", "gpt-4o")
