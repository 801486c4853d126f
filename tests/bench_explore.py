#!/usr/bin/env python3
"""Benchmarks of ``run --explore`` (not collected by pytest).

    python3 tests/bench_explore.py explore [--budgets 15,30,60] [--seed S]
    python3 tests/bench_explore.py explore-controls [--seeds 20] [--first 1] [--examples 12] [--parallel 2] [--only a,b]

(``tests/bench.py explore`` once bench.py adds ``COMMANDS`` below.)

``explore``: the reference adapter explored for each budget in turn, each run
in a fresh process: requests judged per second, examples per minute, and
the peak RSS of the run or the largest process it waited for (an adapter,
git), which must stay flat as the budget grows (nothing kept per
example but the few built sets the runner reuses).

``explore-controls``: the no-false-red check of issue 26 over many seeds: the
reference, the host profile (tests/host_profile.py) and every legal control
(tests/adapters/controls/) explored with seeds 1..N, N examples each;
every run must exit 0. Prints each adapter's time and any seed that failed
(with the finding's first line). Exit 1 when one did.

"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

RUN_TIMEOUT_S = 600
# Measures the peak RSS of the run and of the processes it waited for (its
# adapters, git): RUSAGE_CHILDREN's maxrss is the largest of them.
_PEAK = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
         "sys.exit(p.returncode)")


def _env() -> dict[str, str]:
    drop = ("FORGE_PROVIDER", "PROVIDER", "FORGE_ORG", "FORGE_NO_APPEND", "FORGE_FIXTURE_DIR")
    return {k: v for k, v in os.environ.items() if k not in drop}


def explore_once(options: list[str], adapter: list[str] | None = None,
                 env: dict | None = None) -> dict:
    """One ``run --explore`` with ``options``: exit code, wall time, its JSON
    report's explore member and failed row, and its peak RSS in KiB."""
    with tempfile.TemporaryDirectory(prefix="bench-explore-") as tmp:
        report = Path(tmp) / "report.json"
        argv = [sys.executable, "-c", _PEAK, sys.executable, str(ROOT / "run"), "--explore",
                *options, "--json", str(report)]
        if adapter:
            argv += ["--", *adapter]
        began = time.monotonic()
        proc = subprocess.run(argv, cwd=ROOT, env=env or _env(), capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_S)
        wall = time.monotonic() - began
        rep = json.loads(report.read_text()) if report.exists() else None
    lines = proc.stderr.strip().splitlines()
    peak = int(lines[-1]) if lines and lines[-1].isdigit() else None
    failed = [c for c in (rep or {}).get("cases", []) if c.get("outcome") == "failed"]
    return {"code": proc.returncode, "wall_s": wall, "peak_kib": peak,
            "explore": (rep or {}).get("explore"), "failed": failed,
            "stdout": proc.stdout, "stderr": proc.stderr}


def cmd_rate(args) -> int:
    budgets = [float(b) for b in args.budgets.split(",")]
    print(f"explore against the reference, seed {args.seed}: one fresh run per budget")
    peaks = []
    for budget in budgets:
        r = explore_once(["--seed", str(args.seed), "--budget", f"{budget:g}"])
        x = r["explore"] or {}
        if r["code"] != 0 or not x:
            print(f"  budget {budget:5g} s: exit {r['code']} (not clean)\n{r['stdout'][-1500:]}")
            return 1
        took = r["wall_s"]
        peaks.append(r["peak_kib"] or 0)
        print(f"  budget {budget:5g} s: {x['examples']:4d} examples, {x['requests']:5d} requests "
              f"in {took:5.1f} s wall: {x['requests'] / took:6.1f} requests judged/s, "
              f"{60 * x['examples'] / took:6.1f} examples/min, peak RSS "
              f"{(r['peak_kib'] or 0) / 1024:6.1f} MiB", flush=True)
    if len(peaks) > 1 and peaks[0]:
        print(f"peak RSS at the largest budget is {peaks[-1] / peaks[0]:.2f}x the smallest's")
    return 0


def rate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--budgets", default="15,30,60", help="comma-separated seconds")
    parser.add_argument("--seed", default="20260601")


def _adapters(only: set[str] | None) -> dict[str, tuple[list[str] | None, dict]]:
    from tests.adapters.controls import CONTROLS
    out: dict[str, tuple[list[str] | None, dict]] = {
        "reference": (None, _env()),
        # the host's adapter knows no fault repos (tests/test_host_profile.py)
        "host-profile": ([sys.executable, "-S", str(ROOT / "tests" / "host_profile.py")],
                         {**_env(), "FORGE_NO_FAULTS": "1"}),
    }
    for switch in sorted(CONTROLS):
        out[f"control:{switch}"] = ([sys.executable, "-S", str(ROOT / "tests" / "mutant.py"),
                                     switch], _env())
    return {k: v for k, v in out.items() if not only or k in only or k.split(":")[-1] in only}


def cmd_controls(args) -> int:
    from concurrent.futures import ThreadPoolExecutor

    only = set(args.only.split(",")) if args.only else None
    seeds = range(args.first, args.first + args.seeds)
    print(f"explore, seeds {seeds[0]}..{seeds[-1]}, {args.examples} examples each, {args.parallel} "
          f"run(s) at a time: every run must be clean")

    def one(name, adapter, env, s):
        r = explore_once(["--seed", str(s), "--examples", str(args.examples)], adapter, env)
        if r["code"] == 0:
            return None
        first = (r["failed"][0]["details"] if r["failed"] else
                 (r["stderr"] or r["stdout"]).strip().splitlines()[-1:])
        return f"seed {s}: exit {r['code']}: {str(first)[:300]}"

    bad = 0
    # runs mostly wait on their adapters: a few at a time fill the cores
    with ThreadPoolExecutor(max_workers=max(1, args.parallel)) as pool:
        for name, (adapter, env) in _adapters(only).items():
            began = time.monotonic()
            failed = [f for f in pool.map(lambda s: one(name, adapter, env, s), seeds) if f]
            bad += bool(failed)
            print(f"  {name:34} {time.monotonic() - began:6.1f} s  "
                  f"{'clean' if not failed else f'{len(failed)} seed(s) FAILED'}", flush=True)
            for f in failed:
                print(f"      {f}")
    return 1 if bad else 0


def controls_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seeds", type=int, default=20, help="how many seeds")
    parser.add_argument("--first", type=int, default=1, help="the first seed (a sweep resumed)")
    parser.add_argument("--examples", type=int, default=12)
    parser.add_argument("--parallel", type=int, default=2, help="runs at a time")
    parser.add_argument("--only", help="comma-separated adapters (reference, host-profile, or "
                                       "control switches)")


# tests/bench.py's COMMANDS entries (name -> run, add_arguments, help): bench.py
# adds them with ``COMMANDS.update(bench_explore.COMMANDS)``.
COMMANDS = {
    "explore": (cmd_rate, rate_args,
                "run --explore: requests judged/s, examples/min, peak memory by budget"),
    "explore-controls": (cmd_controls, controls_args,
                         "run --explore: the reference, the host profile and the legal "
                         "controls clean over N seeds"),
}


if __name__ == "__main__":   # until tests/bench.py lists them: its main, these commands added
    import tests.bench as bench
    bench.COMMANDS.update(COMMANDS)
    sys.exit(bench.main())
