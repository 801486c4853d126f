"""COVERAGE.md and the README's counts, rendered from cases/judges/rules.json and
registry.SPEC_RULES.

    python3 -m cases.judges.coverage            # the counts
    python3 -m cases.judges.coverage --update   # rewrite COVERAGE.md and the README's counts
    python3 -m cases.judges.coverage --check    # exit 1: the data inconsistent or a file stale
    python3 -m cases.judges.coverage --missing  # the MUSTs no case judges yet (exit 1 if any)

tests/test_coverage_map.py keeps both files equal to what this renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cases.judges import rules as R
from cases.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[2]
COVERAGE_PATH = ROOT / "COVERAGE.md"
README_PATH = ROOT / "README.md"
BEGIN, END = "<!-- coverage:begin -->", "<!-- coverage:end -->"

LEVEL_LABELS = {"MUST": "MUST / MUST NOT", "SHOULD": "SHOULD / SHOULD NOT", "MAY": "MAY"}


def _cell(text: str) -> str:
    """``text`` safe in a table cell: pipes escaped, and ``<`` outside code
    spans too (``<org>/alpha`` would read as an HTML tag)."""
    parts = text.replace("|", "\\|").replace("\n", " ").split("`")
    return "`".join(p if n % 2 else p.replace("<", "&lt;") for n, p in enumerate(parts))


def _open_label(level: str, n: int) -> str:
    if not n:
        return "0"
    return f"{n} waiting for a case" if level == "MUST" else f"{n} not judged"


def counts_table(rules) -> str:
    """The per-level counts (README and COVERAGE.md share it)."""
    counts = R.tally(rules)
    rows = ["| Level | Rules | Judged by a case | Host-side | Not observable over stdio "
            "| Out of scope | Open |", "|---|---|---|---|---|---|---|"]
    for level in R.LEVELS:
        c = counts[level]
        rows.append(f"| {LEVEL_LABELS[level]} | {c['total']} | {c['judged']} of {c['total']} "
                    f"| {c['host-side']} | {c['not-observable']} | {c['out-of-scope']} "
                    f"| {_open_label(level, c['open'])} |")
    return "\n".join(rows) + "\n"


def _judged_by(rule) -> str:
    if rule.judged:
        return ", ".join(rule.cases)
    if rule.settled:
        return f"*{R.STATUSES[rule.status]}*: {_cell(rule.reason)}"
    planned = f"; planned: {_cell(rule.planned)}" if rule.planned else ""
    return ("**waiting for a case**" if rule.level == "MUST" else "not judged") + planned


def _notes(rule) -> str:
    parts = []
    if rule.also:
        parts.append("also " + ", ".join(f"§{s}" for s in rule.also))
    if rule.note:
        parts.append(_cell(rule.note))
    if rule.judged and rule.planned:
        parts.append(f"more planned: {_cell(rule.planned)}")
    return "; ".join(parts)


def render(rules, registry=REGISTRY) -> str:
    """The whole of COVERAGE.md."""
    out = [
        "# Rule coverage",
        "",
        "Which adapter-side rules of PROTOCOL.md (v1.6) the suite judges, and with",
        "which cases. Generated from `cases/judges/rules.json` and `SPEC_RULES` of",
        "`cases/registry.py` by `python3 -m cases.judges.coverage --update`: edit those,",
        "never this file (tests/test_coverage_map.py keeps it what they render).",
        "A rule is judged by the",
        "cases listed, or marked host-side (a client's obligation), not observable",
        "over stdio, or out of scope, with the reason. Every MUST needs one of these;",
        "`python3 -m cases.judges.coverage --missing` lists those that have none yet.",
        "",
        counts_table(rules),
    ]
    for section, title in R.SECTIONS.items():
        here = [r for r in rules if r.section == section]
        if not here:
            continue
        out += [f"## §{section} {title}", "",
                "| Rule | Strength | Says | Judged by | Notes |", "|---|---|---|---|---|"]
        out += [f"| {r.id} | {r.strength} | “{_cell(r.quote)}” | {_judged_by(r)} "
                f"| {_notes(r)} |" for r in here]
        out.append("")
    cited = R.by_case(rules)
    out += ["## Cases and the rules they judge", "", "| Case | Title | Rules |", "|---|---|---|"]
    out += [f"| {c.id} | {_cell(c.title)} | {', '.join(cited.get(c.id, [])) or '**none**'} |"
            for c in registry]
    return "\n".join(out) + "\n"


def readme_section(rules) -> str:
    """The README's counts, between the coverage markers (markers excluded)."""
    return counts_table(rules)


def _replace_between(text: str, body: str, path: Path) -> str:
    head, sep, rest = text.partition(BEGIN)
    _old, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise ValueError(f"{path} has no {BEGIN} ... {END} markers")
    return f"{head}{BEGIN}\n{body}{END}{tail}"


def expected_files(rules) -> dict[Path, str]:
    """path -> the text it must have."""
    readme = README_PATH.read_text(encoding="utf-8")
    return {COVERAGE_PATH: render(rules),
            README_PATH: _replace_between(readme, readme_section(rules), README_PATH)}


def stale(rules) -> list[Path]:
    return [p for p, text in expected_files(rules).items()
            if not p.exists() or p.read_text(encoding="utf-8") != text]


def update(rules) -> list[Path]:
    """Rewrite the stale files; the paths written."""
    written = []
    for path, text in expected_files(rules).items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return written


def missing_report(rules) -> str:
    """The MUSTs no case judges (and the judged rules a planned case is to join)."""
    waiting = R.unmapped_musts(rules)
    lines = [f"{len(waiting)} MUST rule(s) judged by no case and given no status:"]
    for r in waiting:
        lines.append(f"  {r.id}  §{r.section}  {r.strength}  \"{r.quote}\"")
        lines.append(f"      planned: {r.planned or '(no case range named)'}")
    joining = [r for r in rules if r.judged and r.planned]
    if joining:
        lines += ["", f"{len(joining)} judged rule(s) a planned case is to join:"]
        lines += [f"  {r.id}  cases {', '.join(r.cases)}; planned: {r.planned}" for r in joining]
    lines += ["", "Fill in: map the rule to its cases in SPEC_RULES of cases/registry.py, then "
              "python3 -m cases.judges.coverage --update"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    rules = R.load()
    bad = R.problems(rules) + R.unlisted_spec_rules(rules)
    if argv == ["--missing"]:
        sys.stdout.write(missing_report(rules))
        return 1 if R.unmapped_musts(rules) else 0
    if bad:
        sys.stderr.write("cases/judges/rules.json is inconsistent:\n"
                         + "".join(f"  {p}\n" for p in bad))
        return 1
    if argv == ["--update"]:
        written = update(rules)
        print(", ".join(p.name for p in written) + " updated" if written else "already current")
        return 0
    if argv == ["--check"]:
        out_of_date = stale(rules)
        for p in out_of_date:
            print(f"{p.name} is not the generated output: "
                  f"run python3 -m cases.judges.coverage --update")
        return 1 if out_of_date else 0
    if argv:
        sys.stderr.write(__doc__)
        return 2
    sys.stdout.write(counts_table(rules))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
