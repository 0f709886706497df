"""The layers of ``services/`` run one way (issue #18 item 17): the graph of imports between its sub-packages, read
from the source with ``ast`` (module-level imports and those inside functions alike), has no circle; nothing outside
``services/cli`` imports the CLI, and every click command lives there (the benchmarks', ``souk chaos``'s and ``souk
types``' too: services/bench, services/reliability and services/client are libraries those commands call); and the
gateway (the web layer) is imported only by what composes or drives the whole app (``COMPOSERS``): the CLI, which
builds and serves it, the benchmarks, which run it in process and time its functions, and the TypeScript client's
generator, which reads the API the gateway describes. Libraries (store, engine, projector, history, embedded,
runtime, reliability: ``souk chaos`` drives the gateway over HTTP only) import neither; history has its own errors,
the gateway maps them.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"
COMPOSERS = ("services.cli", "services.bench", "services.client.typescript")


def _imports(path: Path, module: str) -> list[tuple[str, int]]:
    """Every module ``path`` imports (absolute or relative, at any depth of the file), with its line."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    found: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package[:len(package) - (node.level - 1)]
                base = ".".join(parent + ([base] if base else []))
            found.append((base, node.lineno))
            found += [(f"{base}.{alias.name}", node.lineno) for alias in node.names]  # `from services import cli`
    return found


def _graph() -> dict[str, list[tuple[str, str, int]]]:
    """Sub-package -> (the module that imports, the services module it imports, the line) for each import of
    another sub-package."""
    subpackages = {p.name for p in SERVICES.iterdir() if (p / "__init__.py").exists()}
    edges: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    for path in sorted(SERVICES.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if len(parts) < 3 or parts[1] not in subpackages:
            continue
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for target, line in _imports(path, module):
            names = target.split(".")
            if len(names) >= 2 and names[0] == "services" and names[1] in subpackages and names[1] != parts[1]:
                edges[parts[1]].append((module, target, line))
    return edges


def _shown(found: list[tuple[str, str, int]]) -> str:
    return "; ".join(f"{module} (line {line}) imports {target}" for module, target, line in found)


def test_the_reader_sees_imports_inside_functions_and_relative_ones(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("import os\n\ndef f():\n    from services.cli.main import run\n"
                      "    from ..gateway import errors\n")
    found = {t for t, _ in _imports(source, "services.history.m")}
    assert {"os", "services.cli.main", "services.cli.main.run", "services.gateway", "services.gateway.errors"} <= found


def test_nothing_outside_the_cli_imports_the_cli():
    found = [e for sub, edges in _graph().items() if sub != "cli"
             for e in edges if e[1] == "services.cli" or e[1].startswith("services.cli.")]
    assert not found, _shown(found)


def test_only_what_composes_the_app_imports_the_gateway():
    found = [e for sub, edges in _graph().items() if sub != "gateway" for e in edges
             if (e[1] == "services.gateway" or e[1].startswith("services.gateway."))
             and not any(e[0] == c or e[0].startswith(c + ".") for c in COMPOSERS)]
    assert not found, _shown(found)


def test_no_circle_between_the_sub_packages():
    graph = _graph()
    targets = {sub: {e[1].split(".")[1] for e in edges} for sub, edges in graph.items()}
    circles: list[list[str]] = []

    def walk(path: list[str]) -> None:
        for nxt in sorted(targets.get(path[-1], ())):
            if nxt == path[0]:
                circles.append(path + [nxt])
            elif nxt not in path and nxt > path[0]:  # each circle once, from its smallest member
                walk(path + [nxt])

    for start in sorted(targets):
        walk([start])
    shown = []
    for circle in circles:
        hops = []
        for a, b in zip(circle, circle[1:]):
            example = next(e for e in graph[a] if e[1].split(".")[1] == b)
            hops.append(f"{a} -> {b} ({example[0]} line {example[2]})")
        shown.append(", ".join(hops))
    assert not circles, "\n".join(shown)


def _click_commands(tree: ast.AST) -> list[int]:
    """The lines that define a click command or group: ``@click.command``, ``@click.group``, ``click.Command(...)``,
    ``click.Group(...)``, or those names imported from click (its other helpers, a progress bar, are no command)."""
    makers = {"command", "group", "Command", "Group", "MultiCommand", "CommandCollection"}
    imported = {a.asname or a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                and node.module == "click" for a in node.names if a.name in makers}
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Attribute) and f.attr in makers and isinstance(f.value, ast.Name)
                    and f.value.id == "click") or (isinstance(f, ast.Name) and f.id in imported):
                lines.append(node.lineno)
        elif isinstance(node, ast.Attribute) and node.attr in makers and isinstance(node.value, ast.Name) \
                and node.value.id == "click":
            lines.append(node.lineno)
    return sorted(set(lines))


def test_the_reader_finds_click_commands():
    tree = ast.parse("import click\n@click.command('x')\ndef x(): ...\nbar = click.progressbar([])\n")
    assert _click_commands(tree) == [2]


def test_every_click_command_lives_in_the_cli():
    """``souk``'s commands are defined in services/cli, the benchmarks', ``souk chaos``'s and ``souk types``'s too:
    services/bench, services/reliability and services/client are libraries whose functions those commands call."""
    found = []
    for path in sorted(SERVICES.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("services/cli/"):
            continue
        found += [f"{rel} line {line}" for line in _click_commands(ast.parse(path.read_text(encoding="utf-8")))]
    assert not found, "click commands outside services/cli: " + "; ".join(found)


def test_the_tools_libraries_do_not_import_click():
    """Options, their parsing and the printing of figures are the CLI's: the benchmarks, the chaos run and the
    TypeScript generator take typed arguments and return figures or text (their errors are their own)."""
    found = []
    for folder in ("bench", "reliability", "client"):
        for path in sorted((SERVICES / folder).rglob("*.py")):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            found += [f"{path.relative_to(ROOT).as_posix()} line {line}" for target, line in _imports(path, module)
                      if target == "click" or target.startswith("click.")]
    assert not found, "click imported outside services/cli: " + "; ".join(found)
