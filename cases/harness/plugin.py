"""The pytest plugin: hooks and fixtures between the case modules and a live adapter.

The hooks create the session's Harness (cases/harness/session.py), tell the case
API which case is running, turn what escapes a case into its outcome (an
adapter's misbehaviour in one sentence with the case's transcript, the
adapter's stderr tail and the rerun command, via cases/report/explain.py; anything
else is a suite bug and keeps its traceback) and hand the outcomes to
cases/report/writers.py. The fixtures are ``adapter`` (the group's live adapter),
``spawn`` (a case's own processes), ``fx`` and ``fx_mutable``.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from cases.kit import api, options
from cases.harness import finish, session as harness, stopping, worker
from cases.report import writers as report
from cases.report.explain import (describe_error, describe_start, evidence_lines, is_adapter_fault,
                           is_start_failure)
from cases.harness.fixture_view import FixtureView
from cases.harness.session import TRANSCRIPT_FRAMES, CaseRun, GroupSlot, Harness
from cases.harness.providers import new_provider
from cases.registry import Case
from cases.kit.settings import REPO_ROOT

STDERR_TAIL_LINES = 20


# ------------------------------------------------------------------ hooks

def pytest_addoption(parser: pytest.Parser) -> None:
    options.add_pytest_options(parser.getgroup("forge-conformance"))


def pytest_configure(config: pytest.Config) -> None:
    if harness.of(config) is None:
        h = config.stash[harness.HARNESS] = Harness(config)
        config.stash[harness.ATTACHED] = api.attach(h)   # case code's way to it, until unconfigure


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    h = harness.of(config)
    if h is None:
        return
    for item in items:   # `pytest cases -k FC-043` selects by case id
        c = _case_of(item)
        if c is not None:
            item.extra_keyword_matches.add(c.id)
    if h.select:
        wanted = set(h.select)
        keep = [i for i in items if _case_of(i) is None or _case_of(i).id in wanted]
        dropped = [i for i in items if i not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep
    _run_in_order(items)


def _run_in_order(items) -> None:
    """Modules stay in collection order; inside a module, the cases follow its
    RUN_ORDER (case ids), when it has one. A group whose adapter is watched
    for TAIL_S after its last streamed reply or notification
    (harness.TAILED_GROUPS) runs those cases early, so that window ends while the
    run goes on rather than after its last case."""
    modules: dict[str, int] = {}
    for item in items:
        modules.setdefault(getattr(getattr(item, "module", None), "__name__", ""), len(modules))

    def position(item) -> tuple[int, int]:
        module = getattr(item, "module", None)
        order = getattr(module, "RUN_ORDER", ())
        c = _case_of(item)
        at = order.index(c.id) if c is not None and c.id in order else len(order)
        return modules[getattr(module, "__name__", "")], at
    items[:] = sorted(items, key=position)


def pytest_deselected(items) -> None:
    h = harness.of(items[0].config) if items else None
    if h is not None:   # -k / -m (and --forge-select's own, reported as not selected)
        h.deselected.update(c.id for c in (_case_of(i) for i in items) if c is not None)


def pytest_collection_finish(session) -> None:
    h = harness.of(session.config)
    if h is not None:   # after every deselection (--forge-select, -k, -m)
        h.collected = [c.id for c in (_case_of(i) for i in session.items) if c is not None]


def _case_of(item) -> Case | None:
    fn = getattr(item, "function", None)
    return getattr(fn, "forge_case", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    h, c = harness.of(item.config), _case_of(item)
    if h is None or c is None:
        yield
        return
    stopping.check()   # a stop whose KeyboardInterrupt was swallowed on the way ends here
    run = h.current = CaseRun(c)   # (the case API reads it: api.running())
    try:
        outcome = yield
    finally:
        for p, _ in run.attached:   # the frames of this case, judged by the monitor
            h.harvest(p, c.id)
        h.current = None
    if outcome.excinfo is not None:   # KeyboardInterrupt mid-case: it did not run
        return
    result = report.CaseResult(
        id=c.id, outcome=run.outcome, message=run.message, warnings=list(run.warnings),
        duration_s=round(time.monotonic() - run.started, 3))
    try:
        path = h.transcript_path(run)
    except OSError as exc:
        path = None
        h.notes.append(f"could not write the transcript of {c.id}: {exc}")
    result.transcript = str(path) if path else None
    result.details = run.longrepr
    result.rerun = h.settings.rerun_command(c.id)
    if h.html_path:
        from cases.report import html_report
        result.wire, result.stderr = html_report.capture(run)
    prior = h.results.get(c.id)
    h.results[c.id] = result if prior is None else report.merge(prior, result)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    h = harness.of(item.config)
    c = _case_of(item)
    if h is None or c is None or h.current is None:
        return
    rep = outcome.get_result()
    run = h.current
    if rep.skipped and run.outcome == "passed":
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not reason.startswith(f"[{c.id}]"):
            reason = f"[{c.id}] {reason}"
        run.outcome, run.message = "skipped", reason
        return
    if not rep.failed:
        return
    exc = call.excinfo.value if call.excinfo is not None else None
    first = run.outcome != "failed"
    if exc is not None and is_adapter_fault(exc):
        if call.when == "setup" and is_start_failure(exc):
            sentence = f"the adapter could not be started: {describe_start(exc, run)}"
        else:
            sentence = describe_error(exc, run)
        text = report.failure_text(
            c, evidence_lines(exc, sentence), run.entries(),
            [(p.label, p.stderr_tail(4000)) for p, _ in run.attached],
            h.settings.rerun_command(c.id), frames=TRANSCRIPT_FRAMES,
            stderr_lines=STDERR_TAIL_LINES)
        rep.longrepr = text
    elif exc is not None and isinstance(exc, pytest.fail.Exception):
        sentence = str(exc.msg) if getattr(exc, "msg", None) else "failed"
        text = str(rep.longrepr)
    else:
        where = ""
        if call.excinfo is not None:
            tb = call.excinfo.traceback
            if len(tb):
                where = f" at {Path(str(tb[-1].path)).name}:{tb[-1].lineno + 1}"
        what = describe_error(exc) if exc is not None else "unknown error"
        if isinstance(exc, AssertionError):   # a bare assert in a case
            first_line = str(exc).splitlines()[0] if str(exc) else "assert"
            sentence = f"assertion failed{where}: {report.cut(first_line, 200)}"
            label = "failure"
        else:
            sentence = f"suite bug{where}: {what}"
            label = "suite bug"
        body = [sentence] + (["this is a bug in the suite, not in the adapter; please report it"]
                             if label == "suite bug" else [])
        rep.sections.append((f"forge-conformance: {label} in [{c.id}]",
                             api.case_text(c, body, h.settings.rerun_command(c.id))))
        text = f"{sentence}\n{rep.longrepr}"
    if call.when == "teardown" and not first:
        return   # the case already failed; a teardown failure adds nothing
    if first:
        run.outcome = "failed"
        run.message = sentence
        run.longrepr = text if isinstance(text, str) else str(text)


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    h = harness.of(session.config)
    if h is None:
        return
    # a KeyboardInterrupt (a stop signal, cases/harness/stopping.py) or the collection's errors
    h.interrupted = h.interrupted or exitstatus == pytest.ExitCode.INTERRUPTED \
        or stopping.came()
    if not h.interrupted:   # (an interrupted run's findings are not judged)
        h.end_tails()
        h.harvest_all()     # what the monitor found on the processes still open
    h.close()               # and looks at every cache root (FC-055)
    if h.worker_out:  # the findings are judged by the parent, on every worker's
        worker.write_part(h)
        return
    h.report = finish.conclude(h.ending(), json_path=h.json_path, junit_path=h.junit_path,
                               html_path=h.html_path)


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    h = harness.of(config)
    rep = h.report if h is not None else None
    if rep is None:
        return
    tr = terminalreporter
    tr.write_sep("=", "forge-conformance")
    for line in report.summary_block(rep, h.kept_dir, h.transcripts_dir, h.notes,
                              verbose=config.getoption("verbose") > 0):
        tr.write_line(line)


def pytest_unconfigure(config) -> None:
    h = harness.of(config)
    if h is not None:
        h.close()
        api.detach(config.stash[harness.ATTACHED])


# ---------------------------------------------------------------- fixtures

def _harness(request) -> Harness:
    h = harness.of(request.config)
    if h is None:
        raise RuntimeError("the forge-conformance plugin is not active (run `python3 run`)")
    return h


@pytest.fixture(scope="session")
def fx(request) -> FixtureView:
    """The session's materialized fixture."""
    return _harness(request).fx()


