"""Where a suite run's time goes: ``python tests/phases.py <out.json> [run args...]``.

tests/bench.py's ``suite`` command runs the suite through this wrapper
instead of ``run``. It does what ``run`` does after its bootstrap (it must be
started with an interpreter that has the dependencies), but timestamps each
phase on the way, without any hook in cases/: the imports are done here one
step at a time, the pre-flight and fixture materialization are wrapped where
cases.cli.command looks them up, and a small pytest plugin, added where cases.cli.command
calls pytest.main, marks collection and each case. The marks (wall clock
since $FORGE_BENCH_T0, the spawn time, and this process's CPU) go to
out.json; the exit code is the suite's.
"""

import os
import sys
import time

T0 = float(os.environ.get("FORGE_BENCH_T0") or time.time())
MARKS: list = []


def mark(name: str) -> None:
    MARKS.append((name, time.time() - T0, time.process_time()))


mark("interpreter start-up")

# the checkout to time (bench.py --compare points it at another one)
ROOT = os.environ.get("FORGE_BENCH_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


class _Timing:
    """pytest plugin: collection, then every case with its module's group."""

    def __init__(self):
        self.cases: list = []       # (group, start, end)

    def pytest_collection(self, session):
        mark("pytest start-up")

    def pytest_collection_finish(self, session):
        mark("collection")

    def pytest_runtest_logstart(self, nodeid, location):
        group = os.path.basename(location[0]).removeprefix("test_").removesuffix(".py")
        self.cases.append([group, time.time() - T0, None])

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.cases:
            self.cases[-1][2] = time.time() - T0

    def pytest_sessionfinish(self, session):
        mark("cases")


def main(out: str, args: list) -> int:
    import json

    import cases.cli.command as cli
    mark("import cases.cli.command (argparse, registry)")
    from cases.harness import plugin  # noqa: F401  (what cli.run_suite imports first)
    from cases.report import writers as report
    mark("import cases.harness.plugin (pytest, wire)")
    import fixture
    import pytest

    timing = _Timing()
    real_materialize, real_preflight, real_main = fixture.materialize, cli.preflight, pytest.main
    spans: dict = {}

    def materialize(*a, **kw):
        began = time.time() - T0
        try:
            return real_materialize(*a, **kw)
        finally:
            spans.setdefault("materialize", []).append((began, time.time() - T0))

    def preflight(*a, **kw):
        mark("options, adapter checks")
        try:
            return real_preflight(*a, **kw)
        finally:
            mark("pre-flight (materialize + adapter start and initialize)")

    def main_with_timing(pargs, plugins=()):
        return real_main(pargs, plugins=[*plugins, timing])

    fixture.materialize, cli.preflight, pytest.main = materialize, preflight, main_with_timing
    try:
        code = cli.main(args)
    finally:
        mark("report, adapters stopped, fixture removed")
        groups: dict = {}
        for group, start, end in timing.cases:
            first, last = groups.get(group, (start, end))
            groups[group] = (min(first, start), max(last, end or start))
        with open(out, "w", encoding="utf-8") as fh:
            json.dump({"marks": MARKS, "groups": groups, "materialize": spans.get("materialize", []),
                       "cases": len(timing.cases)}, fh)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
