"""Run the suite against an adapter and read its verdicts (shared by the gate tests).

``run_suite(adapter_argv, ...)`` runs ``python3 run --json <tmp> [options] --
<adapter argv>`` in a subprocess (its own session, killed as a group if it
outlives ``timeout_s``) and returns a Verdict: the exit code, the parsed JSON
report and the sets of failed / skipped / warned case ids. Nothing here
interprets a case; the tests compare sets.

The same run can be forked instead, from a server that imported the suite
once (tests/forkserver.py, one per run going on at once, all stopped at the
session's end): the default for the checkout's own ``run`` under this
interpreter; FORGE_GATE_FORK=0 turns it off (tests/test_gate_fork.py proves
both paths give the same verdict).

Adapter argvs for the adapters in tests/: ``reference()``, ``mutant(switch)``,
``script("nonconforming.py")``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[1]
RUN = REPO / "run"
TESTS = REPO / "tests"

# Bound on one whole-suite run. The suite targets < 5 s against the reference;
# a mutant that stalls (FC-043's 4 s gaps) or times a case out (FORGE_DEADLINE_S)
# costs more. Over this, the run is killed and the verdict says so.
RUN_TIMEOUT_S = 240.0


def reference(root: Path = REPO) -> list[str]:
    """The reference as `python3 run` starts it when no adapter is given."""
    return [sys.executable, "-S", str(root / "vendor" / "fs_provider.py")]


def script(name: str, *args: str) -> list[str]:
    """A proxy adapter of tests/; -S (no site: they are stdlib-only) makes each
    of the dozens of spawns per run start in half the time."""
    return [sys.executable, "-S", str(TESTS / name), *args]


def mutant(switch: str) -> list[str]:
    return script("mutant.py", switch)


@dataclass
class Verdict:
    argv: list[str]
    code: int | None                 # exit code of run; None if it was killed at the timeout
    report: dict | None              # the parsed --json report (None if none was written)
    stdout: str
    stderr: str
    wall_s: float
    cases: dict[str, dict] = field(default_factory=dict)   # id -> report entry
    cpu_s: float | None = None       # user + system CPU of the run's reaped process tree
    forked: bool = False             # run through a fork server (tests/forkserver.py)

    def ids(self, outcome: str) -> set[str]:
        return {cid for cid, case in self.cases.items() if case.get("outcome") == outcome}

    @property
    def failed(self) -> set[str]:
        return self.ids("failed")

    @property
    def skipped(self) -> set[str]:
        return self.ids("skipped")

    @property
    def passed(self) -> set[str]:
        return self.ids("passed")

    @property
    def warned(self) -> set[str]:
        return {cid for cid, case in self.cases.items() if case.get("warnings")}

    def message(self, cid: str) -> str:
        return str(self.cases.get(cid, {}).get("message") or "")

    def explain(self, limit: int = 3000) -> str:
        """What a failing self-test prints: the exit code, each non-passing case, the output tail."""
        lines = [f"run {' '.join(self.argv[-3:])}: exit {self.code} in {self.wall_s:.1f}s"]
        for cid in sorted(self.cases):
            case = self.cases[cid]
            if case.get("outcome") != "passed" or case.get("warnings"):
                text = (case.get("message") or "").strip().splitlines()[:3]
                lines.append(f"  {cid} {case.get('outcome')}: {' | '.join(text)[:400]}")
                for warning in case.get("warnings") or []:
                    lines.append(f"      warning: {str(warning)[:200]}")
        if self.report is None:
            lines.append("  (no JSON report)")
        tail = (self.stdout[-limit // 2:] + "\n" + self.stderr[-limit // 2:]).strip()
        if self.code not in (0, 1) and tail:
            lines.append("  output tail:\n" + tail)
        return "\n".join(lines)


def run_suite(adapter: list[str], *, cases: tuple[str, ...] = (), options: tuple[str, ...] = (),
              env: dict[str, str] | None = None, timeout_s: float = RUN_TIMEOUT_S,
              python: str | None = None, root: Path = REPO, jobs: str | None = "1",
              environ: dict[str, str] | None = None, fork: bool | None = None) -> Verdict:
    """Run the whole suite (or ``cases``) against ``adapter`` and parse the report
    (``root``: the checkout whose ``run`` to use; bench.py compares two).
    ``jobs``: --jobs, unless ``options`` say; None leaves the run its default.
    ``env``: the run's whole environment (but TMPDIR and the bytecode pin);
    else ``environ`` (default: this process's, as it is now) and a TMPDIR of
    the run's own. ``fork``: run it through a fork server (below; None: unless
    FORGE_GATE_FORK says not to), which gives the same verdict sooner."""
    with tempfile.TemporaryDirectory(prefix="forge-gate-") as tmp:
        report_path = Path(tmp) / "report.json"
        argv = [python or sys.executable, str(root / "run"), "--json", str(report_path)]
        if jobs is not None and "--jobs" not in options:
            # One process a run: the matrix already runs FORGE_GATE_WORKERS suites
            # at once (tests/test_jobs.py proves the verdicts of --jobs 2 equal these).
            argv += ["--jobs", jobs]
        for cid in cases:
            argv += ["--case", cid]
        argv += [*options, "--", *adapter]
        # A failing run keeps its failing cases' transcripts in a temp folder
        # (for an author, on purpose); here that folder is this run's, so the
        # gates, the matrix and the benchmarks leave none behind.
        base = os.environ if environ is None else environ
        pin = bytecode_env(base)
        env = {**base, **pin, "TMPDIR": tmp} if env is None else {"TMPDIR": tmp, **pin, **env}
        started = time.monotonic()
        # Output goes to files and the run is reaped with wait4, so the verdict
        # carries the CPU time of the run's whole process tree (its adapters
        # and git included), which is what the matrix's cost is made of.
        out_path, err_path = Path(tmp) / "out", Path(tmp) / "err"
        server = _server_for(argv, root, env, fork)
        if server is not None:
            try:
                code, cpu, killed = server.run(argv[2:], env, root, out_path, err_path, timeout_s)
            finally:
                _SERVERS.give_back(server)
        else:
            with open(out_path, "wb") as out_f, open(err_path, "wb") as err_f:
                with _SPAWNING:
                    proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                            stdout=out_f, stderr=err_f, start_new_session=True)
                    _RUNS.add(proc.pid)
                try:
                    code, cpu, killed = _reap(proc, timeout_s)
                finally:
                    _RUNS.discard(proc.pid)
        out = out_path.read_bytes().decode("utf-8", "replace") if out_path.exists() else ""
        err = err_path.read_bytes().decode("utf-8", "replace") if err_path.exists() else ""
        if server is not None and server.broken:
            err += "\n[gate] the fork server ended during the run"
        if killed:
            code = None
            err += f"\n[gate] killed after {timeout_s:.0f} s"
        wall = time.monotonic() - started
        report = None
        if report_path.exists():
            try:
                report = json.loads(report_path.read_text(encoding="utf-8"))
            except ValueError as exc:
                err += f"\n[gate] unreadable JSON report: {exc}"
    verdict = Verdict(argv, code, report, out, err, wall, cpu_s=cpu, forked=server is not None)
    for case in (report or {}).get("cases", []):
        verdict.cases[case.get("id")] = case
    return verdict


def bytecode_env(environ=None) -> dict[str, str]:
    """FORGE_BYTECODE_DIR for the test adapters a run starts: this process's
    bytecode folder. Each spawn gets an XDG_CACHE_HOME of its own from the
    suite, so without it every proxy of the matrix compiled its modules again
    (about 0.1 s of CPU a spawn, 3 s a mutant run)."""
    from cases.kit.invocation import BYTECODE_ENV, bytecode_dir

    where = (os.environ if environ is None else environ).get(BYTECODE_ENV) \
        or sys.pycache_prefix or bytecode_dir()
    return {BYTECODE_ENV: where} if where else {}


def _reap(proc: subprocess.Popen, timeout_s: float) -> tuple[int, float, bool]:
    """Wait for ``proc`` (blocking in wait4, no polling); past ``timeout_s``, or
    if the waiting thread is interrupted, stop its process group. Returns the
    exit code, the CPU seconds of its reaped tree and whether it was killed."""
    def wait() -> tuple[int, float]:
        _pid, status, usage = os.wait4(proc.pid, 0)
        return status, usage.ru_utime + usage.ru_stime

    status, cpu, killed = _watch(proc.pid, wait, timeout_s)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, cpu, killed


def _watch(pid: int, wait: "Callable[[], tuple[int, float]]",
           timeout_s: float) -> tuple[int, float, bool]:
    """``wait()`` for the run ``pid`` (the leader of its own session) to be
    reaped, stopping its group past ``timeout_s`` or when the waiting thread is
    interrupted (then waiting for it all the same). Returns its wait status,
    the CPU seconds of its reaped tree and whether it was stopped."""
    reaped = threading.Event()
    killed = threading.Event()

    def stop():
        if not killed.is_set():
            killed.set()
            _kill_group(pid, reaped)

    timer = threading.Timer(timeout_s, stop)
    timer.daemon = True
    timer.start()
    with _LIVE_LOCK:
        _LIVE[pid] = stop
    try:
        status, cpu = wait()
    except BaseException:
        timer.cancel()
        threading.Thread(target=stop, daemon=True).start()
        wait()
        raise
    finally:
        reaped.set()
        timer.cancel()
        with _LIVE_LOCK:
            _LIVE.pop(pid, None)
    return status, cpu, killed.is_set()


# The suite runs started here and not yet reaped, by pid; _SPAWNING is held
# from a run's fork to its exec, so that a scan holding it sees every process
# of a run as one (own_descendants).
_RUNS: set[int] = set()
_SPAWNING = threading.Lock()


def own_descendants() -> set[int]:
    """The live descendants of this process, less the suite runs started here
    and their trees: what a self-test started itself, while the gate pool's
    runs go on beside it (one reading of every process's parent decides, so
    a run's adapter reparented for an instant is nobody's:
    wire.process.descendants)."""
    from wire.process import descendants
    with _SPAWNING:
        return descendants(os.getpid(), through=set(_RUNS))


# pid -> stop() of every suite run being waited for (a background pool's
# runs are stopped through it when the pytest session ends early)
_LIVE: dict[int, "Callable[[], None]"] = {}
_LIVE_LOCK = threading.Lock()


STOP_GRACE_S = 10.0   # a stopped run's time to stop its adapters and write its report


def _kill_group(pid: int, reaped) -> None:
    """Ctrl-C first (the suite then stops its adapters and writes a partial
    report), then, once ``reaped.wait(STOP_GRACE_S)`` returns, SIGKILL to
    everything left of its tree."""
    import psutil

    try:
        tree = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        tree = []
    try:
        os.killpg(pid, signal.SIGINT)
    except (ProcessLookupError, PermissionError):
        pass
    reaped.wait(STOP_GRACE_S)
    for p in tree:
        try:
            p.kill()
        except psutil.Error:
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


# ---------------------------------------------------------------- the fork path
# A run through tests/forkserver.py: the same `python3 run` argv, environment,
# cwd, output files and session of its own, forked from a process that has
# imported the suite once, instead of a new interpreter importing it again.
FORK_ENV = "FORGE_GATE_FORK"
SERVER = TESTS / "forkserver.py"


def fork_wanted(environ=None) -> bool:
    """FORGE_GATE_FORK=0 (or off, no, false) runs every suite in a subprocess."""
    value = (os.environ if environ is None else environ).get(FORK_ENV, "1")
    return value.strip().lower() not in ("0", "off", "no", "false") and os.name == "posix"


def _interpreter_key(env: dict[str, str]) -> tuple:
    """What an interpreter reads from its environment as it starts (a forked
    run keeps its server's): runs that differ here get a server of their own."""
    return tuple(sorted((k, v) for k, v in env.items()
                        if k.startswith(("PYTHON", "LC_")) or k in ("LANG", "LANGUAGE")))


class _Server:
    """One tests/forkserver.py process: one run at a time."""

    def __init__(self, key: tuple, env: dict[str, str]):
        self.key = key
        with _SPAWNING:
            self.proc = subprocess.Popen([sys.executable, str(SERVER)], cwd=REPO, env=env,
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)
            _RUNS.add(self.proc.pid)   # it and its runs are the gate's, not a test's
        self.broken = self._read() is None   # {"ready": true} once it imported the suite

    def _read(self) -> dict | None:
        line = self.proc.stdout.readline()
        return json.loads(line) if line.endswith(b"\n") else None

    def run(self, args: list[str], env: dict[str, str], cwd: Path, out: Path, err: Path,
            timeout_s: float) -> tuple[int | None, float | None, bool]:
        request = {"argv": args, "env": env, "cwd": str(cwd), "stdout": str(out),
                   "stderr": str(err)}
        with _SPAWNING:
            try:
                self.proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
                self.proc.stdin.flush()
                started = self._read()
            except OSError:
                started = None
        if started is None:
            self.broken = True
            return None, None, False

        def wait() -> tuple[int, float]:
            done = self._read()
            if done is None:   # the server died: its run went with it (PR_SET_PDEATHSIG)
                self.broken = True
                return -1, 0.0
            return done["status"], done["cpu"]

        status, cpu, killed = _watch(started["pid"], wait, timeout_s)
        if status == -1:
            return None, None, killed
        return os.waitstatus_to_exitcode(status), cpu, killed

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()
        _RUNS.discard(self.proc.pid)


class _Servers:
    """The idle fork servers, by interpreter key; one is started when none is idle."""

    def __init__(self):
        self.lock = threading.Lock()
        self.idle: list[_Server] = []

    def take(self, env: dict[str, str]) -> _Server | None:
        key = _interpreter_key(env)
        with self.lock:
            for server in self.idle:
                if server.key == key:
                    self.idle.remove(server)
                    return server
        server = _Server(key, env)
        if server.broken:   # it could not import the suite: the subprocess path says why
            server.close()
            return None
        return server

    def give_back(self, server: _Server) -> None:
        if server.broken:
            server.close()
            return
        with self.lock:
            self.idle.append(server)

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for server in idle:
            server.close()


_SERVERS = _Servers()


def _server_for(argv: list[str], root: Path, env: dict[str, str],
                fork: bool | None) -> _Server | None:
    """A fork server for this run, or None for a subprocess: only the
    checkout's own ``run`` under this interpreter can be forked."""
    if not (fork_wanted() if fork is None else fork) or root != REPO or argv[0] != sys.executable:
        return None
    return _SERVERS.take(env)


def workers() -> int:
    """Suite runs in parallel: FORGE_GATE_WORKERS, else two per core. A run
    against the reference spends about a quarter of its wall time waiting
    (silence windows, deadlines a case waits out, spawns), so one run per core
    leaves the cores idle that long; measured on 2 cores, 12 mutant runs took
    69 s with 2 workers and 54 s with 4. The cases must hold their verdicts on
    a loaded machine anyway (tests/bench.py stress)."""
    try:
        return max(1, int(os.environ["FORGE_GATE_WORKERS"]))
    except (KeyError, ValueError):
        return max(2, 2 * (os.cpu_count() or 1))


class Pool:
    """Suite runs going on in the background: ``jobs`` maps a name to
    run_suite's keyword arguments (``adapter`` included). ``workers()`` at a
    time, plus one thread of its own for each job named in ``sleepy`` (an
    adapter that spends most of a run in deliberate pauses, like the 4 s
    stalls of the nonconforming adapter, would otherwise hold a core's worker
    idle).

    Longest first, by the wall times of the previous session (kept beside the
    fixture cache): a run that waits out timeouts then overlaps the
    CPU-bound ones instead of starting last and leaving one worker alone on
    the tail. Without a history the jobs keep their order.

    Every run gets the environment as it was when the pool started: the
    self-tests running beside it change this process's (a PATH without
    git, a private fixture cache, knobs) for their own subprocesses only."""

    def __init__(self, jobs: dict[str, dict], *, sleepy: tuple[str, ...] = ()):
        from concurrent.futures import ThreadPoolExecutor

        environ = dict(os.environ)
        jobs = {name: {"environ": environ, **kwargs} for name, kwargs in jobs.items()}
        history = _load_history()
        sleepers = [n for n in jobs if n in sleepy]
        rest = sorted((n for n in jobs if n not in sleepy),
                      key=lambda n: -history.get(n, {}).get("wall_s", 0.0))
        self.closing = threading.Event()
        self.busy = ThreadPoolExecutor(max_workers=workers())
        self.sleeping = ThreadPoolExecutor(max_workers=max(1, len(sleepers)))
        self.futures = {name: self.sleeping.submit(self._run, jobs[name]) for name in sleepers}
        self.futures.update({name: self.busy.submit(self._run, jobs[name]) for name in rest})
        self.closed = False

    def _run(self, kwargs: dict) -> Verdict:
        if self.closing.is_set():     # taken from the queue as the pool was being closed
            return Verdict([], None, None, "", "[gate] not started: the pool was closed", 0.0)
        return run_suite(**kwargs)

    def result(self, name: str) -> Verdict:
        return self.futures[name].result()

    def close(self) -> None:
        """Runs not started are dropped, runs still going are stopped (Ctrl-C,
        then SIGKILL to their trees); the wall times of the finished ones
        are kept for the next session's order."""
        if self.closed:
            return
        self.closed = True
        self.closing.set()
        for pool in (self.busy, self.sleeping):
            pool.shutdown(wait=False, cancel_futures=True)
        if not all(f.done() for f in self.futures.values()):
            stop_running()
        for pool in (self.busy, self.sleeping):
            pool.shutdown(wait=True)
        _save_history({n: f.result() for n, f in self.futures.items()
                       if f.done() and not f.cancelled() and f.exception() is None})


def stop_running() -> None:
    """Stop every suite run being waited for (each its own way: _reap's stop)."""
    with _LIVE_LOCK:
        stops = list(_LIVE.values())
    threads = [threading.Thread(target=stop, daemon=True) for stop in stops]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def run_many(jobs: dict[str, dict], *, sleepy: tuple[str, ...] = ()) -> dict[str, Verdict]:
    """Run several suites in parallel (a Pool) and wait for every verdict."""
    pool = Pool(jobs, sleepy=sleepy)
    try:
        return {name: pool.result(name) for name in jobs}
    finally:
        pool.close()


HISTORY_FILE = "gate-times.json"


def _history_path() -> Path | None:
    from fixture.cache import cache_dir
    where = cache_dir()
    return where.parent / HISTORY_FILE if where is not None else None


def _load_history() -> dict:
    """{job name: {"wall_s", "cpu_s"}} of earlier sessions; {} when there is none
    or it is unreadable (it only orders the jobs, so it is never an error)."""
    path = _history_path()
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) and all(isinstance(v, dict) for v in data.values()) else {}


