import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
django_application = get_asgi_application()

from config.request_thread import RequestThreads  # noqa: E402  (imports Django's database layer)
from config.startup import serving_started  # noqa: E402  (needs the settings the line above loads)

# Each request's synchronous calls on a thread that a stream lets go before it waits on a provider.
application = RequestThreads(django_application)

serving_started()
