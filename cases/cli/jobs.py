"""A run in several processes, the parent's side: ``--jobs N`` (cases/cli/command.py).

The selected case groups are shared out among N worker processes as they
go (cases/harness/worker.py is the worker's side: its test loop, the claims, its
part): worker k takes the k-th group of ``queue`` first, then whoever is free
takes the next group nobody took (so an adapter whose time goes elsewhere
than the reference's still keeps every worker busy to the end). Each has its
own group adapters and spawns, its own fixture copy, its own end-of-group
windows, and the Settings the command line built (one parse a process: the
workers are forked). It writes no report: it hands the parent its part (the
results of its cases, what the protocol monitor found, its notes). The parent
then ends the run as one process does (cases/harness/finish.py): the findings of all
workers go to the cases that own their rules (an owner may have run in
another worker; findings are judged only after the last case, so no verdict
depends on where or when a case ran), then the one report and the summary.
So the verdicts of ``--jobs 2`` are those of ``--jobs 1``; only the wall
time differs, because independent groups need not wait for each other's
silence windows, respawns and deadlines.

The workers are forked from the parent once it imported pytest and the
harness (imported once, not once per worker); the pre-flight runs once, in
the parent, while they collect and materialize their copies; they run
nothing until it passed, and end without a word when it failed.

Output: the first worker's lines are shown as they come; each other
worker's are kept and shown after it, in order, so lines never interleave.

Stop: a stop signal reaches every worker (a terminal's Ctrl-C goes to the
whole process group; the parent passes on one it got alone). Each worker
stops its adapters and hands over what ran; the parent reports that, the
rest marked "not run (interrupted)", and exits 130 (cases/harness/stopping.py).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile
import time
from pathlib import Path

from cases.harness import finish, stopping
from cases.report import writers as report
from cases.kit.exits import EXIT_CANNOT_RUN, EXIT_INTERRUPTED, UsageError, say
from cases.harness.session import TAILED_GROUPS, GivenSettings
from cases.harness.worker import PART, Job


# Rough seconds of each group against the reference with --jobs 2 (tests/
# bench.py suite prints the split): only for the order in which the workers
# take the groups (queue); a wrong figure costs wall time, never a verdict.
GROUP_WEIGHT = {"lifecycle": 1.5, "transport": 1.0, "revisions": 0.85, "content_ids": 0.77,
                "search": 0.7, "streaming": 0.55, "commits": 0.5, "trees": 0.5,
                "roundtrips": 0.3, "handshake": 0.23, "errors": 0.22, "listings": 0.2,
                "bounded": 0.16, "icons": 0.11}
DEFAULT_WEIGHT = 0.5


def wanted(option: int | None) -> int:
    """How many processes: --jobs, else FORGE_JOBS, else one more than the
    cores (at most 4) on a machine of 2 cores or more, else 1. One more than
    the cores: while a worker waits (a silence window, a respawn, a
    deadline), the others keep the cores busy."""
    if option is not None:
        return option
    text = os.environ.get("FORGE_JOBS", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise UsageError(f"FORGE_JOBS wants a whole number of at least 1, not {text!r}")
        return int(text)
    cores = os.cpu_count() or 1
    return 1 if cores < 2 else min(cores + 1, 4)


def _group(module: str) -> str:
    return Path(module).stem.removeprefix("test_")


def queue(modules: list[str]) -> list[str]:
    """The order in which the workers take ``modules`` (groups): the groups
    whose adapter is watched for TAIL_S at its end (harness.TAILED_GROUPS: they
    stream or notify) first, so those windows pass while the quiet groups
    run instead of being waited out at the end; then the others; each part
    heaviest first, so the last groups taken are the short ones and the
    workers end close together. Worker k takes the k-th group first, then
    each takes the next one not taken when it is free (see _claims): a slow
    group, or an adapter whose time goes elsewhere than the reference's,
    never leaves one worker idle while the other has several groups to go.
    (One process keeps harness.run_order; nothing but the wall time depends on
    the order.)"""
    index = {m: i for i, m in enumerate(modules)}
    return sorted(modules, key=lambda m: (_group(m) not in TAILED_GROUPS,
                                          -GROUP_WEIGHT.get(_group(m), DEFAULT_WEIGHT), index[m]))


def count(modules: list[str], option: int | None) -> int:
    """How many workers a run of ``modules`` gets (1: no workers, one process)."""
    return max(1, min(wanted(option), len(modules)))


# ------------------------------------------------------------------ the worker

def worker_main(job: dict) -> int:
    """A worker process: its pytest words, with the parent's Settings and its Job."""
    from cases.harness import plugin
    previous = stopping.catch()
    signal.pthread_sigmask(signal.SIG_SETMASK, job["mask"])   # held back across the fork
    _stop_with_parent(job["parent"])
    try:
        return plugin.run_pytest(job["pargs"], [GivenSettings(job["settings"]), Job(job)])
    except KeyboardInterrupt:   # before pytest took over: nothing ran here
        return EXIT_INTERRUPTED
    finally:
        stopping.restore(previous)
        if os.getppid() != job["parent"]:
            # The parent was killed (no handler of its ran): nobody else will
            # remove its temp area.
            import shutil
            shutil.rmtree(job["temp"], ignore_errors=True)


