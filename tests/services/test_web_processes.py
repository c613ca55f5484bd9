"""The Procfile's web line with ``WEB_CONCURRENCY=2`` and no ``PROMETHEUS_MULTIPROC_DIR``: two uvicorn
processes serve, each counts into the web's own directory (``config/web.py``), and one scrape of
``/metrics``, whichever process answers it, shows the sum of both processes' counts."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from catalog.services import api_client_create
from governance.vocabulary import TrustZone
from tests.agents.runs import fake_configuration
from tests.fakes.provider_server import FakeProvider
from tests.services.test_asgi_streams import free_port
from tests.services.worker import ROOT, stop, wait_for, worker_env

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]

CALLS = "govctx_provider_calls_total"
MAX_REQUESTS = 60


def _answers(base: str) -> bool:
    try:
        return httpx.get(f"{base}/healthz", timeout=5).status_code in (200, 503)
    except httpx.HTTPError:
        return False


@pytest.fixture
def two_web_processes(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    port = free_port()
    env = worker_env(WEB_CONCURRENCY="2", APP_VAR_DIR=str(tmp_path))
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    directory = tmp_path / "prometheus-web"
    directory.mkdir()
    (directory / "counter_1.db").write_bytes(b"left by a process of an earlier start")
    with (tmp_path / "web.log").open("w") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "config.web", "--port", str(port), "--no-access-log"],
            cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        base = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: _answers(base), timeout=60, what="the web processes to answer")
            yield base, directory
        finally:
            stop(process)


def calls_by_process(directory: Path, scratch: Path) -> dict[str, float]:
    """Each web process's own count of provider calls: its file in ``directory`` read alone."""
    counted: dict[str, float] = {}
    for path in sorted(directory.glob("counter_*.db")):
        alone = scratch / path.stem
        alone.mkdir(exist_ok=True)
        shutil.copyfile(path, alone / path.name)
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(alone))
        total = sum(s.value for f in registry.collect() for s in f.samples if s.name == CALLS)
        if total:
            counted[path.stem.removeprefix("counter_")] = total
    return counted


def scraped_calls(base: str) -> float:
    text = httpx.get(f"{base}/metrics", timeout=10).text
    return sum(
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == CALLS
    )


def test_two_web_processes_serve_and_one_scrape_shows_the_sum_of_their_counts(two_web_processes, tmp_path):
    base, directory = two_web_processes
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    assert not (directory / "counter_1.db").exists()  # emptied before the processes started
    with FakeProvider(default_reply="ok") as fake:
        configuration = fake_configuration(fake, zone=TrustZone.EXTERNAL_EU)
        token = api_client_create(
            name="two-web", scopes=["configurations:use"], configurations=[configuration]
        ).token
        body = {"configuration": configuration.identifier, "input": "Say ok."}
        sent = 0
        while sent < MAX_REQUESTS and (sent < 4 or len(calls_by_process(directory, scratch)) < 2):
            # A new connection each time: the kernel hands each to whichever process accepts first.
            response = httpx.post(
                f"{base}/api/v1/completions",
                json=body,
                headers={"Authorization": f"Bearer {token}", "Connection": "close"},
                timeout=30,
            )
            assert response.status_code == 200, response.text
            sent += 1
    by_process = calls_by_process(directory, scratch)
    assert len(by_process) == 2, by_process  # both processes served some of the requests
    assert sum(by_process.values()) == sent == len(fake.requests)
    assert scraped_calls(base) == sent  # one scrape, answered by one process, sums both
