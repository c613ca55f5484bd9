"""``python -m config.web [UVICORN OPTION ...]``: the Procfile's web process. uvicorn serves
``config.asgi`` in ``WEB_CONCURRENCY`` processes (uvicorn reads the variable itself, as ``--workers``),
and ``/metrics`` sums the counts of all of them.

prometheus_client keeps a process's counters in that process's memory unless
``PROMETHEUS_MULTIPROC_DIR`` names a directory when it is first imported (``config/metrics.py``): with
several web processes, a scrape would show the counts of whichever process answered it. ``make
serve`` sets the variable for every process (web, worker and beat share one directory); where the
Procfile's line runs without it and more than one web process is configured, this sets it to a
directory of the web's own, ``$APP_VAR_DIR/prometheus-web``, emptied first (counts of processes that
are gone would otherwise be summed in), then runs uvicorn with that environment, so every web process
it starts counts into that directory. One web process needs no directory, and none is set.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from config.env import env_int, env_str

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
APPLICATION = "config.asgi:application"
BASE_DIR = Path(__file__).resolve().parent.parent


def web_processes() -> int:
    return env_int("WEB_CONCURRENCY", 1, minimum=1)


def metrics_directory() -> Path | None:
    """The directory every web process counts into: the one the environment names, else, with more
    than one web process, the web's own (created empty); None for a single process left alone."""
    named = os.environ.get(MULTIPROC_ENV)
    if named:
        return Path(named)
    if web_processes() < 2:
        return None
    var_dir = Path(env_str("APP_VAR_DIR", str(BASE_DIR / "var")) or BASE_DIR / "var")
    directory = var_dir / "prometheus-web"
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


def main(argv: list[str]) -> None:
    directory = metrics_directory()
    if directory is not None:
        os.environ[MULTIPROC_ENV] = str(directory)
    os.execv(sys.executable, [sys.executable, "-m", "uvicorn", APPLICATION, *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
