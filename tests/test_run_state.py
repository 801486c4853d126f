"""No run state in a module of cases/: a session keeps what it owns on its
pytest config (cases/harness/session.py ``of(config)``), and the case API
reaches it through a pointer a second session in the same process neither
sees nor clears.

Read from the sources: no function of cases/ rebinds a module's name
(``global``), beyond the process facts listed in PROCESS_FACTS with why.
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

# module -> names a function of it may rebind, and why that is the process's, not a run's
PROCESS_FACTS = {
    "cases/kit/invocation.py": ({"_launcher"}, "how this process was started (the run script, "
                                "the console script, -m): its entry point says so once, as "
                                "sys.argv does, and a fork keeps it"),
}


def _rebound(path: Path) -> set[str]:
    """The module names the functions of ``path`` declare ``global``."""
    return {name for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Global) for name in node.names}


def test_no_function_of_cases_rebinds_a_module_name():
    found = {}
    for path in sorted((ROOT / "cases").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        names = _rebound(path) - PROCESS_FACTS.get(rel, (set(), ""))[0]
        if names:
            found[rel] = sorted(names)
    assert not found, f"module-global state rebound at run time (keep it on the session): {found}"


def test_the_process_facts_listed_are_still_there():
    for rel, (names, why) in PROCESS_FACTS.items():
        assert why and names <= _rebound(ROOT / rel), (rel, names)


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