def _save_history(verdicts: dict[str, Verdict]) -> None:
    path = _history_path()
    if path is None:
        return
    history = _load_history()
    history.update({name: {"wall_s": round(v.wall_s, 2), "cpu_s": round(v.cpu_s or 0.0, 2)}
                    for name, v in verdicts.items() if v.code is not None})
    try:
        fd, tmp = tempfile.mkstemp(prefix=".gate-times-", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(history, fh, sort_keys=True)
        os.replace(tmp, path)     # concurrent sessions: the last whole file wins
    except OSError:
        pass


# ---------------------------------------------------------------- one pool per pytest session
# The gate tests of several modules (mutants, controls, gate, capability
# gating, jobs) each need a few dozen suite runs. Run separately, every
# module ends on a tail where one worker waits for the last long run; so each
# module declares its jobs with plan(), and once collection is over (start(),
# from tests/conftest.py) the jobs of every selected gate test start in one
# pool in the background (sleepy ones beside it). The other self-tests run
# meanwhile: most of their wall time is waiting (deadlines, grace periods,
# interrupts, builds), which the pool's runs now fill; the planning modules
# run last (order()), each taking its verdicts as they are ready.

_PLANS: dict[str, tuple] = {}
_DONE: dict[str, Verdict] = {}
_BACKGROUND: list[Pool] = []


def plan(module: str, jobs, *, sleepy: tuple[str, ...] = ()) -> None:
    """Declare a module's jobs: ``jobs(items)`` gets the module's selected
    pytest items and returns {job name: run_suite kwargs}; names are global,
    so prefix them with something module-specific. ``sleepy``: see Pool."""
    _PLANS[module] = (jobs, sleepy)


def _module_of(item) -> str | None:
    return getattr(getattr(item, "module", None), "__name__", None)


def _planned(items) -> tuple[dict[str, dict], tuple[str, ...]]:
    """The jobs (not yet done) that the selected ``items`` of planning modules need."""
    by_module: dict[str, list] = {}
    for item in items:
        module = _module_of(item)
        if module in _PLANS:
            by_module.setdefault(module, []).append(item)
    jobs: dict[str, dict] = {}
    sleepy: list[str] = []
    for module, selected in by_module.items():
        make, module_sleepy = _PLANS[module]
        jobs.update({k: v for k, v in make(selected).items() if k not in _DONE})
        sleepy += module_sleepy
    return jobs, tuple(sleepy)


def order(items) -> list:
    """The session's items with those of planning modules last (stable): they
    wait for the pool, the others need not."""
    return sorted(items, key=lambda item: _module_of(item) in _PLANS)


def start(items) -> None:
    """Start the jobs of every selected gate test in the background."""
    jobs, sleepy = _planned(items)
    if jobs and not _BACKGROUND:
        _BACKGROUND.append(Pool(jobs, sleepy=sleepy))


def finish() -> None:
    """At the session's end: stop what no test took (a -x stop, an interrupt),
    and the fork servers."""
    while _BACKGROUND:
        _BACKGROUND.pop().close()
    _SERVERS.close()


def verdicts(request, names) -> dict[str, Verdict]:
    """The verdicts of ``names`` (jobs planned by some module): from the
    background pool when start() ran, else every job the session's selected
    items need runs now, in one pool."""
    for pool in _BACKGROUND:
        for n in names:
            if n not in _DONE and n in pool.futures:
                _DONE[n] = pool.result(n)
    missing = [n for n in names if n not in _DONE]
    if missing:
        jobs, sleepy = _planned(request.session.items)
        unplanned = [n for n in missing if n not in jobs]
        assert not unplanned, f"no module planned the gate jobs {unplanned}"
        _DONE.update(run_many(jobs, sleepy=sleepy))
    return {n: _DONE[n] for n in names}


def selected_params(items, name: str) -> list:
    """The values a parametrized argument takes among the selected items."""
    out = []
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and name in callspec.params and callspec.params[name] not in out:
            out.append(callspec.params[name])
    return out
