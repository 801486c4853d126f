"""No import cycle among the modules of cases/: every arrow points down (the
CLI over the harness, the harness over the judges and the report, those over
the case kit, the kit over wire/, fixture/ and the registry). Read from the
sources: every import statement counts, function-level ones included, in
each of its forms (``import cases.x``, ``from cases import x``, ``from
cases.x import y``, relative ``from . import x``). And the wings' order: a
module imports only modules of its own wing or of a lower rank in ``RANKS``
(two wings of one rank do not import each other); a module of cases/ that no
wing places fails the test until it is given one."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "cases"

# Each wing of cases/ (a subpackage, or a module at the top) and its rank: a module may import
# its own wing and any wing of a lower rank, nothing else.
RANKS = {
    "registry": 0,               # the matrix and the one ownership table
    "kit": 1,                    # what a case imports; settings, launcher, exit codes
    "judges": 2, "report": 2,    # run-wide verdicts; what a run tells its reader
    "harness": 3,                # the pytest side
    "test_*": 3,                 # the case modules: run by the harness, importing beneath it
    "explore": 4,                # --explore: drives adapters, reuses the cases' own judges
    "cli": 5,                    # the command line: nothing imports it
}
TOP = {"cases", "cases.conftest"}   # the package itself; conftest only names the plugin (a string)


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


def _wing(name: str) -> str | None:
    """The wing of module ``name`` (a key of RANKS), or None when no wing places it."""
    part = name.split(".")[1]
    if part.startswith("test_"):
        return "test_*"
    return part if part in RANKS else None


def test_the_wings_point_down():
    modules = _modules()
    unplaced = sorted(n for n in modules if n not in TOP and _wing(n) is None)
    assert not unplaced, f"modules of cases/ in no wing (give each one a wing): {unplaced}"
    upward = []
    for name, path in modules.items():
        if name in TOP:
            continue
        here = _wing(name)
        for target in _imports(name, path.read_text(encoding="utf-8"), modules):
            there = _wing(target)
            if target not in TOP and there != here and RANKS[there] >= RANKS[here]:
                upward.append(f"{name} ({here}, rank {RANKS[here]}) imports {target} "
                              f"({there}, rank {RANKS[there]})")
    assert not upward, "imports against the wings' order:\n" + "\n".join(upward)


def test_every_wing_says_what_it_owns():
    for init in sorted((ROOT / PACKAGE).glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        where = init.relative_to(ROOT)
        assert doc and len(doc.split()) >= 12, f"{where}: no docstring saying what it owns"
        assert init.parent.name in RANKS, f"{init.parent.name}/ is a wing RANKS does not rank"
