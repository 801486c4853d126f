#!/usr/bin/env python3
"""Benchmarks of the suite (not collected by pytest): ``python3 tests/bench.py wire``.

Subcommands register themselves in ``COMMANDS``: ``wire`` (the host client,
issue 2's targets), ``suite`` (wall and CPU of a whole run and where its time
goes, phase by phase and group by group, issue 13), ``matrix`` (the mutant
matrix's wall and CPU), ``stress`` (determinism) and ``pace`` (the run's wall
time against a slow but legal streamer, beside the README's bound). ``suite`` and ``matrix``
take ``--compare DIR``, another checkout (an unpacked ``git archive main``),
and alternate the two in the same time window, since the machine is shared.

wire:
  1. streaming 200,000 search items in 2,000 ``$/partial`` batches through
     Provider, vs a bare loop that only splits lines and ``json.loads`` the
     same bytes (in memory, and over a pipe from the same peer);
     target: Provider >= 50% of the bare loop's items/s;
  2. 10,000 sequential round trips against a minimal echo peer, vs a raw
     pipe write/readline loop; target: overhead <= 2x;
  3. peak memory (tracemalloc) of the streaming run when the caller keeps no
     items, at two stream lengths: it must stay proportional to one batch,
     not to the stream.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests import bench_explore  # noqa: E402
from tests.mock_peer import bench_lines  # noqa: E402
from wire import Provider, Transcript  # noqa: E402

PEER = [sys.executable, str(ROOT / "tests" / "mock_peer.py")]
ITEMS, BATCHES, ROUND_TRIPS = 200_000, 2_000, 10_000
# README "A slow adapter's run is bounded": the whole run, against any adapter
# whose every message comes inside the inactivity window.
PACE_BOUND_MIN = 20
SEARCH = {"q": "retry", "limit": 500, "partial": True}


def _best(repeat: int, *fns) -> list[float]:
    """The best (shortest) time of each fn() -> (seconds, extra) over ``repeat``
    rounds, the functions interleaved so that a burst of load elsewhere on the
    machine hits them alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            best[i] = min(best[i], fn()[0])
    return best


# ---------------------------------------------------------------- 1. streaming


def stream_provider(items: int, batches: int) -> tuple[float, int]:
    with Provider(PEER + ["--mode", "bench-stream", "--items", str(items),
                          "--batches", str(batches)], deadline_s=60) as p:
        p.start()
        count = 0

        def on_partial(batch):
            nonlocal count
            count += len(batch)

        t0 = time.perf_counter()
        p.call("search/code", SEARCH, on_partial=on_partial, keep_partials=False).result()
        elapsed = time.perf_counter() - t0
    assert count == items, (count, items)
    return elapsed, count


def stream_bare_memory(data: bytes) -> tuple[float, int]:
    t0 = time.perf_counter()
    count = 0
    loads = json.loads
    for line in data.split(b"\n"):
        if line:
            count += len(loads(line)["params"]["items"])
    return time.perf_counter() - t0, count