def _forked(job: dict, outs: list, go_ends: list[int]) -> None:
    """The child side of os.fork(): become worker ``job`` and never return
    (os._exit: the parent's stack it was forked from, run_suite and its
    cleanups, is not the worker's to unwind)."""
    code = 70   # EX_SOFTWARE: the worker itself broke (its traceback is on stderr)
    try:
        for fd in go_ends:   # only the parent writes to the go-ahead pipes
            os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        if outs:
            os.dup2(outs[0].fileno(), 1)
            os.dup2(outs[1].fileno(), 2)
        code = worker_main(job)
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


class _Child:
    """A forked worker, as much of subprocess.Popen as the parent uses."""

    def __init__(self, pid: int):
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            self._reap(os.WNOHANG)
        return self.returncode

    def wait(self) -> int:
        while self.returncode is None:
            self._reap(0)
        return self.returncode

    def _reap(self, flags: int) -> None:
        try:
            pid, status = os.waitpid(self.pid, flags)
        except ChildProcessError:   # reaped already (cannot happen here; never hang on it)
            self.returncode = -1
            return
        if pid:
            self.returncode = os.waitstatus_to_exitcode(status)

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)


def _stop_with_parent(parent: int) -> None:
    """A parent that dies without a word (SIGKILL) sends this worker SIGTERM,
    which stops it like a Ctrl-C (Linux; elsewhere the worker runs on to its end)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:   # it died before the line above
        os.kill(os.getpid(), signal.SIGTERM)


# ------------------------------------------------------------------ the parent

class Workers:
    """The worker processes of a run, started before the pre-flight: forked
    from the parent once it imported pytest and the harness (so that is done
    once, not once per worker), they collect and make their fixture copies
    while it runs, and start on their groups once ``go()`` says it passed.
    Until then ``abandon()`` (the pre-flight failed, or a stop) lets them end
    without a word and waits for them. (The parent has no thread of its own
    yet when it forks: the stop bound's watch starts only with a stop.)"""

    def __init__(self, args, settings, selected: list[str], modules: list[str],
                 n: int, temp: Path):
        from cases.harness import plugin  # (imported here, once, for every worker)
        import threading
        if threading.active_count() != 1:   # a fork would copy a lock another thread holds
            raise RuntimeError(f"a suite bug: {threading.active_count() - 1} thread(s) running "
                               f"in the parent before its workers are forked")
        from cases.report.known_failures import KnownFailuresError, Policy
        try:
            self.policy = Policy.load(args.known_failures, args.strict)
        except KnownFailuresError as exc:
            raise UsageError(str(exc)) from None
        self.settings = settings
        settings.rerun_options = ["--strict"] if self.policy.strict else []
        self.kept = Path(tempfile.mkdtemp(prefix="forge-transcripts-"))
        stopping.LEFTOVERS.add(lambda: _remove_if_empty(self.kept))
        self.started = time.monotonic()
        self.procs: list[tuple[_Child, Path, list]] = []
        self._go: list[int] = []
        order = queue(modules)
        claims = temp / "claims"
        claims.write_text(str(n), encoding="ascii")
        pargs = plugin.command_line(args, selected, order, None) + [
            "--forge-kept-dir", str(self.kept), "-o", "console_output_style=classic"]
        try:
            for k in range(n):
                self._start(k, temp, pargs, order, claims)
        except BaseException:
            self.abandon()
            raise

    def _start(self, k: int, temp: Path, pargs: list[str], order: list[str], claims: Path):
        """Fork worker k, with the read end of its go-ahead pipe. The stop
        signals are held back across the fork: one that comes meanwhile lands
        once the worker is known (so ``abandon`` waits for it), and in the
        worker once its own handlers are in."""
        part = temp / PART.format(k)
        read_end, write_end = os.pipe()
        self._go.append(write_end)
        try:
            outs = [] if k == 0 else [open(temp / f"worker-{k}.{s}", "w+b")
                                      for s in ("out", "err")]
            sys.stdout.flush()   # (what is buffered now would be written twice)
            sys.stderr.flush()
            held = signal.pthread_sigmask(signal.SIG_BLOCK, stopping.STOP_SIGNALS)
            try:
                job = {"pargs": pargs + ["--forge-worker-out", str(part)],
                       "parent": os.getpid(), "queue": order, "index": k,
                       "claims": str(claims), "go": read_end, "temp": str(temp),
                       "settings": self.settings, "mask": held}
                pid = os.fork()
                if pid == 0:
                    _forked(job, outs, self._go)
                self.procs.append((_Child(pid), part, outs))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, held)
        finally:
            os.close(read_end)

    def go(self) -> None:
        """The pre-flight passed: every worker starts on its groups."""
        for fd in self._go:
            try:
                os.write(fd, b"g")
            except OSError:   # that worker is gone already (its missing part says so)
                pass
        self._close_go()

    def abandon(self) -> None:
        """No run after all: the workers that are still waiting end; all are waited for."""
        self._close_go()
        for proc, _, outs in self.procs:
            proc.wait()
            for f in outs:
                f.close()
        self.procs.clear()

    def _close_go(self) -> None:
        while self._go:
            os.close(self._go.pop())


