"""``python3 run --diff OLD.json NEW.json``: what changed between two JSON
reports of one adapter: cases newly failing, newly passing, new warnings, and
the version and matrix digest each names (cases/report/release.py). A case
*fails* when the adapter did not meet it (outcome failed, or known: a
known-failures file is the author's policy, not the adapter's verdict).

Both reports are read into the run report's model (cases/report/convert.py);
a report of an older release reads too, the members it did not write taking
the model's defaults. Exit 1 when a case newly fails, else 0; an input that is
not a report is ``BadReport`` (the CLI's exit 2).
"""

from __future__ import annotations

import json

from cases.report import convert
from cases.report.model import FAILING, CaseRow, RunReport

EXIT_SAME, EXIT_NEWLY_FAILING, EXIT_BAD_INPUT = 0, 1, 2
_NOT_RUN = ("not selected", "not run")   # message prefixes of a case that did not run


class BadReport(Exception):
    """A --diff input that is not a forge-conformance JSON report; the one line shown."""


def load_report(path: str) -> RunReport:
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as exc:
        raise BadReport(f"--diff: cannot read {path!r}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError):
        raise BadReport(f"--diff: {path!r} is not JSON (a forge-conformance report is "
                        f"written by --json)") from None
    if not (isinstance(data, dict) and data.get("suite") == "forge-conformance"
            and isinstance(data.get("cases"), list)):
        raise BadReport(f"--diff: {path!r} is not a forge-conformance JSON report "
                        f"(write one with --json)")
    for row in data["cases"]:
        if not (isinstance(row, dict) and isinstance(row.get("id"), str)
                and isinstance(row.get("outcome"), str)):
            raise BadReport(f"--diff: {path!r} has a case row without an id and an outcome")
    try:
        return convert.read(data)
    except convert.ShapeError as exc:
        raise BadReport(f"--diff: {path!r} is not a forge-conformance JSON report: "
                        f"{exc}") from None


def _ran(row: CaseRow | None) -> bool:
    return row is not None and not row.message.startswith(_NOT_RUN)


def _label(row: CaseRow) -> str:
    return f"{row.id}  {row.title}".rstrip()


def _cut(text: str, limit: int = 110) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def diff(old: RunReport, new: RunReport) -> tuple[list[str], bool]:
    """The lines ``--diff`` prints and whether a case newly fails."""
    before = {r.id: r for r in old.cases}
    after = {r.id: r for r in new.cases}
    failing, passing, warned, other, gone = [], [], [], [], []
    not_compared = 0
    for cid in sorted(set(before) | set(after)):
        was, now = before.get(cid), after.get(cid)
        if now is None:
            gone.append(f"  {_label(was)}")
            continue
        if was is not None and not (_ran(was) and _ran(now)):
            not_compared += _ran(was) != _ran(now)
            continue
        if was is None and not _ran(now):
            continue
        new_case = " (a new case)" if was is None else ""
        old_outcome = was.outcome if was is not None else None
        if now.failing and old_outcome not in FAILING:
            known = " (listed as known)" if now.outcome == "known" else ""
            failing.append(f"  {_label(now)}{new_case}{known}")
            failing.append(f"      {_cut(now.message)}")
        elif old_outcome in FAILING and not now.failing:
            passing.append(f"  {_label(now)}  ({old_outcome} -> {now.outcome})")
        elif old_outcome is not None and old_outcome != now.outcome:
            other.append(f"  {_label(now)}  ({old_outcome} -> {now.outcome})")
        elif was is None:
            other.append(f"  {_label(now)}  (a new case: {now.outcome})")
        seen = set(was.warnings) if was is not None else set()
        fresh = [w for w in now.warnings if w not in seen]
        for w in fresh:
            warned.append(f"  {now.id}  {_cut(w)}")
    lines = _header(old, new)
    for title, block in (("newly failing", failing), ("newly passing", passing),
                         ("new warnings", warned), ("other changes", other),
                         ("no longer cases", gone)):
        count = len([ln for ln in block if not ln.startswith("      ")])
        if count:
            lines += ["", f"{title} ({count}):", *block]
    if not_compared:
        lines += ["", f"{not_compared} case(s) ran in only one of the two runs (not selected, "
                      f"or not run): not compared"]
    if not (failing or passing or warned or other or gone):
        lines += ["", "no verdict changed"]
    return lines, bool(failing)


def _header(old: RunReport, new: RunReport) -> list[str]:
    out = []
    for key in ("version", "protocol", "matrix"):
        a, b = getattr(old, key) or "unknown", getattr(new, key) or "unknown"
        out.append(f"{key:<9}{a} -> {b}" if a != b else f"{key:<9}{a} (same)")
    if old.matrix and old.matrix == new.matrix:
        out.append("         the same cases judged both runs: any change is the adapter's")
    argv_a, argv_b = old.adapter.argv, new.adapter.argv
    if argv_a != argv_b:
        out.append(f"adapter  {' '.join(map(str, argv_a))} -> {' '.join(map(str, argv_b))}")
    s_a, s_b = old.summary, new.summary
    counts = [f"{k} {getattr(s_a, k)} -> {getattr(s_b, k)}"
              for k in ("passed", "failed", "skipped", "known")
              if getattr(s_a, k) or getattr(s_b, k)]
    if counts:
        out.append("summary  " + ", ".join(counts))
    return out


def diff_main(old_path: str, new_path: str) -> int:
    """``--diff OLD NEW``: 1 when a case newly fails, 0 otherwise (2: BadReport, by the CLI)."""
    old, new = load_report(old_path), load_report(new_path)
    lines, newly_failing = diff(old, new)
    print("\n".join([f"forge-conformance --diff {old_path} -> {new_path}", *lines]), flush=True)
    return EXIT_NEWLY_FAILING if newly_failing else EXIT_SAME
