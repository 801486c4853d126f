"""The mutant matrix: every case can fail, and fails alone.

Each mutant (tests/adapters/mutants/<group>.py) is the reference adapter with one
small defect; the whole suite runs against every mutant (in parallel, two
workers per core: tests/gate.py) and its failed set must equal the mutant's expectation
exactly: a missing id means the case cannot see the defect (under-fitted),
an extra id means a case judges a rule it does not own (over-fitted).

A registry id with no mutant whose expected set is exactly that id fails
here, so a new case cannot land without its mutant.
"""

from __future__ import annotations

import pytest

from cases.registry import REGISTRY
from tests import gate
from tests.adapters.mutants import MUTANTS

# Runs that are mostly asleep: a 4 s pause in every stream; every search reply
# held up to 1 s for a cancel (hooks.AwaitsCancel); 0.3 s before every streamed
# hit; a request left to the deadline (FORGE_DEADLINE_S, the *-wedge mutants)
SLEEPY = ("stream-stall-4s", "cancel-answers-error", "cancel-oneshot-error",
          "cancel-poisons-next-search", "cancel-finished-answered",
          "cancel-finished-oneshot-answered", "paced-cancel-error",
          "unknown-ref-tree-wedge", "unknown-commit-wedge")


def _jobs(items):
    return {f"mutant:{s}": {"adapter": gate.mutant(s)} for s in gate.selected_params(items, "switch")}


gate.plan(__name__, _jobs, sleepy=tuple(f"mutant:{s}" for s in SLEEPY))


def test_every_case_has_a_mutant_of_its_own():
    alone = {next(iter(m.expected)) for m in MUTANTS.values() if len(m.expected) == 1}
    missing = [c.id for c in REGISTRY if c.id not in alone]
    assert not missing, (f"no mutant fails exactly these cases (add one to "
                         f"tests/adapters/mutants/<group>.py): {', '.join(missing)}")


def test_expectations_name_registry_cases():
    known = {c.id for c in REGISTRY}
    unknown = {m.switch: sorted(m.expected - known) for m in MUTANTS.values() if m.expected - known}
    assert not unknown, f"mutants expect ids the registry does not have: {unknown}"
    empty = [m.switch for m in MUTANTS.values() if not m.expected]
    assert not empty, f"a mutant must fail something: {empty}"


def test_each_mutant_is_filed_by_the_group_it_breaks():
    """tests/adapters/mutants/<group>.py holds the mutants of cases/test_<group>.py's
    cases, and MODULES names every such module (none left out of MUTANTS)."""
    from pathlib import Path

    import tests.adapters.mutants as package

    groups = {c.id: c.group for c in REGISTRY}
    misfiled = {m.switch: (m.hooks.__module__, sorted({groups.get(e) for e in m.expected}))
                for m in MUTANTS.values()
                if m.hooks.__module__ not in {f"{package.__name__}.{groups.get(e)}" for e in m.expected}}
    assert not misfiled, f"mutants filed outside their case's group: {misfiled}"
    files = sorted(p.stem for p in Path(package.__file__).parent.glob("*.py") if p.stem != "__init__")
    assert sorted(package.MODULES) == files, "tests/adapters/mutants/__init__.py MODULES: every table module"
    assert set(package.MODULES) <= set(groups.values()), "a table module per case group, named as the group"
    import tests.adapters.controls as controls
    files = sorted(p.stem for p in Path(controls.__file__).parent.glob("*.py") if p.stem != "__init__")
    assert sorted(controls.MODULES) == files, "tests/adapters/controls/__init__.py MODULES: every table module"


def test_pairs_say_why():
    """A mutant that breaks two cases explains why in its docstring."""
    terse = [m.switch for m in MUTANTS.values()
             if len(m.expected) > 1 and len((m.hooks.__doc__ or "").strip().splitlines()) < 3]
    assert not terse, f"mutants failing several cases without saying why: {terse}"


@pytest.mark.parametrize("switch", sorted(MUTANTS))
def test_mutant_fails_exactly_its_cases(request, switch):
    mutant = MUTANTS[switch]
    verdict = gate.verdicts(request, [f"mutant:{switch}"])[f"mutant:{switch}"]
    assert verdict.report is not None and verdict.code in (0, 1), verdict.explain()
    assert verdict.failed == mutant.expected, (
        f"{switch} ({mutant.description}): expected to fail exactly "
        f"{sorted(mutant.expected)}, failed {sorted(verdict.failed)}\n{verdict.explain()}")
    assert verdict.code == 1, verdict.explain()