def stream_bare_pipe(items: int, batches: int) -> tuple[float, int]:
    proc = subprocess.Popen(PEER + ["--mode", "bench-stream", "--items", str(items),
                                    "--batches", str(batches)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    try:
        fd_in, fd_out = proc.stdin.fileno(), proc.stdout.fileno()
        os.write(fd_in, b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol":1}}\n')
        buf = b""
        while b"\n" not in buf:
            buf += os.read(fd_out, 65536)
        buf = buf.split(b"\n", 1)[1]
        t0 = time.perf_counter()
        os.write(fd_in, b'{"jsonrpc":"2.0","id":2,"method":"search/code","params":'
                 + json.dumps(SEARCH, separators=(",", ":")).encode() + b"}\n")
        count, loads, done = 0, json.loads, False
        while not done:
            chunk = os.read(fd_out, 65536)
            if not chunk:
                break
            lines = (buf + chunk).split(b"\n")
            buf = lines.pop()
            for line in lines:
                msg = loads(line)
                if "id" in msg:
                    done = True
                else:
                    count += len(msg["params"]["items"])
        return time.perf_counter() - t0, count
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


# ---------------------------------------------------------------- 2. round trips


def _timed_round_trips(once, n: int, warm_up: int = 200) -> tuple[float, None]:
    """Seconds for ``n`` calls of ``once(i)`` after ``warm_up`` untimed ones."""
    for i in range(warm_up):
        once(i + 1)
    t0 = time.perf_counter()
    for i in range(n):
        once(i + warm_up + 1)
    return time.perf_counter() - t0, None


def rtt_provider(n: int) -> tuple[float, None]:
    with Provider(PEER + ["--mode", "echo"], deadline_s=30) as p:
        p.start()
        return _timed_round_trips(lambda _i: p.request("ping", {}), n)


def rtt_raw(n: int) -> tuple[float, None]:
    proc = subprocess.Popen(PEER + ["--mode", "echo"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    try:
        out = os.fdopen(proc.stdout.fileno(), "rb", closefd=False)
        fd = proc.stdin.fileno()
        loads = json.loads

        def once(i):
            os.write(fd, b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{}}\n' % i)
            return loads(out.readline())

        return _timed_round_trips(once, n)
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
        proc.stdout.close()


def rtt_handoff_floor(n: int) -> tuple[float, None]:
    """The same loop with one reader thread handing each reply to the caller
    through a lock and no protocol work at all: the floor of any client whose
    stdout belongs to a reader thread (the design the host mandates, §7.1)."""
    proc = subprocess.Popen(PEER + ["--mode", "echo"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, bufsize=0)
    slot: list = [None]

    def reader():
        fd = proc.stdout.fileno()
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            for line in chunk.split(b"\n")[:-1]:
                json.loads(line)
                slot[0].release()

    thread = threading.Thread(target=reader, daemon=True)
    thread.start()
    try:
        fd = proc.stdin.fileno()

        def once(i):
            gate = threading.Lock()
            gate.acquire()
            slot[0] = gate
            os.write(fd, b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{}}\n' % i)
            gate.acquire(True, 30)

        return _timed_round_trips(once, n)
    finally:
        proc.kill()
        proc.wait()
        thread.join(5)
        proc.stdin.close()
        proc.stdout.close()


# ---------------------------------------------------------------- 3. memory


def stream_peak_memory(items: int, batches: int) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        stream_provider(items, batches)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base


# ---------------------------------------------------------------- commands


def cmd_wire(args) -> int:
    items, batches, n = args.items, args.batches, args.round_trips
    data = b"".join(bench_lines(2, items, batches))
    batch_bytes = len(data) // batches
    print(f"wire benchmark: {items:,} items in {batches:,} batches "
          f"({len(data) / 2**20:.1f} MiB, one batch ~{batch_bytes / 1024:.1f} KiB); "
          f"{n:,} round trips; best of {args.repeat}")

    mem_t, pipe_t, prov_t = _best(args.repeat, lambda: stream_bare_memory(data),
                                  lambda: stream_bare_pipe(items, batches),
                                  lambda: stream_provider(items, batches))
    rate = lambda t: items / t  # noqa: E731
    ratio_mem = rate(prov_t) / rate(mem_t)
    ratio_pipe = rate(prov_t) / rate(pipe_t)
    print("\n1. streaming                       seconds     items/s")
    print(f"   bare loop (in memory)          {mem_t:8.3f}  {rate(mem_t):11,.0f}")
    print(f"   bare loop (over the pipe)      {pipe_t:8.3f}  {rate(pipe_t):11,.0f}")
    print(f"   Provider                       {prov_t:8.3f}  {rate(prov_t):11,.0f}")
    print(f"   Provider / bare: {ratio_mem:.0%} of in-memory, {ratio_pipe:.0%} of pipe "
          f"(target >= 50%): {'OK' if ratio_mem >= 0.5 else 'MISSED'}")

    raw_t, floor_t, rtt_t = _best(args.repeat, lambda: rtt_raw(n), lambda: rtt_handoff_floor(n),
                                  lambda: rtt_provider(n))
    overhead = rtt_t / raw_t
    print("\n2. round trips                     seconds   us/round trip")
    print(f"   raw write/readline loop        {raw_t:8.3f}  {raw_t / n * 1e6:10.1f}")
    print(f"   reader-thread hand-off floor   {floor_t:8.3f}  {floor_t / n * 1e6:10.1f}"
          f"   ({floor_t / raw_t:.2f}x raw: no protocol work, just the thread hand-off)")
    print(f"   Provider.request               {rtt_t:8.3f}  {rtt_t / n * 1e6:10.1f}")
    print(f"   overhead {overhead:.2f}x raw (target <= 2x): {'OK' if overhead <= 2 else 'MISSED'}; "
          f"{rtt_t / floor_t:.2f}x the hand-off floor")

    sizes = [(items // 10, batches // 10), (items // 2, batches // 2), (items, batches)]
    peaks = [stream_peak_memory(i, b) for i, b in sizes]
    print("\n3. peak memory of the streaming run (tracemalloc, caller keeps no items)")
    for (i, b), peak in zip(sizes, peaks):
        print(f"   {i:>9,} items in {b:>5,} batches: {peak / 2**20:6.2f} MiB")
    print(f"   (the full stream is {len(data) / 2**20:.1f} MiB of JSON; one batch "
          f"{batch_bytes / 1024:.1f} KiB; the transcript ring keeps at most "
          f"{Transcript().max_total_chars / 2**20:.0f} MiB of text, then stays flat)")
    grew = peaks[2] / max(peaks[1], 1)
    print(f"   2x the stream -> {grew:.2f}x the peak: "
          f"{'OK (bounded)' if grew < 1.25 else 'GROWS WITH THE STREAM'}")
    ok = ratio_mem >= 0.5 and overhead <= 2 and grew < 1.25
    return 0 if ok else 1


# ---------------------------------------------------------------- stress (determinism)

STRESS_RESTART_CASES = ("FC-013", "FC-050", "FC-051")


def cmd_stress(args) -> int:
    """Determinism: the same adapter must get the same verdicts every time.

    Runs the nonconforming gate (the whole suite against tests/nonconforming.py:
    exactly FC-013 and FC-043 fail, exit 1) and the restart-heavy cases
    (FC-013, FC-050, FC-051) against the reference (all pass, exit 0), each
    ``--runs`` times, in parallel. Every case outcome that differs from the
    expectation is an unexpected verdict, and so is a run with the wrong exit
    code or no report. Prints their number, which must be 0.
    """
    from tests import gate

    if args.workers:
        os.environ["FORGE_GATE_WORKERS"] = str(args.workers)
    expected_fail = {"FC-013", "FC-043"}
    jobs: dict[str, dict] = {}
    if args.only in (None, "gate"):
        for n in range(args.runs):
            jobs[f"gate#{n + 1}"] = {"adapter": gate.script("nonconforming.py")}
    if args.only in (None, "restart"):
        for n in range(args.runs):
            jobs[f"restart#{n + 1}"] = {"adapter": gate.reference(), "cases": STRESS_RESTART_CASES}
    print(f"stress: {len(jobs)} suite runs ({args.runs} nonconforming gates, {args.runs} runs of "
          f"{', '.join(STRESS_RESTART_CASES)} against the reference), {gate.workers()} at a time")
    started = time.monotonic()
    verdicts = gate.run_many(jobs)
    unexpected = 0
    for name, v in verdicts.items():
        is_gate = name.startswith("gate")
        want_code = 1 if is_gate else 0
        wrong = []
        if v.report is None or v.code != want_code:
            wrong.append(f"exit {v.code} (expected {want_code})" + ("" if v.report else ", no report"))
        for cid, case in sorted(v.cases.items()):
            if not is_gate and cid not in STRESS_RESTART_CASES:
                continue   # not selected
            want = ("failed" if cid in expected_fail else "passed") if is_gate else "passed"
            if case.get("outcome") != want:
                wrong.append(f"{cid} {case.get('outcome')} (expected {want}): "
                             f"{str(case.get('message') or '')[:160]}")
        unexpected += len(wrong)
        print(f"  {name:12} exit {v.code} {v.wall_s:6.1f}s  " + ("ok" if not wrong else "UNEXPECTED"))
        for line in wrong:
            print(f"      {line}")
    print(f"\n{len(jobs)} runs in {time.monotonic() - started:.0f}s; unexpected verdicts: {unexpected}")
    return 0 if unexpected == 0 else 1


def stress_args(sp) -> None:
    sp.add_argument("--runs", type=int, default=20, help="repetitions of each kind (default 20)")
    sp.add_argument("--only", choices=("gate", "restart"), help="run only one of the two kinds")
    sp.add_argument("--workers", type=int, help="suite runs at a time (default: tests/gate.py workers(), two per core)")


# ---------------------------------------------------------------- suite and matrix

def _median(xs):
    import statistics
    return statistics.median(xs) if xs else float("nan")


def _suite_python(root: Path) -> str:
    """An interpreter with the dependencies, as ``run`` ends up using (its venv
    when this one lacks them), so the phase runs need no bootstrap hop."""
    import importlib.util
    if all(importlib.util.find_spec(m) for m in ("pytest", "attrs", "cattrs", "psutil")):
        return sys.executable
    venv = root / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _knows_jobs(root: Path) -> bool:
    """Whether ``root``'s run has --jobs (a checkout from before it has not)."""
    return any((root / "cases" / where).exists() for where in ("cli/jobs.py", "jobs.py"))


def _phase_run(root: Path) -> dict:
    """One suite run through tests/phases.py against ``root``'s tree and reference."""
    import tempfile

    from tests import gate

    with tempfile.TemporaryDirectory(prefix="forge-phases-") as tmp:
        out, report = Path(tmp) / "phases.json", Path(tmp) / "report.json"
        env = dict(os.environ, FORGE_BENCH_ROOT=str(root))
        # the anatomy of a run in one process: phases.py times pytest in-process
        one = ["--jobs", "1"] if _knows_jobs(root) else []
        argv = [_suite_python(root), str(ROOT / "tests" / "phases.py"), str(out),
                "--json", str(report), *one, "--"]   # nothing after --: the run's own reference
        env["FORGE_BENCH_T0"] = repr(time.time())
        started = time.monotonic()
        proc = subprocess.Popen(argv, cwd=root, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        err = proc.stderr.read()
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.monotonic() - started
        if proc.returncode != 0 or not out.exists():
            raise SystemExit(f"phase run in {root} exited {proc.returncode}: {err.decode()[-2000:]}")
        data = json.loads(out.read_text(encoding="utf-8"))
    data["wall"], data["cpu"] = wall, usage.ru_utime + usage.ru_stime
    data["children_cpu"] = data["cpu"] - data["marks"][-1][2]
    return data


def _print_phases(runs: list[dict], label: str) -> None:
    """Median duration (and this process's CPU) of each phase over the runs."""
    print(f"\nphases of a run, {label} (median of {len(runs)}; wall s / suite-process CPU s):")
    names = [m[0] for m in runs[0]["marks"]]
    for i, name in enumerate(names):
        walls = [r["marks"][i][1] - (r["marks"][i - 1][1] if i else 0.0) for r in runs]
        cpus = [r["marks"][i][2] - (r["marks"][i - 1][2] if i else 0.0) for r in runs]
        print(f"  {name:58} {_median(walls):6.3f}   {_median(cpus):6.3f}")
        if name == "cases":
            for group in runs[0]["groups"]:
                spans = [r["groups"][group][1] - r["groups"][group][0] for r in runs if group in r["groups"]]
                print(f"      {group:54} {_median(spans):6.3f}")
    tail = [r["wall"] - r["marks"][-1][1] for r in runs]
    print(f"  {'interpreter exit':58} {_median(tail):6.3f}")
    mats = [sum(b - a for a, b in r["materialize"]) for r in runs]
    print(f"  (of the pre-flight: fixture.materialize {_median(mats):.3f} s; "
          f"adapters, git and other children: {_median([r['children_cpu'] for r in runs]):.2f} s CPU; "
          f"whole tree {_median([r['cpu'] for r in runs]):.2f} s CPU, {_median([r['wall'] for r in runs]):.2f} s wall)")


def cmd_suite(args) -> int:
    """The whole suite against the reference: wall and CPU (the run's whole
    process tree, adapters and git included) of ``python3 run``, median of
    ``--runs``; then the same runs through tests/phases.py for the per-phase
    split. With ``--compare DIR`` (another checkout, say an export of main),
    every round runs both trees back to back, so a burst of load elsewhere on
    the machine hits both alike, and prints the ratios."""
    from tests import gate

    trees = [ROOT] + ([Path(args.compare).resolve()] if args.compare else [])
    whole = {t: {"wall": [], "cpu": [], "cases": []} for t in trees}
    phases = {t: [] for t in trees}
    for n in range(args.runs):
        order = trees if n % 2 == 0 else trees[::-1]
        for tree in order:
            # no adapter argv: the reference as `python3 run` starts it (from
            # its compiled script), not as an adapter command given after --
            v = gate.run_suite([], root=tree,
                               jobs=args.jobs if _knows_jobs(tree) else None)
            if v.code != 0 or v.report is None:
                print(f"suite: the reference run in {tree} exited {v.code}\n{v.explain()}")
                return 1
            whole[tree]["wall"].append(v.wall_s)
            whole[tree]["cpu"].append(v.cpu_s)
            whole[tree]["cases"].append(v.report["summary"]["duration_s"])
        if not args.no_phases:
            for tree in order:
                phases[tree].append(_phase_run(tree))
    print(f"suite: python3 run against the reference, {args.runs} rounds"
          + (f", alternating {ROOT} and {trees[1]}" if args.compare else "")
          + f"; interpreter {sys.executable}")
    head = f"{'':44} {'this tree':>10}" + (f" {'compare':>10} {'ratio':>7}" if args.compare else "")
    print(head)
    for key, label in (("wall", "wall s (median)"), ("cpu", "CPU s, whole tree (median)"),
                       ("cases", "cases s (report duration_s, median)")):
        mine = _median(whole[ROOT][key])
        line = f"{label:44} {mine:10.2f}"
        if args.compare:
            other = _median(whole[trees[1]][key])
            line += f" {other:10.2f} {mine / other:7.2f}"
        print(line)
    for tree in trees:
        if phases[tree]:
            _print_phases(phases[tree], "this tree" if tree == ROOT else str(tree))
    wall = _median(whole[ROOT]["wall"])
    cpu = _median(whole[ROOT]["cpu"])
    print(f"\ntarget (issue 11): under 5 s wall -> {'met' if wall < 5.0 else 'MISSED'} "
          f"({wall:.2f} s)")
    print(f"target (issue 13): at most 3.0 s wall and 2.5 s CPU -> "
          f"{'met' if wall <= 3.0 and cpu <= 2.5 else 'MISSED'} ({wall:.2f} s, {cpu:.2f} s)")
    return 0


def suite_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=5, help="rounds (default 5)")
    parser.add_argument("--compare", metavar="DIR",
                        help="another checkout to alternate with (e.g. `git archive main` unpacked)")
    parser.add_argument("--no-phases", action="store_true", help="skip the per-phase runs")
    parser.add_argument("--jobs", default=None, metavar="N",
                        help="this tree's --jobs for the whole runs (default: run's own default); "
                             "the per-phase runs always use one process")


def cmd_matrix(args) -> int:
    """The mutant matrix as tests/test_mutants.py runs it (every mutant, whole
    suite, the tree's own tests/gate.py pool), timed: wall of the whole matrix
    and the CPU of its whole process tree; each mutant's failed set is checked
    exactly. ``--compare DIR`` and ``--workers 2,3`` alternate configurations,
    each driven by its own checkout's gate in a subprocess."""
    trees = [ROOT] + ([Path(args.compare).resolve()] if args.compare else [])
    workers = [int(w) for w in args.workers.split(",")] if args.workers else [None]
    configs = [(t, w) for t in trees for w in workers]
    results: dict = {c: [] for c in configs}
    for n in range(args.runs):
        for tree, w in (configs if n % 2 == 0 else configs[::-1]):
            env = dict(os.environ)
            if w is not None:
                env["FORGE_GATE_WORKERS"] = str(w)
            started = time.monotonic()
            proc = subprocess.Popen([sys.executable, "-c", MATRIX_DRIVER, str(tree)], cwd=tree,
                                    env=env, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
            out = proc.stdout.read()
            _pid, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            wall = time.monotonic() - started
            cpu = usage.ru_utime + usage.ru_stime
            data = json.loads(out) if proc.returncode == 0 else {"wrong": ["(driver failed)"], "walls": {}}
            results[(tree, w)].append((wall, cpu, data))
            print(f"  round {n + 1}: {tree} workers {w or 'default'}: {len(data['walls'])} runs, "
                  f"{wall:.1f} s wall, {cpu:.1f} s CPU"
                  + (f", WRONG: {data['wrong']}" if data["wrong"] else ""), flush=True)
    print(f"\nmatrix ({args.runs} rounds, alternating; median):")
    base = None
    for c in configs:
        walls = [r[0] for r in results[c]]
        cpus = [r[1] for r in results[c]]
        base = base or _median(walls)
        print(f"  {c[0]} workers {c[1] or 'default'}: wall {_median(walls):6.1f} s "
              f"(ratio {_median(walls) / base:.2f}), CPU {_median(cpus):6.1f} s "
              f"({_median(cpus) / max(1, len(results[c][0][2]['walls'])):.2f} s per run)")
    walls = results[configs[0]][-1][2]["walls"]
    print("  slowest runs: " + ", ".join(f"{n} {w:.1f}s" for n, w in
                                         sorted(walls.items(), key=lambda kv: -kv[1])[:8]))
    return 0 if not any(r[2]["wrong"] for rs in results.values() for r in rs) else 1


# Runs in the compared checkout with its own gate and mutants; prints JSON.
MATRIX_DRIVER = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests import gate
from tests.adapters.mutants import MUTANTS
jobs = {f"mutant:{s}": {"adapter": gate.mutant(s)} for s in sorted(MUTANTS)}
verdicts = gate.run_many(jobs, sleepy=("mutant:stream-stall-4s",))
wrong = [n for n, v in verdicts.items() if v.failed != MUTANTS[n.split(":", 1)[1]].expected]
print(json.dumps({"wrong": wrong, "walls": {n.split(":", 1)[1]: v.wall_s for n, v in verdicts.items()}}))
"""


def matrix_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--runs", type=int, default=1, help="rounds (default 1: one matrix is minutes)")
    parser.add_argument("--compare", metavar="DIR", help="another checkout to alternate with")
    parser.add_argument("--workers", help="comma-separated worker counts to alternate (default: gate's)")


def wire_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--items", type=int, default=ITEMS)
    parser.add_argument("--batches", type=int, default=BATCHES)
    parser.add_argument("--round-trips", type=int, default=ROUND_TRIPS)
    parser.add_argument("--repeat", type=int, default=5, help="rounds; the best of each is shown")


# ---------------------------------------------------------------- floor

FLOOR_POLL_S = 0.01     # the run's own CPU is read this often until it exits
SELF_TEST_TARGET_S = 600


def _split_run(adapter: list[str]) -> dict:
    """One whole-suite run (one process, not forked), its CPU split: the
    suite's own process, and what it reaped (adapters with their git, the
    suite's git), read from the run's /proc counters just before it exits;
    adapter starts counted as the run's python children seen (a poll every
    FLOOR_POLL_S: one living under that is missed, none is counted twice)."""
    import psutil
    from tests import gate

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        env = {**os.environ, **gate.bytecode_env(), "TMPDIR": tmp}
        argv = [sys.executable, str(ROOT / "run"), "--json", f"{tmp}/r.json", "--jobs", "1",
                "--", *adapter]
        began = time.monotonic()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ps, last, starts = psutil.Process(proc.pid), None, set()
        while True:
            try:
                last = ps.cpu_times()
                starts.update(c.pid for c in ps.children() if adapter[-1] in " ".join(c.cmdline()))
            except psutil.Error:
                pass
            try:
                proc.wait(FLOOR_POLL_S)   # the exit ends the reading; the timeout paces it
                break
            except subprocess.TimeoutExpired:
                continue
        report = json.loads(Path(f"{tmp}/r.json").read_text()) if Path(f"{tmp}/r.json").exists() else {}
    return {"wall": time.monotonic() - began, "self": last.user + last.system,
            "reaped": last.children_user + last.children_system, "starts": len(starts),
            "failed": sorted(c["id"] for c in report.get("cases", []) if c["outcome"] == "failed")}


def _start_cpu(argv: list[str], times: int) -> float:
    """CPU seconds of one start of ``argv`` that ends at once (stdin at EOF)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        for _ in range(times):
            subprocess.run([*argv, tmp], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, env={**os.environ, **_bytecode()})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)) / times


def _bytecode() -> dict[str, str]:
    from tests import gate
    return gate.bytecode_env()


def cmd_floor(args) -> int:
    """Why the self-test takes what it takes. Every mutant and control of the
    matrix runs the whole suite, so the gate pool alone needs at least (runs
    x CPU of a run / cores) seconds, whatever its scheduling: this measures a
    sample of the matrix's runs (forked, as the pool runs them, and once in
    one plain process for the split: the suite's own CPU against what it
    reaped, adapters and git), the CPU of one adapter start that does
    nothing, and prints that floor beside the self-test's target."""
    from tests import gate
    from tests.adapters.controls import CONTROLS
    from tests.adapters.mutants import MUTANTS

    names = sorted(MUTANTS)
    sample = args.only.split(",") if args.only else names[::max(1, len(names) // args.sample)][:args.sample]
    rows = []
    for switch in sample:
        adapter = gate.mutant(switch)
        split = _split_run(adapter)
        forked = gate.run_suite(adapter)
        ok = set(split["failed"]) == set(MUTANTS[switch].expected) == forked.failed
        rows.append((switch, split, forked.cpu_s, ok))
        print(f"  {switch:34} forked {forked.cpu_s:5.2f} CPU-s | one process: suite "
              f"{split['self']:5.2f}, reaped {split['reaped']:5.2f}, adapter starts "
              f"{split['starts']:3}{'' if ok else '   (verdict NOT as declared)'}", flush=True)
    reference_start = _start_cpu(gate.reference(), args.starts)
    mutant_start = _start_cpu(gate.mutant(sample[0]), args.starts)
    bare = _start_cpu([sys.executable, "-S", "-c", "pass"], args.starts) if args.starts else 0.0
    runs = len(MUTANTS) + len(CONTROLS)
    cpu = _median([r[2] for r in rows])
    starts = _median([r[1]["starts"] for r in rows])
    cores = os.cpu_count() or 1
    floor = runs * cpu / cores
    print(f"\nfloor: {len(sample)} of {len(MUTANTS)} mutants sampled; interpreter {sys.executable}")
    print(f"  CPU of a run, forked (median)            {cpu:6.2f} s")
    print(f"  suite's own / reaped, one process        {_median([r[1]['self'] for r in rows]):6.2f} s"
          f" / {_median([r[1]['reaped'] for r in rows]):.2f} s")
    print(f"  adapter starts a run (median)            {starts:6.0f}")
    print(f"  one start that does nothing: bare {bare * 1000:.0f} ms, reference "
          f"{reference_start * 1000:.0f} ms (its script, compiled at each start), mutant {mutant_start * 1000:.0f} ms "
          f"-> {starts * mutant_start:.2f} s a mutant run")
    print(f"  matrix runs (mutants + controls)         {runs:6}")
    print(f"  pool floor: {runs} x {cpu:.2f} s / {cores} cores = {floor:.0f} s "
          f"(self-test target {SELF_TEST_TARGET_S} s, the rest of the self-test not counted)")
    return 0 if all(r[3] for r in rows) else 1


def floor_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sample", type=int, default=6, help="mutants sampled, spread over the matrix")
    parser.add_argument("--only", help="comma-separated switches instead of the sample")
    parser.add_argument("--starts", type=int, default=20, help="starts timed of each kind")


# ---------------------------------------------------------------- pace

# The shapes of a slow but legal streamer (tests/adapters/controls/pace.py):
# (switch, pace in s, the failed set it must end with).
PACE_SHAPES = (
    ("paced-stream", 1.5, set()),            # a hit every 1.5 s, cancels ignored
    ("paced-stream", 0.3, set()),            # the control's own pace
    ("paced-stream-cancellable", 0.3, set()),
    ("paced-cancel-error", 0.3, {"FC-045"}),   # the mutant: an error reply after a cancel
)


def cmd_pace(args) -> int:
    """The whole suite against the paced-stream adapters (one hit per batch,
    each message inside the inactivity window), with --jobs 1 and with the
    run's default: wall time and verdict of each, against the README's bound
    ("A slow adapter's run is bounded"). Reported, never asserted."""
    from tests import gate

    shapes = [s for s in PACE_SHAPES if (not args.only or s[0] in args.only.split(","))
              and (args.pace is None or s[1] == args.pace)]
    wrong = 0
    print(f"pace: the suite against paced streams; bound {args.bound_min:g} min")
    for switch, pace, expected in shapes:
        chosen = {None: ("1", None), "default": (None,)}.get(args.jobs, (args.jobs,))
        for jobs in chosen:
            env = dict(os.environ, FORGE_TEST_PACE_S=str(pace))
            v = gate.run_suite(gate.mutant(switch), jobs=jobs, environ=env,
                               timeout_s=args.bound_min * 60 * 1.5)
            ok = v.code is not None and v.report is not None and v.failed == expected
            wrong += not ok
            print(f"  {switch:26} pace {pace:3.1f} s  --jobs {jobs or 'default':7} "
                  f"{v.wall_s / 60:5.1f} min ({v.wall_s:6.1f} s)  "
                  f"{'within' if v.wall_s <= args.bound_min * 60 else 'OVER'} the bound  "
                  f"failed {sorted(v.failed) or 'none'}, warned {sorted(v.warned) or 'none'}, "
                  f"skipped {len(v.skipped)}" + ("" if ok else f"  UNEXPECTED (want {sorted(expected)})"),
                  flush=True)
    return 1 if wrong else 0


def pace_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--only", help="comma-separated switches (default: every shape)")
    parser.add_argument("--pace", type=float, help="only the shapes of this pace (s)")
    parser.add_argument("--jobs", help="only this --jobs, or \"default\" (default: 1, then the "
                                       "run's default)")
    parser.add_argument("--bound-min", type=float, default=PACE_BOUND_MIN,
                        help=f"the stated bound in minutes (default {PACE_BOUND_MIN:g}, README)")


# name -> (run(args) -> exit code, add_arguments(parser), one-line help).
# A new benchmark (say "suite" or "stress") adds one entry here.
COMMANDS = {
    "wire": (cmd_wire, wire_args, "the host client: streaming, round trips, memory"),
    "suite": (cmd_suite, suite_args,
              "wall and CPU of the suite against the reference, and where the time goes"),
    "matrix": (cmd_matrix, matrix_args, "the mutant matrix: wall, CPU, slowest runs"),
    "stress": (cmd_stress, stress_args,
               "determinism: the nonconforming gate and the restart cases, 20 runs each"),
    "floor": (cmd_floor, floor_args,
              "the self-test's floor: CPU of a matrix run, split, times the runs, per core"),
    "pace": (cmd_pace, pace_args,
             "a slow but legal streamer: the run's wall time against the stated bound"),
}
COMMANDS.update(bench_explore.COMMANDS)   # explore, explore-controls (tests/bench_explore.py)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="forge-conformance benchmarks")
    sub = ap.add_subparsers(dest="command", required=True)
    for name, (_, add_arguments, help_text) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text))
    args = ap.parse_args(argv)
    return COMMANDS[args.command][0](args)


if __name__ == "__main__":
    sys.exit(main())
