"""What a run tells its reader: the run report built once (``build``), then
written as JSON, JUnit XML and the terminal summary; the failure text of one
case and the per-case JSONL transcripts.

Pure functions over plain data (no pytest, no processes): the plugin collects
``CaseResult``s and hands them here; every writer reads the ``RunReport``.

The JSON report is the unstructured ``RunReport`` of cases/report/model.py
(cases/report/convert.py writes it; more keys are allowed and present):

    {"suite": "forge-conformance", "version": "<pyproject version>", "protocol": "1.6",
     "matrix": "<matrix digest>", "adapter": {"argv": [...]},
     "summary": {"passed": n, "failed": n, "skipped": n, "known": n, "warnings": n,
                 "duration_s": x},
     "cases": [{"id", "group", "title", "spec", "outcome", "message", "warnings",
                "duration_s", "transcript"}, ...]}

``version`` and ``matrix`` name what judged the run (cases/report/release.py says
what the digest covers). Every registry id appears exactly once, in id order; a case that was not
selected is "skipped" with message "not selected". ``outcome`` is passed,
failed, skipped, or (with ``--known-failures``) known: cases/report/known_failures.py
says how a policy rewrites rows and what it adds (``known_failure``,
``stale_known_failure``, ``strict_failure``, ``monitor_failure`` (failed by the
run-wide protocol monitor on traffic seen after the case ran); top-level ``known_failures``,
``strict``). Rows carry ``rerun`` (the command that reruns that case) and,
with --html, ``stderr_tail`` when the adapter wrote any.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from xml.etree import ElementTree as ET

from cases.kit import invocation
from cases import registry
from cases.report import convert, release
from cases.report.model import OUTCOMES, Adapter, CaseRow, RunReport, Summary
from cases.kit.api import case_text, cut

SUITE = "forge-conformance"
PROTOCOL = "1.6"
NOT_SELECTED = "not selected"
NOT_RUN_INTERRUPTED = "not run (interrupted)"
NOT_RUN = "not run (the session stopped before it)"
NOT_RUN_DESELECTED = "not run (deselected by the pytest arguments, -k or -m)"
_ORDER = {"failed": 2, "skipped": 1, "passed": 0}


def version() -> str:
    return invocation.version()


@dataclass
class CaseResult:
    id: str
    outcome: str                    # passed | failed | skipped
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    transcript: str | None = None
    details: str = ""               # the full failure text (failures only)
    rerun: str = ""                 # the command that reruns just this case
    monitor_failure: bool = False   # failed by the run-wide protocol monitor after it ran
    # For the HTML report only (never in the JSON): each process's entries of
    # the case and its stderr tail, kept when --html asked for them.
    wire: list = field(default_factory=list)
    stderr: list = field(default_factory=list)


def merge(a: CaseResult, b: CaseResult) -> CaseResult:
    """Two runs of one id (a suite bug, or a retry): the worse outcome wins."""
    worse, other = (a, b) if _ORDER[a.outcome] >= _ORDER[b.outcome] else (b, a)
    return CaseResult(worse.id, worse.outcome, worse.message, a.warnings + b.warnings,
                      round(a.duration_s + b.duration_s, 3), worse.transcript or other.transcript,
                      worse.details, worse.rerun or other.rerun,
                      monitor_failure=worse.monitor_failure, wire=a.wire + b.wire,
                      stderr=a.stderr + b.stderr)


# ------------------------------------------------------------------ text helpers

def _indent(lines: list[str], pad: str = "    ") -> list[str]:
    return [pad + line for line in lines]


def failure_text(case: registry.Case, evidence: list[str], transcripts: list[tuple[str, list]],
                 stderr: list[tuple[str, str]], rerun: str, *, frames: int = 12,
                 stderr_lines: int = 20) -> str:
    """What a user reads for one failed case: title, spec, expected vs got, the
    case's last wire frames, the adapter's stderr tail, the rerun command."""
    out = list(evidence)
    for label, entries in transcripts:
        if not entries:
            continue
        tail = entries[-frames:]
        t0 = entries[0].t
        shown = f"last {len(tail)} of {len(entries)}" if len(entries) > len(tail) else "all"
        out.append(f"wire transcript ({label}, {shown} entries of this case):")
        out.extend(_indent([e.render(t0) for e in tail]))
    for label, text in stderr:
        lines = [ln for ln in text.splitlines() if ln.strip()][-stderr_lines:]
        if lines:
            out.append(f"adapter stderr ({label}, last {len(lines)} lines):")
            out.extend(_indent([cut(ln, 300) for ln in lines]))
    return case_text(case, out, rerun)


def write_transcript(path: Path, transcripts: list[tuple[str, list]]) -> None:
    """One JSONL file: every entry of the case, each tagged with its process."""
    with open(path, "w", encoding="utf-8") as f:
        for label, entries in transcripts:
            for e in entries:
                row = {"process": label, **e.to_dict()}
                f.write(json.dumps(row, ensure_ascii=False, default=repr) + "\n")


# ------------------------------------------------------------------ the report

def build(results: dict[str, CaseResult], *, selected, collected, adapter_argv: list[str],
          interrupted: bool, duration_s: float, policy=None, deselected=()) -> RunReport:
    """The JSON report (see module doc) from the results of the cases that ran;
    ``policy`` (cases.report.known_failures.Policy) rewrites the rows' outcomes;
    ``deselected``: the ids pytest's own -k / -m left out."""
    selected, collected, deselected = set(selected), set(collected), set(deselected)
    cases = []
    for c in registry.REGISTRY:
        r = results.get(c.id)
        if r is None:
            if c.id not in selected:
                message = NOT_SELECTED
            elif interrupted:
                message = NOT_RUN_INTERRUPTED
            elif c.id in deselected:
                message = NOT_RUN_DESELECTED
            elif c.id not in collected:
                message = f"not implemented: no test for {c.id} in {c.module} (a suite bug)"
            else:
                message = NOT_RUN
            r = CaseResult(c.id, "skipped", message)
        row = CaseRow(id=c.id, group=c.group, title=c.title, spec=c.spec, since=c.since,
                      outcome=r.outcome, message=r.message, warnings=tuple(r.warnings),
                      duration_s=r.duration_s, transcript=r.transcript,
                      details=r.details or "", rerun=r.rerun or "",
                      monitor_failure=bool(r.monitor_failure),
                      stderr_tail={label: text for label, text in r.stderr if text.strip()})
        if policy is not None:
            policy.apply(row)
        cases.append(row)
    rep = RunReport(suite=SUITE, version=version(), protocol=PROTOCOL,
                    matrix=release.matrix_digest(), adapter=Adapter(tuple(adapter_argv)),
                    summary=Summary.of(cases, duration_s), interrupted=interrupted,
                    cases=tuple(cases))
    if policy is not None and policy.active:
        rep.strict = policy.strict
        if policy.file is not None:
            rep.known_failures = policy.header(cases)
    return rep


