"""A run in several processes (``--jobs N``, cases/cli/jobs.py) gives the verdicts
of a run in one: the same outcome, message and warnings for every case, for
the reference, the nonconforming gate, and mutants whose only evidence is seen
by the protocol monitor in a worker other than the one its owner case runs in.
A Ctrl-C stops every worker, writes the report of what ran and leaves no temp
area behind.

(The mutant matrix and the gates run with --jobs 1: they already run several
suites at once, tests/gate.py.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cases.kit import exits
from cases.harness import session as harness, stopping, worker
from cases.cli import jobs
from cases import registry
from tests import gate

ROOT = Path(__file__).resolve().parent.parent
TWO = ("--jobs", "2")
# Mutants whose only evidence, in a run of their owner case and the revisions
# group, is traffic of the revisions group that the protocol monitor sees:
# with --jobs 2 the owner runs in one worker and that traffic in the other.
ACROSS = {"error-reply-with-result": "FC-124"}
SEEN_IN = "revisions"
REVISIONS = tuple(c.id for c in registry.REGISTRY if c.group == SEEN_IN)

JOBS = {"jobs:reference-1": {"adapter": gate.reference()},
        "jobs:reference-2": {"adapter": gate.reference(), "options": TWO},
        "jobs:nonconforming-2": {"adapter": gate.script("nonconforming.py"), "options": TWO},
        **{f"jobs:{m}": {"adapter": gate.mutant(m), "options": TWO,
                         "cases": (owner, *REVISIONS)} for m, owner in ACROSS.items()},
        # the owner alone passes: its own traffic holds no evidence
        **{f"jobs:{m}-alone": {"adapter": gate.mutant(m), "cases": (owner,)}
           for m, owner in ACROSS.items()}}
gate.plan(__name__, lambda items: JOBS, sleepy=("jobs:nonconforming-2",))


@pytest.fixture
def verdicts(request):
    return {n.split(":", 1)[1]: v for n, v in gate.verdicts(request, list(JOBS)).items()}


def _modules(groups=None) -> list[str]:
    mods = {str(ROOT / c.module) for c in registry.REGISTRY if groups is None or c.group in groups}
    return sorted(mods, key=lambda m: harness.run_order(Path(m).stem.removeprefix("test_")))


def test_the_queue_holds_every_group_once_watched_groups_first_heaviest_first():
    modules = _modules()
    order = jobs.queue(modules)
    assert sorted(order) == sorted(modules)
    tailed = [m for m in order if jobs._group(m) in harness.TAILED_GROUPS]
    assert order[:len(tailed)] == tailed, "the watched groups are taken first"
    weight = lambda m: jobs.GROUP_WEIGHT[jobs._group(m)]   # noqa: E731
    for part in (tailed, order[len(tailed):]):
        assert [weight(m) for m in part] == sorted(map(weight, part), reverse=True)
    assert set(jobs.GROUP_WEIGHT) == set(registry.GROUPS), "a group without a weight"
    assert [jobs.count(modules, n) for n in (1, 2, 3)] == [1, 2, 3]
    assert jobs.count(modules, len(modules) + 4) == len(modules)
    assert jobs.count(_modules({"handshake"}), 2) == 1, "one group: one process"


def test_how_many_processes_option_then_forge_jobs_then_one_more_than_the_cores(monkeypatch):
    monkeypatch.delenv("FORGE_JOBS", raising=False)
    for cores, n in ((None, 1), (1, 1), (2, 3), (3, 4), (16, 4)):
        monkeypatch.setattr(os, "cpu_count", lambda c=cores: c)
        assert jobs.wanted(None) == n, cores
    assert jobs.wanted(1) == 1
    monkeypatch.setenv("FORGE_JOBS", "2")
    assert (jobs.wanted(None), jobs.wanted(5)) == (2, 5), "--jobs wins over FORGE_JOBS"
    for bad in ("0", "x", "-1", "1.5"):
        monkeypatch.setenv("FORGE_JOBS", bad)
        with pytest.raises(exits.UsageError, match="FORGE_JOBS wants a whole number"):
            jobs.wanted(None)


def test_workers_taking_groups_in_turn_take_each_group_exactly_once(tmp_path):
    order = [f"g{i}" for i in range(7)]
    claims = tmp_path / "claims"
    claims.write_text("3", encoding="ascii")
    taken = [worker._claims({"queue": order, "index": k, "claims": str(claims)}) for k in range(3)]
    got: list[list[str]] = [[], [], []]
    for k in (0, 1, 2, 2, 2, 0, 1, 0, 1, 2):   # whoever is free next
        got[k] += [g for g in [next(taken[k], None)] if g is not None]
    assert [g[0] for g in got] == ["g0", "g1", "g2"], "worker k starts with the k-th group"
    assert sorted(g for gs in got for g in gs) == order
    assert [next(t, None) for t in taken] == [None, None, None]


def test_the_reference_gets_the_same_report_from_two_processes(verdicts):
    one, two = verdicts["reference-1"], verdicts["reference-2"]
    assert two.code == 0 and two.report is not None, two.explain()
    keep = ("id", "outcome", "message", "warnings")
    rows = lambda v: [{k: r.get(k) for k in keep} for r in v.report["cases"]]   # noqa: E731
    assert rows(two) == rows(one)
    summary = lambda v: {k: x for k, x in v.report["summary"].items() if k != "duration_s"}  # noqa: E731
    assert summary(two) == summary(one)
    assert two.stdout.count(" forge-conformance ") == 1, two.stdout[-3000:]
    assert "forge-conformance verdict: 75 passed, 0 failed" in two.stdout


def test_the_nonconforming_gate_fails_exactly_the_same_in_two_processes(verdicts):
    v = verdicts["nonconforming-2"]
    assert v.failed == {"FC-013", "FC-043"}, v.explain()
    assert v.code == 1, v.explain()


@pytest.mark.parametrize("switch", sorted(ACROSS))
def test_a_finding_seen_in_another_worker_fails_its_owner_alone(verdicts, switch):
    owner = ACROSS[switch]
    modules = _modules({registry.by_id(owner).group, SEEN_IN})
    first = jobs.queue(modules)[:2]   # each worker's first group
    assert sorted(first) == sorted(modules), "the owner and the evidence would share a worker"
    alone = verdicts[f"{switch}-alone"]
    assert alone.code == 0 and not alone.failed, alone.explain()
    v = verdicts[switch]
    assert v.failed == {owner}, v.explain()
    assert v.cases[owner].get("monitor_failure") is True, v.explain()


def test_ctrl_c_stops_every_worker_and_reports_what_ran(tmp_path):
    """SIGINT to the process group (as a terminal sends it) once the first
    worker has shown three finished cases: exit 130, one "interrupted" line, the
    report of the cases that ran, no temp area left, no adapter left."""
    import psutil
    areas, out = tmp_path / "areas", tmp_path / "r.json"
    areas.mkdir()
    env = dict(os.environ, FORGE_TMPDIR=str(areas), TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, str(ROOT / "run"), *TWO, "--json", str(out)],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    # pytest's progress: three dots, so at least the first two cases are over
    # (the one whose dot was just printed may still be in its teardown)
    first = proc.stdout.read(3)
    try:
        tree = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        tree = []
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    stdout, stderr = (first + stdout).decode(), stderr.decode()
    assert proc.returncode == 130, (proc.returncode, stderr[-3000:])
    assert "Traceback" not in stdout + stderr, stderr[-3000:]
    assert "the stop took over" not in stderr, stderr[-6000:]
    rep = json.loads(out.read_text("utf-8"))
    assert rep["interrupted"] is True
    outcomes = [c["outcome"] for c in rep["cases"]]
    assert "passed" in outcomes, rep["summary"]
    assert not list(areas.iterdir()), sorted(p.name for p in areas.iterdir())
    left = [p for p in tree if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
    assert not left, [p.cmdline() for p in left]


def test_a_parent_killed_without_a_word_takes_its_workers_and_adapters_with_it(tmp_path):
    """SIGKILL to the parent (no handler runs): each worker gets SIGTERM from
    the kernel (PR_SET_PDEATHSIG), stops its adapters like a Ctrl-C and exits,
    and the parent's temp area is removed by its workers."""
    import psutil
    areas = tmp_path / "areas"
    areas.mkdir()
    proc = subprocess.Popen([sys.executable, str(ROOT / "run"), *TWO], cwd=ROOT,
                            env=dict(os.environ, FORGE_TMPDIR=str(areas), TMPDIR=str(tmp_path)),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    proc.stdout.read(3)   # three cases over in the first worker: both workers are running
    tree = psutil.Process(proc.pid).children(recursive=True)
    workers = psutil.Process(proc.pid).children()   # the pre-flight's adapter is gone by now
    assert len(workers) == 2, [p.cmdline()[:3] for p in workers]
    proc.kill()
    proc.wait()
    _gone, alive = psutil.wait_procs(tree, timeout=stopping.STOP_BOUND_S)
    assert not alive, [p.cmdline()[:4] for p in alive]
    assert not list(areas.iterdir()), sorted(p.name for p in areas.iterdir())
