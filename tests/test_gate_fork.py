"""The gate's fork path (tests/forkserver.py) gives the verdict the subprocess path gives.

The same run, once forked from a server that imported the suite and once as
``python3 run`` in a subprocess, must end with the same exit code, the same
JSON report row by row and the same output, once what differs between any
two runs (durations, temp paths, pids) is masked: for the reference, for a
failing mutant and for a sleepy one (its stalls judged against the clock).
"""

from __future__ import annotations

import os
import re

import psutil
import pytest

from tests import gate

ADAPTERS = {"reference": gate.reference(), "name-number": gate.mutant("name-number"),
            "stream-stall-4s": gate.mutant("stream-stall-4s")}
SLEEPY = ("stream-stall-4s",)


def _jobs(items):
    wanted = gate.selected_params(items, "adapter")
    return {f"fork:{name}:{mode}": {"adapter": ADAPTERS[name], "fork": mode == "fork"}
            for name in wanted for mode in ("fork", "subprocess")}


gate.plan(__name__, _jobs, sleepy=tuple(f"fork:{n}:{m}" for n in SLEEPY
                                        for m in ("fork", "subprocess")))

# What differs between any two runs of one adapter: the wall-clock numbers,
# the temp folders and pids of a run, and the lines that carry them.
_NUMBER = re.compile(r"\d+(\.\d+)?")
_TEMP = re.compile(r"/(tmp|dev/shm)/[^\s'\",)\]]+")


def _mask(text) -> str:
    return _NUMBER.sub("N", _TEMP.sub("TEMP", str(text)))


def _rows(verdict: gate.Verdict) -> list[tuple]:
    return [(case["id"], case["outcome"], _mask(case.get("message") or ""),
             [_mask(w) for w in case.get("warnings") or []])
            for case in (verdict.report or {}).get("cases", [])]


@pytest.mark.parametrize("adapter", sorted(ADAPTERS))
def test_fork_path_gives_the_subprocess_verdict(request, adapter):
    got = gate.verdicts(request, [f"fork:{adapter}:fork", f"fork:{adapter}:subprocess"])
    forked, spawned = got[f"fork:{adapter}:fork"], got[f"fork:{adapter}:subprocess"]
    assert forked.forked and not spawned.forked
    assert spawned.report is not None, spawned.explain()
    assert forked.code == spawned.code, f"{forked.explain()}\n---\n{spawned.explain()}"
    assert _rows(forked) == _rows(spawned)
    same_keys = {k: v for k, v in spawned.report.items() if k not in ("cases", "summary")}
    assert {k: forked.report.get(k) for k in same_keys} == same_keys
    assert _mask(forked.stdout).splitlines() == _mask(spawned.stdout).splitlines()
    assert _mask(forked.stderr) == _mask(spawned.stderr)


def test_a_forked_run_past_its_bound_is_stopped_with_its_tree():
    """The timeout stops a forked run as it stops a subprocess: nothing of
    its tree is left (the adapters included) and the verdict says it was killed."""
    mark = f"{os.getpid()}-{id(object())}"
    verdict = gate.run_suite(gate.mutant("stream-stall-4s"), cases=("FC-043",), timeout_s=2.0,
                             fork=True, environ={**os.environ, "FORGE_GATE_MARK": mark})
    assert verdict.forked
    assert verdict.code is None and "[gate] killed after" in verdict.stderr, verdict.explain()
    left = [p.pid for p in psutil.process_iter() if _marked(p, mark)]
    assert not left, f"processes of the stopped run still live: {left}"


def _marked(proc: psutil.Process, mark: str) -> bool:
    try:
        return proc.environ().get("FORGE_GATE_MARK") == mark and \
            proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def test_fork_knob_turns_the_fork_path_off(monkeypatch):
    monkeypatch.setenv(gate.FORK_ENV, "0")
    assert not gate.fork_wanted()
    monkeypatch.setenv(gate.FORK_ENV, "1")
    assert gate.fork_wanted()


_ORPHANING = """
import os, sys, threading
sys.path.insert(0, sys.argv[1])
from tests import gate
watch = gate._watch
def announce(pid, wait, timeout_s):
    print(pid, flush=True)
    return watch(pid, wait, timeout_s)
gate._watch = announce
gate.run_suite(gate.mutant("stream-stall-4s"), fork=True,
               environ={**os.environ, "FORGE_GATE_MARK": sys.argv[2]})
"""


def test_the_fork_server_and_its_run_die_with_the_gate():
    """A gate process killed outright (SIGKILL: no finish) in the middle of
    a forked run leaves nothing behind: its fork server sees its end (EOF),
    stops the run as the gate would, and ends."""
    import signal
    import subprocess
    import sys

    mark = f"{os.getpid()}-{id(object())}-orphan"
    gate_proc = subprocess.Popen([sys.executable, "-c", _ORPHANING, str(gate.REPO), mark],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        run_pid = int(gate_proc.stdout.readline())
        server = psutil.Process(psutil.Process(run_pid).ppid())
        run = psutil.Process(run_pid)
    finally:
        gate_proc.send_signal(signal.SIGKILL)
        gate_proc.wait()
        gate_proc.stdout.close()
    gone, alive = psutil.wait_procs([server, run], timeout=gate.STOP_GRACE_S + 20)
    assert not alive, f"still running after the gate died: {alive}"
    left = [p.pid for p in psutil.process_iter() if _marked(p, mark)]
    assert not left, f"processes of the orphaned run still live: {left}"
