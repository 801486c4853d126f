#!/usr/bin/env python3
"""What the run-wide protocol monitor (wire/monitor.py) sees of each deep mutant and control.

    python3 tests/deep_monitor.py [--only SWITCH ...] [--fixture DIR]

The monitor is not yet wired into the cases' verdicts; this shows which
deep mutants it would already flag once it is (a frame rule and its owner),
and that the deep controls give it nothing to flag. Each adapter is driven
through one fixed sweep of requests (every repository, refs, blob_at at a
null ref and a tag, cut and uncut streams, errors of the fault repos, an
unsolicited notification) and every frame both ways goes through a Monitor;
the table lists the MUST rules with findings (count in brackets).

A report, not a test. Needs a materialized fixture (built here when
``--fixture`` is not given).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adapters.controls_deep import DEEP_CONTROLS  # noqa: E402
from tests.adapters.mutants_deep import DEEP  # noqa: E402
from wire.framing import classify  # noqa: E402
from wire.monitor import Monitor  # noqa: E402

TESTS = Path(__file__).resolve().parent
ANSWER_S = 20.0      # one request's bound (a report: generous on a loaded machine)
LATE_S = 1.5         # after the sweep: room for late frames (partials, answers to notifications)


class Driven:
    """One adapter process fed the sweep, every frame through a Monitor."""

    def __init__(self, switch: str, fixture: Path, cache: Path):
        self.monitor = Monitor()
        self.findings: list = []
        self.lines: queue.Queue = queue.Queue()
        self.next_id = 0
        self.proc = subprocess.Popen([sys.executable, "-S", str(TESTS / "mutant_deep.py"), switch,
                                      str(fixture)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        threading.Thread(target=self._read, daemon=True).start()
        self.cache = cache

    def _read(self) -> None:
        for line in self.proc.stdout:
            frame = classify(line.rstrip(b"\n"))
            if frame is not None:
                self.findings += self.monitor.inbound(1, frame)
            self.lines.put(frame)

    def send(self, msg: dict) -> None:
        self.monitor.outbound(1, msg)
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, method: str, params: dict) -> dict | None:
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        end = time.monotonic() + ANSWER_S
        while time.monotonic() < end:
            try:
                frame = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if frame is not None and frame.id == rid and frame.kind == "reply":
                return frame.msg
        return None

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def sweep(d: Driven, org: str = "local") -> None:
    repo = lambda name: f"{org}/{name}"   # noqa: E731
    d.ask("initialize", {"protocol": 1, "cache_bytes": 1 << 28, "cache_dir": str(d.cache)})
    trees = {}
    for name, ref in (("alpha", None), ("beta", None), ("vcs", None), ("wide", None), ("vcs", "main"),
                      ("vcs", "feature"), ("vcs", "v1.0")):
        reply = d.ask("repo/tree", {"repo": repo(name), "ref": ref}) or {}
        trees[(name, ref)] = {e.get("path"): e.get("sha") for e in (reply.get("result") or {}).get("entries") or []
                              if isinstance(e, dict)}
    for name, path in (("alpha", "assets/icon.png"), ("alpha", "big.bin"), ("alpha", "big.bin"),
                       ("beta", "README.md"), ("vcs", "assets/logo.bin")):
        sha = trees.get((name, None), {}).get(path)
        if isinstance(sha, str):
            d.ask("repo/blob", {"repo": repo(name), "sha": sha})
    for path, ref in (("src/lib.rs", None), ("src/lib.rs", "main"), ("src/lib.rs", "v1.0"),
                      ("no/such/file", None)):
        d.ask("repo/blob_at", {"repo": repo("vcs"), "path": path, "ref": ref})
    for q, limit, partial in (("frobnicate", 500, False), ("frobnicate", 500, True),
                              ("tessellate", 20, True), ("gallimaufry", 500, True),
                              ("path:zeppelin", 500, True), (f"tessellate repo:{repo('wide')}", 500, False)):
        d.ask("search/code", {"q": q, "limit": limit, **({"partial": True} if partial else {})})
    for path, ref, limit in (("src/lib.rs", "main", None), (None, None, 2), (None, "main", 2)):
        d.ask("repo/log", {"repo": repo("vcs"), "path": path, "ref": ref, "limit": limit})
    for ref in (None, "feature"):
        d.ask("repo/blame", {"repo": repo("vcs"), "path": "src/lib.rs", "ref": ref})
    d.ask("repo/refs", {"repo": repo("vcs")})
    d.ask("repo/refs", {"repo": repo("vcs")})
    d.ask("repo/commit", {"repo": repo("vcs"), "sha": "main"})
    for method, params in (("repo/tree", {"repo": repo("denied"), "ref": None}),
                           ("repo/tree", {"repo": repo("throttled"), "ref": None}),
                           ("repo/blob", {"repo": repo("denied"), "sha": "0" * 64}),
                           ("repo/log", {"repo": repo("nope"), "path": None, "ref": None, "limit": None}),
                           ("repo/tree", {"repo": repo("vcs"), "ref": "no-such-ref"}),
                           ("org/repos", {"org": org}), ("repo/clone_url", {"repo": repo("vcs")})):
        d.ask(method, params)
    d.send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "deep", "value": {}}})
    time.sleep(LATE_S)   # a report's window for late frames, not a synchronisation


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="+", default=())
    ap.add_argument("--fixture", type=Path)
    args = ap.parse_args(argv)
    import tempfile

    switches = [s for s in (*DEEP, *DEEP_CONTROLS) if not args.only or s in args.only]
    with tempfile.TemporaryDirectory(prefix="forge-deep-monitor-") as tmp:
        fixture = args.fixture
        if fixture is None:
            from fixture.materialize import materialize
            fixture = materialize(Path(tmp)).path
        rows = []
        for switch in switches:
            cache = Path(tmp) / f"cache-{switch}"
            d = Driven(switch, fixture, cache)
            try:
                sweep(d)
            finally:
                d.close()
            counts: dict[str, int] = {}
            for f in d.findings:
                if f.strength == "must":
                    counts[f.rule] = counts.get(f.rule, 0) + 1
            kind = "control" if switch in DEEP_CONTROLS else next(iter(DEEP[switch].expected))
            seen = ", ".join(f"{r} [{n}]" for r, n in sorted(counts.items())) or "-"
            rows.append((switch, kind, seen))
            print(f"{switch:38} {kind:9} {seen}", flush=True)
    return 0


if __name__ == "__main__":
    os.environ.setdefault("FORGE_ORG", "local")
    sys.exit(main())