def skeleton(adapter_argv: list[str], *, interrupted: bool, duration_s: float = 0.0,
             selected=(), policy=None) -> RunReport:
    """A report where nothing ran (Ctrl-C during the pre-flight)."""
    return build({}, selected=selected, collected=(), adapter_argv=adapter_argv,
                 interrupted=interrupted, duration_s=duration_s, policy=policy)


def write_json(path: Path, rep: RunReport, *, indent: int = 2) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(convert.to_json(rep, indent=indent), encoding="utf-8")


def junit_name(row: CaseRow) -> str:
    """A JUnit testcase name: ``FC-nnn title``."""
    return f"{row.id} {row.title}"


def write_junit(path: Path, rep: RunReport) -> None:
    """JUnit XML: one testcase per case, named ``FC-nnn title`` with the group
    as classname; spec, level, transcript, rerun line and known-failure reason
    as properties, warnings and the rerun line in system-out. A known failure
    is a skipped testcase whose message says so (CI stays green, the reason
    shows)."""
    s = rep.summary
    suite = ET.Element("testsuite", name=SUITE, tests=str(len(rep.cases)),
                       failures=str(s.failed), errors="0",
                       skipped=str(s.skipped + s.known), time=f"{s.duration_s:.3f}")
    props = ET.SubElement(suite, "properties")
    for name, value in (("version", rep.version), ("protocol", rep.protocol),
                        ("matrix", rep.matrix or "unknown"),
                        ("adapter", " ".join(rep.adapter.argv))):
        ET.SubElement(props, "property", name=name, value=str(value))
    for row in rep.cases:
        tc = ET.SubElement(suite, "testcase", classname=row.group,
                           name=junit_name(row), time=f"{row.duration_s:.3f}")
        props = ET.SubElement(tc, "properties")
        kf = row.known_failure
        for name, value in (("id", row.id), ("spec", row.spec),
                            ("since", row.since), ("outcome", row.outcome),
                            ("transcript", row.transcript), ("rerun", row.rerun or None),
                            ("known_failure", kf.reason if kf else None)):
            if value is not None:
                ET.SubElement(props, "property", name=name, value=str(value))
        if row.outcome == "failed":
            el = ET.SubElement(tc, "failure", message=f"[{row.id}] {row.title}: {row.message}")
            el.text = row.details or row.message
        elif row.outcome == "skipped":
            ET.SubElement(tc, "skipped", message=row.message)
        elif row.outcome == "known":
            reason = (kf.reason if kf else "") or "no reason given"
            ET.SubElement(tc, "skipped", message=f"known failure ({reason}): {row.message}")
        out = [f"warning: {w}" for w in row.warnings]
        if row.transcript:
            out.append(f"transcript: {row.transcript}")
        if row.rerun:
            out.append(f"rerun: {row.rerun}")
        if out:
            ET.SubElement(tc, "system-out").text = "\n".join(out)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# ------------------------------------------------------------------ terminal

