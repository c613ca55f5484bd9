""".env.example lists every variable the settings read, with its default, and nothing else.

The variables are found in the code itself: every call of a ``config.env`` reader (``env_int("NAME",
default)``, …) and every ``os.environ.get("NAME", default)`` in ``config/``, and every
``${NAME:-default}`` in the Procfile. A literal default must be the one the file shows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / ".env.example"
# Read by a library the Procfile starts, not by our code: uvicorn's worker processes.
READ_BY_LIBRARIES = {"WEB_CONCURRENCY": "1"}
UNSET = object()
NOT_LITERAL = object()


def example_entries(text: str) -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in text.splitlines():
        match = re.fullmatch(r"# ([A-Z][A-Z0-9_]*)=(.*)", line)
        if match:
            assert match[1] not in entries, f"{match[1]} is listed twice"
            entries[match[1]] = match[2]
    return entries


def _rendered(node: ast.expr | None) -> object:
    """A default as the file writes it: booleans in lower case, lists comma-separated, None unset."""
    if node is None:
        return UNSET
    try:
        value = eval(compile(ast.Expression(node), "<default>", "eval"), {"__builtins__": {}})
    except NameError:
        return NOT_LITERAL
    if value is None:
        return UNSET
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, list):
        return ",".join(value)
    return str(value)


def _constants(tree: ast.Module) -> dict[str, str]:
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
        for target in node.targets
        if isinstance(target, ast.Name) and isinstance(node.value.value, str)
    }


def _reader(call: ast.Call) -> bool:
    function = call.func
    if isinstance(function, ast.Name):
        return function.id.startswith("env_")
    return ast.unparse(function) in {"os.environ.get", "os.getenv"}


def variables_read_by_code() -> dict[str, object]:
    found: dict[str, object] = {}
    for path in sorted((ROOT / "config").rglob("*.py")):
        tree = ast.parse(path.read_text())
        constants = _constants(tree)
        for call in (node for node in ast.walk(tree) if isinstance(node, ast.Call) and _reader(node)):
            if not call.args:
                continue
            first = call.args[0]
            name = constants.get(first.id) if isinstance(first, ast.Name) else getattr(first, "value", None)
            if not isinstance(name, str) or name == "DJANGO_SETTINGS_MODULE":
                continue
            default = call.args[1] if len(call.args) > 1 else None
            found[name] = _rendered(default)
    procfile = (ROOT / "Procfile").read_text()
    for name, default in re.findall(r"\$\{([A-Z][A-Z0-9_]*):-([^}]*)\}", procfile):
        found.setdefault(name, default)
    return {**found, **READ_BY_LIBRARIES}


def test_the_scan_finds_the_readers_it_is_meant_to_find():
    code = variables_read_by_code()
    assert code["DATABASE_POOL"] == "true"  # a call spread over lines
    assert code["API_MAX_REQUEST_BYTES"] == "8388608"  # an expression
    assert code["DJANGO_ALLOWED_HOSTS"] == "127.0.0.1,localhost"  # a list
    assert code["DATABASE_URL"] is UNSET
    assert code["PROMETHEUS_MULTIPROC_DIR"] is UNSET  # os.environ.get through a module constant
    assert code["REQUEST_THREADS"] == "8"
    assert code["DATABASE_POOL_MAX_SIZE"] is NOT_LITERAL
    assert code["WORKER_THREADS"] == "64"  # the Procfile


def test_env_example_lists_every_variable_the_code_reads_and_no_other():
    listed = example_entries(EXAMPLE.read_text())
    code = variables_read_by_code()
    assert sorted(set(code) - set(listed)) == [], "read by the code but missing from .env.example"
    assert sorted(set(listed) - set(code)) == [], "listed in .env.example but read nowhere"


def test_env_example_shows_each_literal_default():
    listed = example_entries(EXAMPLE.read_text())
    wrong = {
        name: (listed[name], default)
        for name, default in variables_read_by_code().items()
        if default is not NOT_LITERAL and listed.get(name) != ("" if default is UNSET else default)
    }
    assert wrong == {}, "name: (.env.example, code)"


def readme_settings_table() -> set[str]:
    """The variable names in the first column of the README's configuration reference."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("### Configuration reference", 1)[1].split("\n### ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return {name for row in rows for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", row.split(" | ")[0])}


def test_the_readme_settings_table_lists_every_variable_the_code_reads_and_no_other():
    table = readme_settings_table()
    code = variables_read_by_code()
    assert sorted(set(code) - table) == [], "read by the code but missing from the README's table"
    assert sorted(table - set(code)) == [], "in the README's table but read nowhere"
