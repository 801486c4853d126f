"""Test side of the hostile adapters: run the whole suite (``python3 run``) as
a subprocess against one of them and observe it from outside.

``run_suite`` starts the suite in a session of its own (so a Ctrl-C can be
sent the way a terminal sends it: to the suite's process group, never to the
adapter, which lives in a session the suite made for it), with a unique
marker on the adapter's command line, and bounds it by a timeout; it then
collects what the tests assert on:

- exit code, stdout, stderr, wall time, the parsed --json report;
- the peak memory of the suite: the resident size of every process in the
  suite's session (the suite and what it runs itself, such as git for the
  fixture; never the adapter, which is in its own session), summed, sampled
  every SAMPLE_S by a thread;
- leftovers: what the suite left in its temp area (FORGE_TMPDIR is pointed
  at a private folder, in RAM-backed /dev/shm like the suite's default);
- survivors: processes carrying the marker (command line, or the
  FORGE_HOSTILE_MARK variable the hostile programs export) once the suite has
  exited, after waiting up to LEAK_WAIT_S for them to go. They are killed
  afterwards, so a failing test leaks nothing either.

The bound a run must end within is ``bound_s`` (see tests/test_hostile.py for
the formula); a suite still running then is killed and reported as such.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from cases import registry
from wire.process import KILL_DEADLINE_S, STOP_GRACE_S, TERM_GRACE_S

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "run"
HOSTILE = Path(__file__).resolve().parent
FIXTURE = REPO / "fixture"
MARK_VAR = "FORGE_HOSTILE_MARK"
TRACEBACK = "Traceback (most recent call last)"

SAMPLE_S = 0.05     # memory sampling period (a measurement, not a synchronisation)
LEAK_WAIT_S = 3.0   # how long a dying process of the tree may take to disappear

# --- the bound (documented in tests/test_hostile.py) -------------------------
STARTUP_S = 20.0    # T0: interpreters, pytest collection, materialize, report
STOP_S = STOP_GRACE_S + TERM_GRACE_S + KILL_DEADLINE_S   # S: one Child.stop(), worst case
SPAWN_S = 1.0       # process start-up before initialize is sent
WAITS_PER_CASE = 2  # k: deadline-long waits one case may spend


def case_groups(cases: list[str]) -> int:
    """Number of case groups a selection touches (every group for the matrix)."""
    if not cases:
        return len(registry.GROUPS)
    return len({registry.by_id(c).group for c in cases})


def bound_s(deadline_s: float, n_cases: int, n_groups: int, *, preflight_only=False) -> float:
    """T0 + P·(1 + G) + n·(k·D + P), with P = SPAWN_S + D + S (start, handshake,
    stop); T0 + P for a run that ends at the pre-flight."""
    per_process = SPAWN_S + deadline_s + STOP_S
    if preflight_only:
        return STARTUP_S + per_process
    return (STARTUP_S + per_process * (1 + n_groups)
            + n_cases * (WAITS_PER_CASE * deadline_s + per_process))


def fixture_digest(root: Path = FIXTURE) -> str:
    """Hash of every path, type and byte under the repo's fixture/ (bytecode
    caches excluded: importing the fixture package may write them)."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        rel = os.path.relpath(dirpath, root)
        h.update(b"D\0" + rel.encode("utf-8", "surrogateescape") + b"\0")
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            h.update(b"F\0" + os.path.join(rel, name).encode("utf-8", "surrogateescape") + b"\0")
            if os.path.islink(path):
                h.update(b"L\0" + os.readlink(path).encode("utf-8", "surrogateescape"))
            else:
                with open(path, "rb") as f:
                    h.update(hashlib.sha256(f.read()).digest())
                h.update(b"X" if os.access(path, os.X_OK) else b"-")
    return h.hexdigest()


@dataclass
class SuiteRun:
    name: str
    argv: list[str]
    bound_s: float
    returncode: int | None = None
    stdout: str = ""
    stderr: str = ""
    wall_s: float = 0.0
    ended_at: float = 0.0        # time.monotonic() when the suite had exited
    timed_out: bool = False
    report: dict | None = None
    report_error: str | None = None
    peak_rss: int = 0
    survivors: list[str] = field(default_factory=list)
    workdir: Path | None = None
    fixture_changed: bool = False
    leftovers: list[str] = field(default_factory=list)
    transcripts: Path | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def cases(self) -> dict[str, dict]:
        return {c["id"]: c for c in (self.report or {}).get("cases", [])}

    def with_outcome(self, outcome: str) -> dict[str, dict]:
        return {k: c for k, c in self.cases().items() if c.get("outcome") == outcome}

    def describe(self) -> str:
        """What a failed assertion shows about the run."""
        lines = [f"{self.name}: exit {self.returncode} after {self.wall_s:.1f}s "
                 f"(bound {self.bound_s:.0f}s){' TIMED OUT' if self.timed_out else ''}",
                 f"argv: {' '.join(self.argv)}"]
        for cid, c in self.cases().items():
            if c.get("outcome") != "passed":
                lines.append(f"  {cid} {c.get('outcome')}: {(c.get('message') or '')[:300]}")
        lines.append("--- stdout (tail)\n" + self.stdout[-3000:])
        lines.append("--- stderr (tail)\n" + self.stderr[-3000:])
        return "\n".join(lines)