_MARK = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip", "known": "KNWN"}


def summary_lines(rep: RunReport, *, verbose: bool = False) -> list[str]:
    """One line per case that was selected, then the per-group table and the
    protocol levels met in full."""
    lines = [f"{rep.suite} {rep.version} (protocol {rep.protocol}, "
             f"matrix {rep.matrix or 'unknown'}) against: " + " ".join(rep.adapter.argv)]
    rows = rep.cases
    shown = [r for r in rows if r.message != NOT_SELECTED]
    for r in shown:
        line = f"{r.id}  {_MARK[r.outcome]}  {r.title}"
        lines.append(line)
        if r.outcome != "passed" and r.message:
            lines.append(f"          {cut(r.message, 300 if not verbose else 2000)}")
        if r.outcome == "known":
            reason = (r.known_failure.reason if r.known_failure else "") or "no reason given"
            lines.append(f"          known failure: {cut(reason, 300)}")
        for w in r.warnings:
            lines.append(f"          warning: {cut(w, 300 if not verbose else 2000)}")
    hidden = len(rows) - len(shown)
    if hidden:
        lines.append(f"({hidden} case(s) not selected)")
    lines.append("")
    lines.extend(group_table(shown))
    lines.append("")
    lines.extend(level_lines(rows))
    s = rep.summary
    lines.append("")
    known = f", {s.known} known" if s.known else ""
    lines.append(f"{s.passed} passed, {s.failed} failed, {s.skipped} skipped{known}, "
                 f"{s.warnings} warning(s) in {s.duration_s:.2f}s"
                 + (" (strict)" if rep.strict else "")
                 + (" (interrupted)" if rep.interrupted else ""))
    kf = rep.known_failures
    if kf and kf.stale:
        lines.append(f"stale known failures (they pass now): remove {', '.join(kf.stale)} "
                     f"from {kf.file}")
    return lines


def group_table(rows: list[CaseRow]) -> list[str]:
    kinds = list(OUTCOMES) if any(r.outcome == "known" for r in rows) else list(OUTCOMES[:3])
    out = [f"{'group':<12} " + " ".join(f"{k:>7}" for k in kinds)]
    totals = [0] * len(kinds)
    for g in registry.GROUPS:
        if not any(r.group == g for r in rows):
            continue
        counts = [sum(1 for r in rows if r.group == g and r.outcome == k) for k in kinds]
        totals = [a + b for a, b in zip(totals, counts)]
        out.append(f"{g:<12} " + " ".join(f"{n:>7}" for n in counts))
    out.append(f"{'total':<12} " + " ".join(f"{n:>7}" for n in totals))
    return out


def level_lines(rows: list[CaseRow]) -> list[str]:
    """Which protocol levels the adapter met in full: every case of the level passed."""
    met, out = [], []
    for level in registry.LEVELS:
        mine = [r for r in rows if r.since == level]
        failed = [r.id for r in mine if r.failing]
        unselected = [r.id for r in mine if r.message == NOT_SELECTED]
        skipped = [r.id for r in mine if r.outcome == "skipped" and r.message != NOT_SELECTED]
        if not failed and not skipped and not unselected:
            met.append(level)
            continue
        bits = []
        if failed:
            bits.append(f"{len(failed)} failed ({', '.join(failed)})")
        if skipped:
            bits.append(f"{len(skipped)} skipped ({', '.join(skipped)})")
        if unselected:
            bits.append(f"{len(unselected)} not selected")
        verdict = "not met" if failed else "not shown in full"
        out.append(f"  {level}: {verdict}: of {len(mine)} cases, " + "; ".join(bits))
    head = f"protocol levels met in full: {', '.join(met) if met else 'none'}"
    return [head, *out]


def write_reports(rep: RunReport, results: dict, notes: list[str] | None = None, *,
                  json_path=None, junit_path=None, html_path=None, json_indent: int = 2) -> None:
    """The JSON, JUnit and HTML reports that were asked for (a failed write is
    a note; without ``notes`` it is raised)."""
    from cases.report import html_report
    for path, writer in ((json_path, lambda p, r: write_json(p, r, indent=json_indent)),
                         (junit_path, write_junit),
                         (html_path, lambda p, r: html_report.write(p, r, results))):
        if path:
            try:
                writer(Path(path), rep)
            except OSError as exc:
                if notes is None:
                    raise
                notes.append(f"could not write {path}: {exc}")


def summary_block(rep: RunReport, kept_dir, transcripts_dir, notes: list[str], *,
                  verbose: bool) -> list[str]:
    """What the terminal shows after the cases (also for a run in several processes)."""
    lines = summary_lines(rep, verbose=verbose)
    if kept_dir is not None:
        lines.append(f"transcripts of the failing cases: {kept_dir}")
    elif transcripts_dir is not None:
        lines.append(f"transcripts: {transcripts_dir}")
    return lines + [f"note: {note}" for note in notes]
