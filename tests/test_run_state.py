"""No run state in a module of cases/: a session keeps what it owns on its
pytest config (cases/harness/session.py ``of(config)``), and the case API
reaches it through a pointer a second session in the same process neither
sees nor clears.

Read from the sources: no function of cases/ rebinds a module's name
(``global``) or changes a module-level object in place, beyond the process
facts listed in PROCESS_FACTS with why.
Run for real: a session that runs another one inside itself (pytest.main
within pytest.main, one process) still finds its own session, its running
case and its knobs afterwards, and each session sees its own while it runs.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# module -> {name: why} for the module-level names a function of it may rebind or change:
# what belongs to the process, or to no run in particular, never to one run
PROCESS_FACTS = {
    "cases/kit/invocation.py": {
        "_launcher": "how this process was started (the run script, the console script, -m): "
                     "its entry point says so once, as sys.argv does, and a fork keeps it"},
    "cases/harness/stopping.py": {
        "_STATE": "the stop signals that came: a signal's handler is the process's"},
    "cases/judges/claims.py": {
        "JUDGES": "filled by @judge as the module is imported; no run writes it"},
    "cases/explore/machine.py": {
        "_FOUND": "one exception class a case id, made once a process"},
    "cases/report/release.py": {
        "_DIGEST": "the digest of the source this process runs, computed once"},
    "cases/kit/replies.py": {
        "_REMEMBERED": "weak, keyed by the adapter process object: an entry ends with the "
                       "run's provider and no other run holds that key"},
    "cases/kit/commitfacts.py": {
        "_asked": "weak, keyed by the adapter process object, like replies._REMEMBERED"},
}
_CHANGING = {"append", "extend", "insert", "update", "add", "discard", "remove", "pop",
             "popitem", "clear", "setdefault", "__init__"}


def _changed_at_run_time(path: Path) -> set[str]:
    """The module-level names of ``path`` a function of it rebinds (``global``) or
    changes in place (an item or attribute set, a changing method called)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    module = {t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
              for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
              if isinstance(t, ast.Name)}
    found = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(fn):
            if isinstance(node, ast.Global):
                found.update(node.names)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) \
                    else [node.target]
                found.update(t.value.id for t in targets
                             if isinstance(t, (ast.Subscript, ast.Attribute))
                             and isinstance(t.value, ast.Name) and t.value.id in module)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and isinstance(node.func.value, ast.Name) and node.func.attr in _CHANGING \
                    and node.func.value.id in module:
                found.add(node.func.value.id)
    return found


def test_no_function_of_cases_changes_module_state():
    found = {}
    for path in sorted((ROOT / "cases").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        names = _changed_at_run_time(path) - set(PROCESS_FACTS.get(rel, {}))
        if names:
            found[rel] = sorted(names)
    assert not found, f"module state changed at run time (keep it on the session): {found}"


def test_the_process_facts_listed_are_still_there():
    for rel, names in PROCESS_FACTS.items():
        assert set(names) <= _changed_at_run_time(ROOT / rel), (rel, names)
        assert all(names.values()), rel


_NESTED = r"""
import json, sys
import pytest
from cases.harness import plugin, session as harness
from cases.kit import api, settings as knobs

module = sys.argv[1]
args = [module, "-q", "-p", "no:cacheprovider", "--collect-only", "--rootdir", "."]
seen = {}


def mine(config, key):
    own = harness.of(config)
    seen[key] = {"own": own is not None and api.session() is own,
                 "knobs": own is not None and knobs.active() is own.settings}
    return own


class Inner:
    def pytest_collection_finish(self, session):
        mine(session.config, "inner")


class Outer:
    @pytest.hookimpl(trylast=True)
    def pytest_collection_finish(self, session):
        own = mine(session.config, "outer before")
        own.current = "the outer session's running case"
        seen["inner code"] = plugin.run_pytest(args, [Inner()])
        mine(session.config, "outer after")
        seen["outer case"] = api.running() == own.current
        own.current = None


seen["outer code"] = plugin.run_pytest(args, [Outer()])
seen["after both"] = api.session() is None
print(json.dumps(seen))
"""


def test_a_session_run_inside_another_leaves_the_outer_one_its_own():
    proc = subprocess.run([sys.executable, "-c", _NESTED, "cases/test_handshake.py"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["outer code"] == 0 and seen["inner code"] == 0, seen
    for when in ("outer before", "inner", "outer after"):
        assert seen[when] == {"own": True, "knobs": True}, (when, seen)
    assert seen["outer case"], seen
    assert seen["after both"], seen
