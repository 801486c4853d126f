"""The edges of the command line: bad usage gets one line and exit 2 before
anything runs; Ctrl-C during a run (also twice, also SIGTERM from a CI
timeout or SIGHUP from a closed terminal) stops the adapter's whole tree,
leaves no temp files and still writes the JSON report of the cases that ran.

Bad usage must be said before any adapter starts, so each such run is bounded
by the start-up allowance alone (harness.STARTUP_S). The Ctrl-C run is
interrupted as a terminal does it (SIGINT to the suite's process group; the
adapter lives in a session of its own and gets nothing) once the adapter
reports, through a FIFO, that a case is waiting on it; from the first
signal on, the suite has INTERRUPT_BOUND_S to stop every adapter process
(two stops of at most harness.STOP_S each), write the report and exit.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import subprocess
import sys
import time

import pytest

from tests.hostile import harness
from tests.hostile.harness import TRACEBACK

INTERRUPT_BOUND_S = 2 * harness.STOP_S + 4.0
READY_WAIT_S = 60.0   # until the hanging case has started (normally ~2 s)


def run_cli(args: list[str], env_extra: dict | None = None) -> subprocess.CompletedProcess:
    env = harness.suite_env(30, 2, env_extra)
    return subprocess.run([sys.executable, str(harness.RUN), *args], cwd=harness.REPO, env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="backslashreplace", timeout=harness.STARTUP_S)


def assert_one_line_exit_2(proc: subprocess.CompletedProcess, *needles: str) -> str:
    output = proc.stdout + proc.stderr
    lines = [line for line in output.splitlines() if line.strip()]
    assert proc.returncode == 2, f"exit {proc.returncode}\n{output}"
    assert TRACEBACK not in output, output
    assert len(lines) == 1, f"expected one line, got {len(lines)}:\n{output}"
    for needle in needles:
        assert needle in lines[0], f"{needle!r} not in {lines[0]!r}"
    return lines[0]


def test_unknown_option():
    assert_one_line_exit_2(run_cli(["--no-such-option"]), "--no-such-option")


def test_unknown_case_id():
    assert_one_line_exit_2(run_cli(["--case", "FC-999"]), "FC-999")


def test_adapter_that_does_not_exist(tmp_path):
    missing = tmp_path / "no-such-adapter"
    assert_one_line_exit_2(run_cli(["--", str(missing)]), str(missing))


def test_adapter_that_is_not_executable(tmp_path):
    script = tmp_path / "adapter.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    line = assert_one_line_exit_2(run_cli(["--", str(script)]), str(script))
    assert "executable" in line


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan"])
def test_deadline_that_is_not_a_positive_number(value):
    assert_one_line_exit_2(run_cli(["--case", "FC-001"], {"FORGE_DEADLINE_S": value}),
                           "FORGE_DEADLINE_S", repr(value))


def test_inactivity_window_that_is_not_a_positive_number():
    assert_one_line_exit_2(run_cli(["--case", "FC-001"], {"FORGE_INACTIVITY_S": "abc"}),
                           "FORGE_INACTIVITY_S")


def test_json_report_path_that_cannot_be_written(tmp_path):
    target = tmp_path / "missing-folder" / "report.json"
    assert_one_line_exit_2(run_cli(["--case", "FC-001", "--json", str(target)]),
                           str(target.parent))


# How a run gets interrupted: (to whom, signal, after which word from the adapter).
# "ready": a case is waiting on the adapter; "eof": the suite has begun to
# stop the adapter (it closed its stdin), so a second signal lands mid-cleanup.
GROUP, SUITE = "the suite's process group (a terminal)", "the suite process (a CI timeout)"
INTERRUPTIONS = {
    "ctrl-c": dict(steps=[(GROUP, signal.SIGINT, b"ready")], stay=False, exit=130),
    "sigterm": dict(steps=[(SUITE, signal.SIGTERM, b"ready")], stay=False, exit=130),
    "ctrl-c twice": dict(steps=[(GROUP, signal.SIGINT, b"ready"), (GROUP, signal.SIGINT, b"eof")],
                         stay=True, exit=130),
    "hangup": dict(steps=[(GROUP, signal.SIGHUP, b"ready")], stay=False, exit=None),
}


class _Words:
    """Reads words the adapter writes to a FIFO, waiting with a deadline and
    giving up early if the suite exits meanwhile."""

    def __init__(self, path):
        os.mkfifo(path)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)   # before the adapter writes
        # Our own idle writer keeps the FIFO from reading as EOF between the
        # adapter's writes, so select() wakes only for real data.
        self.keep = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        self.buffer = b""

    def wait(self, word: bytes, popen, timeout: float) -> bool:
        exited = os.pidfd_open(popen.pid)
        try:
            deadline = time.monotonic() + timeout
            while word + b"\n" not in self.buffer:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                ready, _, _ = select.select([self.fd, exited], [], [], remaining)
                if self.fd in ready:
                    try:
                        self.buffer += os.read(self.fd, 64)
                    except BlockingIOError:   # woken, but another reader's turn: wait again
                        continue
                elif exited in ready:
                    return False
            self.buffer = self.buffer.split(word + b"\n", 1)[1]
            return True
        finally:
            os.close(exited)

    def close(self):
        os.close(self.keep)
        os.close(self.fd)


@pytest.mark.parametrize("how", INTERRUPTIONS)
def test_an_interrupted_run_stops_the_tree_and_writes_the_partial_report(tmp_path, how):
    """FC-020 runs (and passes: trees only, no search: FC-010 now searches too);
    FC-031's first search/code is never answered (tests/hostile/interrupt.py),
    and while the suite waits on it, the signal."""
    plan = INTERRUPTIONS[how]
    words = _Words(tmp_path / "words")
    first_signal: list[float] = []

    def interrupt(popen, run):
        for target, sig, word in plan["steps"]:
            timeout = READY_WAIT_S if not first_signal else INTERRUPT_BOUND_S
            if not words.wait(word, popen, timeout):
                break    # the suite exited (or never got there): judged below
            if not first_signal:
                first_signal.append(time.monotonic())
            if target == GROUP:
                os.killpg(popen.pid, sig)
            else:
                os.kill(popen.pid, sig)

    opts = {"ready": str(tmp_path / "words")}
    if plan["stay"]:
        opts["stay"] = "1"
    try:
        run = harness.run_suite("interrupt", "interrupt.py", cases=("FC-020", "FC-031", "FC-032"),
                                deadline_s=10, inactivity_s=2, opts=opts,
                                on_started=interrupt, workdir=tmp_path)
    finally:
        words.close()
    assert first_signal, f"the hanging case never started\n{run.describe()}"
    assert not run.timed_out, run.describe()
    took = run.ended_at - first_signal[0]
    assert took <= INTERRUPT_BOUND_S, f"the suite took {took:.1f}s to stop\n{run.describe()}"
    assert not run.survivors, ("processes of the adapter's tree survived:\n  "
                               + "\n  ".join(run.survivors))
    assert not run.leftovers, f"the suite left {run.leftovers} in its temp area"
    if plan["exit"] is None:
        assert run.returncode != 0, run.describe()
    else:
        assert run.returncode == plan["exit"], f"exit {run.returncode}\n{run.describe()}"
    assert TRACEBACK not in run.output, run.describe()
    assert run.report is not None, f"{run.report_error}\n{run.describe()}"
    cases = run.cases()
    assert cases["FC-020"]["outcome"] == "passed", run.describe()
    assert cases["FC-031"]["outcome"] != "passed", run.describe()
    assert cases["FC-032"]["message"] == "not run (interrupted)", run.describe()
    assert cases["FC-090"]["message"] == "not selected", run.describe()
    assert run.report.get("interrupted") is True, run.report.get("interrupted")


# A stop that never ends, as a bug of the suite's would make it: the stop
# signal's handler arms the bound, and the program then blocks for good.
_ENDLESS_STOP = r"""
import os, signal, sys, threading
sys.path.insert(0, sys.argv[1])
from cases.harness import stopping
from wire.process import Child
stopping.STOP_BOUND_S = float(sys.argv[2])
child = Child.spawn(["sleep", "120"], env=None)
print(child.pid, flush=True)
stopping.catch()
try:
    os.kill(os.getpid(), signal.SIGINT)
    threading.Event().wait(120)