def test_case_docstrings_name_their_mutant():
    """Each case's "Falsified by:" paragraph is its intended mutant's switch and
    description, word for word (`python3 tests/mutant.py --update-wording`)."""
    from tests.adapters import wording

    mine = wording.intended()
    wrong = {cid: line for cid, line in wording.docstring_lines().items()
             if cid in mine and line != wording.falsified_by(mine[cid])}
    assert not wrong, ("stale Falsified by: lines (run `python3 tests/mutant.py "
                       f"--update-wording`): {sorted(wrong)}")


def test_mutants_txt_is_generated():
    """tests/MUTANTS.txt is the matrix's own words (`python3 tests/mutant.py --update-wording`)."""
    from tests.adapters import wording

    assert wording.MUTANTS_TXT.read_text(encoding="utf-8") == wording.mutants_txt(), \
        "tests/MUTANTS.txt is stale: run `python3 tests/mutant.py --update-wording`"


def test_index_is_generated():
    """tests/adapters/INDEX.txt names each switch's module (`python3 tests/mutant.py --update-wording`)."""
    from tests.adapters import wording

    assert wording.INDEX_TXT.read_text(encoding="utf-8") == wording.index_txt(), \
        "tests/adapters/INDEX.txt is stale: run `python3 tests/mutant.py --update-wording`"


def test_each_switch_loads_from_its_own_module_alone():
    """What tests/mutant.py loads from one module alone (its TABLE) is
    the switch of the full tables: same hooks class, same expectations; and
    loading it imports none of HEAVY_AT_START."""
    import json
    import subprocess
    import sys

    from tests.adapters.controls import CONTROLS

    full = {v.switch: v for table in (MUTANTS, CONTROLS) for v in table.values()}
    modules = sorted({v.hooks.__module__ for v in full.values()})
    probe = ("import json, sys; sys.path.insert(0, sys.argv[1]); from tests.mutant import load\n"
             "out = {}\n"
             "for s in sys.argv[2:]:\n"
             "    v = load(s, fall_back=False)\n"
             "    out[s] = None if v is None else [v.hooks.__qualname__, sorted(v.expected), sorted(v.warns)]\n"
             f"out[''] = sorted(m for m in {sorted(HEAVY_AT_START)} if m in sys.modules)\n"
             "print(json.dumps(out))")
    wrong, heavy = {}, {}
    for module in modules:
        switches = sorted(s for s, v in full.items() if v.hooks.__module__ == module)
        done = subprocess.run([sys.executable, "-S", "-c", probe, str(gate.REPO), *switches],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        loaded = json.loads(done.stdout)
        imported = loaded.pop("")
        if imported:
            heavy[module] = imported
        for switch, got in loaded.items():
            v = full[switch]
            if got != [v.hooks.__qualname__, sorted(v.expected), sorted(v.warns)]:
                wrong[switch] = (module, got)
    assert not wrong, f"switches that do not load alone from their module: {wrong}"
    assert not heavy, (f"a test adapter's start imports {heavy}: import them where they are "
                       "used (tests/adapters/proxy.py says why)")


# Modules a test adapter's start does without (about 30 starts a run of the
# matrix; together they were 6 to 9 ms of each start's ~36 ms of CPU).
HEAVY_AT_START = frozenset({"pathlib", "typing", "socket", "datetime", "subprocess"})


# ---------------------------------------------------------------- the proxy itself
# The matrix trusts the proxy to change one behaviour and nothing else; these
# check its plumbing directly, without the suite.

def _proxy(switch: str, root, **kw):
    import subprocess

    return subprocess.Popen([*gate.mutant(switch), str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, **kw)


def _ask(proc, rid: int, method: str, params: dict) -> dict:
    import json

    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": method,
                                 "params": params}).encode() + b"\n")
    proc.stdin.flush()
    return json.loads(proc.stdout.readline())


