"""``/metrics``: the Prometheus exposition of every process's counters, and gauges read at scrape time.

Who may scrape: a loopback client (the address as ``config.client_address.client_ip`` counts it, so
behind ``API_TRUSTED_PROXIES`` the proxied client's address), and any other client only with
``Authorization: Bearer <METRICS_TOKEN>`` when that is set. Anyone else gets a 404: the endpoint
does not say that it exists.

Processes: counters and histograms move where the event happens, in web processes and Celery
workers alike. With ``PROMETHEUS_MULTIPROC_DIR`` set (the same empty directory for every process,
emptied at each deployment, before any process starts) each process writes its values to files there
and a scrape sums them (prometheus_client's multiprocess mode); unset, a scrape shows the serving
process's own values (enough for ``make run``, where tasks run in the web process).

Gauges computed from the database at scrape time come from the collectors named in
``METRICS_COLLECTORS`` (dotted paths, so that apps above ``config`` add theirs without ``config``
importing them). No gauge lives in process memory, so the multiprocess mode needs no per-process
clean-up.

Labels are identifiers and vocabulary values only (provider and model ids, statuses, reasons, kinds),
never content.
"""

from __future__ import annotations

import hmac
import os
from collections.abc import Iterable, Iterator

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseNotFound
from django.utils.module_loading import import_string
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from config.client_address import client_ip
from config.request_headers import header

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def _has_token(request: HttpRequest) -> bool:
    expected = settings.METRICS_TOKEN
    if not expected:
        return False
    scheme, _, token = (header(request, "Authorization") or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(token.strip().encode(), expected.encode())


class _ThisProcess(Collector):
    """The serving process's own metrics (the default registry), when not in multiprocess mode."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


def scrape_registry() -> CollectorRegistry:
    """A registry for one scrape: every process's counters (or this process's), then the gauges."""
    registry = CollectorRegistry(auto_describe=False)
    path = multiprocess_dir()
    if path:
        MultiProcessCollector(registry, path=path)
    else:
        registry.register(_ThisProcess())
    for collector in _collectors():
        registry.register(collector)
    return registry


def _collectors() -> Iterable[Collector]:
    return [import_string(path)() for path in settings.METRICS_COLLECTORS]


def metrics(request: HttpRequest) -> HttpResponse:
    address = client_ip(request)
    if not ((address is not None and address.is_loopback) or _has_token(request)):
        # A plain 404 (not Http404, whose DEBUG page would list the URL patterns).
        return HttpResponseNotFound(b"Not Found", content_type="text/plain")
    return HttpResponse(generate_latest(scrape_registry()), content_type=CONTENT_TYPE_LATEST)
