"""The Procfile's web line (``config/web.py``): with more than one web process, every process counts
into one directory, emptied first, so that ``/metrics`` sums them (two processes serving:
``tests/services/test_web_processes.py``)."""

from __future__ import annotations

import sys

import pytest

from config import web


@pytest.fixture
def environment(monkeypatch, tmp_path):
    # Set, then removed: whatever main() sets is undone after the test.
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", "")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    monkeypatch.setenv("APP_VAR_DIR", str(tmp_path))
    started: list[list[str]] = []
    monkeypatch.setattr(web.os, "execv", lambda path, argv: started.append([path, *argv]))
    return started


def test_one_web_process_counts_in_its_own_memory(environment, tmp_path):
    web.main(["--port", "9000"])
    assert environment == [
        [sys.executable, sys.executable, "-m", "uvicorn", web.APPLICATION, "--port", "9000"]
    ]
    assert "PROMETHEUS_MULTIPROC_DIR" not in web.os.environ
    assert not (tmp_path / "prometheus-web").exists()


def test_several_web_processes_count_into_the_webs_own_directory_emptied_first(
    environment, tmp_path, monkeypatch
):
    monkeypatch.setenv("WEB_CONCURRENCY", "2")
    stale = tmp_path / "prometheus-web" / "counter_123.db"
    stale.parent.mkdir()
    stale.write_bytes(b"a process of an earlier start")
    web.main([])
    assert web.os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(tmp_path / "prometheus-web")
    assert list((tmp_path / "prometheus-web").iterdir()) == []
    assert environment[0][2:] == ["-m", "uvicorn", web.APPLICATION]


def test_a_directory_the_environment_names_is_kept_as_it_is(environment, tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "counter_7.db").write_bytes(b"a worker's counts")
    monkeypatch.setenv("WEB_CONCURRENCY", "3")
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(shared))
    web.main([])
    assert web.os.environ["PROMETHEUS_MULTIPROC_DIR"] == str(shared)
    assert (shared / "counter_7.db").exists()  # make serve empties it before any process starts
    assert not (tmp_path / "prometheus-web").exists()
