#!/usr/bin/env python3
"""The adversary's verdict table: the suite against every deep mutant and deep control.

    python3 tests/deep_verdicts.py [--mutants | --controls] [--only SWITCH ...]
                                   [--workers N] [--json PATH] [--markdown]

For each deep mutant (tests/adapters/mutants_deep.py) it runs the whole
suite (tests/gate.py's run_suite) and compares the failed set with the one
case that owns the broken rule:

    CAUGHT  failed exactly the owner
    MISSED  the owner did not fail, nor did anything else
    OVER    some other case failed (with or without the owner)

Owners ``FC-12x`` (the pending transport case) and ``unowned`` cannot be
caught today: an empty failed set is MISSED, anything else OVER.

For each deep control (tests/adapters/controls_deep.py, plus the matrix's
out-of-order control, which the brief lists) the verdict is PASS (exit 0,
nothing failed) or FAIL, with the cases that warned.

Runs ``--workers`` suites at a time (default 2: the machine is shared). It
is a report, not a test: the exit code is 0 unless a run could not produce
a report.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests import gate  # noqa: E402
from tests.adapters.controls_deep import DEEP_CONTROLS  # noqa: E402
from tests.adapters.mutants_deep import DEEP, PENDING, UNOWNED  # noqa: E402

MATRIX_CONTROLS = ("out-of-order",)   # controls of tests/adapters/controls/ the brief names


def deep_argv(switch: str) -> list[str]:
    return gate.script("mutant_deep.py", switch)


def mutant_verdict(owner: str, failed: set[str]) -> str:
    if owner in (PENDING, UNOWNED):
        return "MISSED" if not failed else "OVER"
    if failed == {owner}:
        return "CAUGHT"
    return "OVER" if failed - {owner} else "MISSED"


def run_one(kind: str, switch: str) -> dict:
    argv = gate.mutant(switch) if switch in MATRIX_CONTROLS else deep_argv(switch)
    verdict = gate.run_suite(argv)
    row = {"kind": kind, "switch": switch, "code": verdict.code, "wall_s": round(verdict.wall_s, 1),
           "failed": sorted(verdict.failed), "warned": sorted(verdict.warned),
           "skipped": sorted(c for c in verdict.skipped
                             if verdict.message(c) != "not selected")}
    row["messages"] = {c: verdict.message(c)[:300] for c in verdict.failed}
    if kind == "mutant":
        owner = next(iter(DEEP[switch].expected))
        row["owner"] = owner
        row["verdict"] = mutant_verdict(owner, set(verdict.failed)) if verdict.report else "NO REPORT"
        row["owner_warned"] = owner in verdict.warned
    else:
        ok = verdict.code == 0 and verdict.report is not None and not verdict.failed
        row["verdict"] = "PASS" if ok else ("NO REPORT" if verdict.report is None else "FAIL")
    if verdict.report is None:
        row["explain"] = verdict.explain()
    return row


def table(rows: list[dict], markdown: bool) -> str:
    head = ("switch", "intended", "failed today", "verdict", "warned")
    lines = []
    for row in rows:
        intended = row.get("owner", "(control)")
        failed = ", ".join(row["failed"]) or "-"
        warned = ", ".join(row["warned"]) or "-"
        lines.append((row["switch"], intended, failed, row["verdict"], warned))
    if markdown:
        out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        out += ["| " + " | ".join(cells) + " |" for cells in lines]
        return "\n".join(out)
    widths = [max(len(str(c)) for c in col) for col in zip(head, *lines)]
    fmt = "  ".join(f"{{:{w}}}" for w in widths)
    return "\n".join(fmt.format(*cells).rstrip() for cells in [head, *lines])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = ap.add_mutually_exclusive_group()
    which.add_argument("--mutants", action="store_true", help="deep mutants only")
    which.add_argument("--controls", action="store_true", help="deep controls only")
    ap.add_argument("--only", nargs="+", default=(), metavar="SWITCH", help="just these switches")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path, help="also write the rows as JSON")
    ap.add_argument("--markdown", action="store_true", help="print a Markdown table")
    args = ap.parse_args(argv)

    jobs = []
    if not args.controls:
        jobs += [("mutant", s) for s in DEEP]
    if not args.mutants:
        jobs += [("control", s) for s in (*DEEP_CONTROLS, *MATRIX_CONTROLS)]
    if args.only:
        unknown = set(args.only) - {s for _, s in jobs}
        if unknown:
            ap.error(f"unknown switches: {', '.join(sorted(unknown))}")
        jobs = [(k, s) for k, s in jobs if s in args.only]
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.workers)) as pool:
        rows = list(pool.map(lambda job: run_one(*job), jobs))
    print(table(rows, args.markdown))
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    print(f"\n{len(rows)} runs in {time.monotonic() - started:.0f} s: "
          + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    for row in rows:
        if row.get("explain"):
            print(f"\n{row['switch']}:\n{row['explain']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return 1 if any(r["verdict"] == "NO REPORT" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