def run_parallel(args, selected: list[str], workers: Workers, watch,
                 meanwhile=None) -> int:
    """Let ``workers`` go, call ``meanwhile()`` while they run, wait for them;
    end the run on what they handed over (cases/harness/finish.py). ``watch`` gets the
    report (the CLI's stop path reads it there)."""
    procs = workers.procs
    settings = workers.settings
    interrupted = False
    try:
        workers.go()
        if meanwhile is not None:
            meanwhile()
        for proc, _, _ in procs:
            proc.wait()
    except KeyboardInterrupt:
        interrupted = True
        for proc, _, _ in procs:   # (a terminal's Ctrl-C reached them already; once is enough)
            if proc.poll() is None:
                try:
                    proc.send_signal(signal.SIGINT)
                except OSError:
                    pass
        for proc, _, _ in procs:   # each stops its own trees (bounded; stopping.STOP_BOUND_S)
            proc.wait()
    for _, _, outs in procs:       # the others' output, after the first's, in order
        for f, stream in zip(outs, (sys.stdout, sys.stderr)):
            f.seek(0)
            stream.flush()
            os.write(stream.fileno(), f.read())
            f.close()
    end = finish.Ending(results={}, settings=settings, policy=workers.policy,
                        selected=selected, collected=[], started=workers.started,
                        interrupted=interrupted)
    collected, lost = set(), []
    for k, (proc, part, _) in enumerate(procs):
        try:
            with open(part, "rb") as f:
                got = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            lost.append(f"worker {k + 1} (exit {proc.returncode})")
            continue
        end.results.update(got["results"])
        end.seen += got["seen"]
        end.notes += got["notes"]
        collected.update(got["collected"])
        end.deselected.update(got["deselected"])
        end.interrupted = end.interrupted or got["interrupted"]
    end.collected = sorted(collected)
    if lost and not end.interrupted:
        say(f"the suite could not run: {', '.join(lost)} ended without its results "
            f"(see above)")
        return EXIT_CANNOT_RUN
    broken = [f"worker {k + 1} (pytest exit {proc.returncode})"
              for k, (proc, _, _) in enumerate(procs) if proc.returncode not in (0, 1, 5)]
    if broken and not end.interrupted:   # 5: its selected cases are unimplemented (skipped)
        say(f"the suite could not run: {', '.join(broken)}: a case module failed to "
            f"import, or a suite error (see above)")
        return EXIT_CANNOT_RUN
    if lost:   # stopped before its cases ran (or before it could hand them over)
        end.notes.append(f"interrupted: {', '.join(lost)} handed over no results")
    rep = watch.report = finish.conclude(end, json_path=args.json, junit_path=args.junit,
                                         html_path=args.html)
    shown_kept = workers.kept if any(workers.kept.iterdir()) else None
    print("=" * 28 + " forge-conformance " + "=" * 28)
    for line in report.summary_block(rep, shown_kept, args.transcripts, end.notes,
                                     verbose=args.verbose > 0):
        print(line)
    return finish.verdict(rep, interrupted=end.interrupted, counted_by_pytest=False)


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:   # it holds a failing case's transcript (named in the summary), or is gone
        pass
