"""No import cycle among the modules of cases/: every arrow points down (the
CLI over the harness, the harness over the judges and the report, those over
the case kit, the kit over wire/, fixture/ and the registry). Read from the
sources: every import statement counts, function-level ones included, in
each of its forms (``import cases.x``, ``from cases import x``, ``from
cases.x import y``, relative ``from . import x``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "cases"


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _imports(name: str, source: str, modules: dict[str, Path]) -> set[str]:
    """The modules of cases/ that ``name`` imports anywhere in ``source``."""
    package = name if modules[name].name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [source] + [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            # `import cases.x.y` loads cases.x too; a package's __init__ is not an arrow
            # of its own (cases/__init__.py imports nothing)
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and modules[target].name != "__init__.py":
                out.add(target)
    return out


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (its modules in order, the first repeated last), or None."""
    state: dict[str, int] = {}   # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_the_reader_sees_each_form_of_import():
    """The reader itself: function-level, relative and ``from cases import x`` imports count."""
    modules = {"cases": ROOT / "cases" / "__init__.py", "cases.a": ROOT / "cases" / "a.py",
               "cases.b": ROOT / "cases" / "b.py", "cases.c": ROOT / "cases" / "c.py"}
    source = ("def f():\n    from cases import b\n"
              "from . import c\n"
              "import cases.a\n")
    assert _imports("cases.a", source, modules) == {"cases.b", "cases.c"}
    assert _cycle({"x": {"y"}, "y": {"z"}, "z": {"x"}}) == ["x", "y", "z", "x"]
    assert _cycle({"x": {"y"}, "y": set()}) is None


def test_no_import_cycle_in_cases():
    modules = _modules()
    graph = {name: _imports(name, path.read_text(encoding="utf-8"), modules)
             for name, path in modules.items()}
    cycle = _cycle(graph)
    assert cycle is None, "import cycle in cases/: " + " -> ".join(cycle)
