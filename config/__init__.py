"""The project's configuration package.

Importing it reads the settings file into the environment first (``config.env.env_file_load``: ``.env``
at the project's root, or the file ``ENV_FILE`` names; the environment overrides it). Every process
imports this package before it reads any variable: ``manage.py`` and the test suite through the
settings module, the web server through ``config.asgi``/``config.wsgi``, Celery through ``-A config``
(whose app, imported below, reads the tracing variables as it is created). So every process reads the
same configuration the same way.
"""

from config.env import env_file_load

env_file_load()

from config.celery import app as celery_app  # noqa: E402  (after the file: the app reads variables)

__all__ = ["celery_app"]
