"""django-axes, named in the admin for what it shows people: login lockouts (not the package's name)."""

from __future__ import annotations

from axes.apps import AppConfig as AxesConfig


class LoginLockoutsConfig(AxesConfig):
    verbose_name = "Login lockouts"
