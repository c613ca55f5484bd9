"""Where the coding agents the API is proved with are installed, and what is missing when they are not.

``make coding-agents`` installs the npm packages ``@anthropic-ai/claude-code`` and ``@openai/codex``
(pinned in the Makefile) into ``.cache/coding-agents``; ``CODING_AGENTS_DIR`` names another folder. Tests marked
``coding_agent`` are gated on :func:`coding_agent_problem` in tests/conftest.py, as browser tests are
on Chromium.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DEFAULT_DIR = Path(__file__).resolve().parent.parent / ".cache" / "coding-agents"


def agents_dir() -> Path:
    return Path(os.environ.get("CODING_AGENTS_DIR") or DEFAULT_DIR)


def claude_code_executable() -> str:
    return str(agents_dir() / "node_modules" / ".bin" / "claude")


def codex_executable() -> str:
    return str(agents_dir() / "node_modules" / ".bin" / "codex")


def coding_agent_problem() -> str | None:
    """Why the coding agents (Claude Code, Codex CLI) cannot run here, or None."""
    if shutil.which("node") is None:
        return "node is missing (apt-get install nodejs npm)"
    for name, executable in (("Claude Code", claude_code_executable()), ("Codex CLI", codex_executable())):
        if not os.access(executable, os.X_OK):
            return f"{name} is not installed in {agents_dir()} (make coding-agents)"
    return None
