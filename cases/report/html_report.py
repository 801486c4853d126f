"""The single-file HTML report (``--html PATH``): what a person looks at.

One file, no network, no script, no external asset: inline CSS and native
``<details>``. It shows the run's header (suite, version, matrix digest,
adapter, verdict), a summary by protocol level and by group, the case matrix
coloured by outcome (passed, failed, known, warned = passed with warnings,
skipped), and a section
per case with its title, spec, level, message, warnings, known-failure reason,
rerun command, transcript path, the adapter's stderr tail and the case's wire
transcript: every frame both ways with its time since the case's first entry,
process and generation; frames the host dropped (routing outcome other than
delivered) and framing violations are marked.

Everything from the adapter is hostile text: every value goes through
``html.escape``; nothing is ever inserted raw.

The plugin keeps each case's entries (``capture``) only when --html asked,
bounded to the last ``FRAMES`` entries per process and ``FRAME_CHARS``
characters per frame.
"""

from __future__ import annotations

import html
import time
from pathlib import Path

from cases import registry
from cases.report.model import CaseRow, RunReport

FRAMES = 400          # entries kept per process per case
FRAME_CHARS = 700     # characters shown of one frame
STDERR_CHARS = 4000
OUTCOME_LABEL = {"passed": "passed", "failed": "failed", "known": "known failure",
                 "warned": "passed with warnings", "skipped": "skipped"}


def capture(run) -> tuple[list, list]:
    """(wire, stderr) of a running case for the report: [(label, dropped, [entry
    dicts])] and [(label, stderr tail)]."""
    wire = []
    for label, entries in run.entries():
        kept = entries[-FRAMES:]
        wire.append((label, len(entries) - len(kept), [e.to_dict() for e in kept]))
    stderr = []
    for p, _ in run.attached:
        try:
            stderr.append((p.label, p.stderr_tail(STDERR_CHARS)))
        except OSError:
            pass
    return wire, stderr


def shown_outcome(row: CaseRow) -> str:
    """The matrix colour: a pass with warnings is "warned"."""
    if row.outcome == "passed" and row.warnings:
        return "warned"
    return row.outcome


def _e(value) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;
 color:#1d2330;background:#f5f6f8}