def marked(marker: str) -> list[psutil.Process]:
    """Every process (not this one) whose command line or FORGE_HOSTILE_MARK
    carries ``marker``."""
    found = []
    me = os.getpid()
    for proc in psutil.process_iter(["cmdline"], ad_value=None):
        if proc.pid == me:
            continue
        cmdline = proc.info.get("cmdline") or []
        hit = any(marker in part for part in cmdline)
        if not hit:
            try:
                hit = proc.environ().get(MARK_VAR) == marker
            except psutil.Error:
                hit = False
        if hit:
            found.append(proc)
    return found


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def survivors(marker: str, wait_s: float = LEAK_WAIT_S) -> list[psutil.Process]:
    """Processes carrying ``marker`` still alive after up to ``wait_s``."""
    procs = [p for p in marked(marker) if _alive(p)]
    if procs:
        _, procs = psutil.wait_procs(procs, timeout=wait_s)
    return [p for p in procs if _alive(p)]


def kill_all(procs: list[psutil.Process]) -> None:
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(procs, timeout=KILL_DEADLINE_S)


def _describe(proc: psutil.Process) -> str:
    try:
        return f"pid {proc.pid} {proc.status()}: {' '.join(proc.cmdline())[:200]}"
    except psutil.Error:
        return f"pid {proc.pid} (gone)"


class _MemorySampler(threading.Thread):
    """Peak of the summed RSS of the processes in one session."""

    def __init__(self, leader: int):
        super().__init__(daemon=True)
        self.leader = leader
        self.peak = 0
        self.stop = threading.Event()

    def _session(self) -> list[psutil.Process]:
        try:
            root = psutil.Process(self.leader)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            return []
        mine = []
        for proc in procs:
            try:
                if os.getsid(proc.pid) == self.leader:
                    mine.append(proc)
            except OSError:
                pass
        return mine

    def run(self) -> None:
        while not self.stop.is_set():
            total = 0
            for proc in self._session():
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self.stop.wait(SAMPLE_S)


def _shm() -> str | None:
    return "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None


def suite_env(deadline_s: float, inactivity_s: float, extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("FORGE_PROVIDER", "PROVIDER", "FORGE_FIXTURE_ROOT")}
    env.update({"FORGE_DEADLINE_S": str(deadline_s), "FORGE_INACTIVITY_S": str(inactivity_s),
                "PYTHONDONTWRITEBYTECODE": "1"})
    env.update(extra or {})
    return env


def hostile_argv(program: str, marker: str, **opts: str) -> list[str]:
    return [sys.executable, str(HOSTILE / program), f"--mark={marker}",
            *(f"--{k}={v}" for k, v in opts.items())]


def run_suite(name: str, program: str, *, cases: tuple[str, ...] = (), deadline_s: float = 2,
              inactivity_s: float = 1, opts: dict | None = None,
              preflight_only: bool = False, transcripts: bool = False, on_started=None,
              workdir: Path | None = None) -> SuiteRun:
    """Run ``python3 run --json ... [--case ...] -- <hostile program>`` to its end.

    ``opts`` become ``--name=value`` options of the program; the value
    ``{state}`` is replaced by a private state directory. ``on_started(popen,
    run)`` runs in the calling thread once the suite is started (the Ctrl-C
    test interrupts it from there)."""
    workdir = Path(workdir or tempfile.mkdtemp(prefix=f"hostile-{name}-"))
    state = workdir / "state"
    state.mkdir(exist_ok=True)
    marker = f"hostile-{name}-{uuid.uuid4().hex}"
    opts = {k: v.replace("{state}", str(state)) for k, v in (opts or {}).items()}
    report_path = workdir / "report.json"
    # one process: these runs judge what one adapter process does, in run order
    argv = [sys.executable, str(RUN), "--json", str(report_path), "--jobs", "1"]
    if transcripts:
        argv += ["--transcripts", str(workdir / "transcripts")]
    for cid in cases:
        argv += ["--case", cid]
    argv += ["--", *hostile_argv(program, marker, **opts)]
    limit = bound_s(deadline_s, len(cases) or len(registry.REGISTRY), case_groups(list(cases)),
                    preflight_only=preflight_only)
    run = SuiteRun(name=name, argv=argv, bound_s=limit, workdir=workdir,
                   transcripts=workdir / "transcripts" if transcripts else None)
    temp_area = Path(tempfile.mkdtemp(prefix=f"hostile-{name}-", dir=_shm()))

    out_path, err_path = workdir / "stdout.txt", workdir / "stderr.txt"
    started = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        env = suite_env(deadline_s, inactivity_s, {"FORGE_TMPDIR": str(temp_area)})
        popen = subprocess.Popen(argv, cwd=REPO, env=env,
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 start_new_session=True)
    sampler = _MemorySampler(popen.pid)
    sampler.start()
    try:
        if on_started is not None:
            on_started(popen, run)
        try:
            run.returncode = popen.wait(timeout=max(0.0, limit - (time.monotonic() - started)))
        except subprocess.TimeoutExpired:
            run.timed_out = True
            try:
                os.killpg(popen.pid, signal.SIGKILL)
            except OSError:
                pass
            run.returncode = popen.wait()
    finally:
        run.ended_at = time.monotonic()
        run.wall_s = run.ended_at - started
        sampler.stop.set()
        sampler.join()
        if popen.poll() is None:    # on_started raised: never leave the suite behind
            os.killpg(popen.pid, signal.SIGKILL)
            popen.wait()
        left = survivors(marker)
        run.survivors = [_describe(p) for p in left]
        kill_all(left)
        run.leftovers = sorted(os.listdir(temp_area))
        shutil.rmtree(temp_area, ignore_errors=True)
    run.peak_rss = sampler.peak
    run.stdout = out_path.read_text(errors="backslashreplace")
    run.stderr = err_path.read_text(errors="backslashreplace")
    if report_path.exists():
        try:
            run.report = json.loads(report_path.read_text())
        except ValueError as exc:
            run.report_error = f"the JSON report does not parse: {exc}"
    else:
        run.report_error = "no JSON report was written"
    return run