@pytest.fixture
def fx_mutable(request) -> FixtureView:
    """A private copy (alpha, beta, FAULTS.json) for a case that writes files."""
    h = _harness(request)
    view = h.mutable_copy()
    yield view
    shutil.rmtree(view.path, ignore_errors=True)


@pytest.fixture(scope="module")
def _forge_group(request):
    h = _harness(request)
    name = Path(str(request.path)).stem.removeprefix("test_")
    slot = GroupSlot(h, name)
    yield slot
    slot.retire_after_tail()   # late frames are the monitor's to judge, not lost with the process
    h.drain()               # the group's other processes are gone before the copy is judged
    #                         (one still in its window is judged again by end_tails)
    h.check_fixture(name)   # fails the group's last case if the copy was changed


@pytest.fixture
def adapter(_forge_group: GroupSlot, request):
    """The group's live, initialized adapter (replaced after a case that leaves it dirty)."""
    h = _harness(request)
    p = _forge_group.get(h.current)
    yield p
    if p.dirty() is not None:
        _forge_group.retire(wait=False)
    p.case_calls = []


@pytest.fixture
def spawn(fx: FixtureView, request):
    """Factory for a case's own adapter process; closed after the case."""
    h = _harness(request)
    made: list = []

    def factory(*, env: dict | None = None,
                init_params: dict | None = None, start: bool = True,
                fixture: FixtureView | None = None):
        n = len(made) + 1
        p = new_provider(h.settings, (fixture or fx).path, h.temp, label=f"spawn#{n}",
                         env=env, init_params=init_params)
        made.append(p)
        h.add_provider(p)
        if h.current is not None:
            h.current.attach(p)
        if start:
            p.start()
        return p

    factory.memo = h.memo   # run-scoped answers several cases judge (replies.handshakes)
    yield factory
    for p in made:
        h.dispose(p, wait=False)