main{max-width:1240px;margin:0 auto;padding:20px 20px 60px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 10px}
code,pre,.mono{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.meta{color:#555;margin:0 0 4px;word-break:break-all}
.verdict{display:inline-block;padding:3px 10px;border-radius:4px;font-weight:600;color:#fff}
.v-ok{background:#2e7d32}.v-fail{background:#c62828}.v-int{background:#6d4c41}
.cols{display:flex;gap:20px;flex-wrap:wrap}.cols>div{flex:1 1 500px}
table{border-collapse:collapse;width:100%;background:#fff}
th,td{border:1px solid #dde1e6;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#eef0f3;font-weight:600;font-size:13px}.counts td{white-space:nowrap}td.n{text-align:right;font-variant-numeric:tabular-nums}
.matrix{display:grid;grid-template-columns:repeat(auto-fill,minmax(190px,1fr));gap:6px}
.tile{display:block;padding:6px 8px;border-radius:4px;text-decoration:none;color:#111;
 border-left:6px solid;background:#fff;min-height:52px;overflow:hidden}
.tile b{display:block}.tile span{font-size:12px;color:#333;display:block;
 overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.o-passed{border-color:#2e7d32;background:#e8f5e9}.o-failed{border-color:#c62828;background:#ffebee}
.o-known{border-color:#7b1fa2;background:#f3e5f5}.o-warned{border-color:#f9a825;background:#fff8e1}
.o-skipped{border-color:#9e9e9e;background:#f0f0f0}
.badge{display:inline-block;padding:1px 7px;border-radius:3px;font-size:12px;font-weight:600;
 color:#fff;margin-left:6px;vertical-align:1px}
.b-passed{background:#2e7d32}.b-failed{background:#c62828}.b-known{background:#7b1fa2}
.b-warned{background:#e0a100}.b-skipped{background:#8d8d8d}
.legend span{margin-right:14px}
details.case{background:#fff;border:1px solid #dde1e6;border-left:6px solid;border-radius:4px;
 margin:8px 0;padding:0}
.case.o-passed{border-left-color:#2e7d32}.case.o-failed{border-left-color:#c62828}
.case.o-known{border-left-color:#7b1fa2}.case.o-warned{border-left-color:#f9a825}
.case.o-skipped{border-left-color:#9e9e9e}
details.case>summary{cursor:pointer;padding:8px 12px;font-weight:600}
details.case>div{padding:4px 14px 14px}
dl{display:grid;grid-template-columns:140px 1fr;gap:3px 12px;margin:6px 0}
dt{color:#555}dd{margin:0;word-break:break-word}
.msg{white-space:pre-wrap;word-break:break-word}
pre{background:#f7f7f9;border:1px solid #e3e3e8;padding:8px;overflow-x:auto;white-space:pre-wrap;
 word-break:break-all;margin:4px 0;max-height:360px;overflow-y:auto}
table.wire{table-layout:fixed;font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace}
table.wire td{padding:2px 6px;border-color:#eceef1}
table.wire col.t{width:76px}table.wire col.g{width:150px}table.wire col.d{width:34px}
table.wire col.k{width:170px}
table.wire td.f{white-space:pre-wrap;word-break:break-all}
tr.d-out td.d{color:#1565c0}tr.d-in td.d{color:#2e7d32}tr.d-event{color:#666;font-style:italic}
tr.d-stderr{color:#8d6e63}tr.mark{background:#fff3e0}tr.viol{background:#ffebee}
.tag{font-weight:700;color:#c62828}
.note{color:#666;font-style:italic}
"""


def _badge(outcome: str) -> str:
    return f'<span class="badge b-{outcome}">{_e(OUTCOME_LABEL[outcome])}</span>'


def _counts_table(title: str, keys: list[tuple[str, str]], rows: list[CaseRow], field: str,
                  extra=None) -> str:
    kinds = ["passed", "warned", "failed", "known", "skipped"]
    head = "".join(f"<th>{_e(OUTCOME_LABEL[k])}</th>" for k in kinds)
    extra_head = f"<th>{_e(extra[0])}</th>" if extra else ""
    out = [f'<table class="counts"><tr><th>{_e(title)}</th>{head}{extra_head}</tr>']
    for key, label in keys:
        mine = [r for r in rows if getattr(r, field) == key]
        if not mine:
            continue
        cells = "".join(f'<td class="n">{sum(1 for r in mine if shown_outcome(r) == k) or ""}</td>'
                        for k in kinds)
        extra_cell = f"<td>{_e(extra[1](mine))}</td>" if extra else ""
        out.append(f"<tr><td>{_e(label)}</td>{cells}{extra_cell}</tr>")
    out.append("</table>")
    return "".join(out)


def _level_verdict(rows: list[CaseRow]) -> str:
    if any(r.failing for r in rows):
        return "not met"
    if any(r.outcome == "skipped" for r in rows):
        return "not shown in full"
    return "met in full"


def _wire_table(wire: list) -> str:
    if not any(entries for _, _, entries in wire):
        return '<p class="note">no wire traffic recorded for this case</p>'
    out = []
    for label, dropped, entries in wire:
        if not entries:
            continue
        t0 = entries[0]["t"]
        out.append(f"<p><b>{_e(label)}</b>: {len(entries)} entries"
                   + (f" (the {dropped} before them are not shown; the JSONL transcript "
                      f"has them)" if dropped else "") + "</p>")
        out.append('<table class="wire"><colgroup><col class="t"><col class="g"><col class="d">'
                   '<col class="k"><col></colgroup>'
                   "<tr><th>t (s)</th><th>process</th><th></th><th>kind</th><th>frame</th></tr>")
        for e in entries:
            direction = e.get("direction", "")
            arrow = {"out": "→", "in": "←", "stderr": "!!", "event": "**"}.get(direction, "")
            kind = str(e.get("kind", ""))
            outcome = e.get("outcome")
            classes = [f"d-{direction}"]
            tag = ""
            if kind == "violation":
                classes.append("viol")
                tag = f' <span class="tag">violation{(": " + _e(outcome)) if outcome else ""}</span>'
            elif direction == "in" and outcome and outcome != "delivered":
                classes.append("mark")
                tag = f' <span class="tag">dropped: {_e(outcome)}</span>'
            raw = str(e.get("raw", ""))
            size = e.get("size") or len(raw)
            text = _cut(raw, FRAME_CHARS)
            if size > len(raw):
                text += f"  … cut in the recording ({size} bytes)"
            t = e.get("t")
            when = f"{t - t0:.3f}" if isinstance(t, (int, float)) else ""
            out.append(f'<tr class="{" ".join(classes)}"><td class="n">{when}</td>'
                       f"<td>{_e(label)} g{_e(e.get('generation'))}</td>"
                       f'<td class="d">{arrow}</td><td>{_e(kind)}{tag}</td>'
                       f'<td class="f">{_e(text)}</td></tr>')
        out.append("</table>")
    return "".join(out)


def _case_section(row: CaseRow, result) -> str:
    o = shown_outcome(row)
    c = registry.by_id(row.id)
    is_open = " open" if o in ("failed", "known") else ""
    items = [("group", f"{registry.GROUP_HEADINGS.get(c.group, c.group)} ({c.group})"),
             ("spec", row.spec), ("protocol level", row.since or c.since),
             ("outcome", OUTCOME_LABEL[o]), ("duration", f"{row.duration_s:.3f} s")]
    kf = row.known_failure
    if kf:
        items.append(("known failure", f"{kf.reason or 'no reason given'} "
                                       f"(listed in {kf.file})"))
    if row.transcript:
        items.append(("transcript", row.transcript))
    dl = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in items)
    parts = [f'<details class="case o-{o}" id="{_e(row.id)}"{is_open}>'
             f"<summary>{_e(row.id)} — {_e(row.title)}{_badge(o)}</summary><div>"
             f"<dl>{dl}</dl>"]
    if row.message:
        parts.append(f'<p><b>message</b></p><div class="msg">{_e(row.message)}</div>')
    if row.warnings:
        parts.append("<p><b>warnings</b></p><ul>"
                     + "".join(f'<li class="msg">{_e(w)}</li>' for w in row.warnings)
                     + "</ul>")
    if row.rerun:
        parts.append(f"<p><b>rerun</b></p><pre>{_e(row.rerun)}</pre>")
    if row.details and row.failing:
        parts.append(f"<details><summary>full failure text</summary>"
                     f"<pre>{_e(row.details)}</pre></details>")
    stderr = [(label, text) for label, text in (result.stderr if result else [])
              if text.strip()]
    if stderr:
        for label, text in stderr:
            lines = [ln for ln in text.splitlines() if ln.strip()][-20:]
            parts.append(f"<p><b>adapter stderr</b> ({_e(label)}, last {len(lines)} lines)</p>"
                         f"<pre>{_e(chr(10).join(lines))}</pre>")
    else:
        parts.append('<p><b>adapter stderr</b>: <span class="note">nothing</span></p>')
    parts.append("<p><b>wire transcript</b></p>")
    if result is None:
        parts.append(f'<p class="note">{_e(row.message or "the case did not run")}</p>')
    else:
        parts.append(_wire_table(result.wire))
    parts.append("</div></details>")
    return "".join(parts)


def render(rep: RunReport, results: dict) -> str:
    rows = rep.cases
    s = rep.summary
    if rep.interrupted:
        verdict, vclass = "interrupted", "v-int"
    elif s.failed:
        verdict, vclass = f"{s.failed} failed", "v-fail"
    else:
        verdict, vclass = "no case failed", "v-ok"
    counts = ", ".join(f"{getattr(s, k)} {k}" for k in ("passed", "failed", "known", "skipped"))
    header = (f"<h1>{_e(rep.suite)} {_e(rep.version)} "
              f"<small>(protocol {_e(rep.protocol)}, "
              f"matrix {_e(rep.matrix or 'unknown')})</small></h1>"
              f'<p class="meta">adapter: <code>{_e(" ".join(rep.adapter.argv))}</code></p>'
              f'<p class="meta">written {_e(time.strftime("%Y-%m-%d %H:%M:%S %Z"))}; '
              f"{_e(counts)}, {s.warnings} warning(s) in {s.duration_s:.2f} s"
              + (" — strict" if rep.strict else "") + "</p>"
              f'<p><span class="verdict {vclass}">{_e(verdict)}</span></p>')
    kf = rep.known_failures
    if kf:
        header += (f'<p class="meta">known failures from <code>{_e(kf.file)}</code>: '
                   f"{len(kf.listed)} listed, {len(kf.known)} failed as known"
                   + (f", <b>stale (they pass now): {_e(', '.join(kf.stale))}</b>"
                      if kf.stale else "") + "</p>")
    levels = sorted({r.since for r in rows if r.since},
                    key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))
    level_table = _counts_table("protocol level", [(v, v) for v in levels], rows, "since",
                                ("verdict", _level_verdict))
    group_table = _counts_table("group", [(g, registry.GROUP_HEADINGS.get(g, g))
                                          for g in registry.GROUPS], rows, "group")
    legend = '<p class="legend">' + "".join(_badge(k) for k in OUTCOME_LABEL) + "</p>"
    tiles = "".join(f'<a class="tile o-{shown_outcome(r)}" href="#{_e(r.id)}" '
                    f'title="{_e(r.title)}"><b>{_e(r.id)}</b>'
                    f"<span>{_e(r.title)}</span></a>" for r in rows)
    sections = "".join(_case_section(r, results.get(r.id)) for r in rows)
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width,initial-scale=1">'
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "style-src 'unsafe-inline'\">"
            f"<title>{_e(rep.suite)} report — {_e(verdict)}</title>"
            f"<style>{CSS}</style></head><body><main>{header}"
            f'<div class="cols"><div><h2>By protocol level</h2>{level_table}</div>'
            f"<div><h2>By group</h2>{group_table}</div></div>"
            f'<h2>Matrix</h2>{legend}<div class="matrix">{tiles}</div>'
            f"<h2>Cases</h2>{sections}</main></body></html>\n")


def write(path: Path, rep: RunReport, results: dict) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(rep, results), encoding="utf-8")
