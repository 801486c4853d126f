"""What a run tells its reader: the JSON report, JUnit XML, the terminal
summary, the failure text of one case and the per-case JSONL transcripts.

Pure functions over plain data (no pytest, no processes): the plugin collects
``CaseResult``s and hands them here.

The JSON report (issue 4; more keys are allowed and present):

    {"suite": "forge-conformance", "version": "<pyproject version>", "protocol": "1.6",
     "adapter": {"argv": [...]},
     "summary": {"passed": n, "failed": n, "skipped": n, "warnings": n, "duration_s": x},
     "cases": [{"id", "group", "title", "spec", "outcome", "message", "warnings",
                "duration_s", "transcript"}, ...]}

Every registry id appears exactly once, in id order; a case that was not
selected is "skipped" with message "not selected".
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from cases import registry

SUITE = "forge-conformance"
PROTOCOL = "1.6"
NOT_SELECTED = "not selected"
NOT_RUN_INTERRUPTED = "not run (interrupted)"
NOT_RUN = "not run (the session stopped before it)"
_ORDER = {"failed": 2, "skipped": 1, "passed": 0}


def version() -> str:
    """The suite version from pyproject.toml (Python 3.10 has no tomllib)."""
    try:
        text = (Path(__file__).resolve().parent.parent / "pyproject.toml").read_text("utf-8")
    except OSError:
        return "unknown"
    m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', text)
    return m.group(1) if m else "unknown"


@dataclass
class CaseResult:
    id: str
    outcome: str                    # passed | failed | skipped
    message: str = ""
    warnings: list[str] = field(default_factory=list)
    duration_s: float = 0.0
    transcript: str | None = None
    details: str = ""               # the full failure text (failures only)


def merge(a: CaseResult, b: CaseResult) -> CaseResult:
    """Two runs of one id (a suite bug, or a retry): the worse outcome wins."""
    worse, other = (a, b) if _ORDER[a.outcome] >= _ORDER[b.outcome] else (b, a)
    return CaseResult(worse.id, worse.outcome, worse.message, a.warnings + b.warnings,
                      round(a.duration_s + b.duration_s, 3), worse.transcript or other.transcript,
                      worse.details)


# ------------------------------------------------------------------ text helpers

def cut(text: str, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show(value: Any, limit: int = 200, *, quote: bool = False) -> str:
    """Evidence for a message: compact JSON, strings as written unless ``quote``
    (a case telling "1" from 1 quotes them)."""
    if isinstance(value, str) and not quote:
        return cut(value, limit)
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(text, limit)


def _indent(lines: list[str], pad: str = "    ") -> list[str]:
    return [pad + line for line in lines]


def failure_text(case: registry.Case, evidence: list[str], transcripts: list[tuple[str, list]],
                 stderr: list[tuple[str, str]], rerun: str, *, frames: int = 12,
                 stderr_lines: int = 20) -> str:
    """What a user reads for one failed case: title, spec, expected vs got, the
    case's last wire frames, the adapter's stderr tail, the rerun command."""
    out = [f"[{case.id}] {case.title}", f"spec: {case.spec}", *evidence]
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
    out.append(f"rerun: {rerun}")
    return "\n".join(out)


def write_transcript(path: Path, transcripts: list[tuple[str, list]]) -> None:
    """One JSONL file: every entry of the case, each tagged with its process."""
    with open(path, "w", encoding="utf-8") as f:
        for label, entries in transcripts:
            for e in entries:
                row = {"process": label, **e.to_dict()}
                f.write(json.dumps(row, ensure_ascii=False, default=repr) + "\n")


# ------------------------------------------------------------------ the report

def build(results: dict[str, CaseResult], *, selected, collected, adapter_argv: list[str],
          interrupted: bool, duration_s: float) -> dict:
    """The JSON report (see module doc) from the results of the cases that ran."""
    selected, collected = set(selected), set(collected)
    cases = []
    for c in registry.REGISTRY:
        r = results.get(c.id)
        if r is None:
            if c.id not in selected:
                message = NOT_SELECTED
            elif interrupted:
                message = NOT_RUN_INTERRUPTED
            elif c.id not in collected:
                message = f"not implemented: no test for {c.id} in {c.module} (a suite bug)"
            else:
                message = NOT_RUN
            r = CaseResult(c.id, "skipped", message)
        row = {"id": c.id, "group": c.group, "title": c.title, "spec": c.spec,
               "since": c.since, "outcome": r.outcome, "message": r.message,
               "warnings": list(r.warnings), "duration_s": r.duration_s,
               "transcript": r.transcript}
        if r.details:
            row["details"] = r.details
        cases.append(row)
    summary = {k: sum(1 for row in cases if row["outcome"] == k)
               for k in ("passed", "failed", "skipped")}
    summary["warnings"] = sum(len(row["warnings"]) for row in cases)
    summary["duration_s"] = round(duration_s, 3)
    return {"suite": SUITE, "version": version(), "protocol": PROTOCOL,
            "adapter": {"argv": list(adapter_argv)}, "summary": summary,
            "interrupted": interrupted, "cases": cases}


def skeleton(adapter_argv: list[str], *, interrupted: bool, duration_s: float = 0.0,
             selected=()) -> dict:
    """A report where nothing ran (Ctrl-C during the pre-flight)."""
    return build({}, selected=selected, collected=(), adapter_argv=adapter_argv,
                 interrupted=interrupted, duration_s=duration_s)


def write_json(path: Path, rep: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rep, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_junit(path: Path, rep: dict) -> None:
    """JUnit XML: one testcase per case id (classname = the group)."""
    s = rep["summary"]
    suite = ET.Element("testsuite", name=SUITE, tests=str(len(rep["cases"])),
                       failures=str(s["failed"]), errors="0", skipped=str(s["skipped"]),
                       time=f"{s['duration_s']:.3f}")
    for row in rep["cases"]:
        tc = ET.SubElement(suite, "testcase", classname=f"{SUITE}.{row['group']}",
                           name=row["id"], time=f"{row['duration_s']:.3f}")
        if row["outcome"] == "failed":
            el = ET.SubElement(tc, "failure", message=f"[{row['id']}] {row['title']}: "
                                                      f"{row['message']}")
            el.text = row.get("details") or row["message"]
        elif row["outcome"] == "skipped":
            ET.SubElement(tc, "skipped", message=row["message"])
        if row["warnings"]:
            ET.SubElement(tc, "system-out").text = "\n".join(
                f"warning: {w}" for w in row["warnings"])
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)


# ------------------------------------------------------------------ terminal

_MARK = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}


def summary_lines(rep: dict, *, verbose: bool = False) -> list[str]:
    """One line per case that was selected, then the per-group table and the
    protocol levels met in full."""
    lines = [f"{rep['suite']} {rep['version']} (protocol {rep['protocol']}) against: "
             + " ".join(rep["adapter"]["argv"])]
    rows = rep["cases"]
    shown = [r for r in rows if r["message"] != NOT_SELECTED]
    for r in shown:
        line = f"{r['id']}  {_MARK[r['outcome']]}  {r['title']}"
        lines.append(line)
        if r["outcome"] != "passed" and r["message"]:
            lines.append(f"          {cut(r['message'], 300 if not verbose else 2000)}")
        for w in r["warnings"]:
            lines.append(f"          warning: {cut(w, 300 if not verbose else 2000)}")
    hidden = len(rows) - len(shown)
    if hidden:
        lines.append(f"({hidden} case(s) not selected)")
    lines.append("")
    lines.extend(group_table(shown))
    lines.append("")
    lines.extend(level_lines(rows))
    s = rep["summary"]
    lines.append("")
    lines.append(f"{s['passed']} passed, {s['failed']} failed, {s['skipped']} skipped, "
                 f"{s['warnings']} warning(s) in {s['duration_s']:.2f}s"
                 + (" (interrupted)" if rep.get("interrupted") else ""))
    return lines


def group_table(rows: list[dict]) -> list[str]:
    out = [f"{'group':<12} {'passed':>6} {'failed':>6} {'skipped':>7}"]
    totals = [0, 0, 0]
    for g in registry.GROUPS:
        if not any(r["group"] == g for r in rows):
            continue
        counts = [sum(1 for r in rows if r["group"] == g and r["outcome"] == k)
                  for k in ("passed", "failed", "skipped")]
        totals = [a + b for a, b in zip(totals, counts)]
        out.append(f"{g:<12} {counts[0]:>6} {counts[1]:>6} {counts[2]:>7}")
    out.append(f"{'total':<12} {totals[0]:>6} {totals[1]:>6} {totals[2]:>7}")
    return out


def level_lines(rows: list[dict]) -> list[str]:
    """Which protocol levels the adapter met in full: every case of the level passed."""
    met, out = [], []
    for level in registry.LEVELS:
        mine = [r for r in rows if r["since"] == level]
        failed = [r["id"] for r in mine if r["outcome"] == "failed"]
        unselected = [r["id"] for r in mine if r["message"] == NOT_SELECTED]
        skipped = [r["id"] for r in mine
                   if r["outcome"] == "skipped" and r["message"] != NOT_SELECTED]
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
