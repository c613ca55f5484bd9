"""Test settings: only speed and determinism knobs differ from base."""

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "test-only-secret-key-not-used-anywhere-else")
os.environ.setdefault("GOVERNANCE_LOG_KEY", "test-only-governance-log-key-not-used-anywhere-else")

from config.settings.base import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Eager steps run inside the call that enqueues them, so a test sees a run finished when its on-commit
# callbacks have run (tests of the background runner switch it on).
AGENT_RUNS_IN_BACKGROUND = False

# No collected static files in the suite: pages link the apps' files under their plain names (the
# services suite's serving test collects and serves the hashed ones).
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
STATIC_ROOT = None
