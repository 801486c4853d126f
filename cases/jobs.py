"""A run in several processes: ``--jobs N`` (cases/cli.py).

The selected case groups are shared out among N worker processes. A worker
is pytest with the plugin over its groups, exactly as a run of those groups
alone: its own group adapters and spawns, its own fixture copy (its harness
materializes one), its own end-of-group windows. It writes no report:
at its end it hands the parent, through a file in the run's temp area, the
results of its cases, everything the protocol monitor found on its
processes (not judged yet) and its notes. The parent then hands the
findings of all workers to the cases that own their rules (an owner may
have run in another worker; as in one process, findings are judged only
after the last case, so no verdict depends on where or when a case ran),
builds the one report (JSON, JUnit, HTML, known failures, --strict) and
prints the summary. So the verdicts of ``--jobs 2`` are those of
``--jobs 1``; only the wall time differs, because independent groups need
not wait for each other's silence windows, respawns and deadlines.

The pre-flight runs once, in the parent, before any worker starts.

Output: the first worker's lines are shown as they come; each other
worker's are kept and shown after it, in order, so lines never interleave.

Stop: a stop signal reaches every worker (a terminal's Ctrl-C goes to the
whole process group; the parent passes on one it got alone). Each worker
stops its adapters and hands over what ran; the parent reports that, the
rest marked "not run (interrupted)", and exits 130.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cases import invocation, registry

# Rough seconds of each group against the reference (tests/bench.py suite
# prints the split): only for sharing the groups out evenly; a wrong figure
# costs wall time, never a verdict.
GROUP_WEIGHT = {"lifecycle": 1.35, "transport": 1.0, "content_ids": 0.95, "revisions": 0.65,
                "commits": 0.5, "trees": 0.45, "search": 0.45, "streaming": 0.4,
                "handshake": 0.3, "roundtrips": 0.25, "errors": 0.2, "listings": 0.2,
                "bounded": 0.15, "icons": 0.06}
DEFAULT_WEIGHT = 0.5
PART = "worker-{}.part"

# The worker's first statements: put the checkout (or nothing, when
# installed) on sys.path, make Ctrl-C quiet, keep bytecode, hand over.
_BOOT = """\
import importlib, sys
root, package, job = sys.argv[1:4]
if root:
    sys.path.insert(0, root)