except KeyboardInterrupt:
    threading.Event().wait(120)   # the stop that never ends
"""


def test_a_stop_that_overruns_its_bound_exits_130_with_the_stacks_and_kills_the_adapters():
    """Past stopping.STOP_BOUND_S after the first stop signal the run exits 130, says
    that this is a bug of the suite, prints every thread's stack for the report
    and SIGKILLs the adapter groups still open: a Ctrl-C never leaves it hanging."""
    import psutil
    bound_s = 0.5
    proc = subprocess.run([sys.executable, "-c", _ENDLESS_STOP, str(harness.REPO), str(bound_s)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 130, (proc.returncode, proc.stderr)
    assert f"the stop took over {bound_s:g} s, which is a bug of the suite" in proc.stderr
    assert "Current thread 0x" in proc.stderr and "most recent call first" in proc.stderr, \
        proc.stderr
    pid = int(proc.stdout.split()[0])
    try:
        left = psutil.Process(pid)
        left.wait(10)   # gone once whoever inherited it reaps it
    except psutil.NoSuchProcess:
        return
    except psutil.TimeoutExpired:
        assert left.status() == psutil.STATUS_ZOMBIE, f"the adapter {pid} outlived the run"


def test_a_stop_signal_landing_in_a_weakref_callback_is_raised_again_not_lost(capfd):
    """A stop signal whose KeyboardInterrupt lands inside a weakref callback
    (the garbage collector runs them at any instant) cannot be raised there:
    Python would print "Exception ignored in ..." and go on, and the run with
    it. The stop path raises it again at the main thread's next instruction,
    prints nothing, and a later signal does nothing more (the stop goes on)."""
    import gc
    import os
    import signal
    import weakref

    from cases.harness import stopping

    previous = stopping.catch()
    raised = []
    try:
        class Thing:
            pass
        thing = Thing()
        # the handler as a signal runs it, inside the callback
        handler = signal.getsignal(signal.SIGINT)
        watched = weakref.ref(thing, lambda ref: handler(signal.SIGINT, None))
        try:
            del thing
            gc.collect()
            for _ in range(10_000_000):     # the signal is taken at the next instruction
                pass
        except KeyboardInterrupt:
            raised.append("again")
        assert watched() is None
        assert stopping.came()
        os.kill(os.getpid(), signal.SIGINT)   # a second signal: recorded, nothing raised
        for _ in range(100_000):
            pass
    finally:
        stopping.restore(previous)   # (and the stop bound, armed by the first, is off)
        stopping.begin()             # this process (pytest's) has no stop recorded
    assert raised == ["again"]
    assert capfd.readouterr().err == ""