# ------------------------------------------------------------ its command line

def command_line(args, selected: list[str], modules: list[str],
                fixture_dir: Path | None) -> list[str]:
    """The pytest words of a run of ``modules`` with the options above (also of
    each worker of a run in several processes, which passes no ``fixture_dir``).
    The adapter's command is not among them: the CLI hands the session its
    Settings (harness.GivenSettings), so the argv stays the list it was."""
    pargs = [*modules, "-v" if args.verbose else "-q", "--no-header",
             "-rN", "--tb=short", "-p", "no:cacheprovider",
             # its gc.collect() rounds at the end cost ~0.4 s; cases raise no unraisables
             "-p", "no:unraisableexception",
             # the cases judge with fc_assert, never a bare assert: no module rewriting
             "--assert=plain",
             "--rootdir", str(REPO_ROOT), "--forge-select", ",".join(selected)]
    if fixture_dir is not None:
        pargs += ["--forge-fixture-dir", str(fixture_dir)]
    pargs += options.forwarded(args)
    pargs += getattr(args, "pytest_args", [])
    return pargs


def run_pytest(pargs: list[str], plugins: list) -> int:
    """pytest.main with this plugin and ``plugins`` only: third-party plugins
    installed beside pytest (hypothesis, benchmark, ...) cost import time and
    have nothing to say about cases (PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 for the
    call, then as it was)."""
    import sys
    saved = os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
    os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    try:
        return int(pytest.main(pargs, plugins=[sys.modules[__name__], *plugins]))
    finally:
        if saved is None:
            os.environ.pop("PYTEST_DISABLE_PLUGIN_AUTOLOAD", None)
        else:
            os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = saved
