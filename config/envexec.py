"""``python -m config.envexec COMMAND [ARG ...]``: run COMMAND with the settings file read into its
environment, as every process of the project reads it (``config/__init__.py``; the environment
overrides the file).

For what reads variables before Python does: ``make serve`` starts honcho through it (and tells honcho
to read no file of its own), so that the Procfile's shell expansions (``${WORKER_THREADS}``, ...) and
uvicorn's ``WEB_CONCURRENCY`` see the same values, with the same precedence, as the settings do.
honcho's own reading would let the file override the environment.
"""

from __future__ import annotations

import os
import sys

import config  # noqa: F401  (importing the package reads the settings file)


def main(argv: list[str]) -> None:
    if not argv:
        raise SystemExit("usage: python -m config.envexec COMMAND [ARG ...]")
    os.execvp(argv[0], argv)


if __name__ == "__main__":
    main(sys.argv[1:])