invocation = importlib.import_module(package + ".invocation")
invocation.quiet_interrupts()
invocation.keep_bytecode()
sys.exit(importlib.import_module(package + ".jobs").worker_main(job))
"""


def wanted(option: int | None) -> int:
    """How many processes: --jobs, else 2 on a machine of 2 cores or more."""
    if option is not None:
        return option
    return 2 if (os.cpu_count() or 1) >= 2 else 1


def _group(module: str) -> str:
    return Path(module).stem.removeprefix("test_")


def plan(modules: list[str], jobs: int) -> list[list[str]]:
    """``modules`` (in run order) shared out among at most ``jobs`` buckets,
    heaviest first to the lightest bucket. In a bucket the groups whose
    adapter is watched for TAIL_S at its end (cli.TAILED_GROUPS: they stream
    or notify) come first, then the others in run order, so those windows
    pass while the quiet groups run instead of being waited out at the end.
    (One process keeps cli's run order; nothing but the wall time depends on
    the order.)"""
    jobs = max(1, min(jobs, len(modules)))
    if jobs == 1:
        return [list(modules)]
    buckets: list[list[str]] = [[] for _ in range(jobs)]
    load = [0.0] * jobs
    for m in sorted(modules, key=lambda m: -GROUP_WEIGHT.get(_group(m), DEFAULT_WEIGHT)):
        k = load.index(min(load))
        buckets[k].append(m)
        load[k] += GROUP_WEIGHT.get(_group(m), DEFAULT_WEIGHT)
    from cases.cli import TAILED_GROUPS
    order = {m: (_group(m) not in TAILED_GROUPS, i) for i, m in enumerate(modules)}
    return [sorted(b, key=order.__getitem__) for b in buckets if b]


# ------------------------------------------------------------------ the worker

def worker_main(job_path: str) -> int:
    """A worker process: run its pytest command line; the plugin writes its part."""
    from cases import cli, plugin
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    invocation.set_launcher(job["launcher"])   # the rerun lines name the user's command
    sys.argv[0] = job["argv0"]
    previous = cli._catch_stop_signals()
    _stop_with_parent(job["parent"])
    try:
        import pytest
        with cli.no_plugin_autoload():
            return int(pytest.main(job["pargs"], plugins=[plugin]))
    except KeyboardInterrupt:   # before pytest took over: nothing ran here
        return cli.EXIT_INTERRUPTED
    finally:
        cli._restore(previous)
        if os.getppid() != job["parent"]:
            # The parent was killed (no handler of its ran): nobody else will
            # remove its temp area, where this job file lives.
            import shutil
            shutil.rmtree(Path(job_path).parent, ignore_errors=True)


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


def write_part(h) -> None:
    """What a worker's harness hands its parent (called at its session's end)."""
    part = {"results": h.results, "seen": h.seen, "notes": h.notes,
            "collected": h.collected, "interrupted": h.interrupted}
    path = Path(h.worker_out)
    tmp = path.with_suffix(".tmp")
    try:
        with open(tmp, "wb") as f:
            pickle.dump(part, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)   # whole or not at all
    except OSError:   # the parent is gone, and its temp area with it: nobody to hand it to
        pass


# ------------------------------------------------------------------ the parent

def _worker_command(job: Path) -> list[str]:
    package = __spec__.parent if __spec__ is not None else "cases"
    root = "" if invocation.installed() else str(Path(__file__).resolve().parent.parent)
    return [sys.executable, "-c", _BOOT, root, package, str(job)]


def run_parallel(args, adapter: list[str], selected: list[str], buckets: list[list[str]],
                 settings, temp: Path, watch) -> int:
    """Run ``buckets`` (lists of case modules) in one worker each; merge, judge,
    report. ``watch`` gets the report (cli's exit code logic reads it there)."""
    from cases import cli, plugin, report
    from cases.monitoring import apply_findings
    from cases.known_failures import KnownFailuresError, Policy
    try:
        policy = Policy.load(args.known_failures, args.strict)
    except KnownFailuresError as exc:
        raise cli.UsageError(str(exc)) from None
    settings.rerun_options = ["--strict"] if policy.strict else []
    kept = Path(tempfile.mkdtemp(prefix="forge-transcripts-"))
    cli.LEFTOVERS.add(lambda: _remove_if_empty(kept))
    started = time.monotonic()
    procs: list[tuple[subprocess.Popen, Path, list]] = []
    interrupted = False
    try:
        for k, bucket in enumerate(buckets):
            ids = [cid for cid in selected if str(cli.REPO_ROOT / registry.by_id(cid).module)
                   in bucket]
            part = temp / PART.format(k)
            pargs = cli.pytest_args(args, adapter, ids, bucket, None) + [
                "--forge-worker-out", str(part), "--forge-kept-dir", str(kept)]
            job = temp / f"worker-{k}.json"
            job.write_text(json.dumps({"pargs": pargs, "launcher": invocation.launcher(),
                                       "argv0": sys.argv[0], "parent": os.getpid()}),
                           encoding="utf-8")
            outs = [] if k == 0 else [open(temp / f"worker-{k}.{s}", "w+b")
                                      for s in ("out", "err")]
            proc = subprocess.Popen(_worker_command(job), stdin=subprocess.DEVNULL,
                                    stdout=outs[0] if outs else None,
                                    stderr=outs[1] if outs else None)
            procs.append((proc, part, outs))
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
        for proc, _, _ in procs:   # each stops its own trees (bounded; cli.STOP_BOUND_S above)
            proc.wait()
    for _, _, outs in procs:       # the others' output, after the first's, in order
        for f, stream in zip(outs, (sys.stdout, sys.stderr)):
            f.seek(0)
            stream.flush()
            os.write(stream.fileno(), f.read())
            f.close()
    results, seen, notes, collected, lost = {}, [], [], set(), []
    for k, (proc, part, _) in enumerate(procs):
        try:
            with open(part, "rb") as f:
                got = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError):
            lost.append(f"worker {k + 1} (exit {proc.returncode})")
            continue
        results.update(got["results"])
        seen += got["seen"]
        notes += got["notes"]
        collected.update(got["collected"])
        interrupted = interrupted or got["interrupted"]
    if lost and not interrupted:
        cli._say(f"the suite could not run: {', '.join(lost)} ended without its results "
                 f"(see above)")
        return cli.EXIT_CANNOT_RUN
    broken = [f"worker {k + 1} (pytest exit {proc.returncode})"
              for k, (proc, _, _) in enumerate(procs) if proc.returncode not in (0, 1, 5)]
    if broken and not interrupted:   # 5: its selected cases are unimplemented (skipped)
        cli._say(f"the suite could not run: {', '.join(broken)}: a case module failed to "
                 f"import, or a suite error (see above)")
        return cli.EXIT_CANNOT_RUN
    if lost:   # stopped before its cases ran (or before it could hand them over)
        notes.append(f"interrupted: {', '.join(lost)} handed over no results")
    if not interrupted:
        apply_findings(results, seen, settings, notes)
    rep = report.build(results, selected=selected, collected=collected,
                       adapter_argv=settings.adapter, interrupted=interrupted,
                       duration_s=time.monotonic() - started, policy=policy)
    watch.report = rep
    plugin.write_reports(rep, results, notes, json_path=args.json, junit_path=args.junit,
                         html_path=args.html)
    shown_kept = kept if any(kept.iterdir()) else None
    print("=" * 28 + " forge-conformance " + "=" * 28)
    for line in plugin.summary_block(rep, shown_kept, args.transcripts, notes,
                                     verbose=args.verbose > 0):
        print(line)
    print(cli.verdict_line(rep), flush=True)
    if interrupted:
        cli._say("interrupted; the report lists the cases that ran")
        return cli.EXIT_INTERRUPTED
    return cli.EXIT_FAILED if rep["summary"]["failed"] else cli.EXIT_OK


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:   # it holds a failing case's transcript (named in the summary), or is gone
        pass