def test_proxy_applies_its_hook_and_exits_on_eof(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_bytes(b"a\n")
    proc = _proxy("name-number", tmp_path)
    try:
        init = _ask(proc, 1, "initialize", {"protocol": 1})
        assert init["id"] == 1 and init["result"]["name"] == 42
        tree = _ask(proc, 2, "repo/tree", {"repo": "local/plain", "ref": None})
        assert [e["path"] for e in tree["result"]["entries"]] == ["a.txt"]
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
        assert proc.stdout.read() == b"", "nothing but protocol lines on stdout"
    finally:
        proc.kill()
        proc.wait()


def test_a_reference_loop_that_outlives_the_eof_grace_ends_as_killed(tmp_path):
    """The proxy ends the process EOF_GRACE_S after stdin EOF when the
    reference's loop has not returned by then, with 137 (128 + SIGKILL), the
    status of the killed process it stands for."""
    import subprocess
    import sys

    (tmp_path / "plain").mkdir()
    script = ("import sys, threading; sys.path.insert(0, sys.argv[1])\n"
              "from tests.adapters import proxy\n"
              "proxy.EOF_GRACE_S = 0.2\n"
              "class Stuck(proxy.Proxy):\n"
              "    def _serve(self):\n"
              "        threading.Event().wait()   # a loop that never returns\n"
              "Stuck(proxy.Hooks(), [sys.argv[2]]).run()\n")
    proc = subprocess.Popen([sys.executable, "-S", "-c", script, str(gate.REPO), str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        proc.stdin.close()
        assert proc.wait(timeout=30) == 137
        assert b"still runs" in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_the_reference_runs_inside_the_adapter_process(tmp_path):
    """One process a spawn: the hooks and the reference's loop share it (no
    python child), and a SIGKILL of it leaves nothing behind."""
    import psutil

    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_bytes(b"a\n")
    proc = _proxy("name-number", tmp_path)
    try:
        assert _ask(proc, 1, "initialize", {"protocol": 1})["result"]["name"] == 42
        assert _ask(proc, 2, "repo/tree", {"repo": "local/plain", "ref": None})["result"]["entries"]
        children = psutil.Process(proc.pid).children(recursive=True)
        assert not [c for c in children if "python" in c.name()], children
        proc.kill()
        proc.wait()
        gone, alive = psutil.wait_procs(children, timeout=10)
        assert not alive, f"children outlived the adapter: {alive}"
    finally:
        proc.kill()
        proc.wait()


def test_out_of_order_control_answers_newest_first(tmp_path):
    """The out-of-order control really reorders concurrent replies (the suite,
    sending one request at a time, cannot show it)."""
    import json

    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_bytes(name.encode())
    proc = _proxy("out-of-order", tmp_path)
    try:
        assert _ask(proc, 1, "initialize", {"protocol": 1})["id"] == 1
        for rid, name in ((2, "one"), (3, "two")):
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": rid, "method": "repo/tree",
                                         "params": {"repo": f"local/{name}", "ref": None}}).encode() + b"\n")
        proc.stdin.flush()
        order = [json.loads(proc.stdout.readline())["id"] for _ in range(2)]
        assert order == [3, 2]
    finally:
        proc.kill()
        proc.wait()


def test_id_rewriting_stays_self_consistent(tmp_path):
    """A control that rewrites ids (git-style here) lists the new ids and serves
    their bytes through repo/blob: the proxy maps them back."""
    import base64

    from tests.adapters.hooks import git_blob_id

    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_bytes(b"alpha\n")
    proc = _proxy("git-blob-ids", tmp_path)
    try:
        _ask(proc, 1, "initialize", {"protocol": 1})
        entry = _ask(proc, 2, "repo/tree", {"repo": "local/plain", "ref": None})["result"]["entries"][0]
        assert entry["sha"] == git_blob_id(b"alpha\n")
        blob = _ask(proc, 3, "repo/blob", {"repo": "local/plain", "sha": entry["sha"]})
        assert base64.b64decode(blob["result"]["bytes_b64"]) == b"alpha\n"
    finally:
        proc.kill()
        proc.wait()


def test_no_two_adapter_classes_share_a_name():
    """A base class written twice under one name lets a module's own copy
    shadow the imported one, and a mutant silently gets the wrong base (its
    adapter then crashes on a hook's signature): every class of
    tests/adapters/ has a name of its own."""
    import ast
    from collections import defaultdict
    from pathlib import Path

    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted((Path(__file__).parent / "adapters").rglob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(path.name if path.parent.name == "adapters"
                                        else f"{path.parent.name}/{path.name}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, f"classes defined more than once in tests/adapters/: {twice}"
