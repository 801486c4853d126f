"""Releases an adapter's CI can pin: the version, the matrix digest, the
changelog and ``--diff`` (cases/report/release.py, cases/report/diff.py, CHANGELOG.md,
README "In your CI").

- the version is ``<protocol major>.<protocol minor>.<suite release>``, read
  from pyproject.toml alone, and ``--version`` names it with the protocol and
  the matrix digest; every report (JSON, JUnit, HTML) carries both;
- the digest changes when a case's code, the rules table or the fixture
  manifest changes, and not when a module that only runs or reports does
  (proved on a copy of the files it reads, never on the checkout's);
- CHANGELOG.md adds every case the registry has and no other, its newest
  section is pyproject.toml's version, and the cases it tightens or loosens
  exist;
- ``--diff`` says what changed between two reports (read into the report's
  model; the reports below have an older release's rows, without ``spec``,
  ``since``, ``duration_s`` or ``transcript``) and exits 1 only when a case
  newly fails, 2 on input that is not a report;
- a known-failures file naming a case the release no longer has is refused
  (exit 2, "no longer a case").
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from cases.kit import invocation
from cases.report import convert, diff, known_failures, model, release, writers as report
from cases import registry

ROOT = Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"


def run(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "run"), *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------------ version and digest

def test_the_version_names_the_protocol_it_judges():
    text = (ROOT / "pyproject.toml").read_text("utf-8")
    written = re.findall(r'(?m)^version\s*=\s*"([^"]+)"', text)
    assert written == [invocation.version()]
    assert re.fullmatch(r"\d+\.\d+\.\d+", written[0]), written
    assert written[0].startswith(report.PROTOCOL + "."), (written[0], report.PROTOCOL)


def test_version_prints_version_protocol_and_matrix():
    proc = run("--version")
    assert proc.returncode == 0, proc.stderr
    digest = release.compute_digest(str(ROOT))
    assert re.fullmatch(r"[0-9a-f]{%d}" % release.DIGEST_LEN, digest)
    assert proc.stdout == (f"forge-conformance {invocation.version()} (protocol "
                           f"{report.PROTOCOL}, matrix {digest})\n")


def _copy_matrix(dest: Path) -> Path:
    for rel in release.matrix_files(str(ROOT)) + sorted(release.NOT_JUDGING):
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest / rel)
    return dest


def test_the_digest_follows_what_judges(tmp_path):
    copy = _copy_matrix(tmp_path)
    first = release.compute_digest(str(ROOT))
    assert release.compute_digest(str(copy)) == first

    def changed(rel: str, edit) -> str:
        path = copy / rel
        before = path.read_bytes()
        path.write_bytes(edit(before))
        try:
            return release.compute_digest(str(copy))
        finally:
            path.write_bytes(before)

    def comment(data: bytes) -> bytes:
        return data + b"\n# one more line\n"

    # a case's code, the registry rows, a run-wide judge, the kit, the monitor,
    # the rules table and the fixture manifest each change it
    for rel in ("cases/test_trees.py", "cases/registry.py", "cases/judges/claims.py",
                "cases/kit/replies.py", "wire/monitor.py", "fixture/catalog.py"):
        assert changed(rel, comment) != first, rel
    assert changed("cases/judges/rules.json", lambda d: d.replace(b"MUST", b"SHOULD", 1)) != first
    assert changed("fixture/MANIFEST.sha256", lambda d: d.replace(b"0", b"1", 1)) != first
    # a module that only starts, carries out or reports a run does not
    for rel in sorted(release.NOT_JUDGING):
        assert changed(rel, comment) == first, rel
    # a checkout with CRLF line ends names the same matrix
    assert changed("cases/test_trees.py", lambda d: d.replace(b"\n", b"\r\n")) == first
    # a new case module counts
    (copy / "cases" / "test_more.py").write_text("# a new group\n")
    assert release.compute_digest(str(copy)) != first
    assert release.compute_digest(str(ROOT)) == first   # the checkout was never touched


def test_every_report_names_version_and_matrix(tmp_path):
    paths = {k: tmp_path / f"r.{k}" for k in ("json", "xml", "html")}
    proc = run("--jobs", "1", "--case", "FC-001", "--json", str(paths["json"]),
               "--junit", str(paths["xml"]), "--html", str(paths["html"]))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    version, digest = invocation.version(), release.compute_digest(str(ROOT))
    data = json.loads(paths["json"].read_text("utf-8"))
    assert (data["version"], data["protocol"], data["matrix"]) == (version, "1.6", digest)
    props = {p.get("name"): p.get("value")
             for p in ET.parse(paths["xml"]).getroot().find("testsuite").find("properties")}
    assert (props["version"], props["protocol"], props["matrix"]) == (version, "1.6", digest)
    html = paths["html"].read_text("utf-8")
    assert f"{version} <small>(protocol 1.6, matrix {digest})</small>" in html
    assert f"forge-conformance {version} (protocol 1.6, matrix {digest}) against:" \
        in proc.stdout
    listed = json.loads(run("--list", "--json").stdout)
    assert (listed["version"], listed["matrix"]) == (version, digest)


# ------------------------------------------------------------------ the changelog

ADDED, REMOVED = "Cases added", "Cases removed"
KINDS = (ADDED, REMOVED, "Fail more (tightened)", "Fail less (loosened)", "Messages", "Tooling")
CASE_ID = re.compile(r"\bFC-\d{3}\b")


def sections(text: str) -> list[dict]:
    """The releases of a changelog, newest first: version, date, and the case
    ids named under each kind of change."""
    out: list[dict] = []
    kind = None
    for line in text.splitlines():
        head = re.match(r"^## \[([^\]]+)\](?: - (.+))?$", line)
        if head:
            out.append({"version": head.group(1), "date": (head.group(2) or "").strip(),
                        **{k: [] for k in KINDS}})
            kind = None
            continue
        sub = re.match(r"^### (.+)$", line)
        if sub:
            assert out, f"{line!r} comes before any release"
            kind = sub.group(1).strip()
            assert kind in KINDS, f"unknown heading {kind!r}; use one of {KINDS}"
            continue
        if out and kind:
            out[-1][kind] += CASE_ID.findall(line)
    return out


def problems(text: str, registry_ids: list[str], version: str) -> list[str]:
    """What a changelog gets wrong about the registry and the version."""
    found = sections(text)
    if not found:
        return ["no release section (## [x.y.z] - date)"]
    out = []
    if found[0]["version"] != version:
        out.append(f"the newest section is [{found[0]['version']}], pyproject.toml says "
                   f"{version}")
    for s in found:
        if not (s["date"] == "Unreleased" or re.fullmatch(r"\d{4}-\d{2}-\d{2}", s["date"])):
            out.append(f"[{s['version']}]: the date is YYYY-MM-DD or Unreleased, "
                       f"not {s['date']!r}")
    have: set[str] = set()
    for s in reversed(found):   # oldest first
        for cid in s[ADDED]:
            if cid in have:
                out.append(f"{cid} is added twice (a case id is never reused)")
            have.add(cid)
        for cid in s[REMOVED]:
            if cid not in have:
                out.append(f"{cid} is removed in [{s['version']}] but was never added")
            have.discard(cid)
    top = found[0]["version"]
    for cid in sorted(set(registry_ids) - have):
        out.append(f"{cid} is in the registry but no section adds it: name it under "
                   f"'### {ADDED}' of [{top}]")
    for cid in sorted(have - set(registry_ids)):
        out.append(f"{cid} is no longer in the registry: name it under '### {REMOVED}' of "
                   f"[{top}]")
    for s in found:
        for kind in KINDS[2:4]:
            for cid in s[kind]:
                if cid not in registry_ids and cid not in (s[REMOVED] + s[ADDED]):
                    out.append(f"[{s['version']}] {kind}: {cid} is not a case")
    return out


def test_the_changelog_accounts_for_every_case():
    ids = [c.id for c in registry.REGISTRY]
    assert problems(CHANGELOG.read_text("utf-8"), ids, invocation.version()) == []


def test_the_changelog_check_sees_a_case_gained_or_lost():
    text = CHANGELOG.read_text("utf-8")
    ids = [c.id for c in registry.REGISTRY]
    gained = problems(text, ids + ["FC-999"], invocation.version())
    assert gained == [f"FC-999 is in the registry but no section adds it: name it under "
                      f"'### {ADDED}' of [{invocation.version()}]"]
    lost = problems(text, [i for i in ids if i != "FC-034"], invocation.version())
    assert any(p.startswith("FC-034 is no longer in the registry") for p in lost), lost
    # removed in a newer release: accounted for
    newer = text.replace("## [1.6.0]", "## [1.6.1] - Unreleased\n\n### Cases removed\n\n"
                         "- FC-034 (gone)\n\n## [1.6.0]", 1).replace(
        "## [1.6.0] - Unreleased", "## [1.6.0] - 2026-12-06")
    assert problems(newer, [i for i in ids if i != "FC-034"], "1.6.1") == []
    assert problems(newer, ids, "1.6.0")[0].startswith("the newest section is [1.6.1]")


# ------------------------------------------------------------------ --diff

def _row(cid: str, outcome: str, message: str = "", warnings=()) -> dict:
    case = registry.by_id(cid)
    return {"id": cid, "group": case.group, "title": case.title, "outcome": outcome,
            "message": message, "warnings": list(warnings)}


def _report(rows: list[dict], *, version="1.6.0", matrix="aaaaaaaaaaaa") -> dict:
    summary = {k: sum(1 for r in rows if r["outcome"] == k) for k in model.OUTCOMES}
    return {"suite": "forge-conformance", "version": version, "protocol": "1.6",
            "matrix": matrix, "adapter": {"argv": ["./my-adapter"]}, "summary": summary,
            "cases": rows}


def test_diff_names_what_changed_and_fails_on_a_new_failure():
    old = _report([_row("FC-001", "passed"), _row("FC-002", "failed", "bad name"),
                   _row("FC-003", "passed"), _row("FC-004", "passed", warnings=["w1"]),
                   _row("FC-005", "skipped", "not selected"), _row("FC-010", "passed")])
    new = _report([_row("FC-001", "failed", "protocol was \"1\""), _row("FC-002", "passed"),
                   _row("FC-003", "known", "shape"), _row("FC-004", "passed",
                                                          warnings=["w1", "w2"]),
                   _row("FC-005", "failed", "x"), _row("FC-011", "failed", "new one")],
                  version="1.6.1", matrix="bbbbbbbbbbbb")
    lines, newly_failing = diff.diff(convert.read(old), convert.read(new))
    text = "\n".join(lines)
    assert newly_failing
    assert "version  1.6.0 -> 1.6.1" in text and "matrix   aaaaaaaaaaaa -> bbbbbbbbbbbb" in text
    block = text.split("newly failing (3):\n", 1)[1].split("\n\n", 1)[0]
    assert "FC-001" in block and 'protocol was "1"' in block
    assert "FC-003  capabilities shape (listed as known)" in block
    assert "FC-011" in block and "(a new case)" in block
    assert "newly passing (1):\n  FC-002" in text
    assert "new warnings (1):\n  FC-004  w2" in text
    assert "no longer cases (1):\n  FC-010" in text
    assert "FC-005" not in text.replace("1 case(s)", "")   # ran in one run only: not compared
    assert "1 case(s) ran in only one of the two runs" in text


def test_diff_of_the_same_verdicts_passes():
    rows = [_row("FC-001", "passed"), _row("FC-002", "failed", "bad")]
    lines, newly_failing = diff.diff(convert.read(_report(rows)), convert.read(_report(rows)))
    assert not newly_failing
    assert lines[-1] == "no verdict changed"
    assert "the same cases judged both runs" in "\n".join(lines)
    fixed = diff.diff(convert.read(_report(rows)),
                      convert.read(_report([_row("FC-001", "passed"), _row("FC-002", "passed")])))
    assert fixed[1] is False and "newly passing (1):" in fixed[0]


def test_diff_command_exit_codes(tmp_path):
    old, new, same = tmp_path / "old.json", tmp_path / "new.json", tmp_path / "same.json"
    old.write_text(json.dumps(_report([_row("FC-001", "passed")])))
    new.write_text(json.dumps(_report([_row("FC-001", "failed", "no")])))
    same.write_text(old.read_text())
    proc = run("--diff", str(old), str(new))
    assert proc.returncode == 1, proc.stderr
    assert "newly failing (1):" in proc.stdout and proc.stderr == ""
    assert run("--diff", str(new), str(old)).returncode == 0
    assert run("--diff", str(old), str(same)).returncode == 0
    not_json, not_report, bad_row = (tmp_path / n for n in ("a.txt", "b.json", "c.json"))
    not_json.write_text("hello")
    not_report.write_text(json.dumps({"cases": []}))
    bad_row.write_text(json.dumps({"suite": "forge-conformance", "cases": [{"id": 1}]}))
    bad_member = tmp_path / "d.json"
    bad_member.write_text(json.dumps(_report([{**_row("FC-001", "passed"), "warnings": "w"}])))
    for argv, said in (((str(old), str(tmp_path / "missing.json")), "cannot read"),
                       ((str(old), str(not_json)), "is not JSON"),
                       ((str(not_report), str(old)), "is not a forge-conformance JSON report"),
                       ((str(old), str(bad_row)), "without an id and an outcome"),
                       ((str(old), str(bad_member)), "cases[0].warnings: expected an array"),
                       ((str(old),), "expected 2 arguments"),
                       ((str(old), str(new), "--case", "FC-001"), "takes only the two reports"),
                       ((str(old), str(new), "--", "./adapter"), "takes only the two reports")):
        proc = run("--diff", *argv)
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert said in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr


# ------------------------------------------------------------------ known failures across a release

def test_a_removed_case_in_a_known_failures_file_is_refused(tmp_path, monkeypatch):
    listed = tmp_path / "known.txt"
    listed.write_text("FC-034  our path: search is a plain term\n")
    assert known_failures.parse(listed) == {"FC-034": "our path: search is a plain term"}
    # the same file against a release that removed FC-034
    kept = tuple(c for c in registry.REGISTRY if c.id != "FC-034")
    monkeypatch.setattr(registry, "REGISTRY", kept)
    monkeypatch.setattr(registry, "_BY_ID", {c.id: c for c in kept})
    with pytest.raises(known_failures.KnownFailuresError, match="no longer a case"):
        known_failures.parse(listed)


def test_known_failures_naming_no_case_exit_2_with_one_line(tmp_path):
    listed = tmp_path / "known.txt"
    listed.write_text("FC-001  fine\nFC-998  gone\n")
    proc = run("--known-failures", str(listed), "--case", "FC-001")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        f"forge-conformance: {listed} line 2: unknown case id FC-998: no longer a case of this "
        f"release (CHANGELOG.md lists the removed ones), or never one; remove the line "
        f"(`--list` shows the cases)"]
