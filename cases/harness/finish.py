"""The end of a run, written once: the protocol monitor's findings handed to
the cases that own their rules, the known-failures policy applied, the
report built and written (JSON, JUnit, HTML), the verdict line and the exit
code. One process calls ``conclude`` at its pytest session's end
(cases/harness/plugin.py) and ``verdict`` once pytest returned (cases/cli/command.py); the
parent of a run in several processes (cases/cli/jobs.py) calls both on what all
of its workers handed over. So no end of a run is written anywhere else.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from cases.report import writers as report
from cases.report.model import RunReport
from cases.harness import stopping
from cases.kit.exits import EXIT_CANNOT_RUN, EXIT_FAILED, EXIT_OK, PROG, say
from cases.judges.monitoring import apply_findings

INTERRUPTED = "interrupted; the report lists the cases that ran"


@dataclass
class Ending:
    """What a run hands its end: the results of its cases and what the protocol
    monitor found on its processes (not judged yet), with its notes."""
    results: dict
    settings: object                     # cases.kit.settings.Settings
    policy: object                       # cases.report.known_failures.Policy
    selected: list
    collected: list
    started: float                       # time.monotonic() at its start
    seen: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    deselected: set = field(default_factory=set)
    interrupted: bool = False


def conclude(end: Ending, *, json_path=None, junit_path=None, html_path=None) -> RunReport:
    """Judge the findings (unless the run was interrupted: its cases did not all
    run), build the report with the policy applied, write the reports asked for."""
    if not end.interrupted:
        apply_findings(end.results, end.seen, end.settings, end.notes)
    rep = report.build(end.results, selected=end.selected, collected=end.collected,
                       adapter_argv=end.settings.adapter, interrupted=end.interrupted,
                       duration_s=time.monotonic() - end.started, policy=end.policy,
                       deselected=end.deselected)
    report.write_reports(rep, end.results, end.notes, json_path=json_path,
                         junit_path=junit_path, html_path=html_path)
    return rep


def verdict(rep: RunReport | None, *, interrupted: bool, counted_by_pytest: bool,
            pytest_code: int = 0) -> int:
    """The verdict line and the exit code. ``counted_by_pytest``: pytest's own
    closing line counted the cases (one process), so the suite's line is
    printed only where the suite counts differently (known, stale, --strict,
    the monitor's failures). ``pytest_code`` decides when there is no report."""
    if rep is not None and (not counted_by_pytest or (not interrupted and _recounted(rep))):
        print(verdict_line(rep), flush=True)
    if interrupted:
        return stopping.interrupted(INTERRUPTED)
    if rep is None:
        return EXIT_FAILED if pytest_code == 1 else EXIT_OK
    if nothing_ran(rep):
        return EXIT_CANNOT_RUN
    return EXIT_FAILED if rep.summary.failed else EXIT_OK


def _recounted(rep: RunReport) -> bool:
    return bool(rep.summary.known) or any(
        r.stale_known_failure or r.strict_failure or r.monitor_failure for r in rep.cases)


def nothing_ran(rep: RunReport) -> bool:
    """Whether pytest's -k / -m left out every selected case (then says so):
    a selection that runs nothing is bad usage, not a green run."""
    left_out = {r.message for r in rep.cases}
    if report.NOT_RUN_DESELECTED in left_out \
            and left_out <= {report.NOT_SELECTED, report.NOT_RUN_DESELECTED}:
        say("the --pytest arguments (-k / -m) deselect every selected case: nothing ran")
        return True
    return False


def verdict_line(rep: RunReport) -> str:
    s = rep.summary
    return (f"{PROG} verdict: {s.passed} passed, {s.failed} failed, "
            f"{s.skipped} skipped, {s.known} known")
