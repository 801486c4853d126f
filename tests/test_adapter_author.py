"""What an adapter author uses around the cases: known failures, --strict,
--level, --list --json, --rerun-failed, the --pytest pass-through, the HTML
report, --replay, clean Ctrl-C and temp folders, JUnit names.

Real `python3 run` subprocesses against the reference and the mutants of
tests/adapters (tests/mutant.py), each run with its own TMPDIR so what a run
leaves behind can be seen.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from html.parser import HTMLParser
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

from cases.cli import command as cli
from cases.report import html_report, release, writers as report
from cases import registry

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "run"
MUTANT = [sys.executable, str(ROOT / "tests" / "mutant.py")]
KNOBS = ("FORGE_PROVIDER", "PROVIDER", "FORGE_ORG", "FORGE_DEADLINE_S", "FORGE_INACTIVITY_S",
         "FORGE_NO_APPEND", "FORGE_NO_FAULTS", "FORGE_FIXTURE_ROOT", "FORGE_FIXTURE_DIR")


def run(tmp: Path, *args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env["TMPDIR"] = str(tmp)
    return subprocess.run([sys.executable, str(RUN), *args], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def tmp(tmp_path):
    d = tmp_path / "tmpdir"
    d.mkdir()
    return d


# ------------------------------------------------------------------ known failures

@pytest.fixture(scope="module")
def known_run(tmp_path_factory):
    """FC-021 fails (mutant) and is listed; FC-020 passes and is listed too."""
    d = tmp_path_factory.mktemp("known")
    (d / "tmp").mkdir()
    listing = d / "known.txt"
    listing.write_text("# tracked upstream\nFC-021  types dirs as \"dir\" (#12)\n"
                       "FC-020  once flaky\n", encoding="utf-8")
    paths = {k: d / f"r.{k}" for k in ("json", "xml", "html")}
    proc = run(d / "tmp", "--case", "FC-020", "--case", "FC-021", "--case", "FC-022",
               "--known-failures", str(listing), "--json", str(paths["json"]),
               "--junit", str(paths["xml"]), "--html", str(paths["html"]), "--",
               *MUTANT, "dirs-typed-dir")
    return proc, listing, paths


def test_a_listed_failure_is_known_and_a_listed_pass_is_stale(known_run):
    proc, listing, paths = known_run
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr   # FC-020 is stale
    data = json.loads(paths["json"].read_text())
    rows = {r["id"]: r for r in data["cases"]}
    assert rows["FC-021"]["outcome"] == "known"
    assert rows["FC-021"]["known_failure"] == {"reason": 'types dirs as "dir" (#12)',
                                               "file": str(listing)}
    assert rows["FC-020"]["outcome"] == "failed" and rows["FC-020"]["stale_known_failure"]
    assert rows["FC-020"]["message"] == (f"FC-020 is listed in {listing} as a known failure "
                                         f"but passed: remove FC-020 from {listing}")
    assert rows["FC-022"]["outcome"] == "passed" and "known_failure" not in rows["FC-022"]
    s = data["summary"]
    assert (s["passed"], s["failed"], s["known"]) == (1, 1, 1)
    assert data["known_failures"] == {"file": str(listing), "listed": ["FC-021", "FC-020"],
                                      "known": ["FC-021"], "stale": ["FC-020"]}
    assert "FC-021  KNWN" in proc.stdout and 'known failure: types dirs as "dir" (#12)' \
        in proc.stdout
    assert f"remove FC-020 from {listing}" in proc.stdout
    cases = {tc.get("name"): tc for tc in ET.parse(paths["xml"]).getroot().iter("testcase")}
    known = cases[f"FC-021 {registry.by_id('FC-021').title}"]
    assert known.get("classname") == "trees"
    assert known.find("skipped").get("message").startswith("known failure (types dirs")
    props = {p.get("name"): p.get("value") for p in known.iter("property")}
    assert props["spec"] == registry.by_id("FC-021").spec
    assert props["rerun"].endswith("--case FC-021 -- " + " ".join(MUTANT) + " dirs-typed-dir")
    assert props["transcript"].endswith("FC-021.jsonl")
    assert cases[f"FC-020 {registry.by_id('FC-020').title}"].find("failure") is not None


def test_only_known_failures_keep_the_run_green(tmp, tmp_path):
    listing = tmp_path / "known.txt"
    listing.write_text("FC-021  types dirs as dir\n", encoding="utf-8")
    proc = run(tmp, "--case", "FC-021", "--known-failures", str(listing), "--", *MUTANT,
               "dirs-typed-dir")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    assert "1 known" in proc.stdout


@pytest.mark.parametrize("text, words", [
    ("FC-999  no such case\n", ("unknown case id FC-999", "line 1")),
    ("FC-021\nFC-021  twice\n", ("FC-021 is listed twice", "line 2")),
    ("FC-21 oops\n", ("expected 'FC-nnn  reason'",)),
])
def test_a_bad_known_failures_file_is_bad_usage(tmp, tmp_path, text, words):
    listing = tmp_path / "known.txt"
    listing.write_text(text, encoding="utf-8")
    proc = run(tmp, "--known-failures", str(listing))
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert all(w in lines[0] for w in words), lines[0]
    assert "Traceback" not in proc.stderr


# ------------------------------------------------------------------ run options

def test_strict_turns_a_warning_into_a_failure(tmp, tmp_path):
    plain = run(tmp, "--case", "FC-093", "--", *MUTANT, "commit-keyed")
    assert plain.returncode == 0 and "warning:" in plain.stdout, plain.stdout[-2000:]
    out = tmp_path / "r.json"
    strict = run(tmp, "--case", "FC-093", "--strict", "--json", str(out), "--", *MUTANT,
                 "commit-keyed")
    assert strict.returncode == 1, strict.stdout[-2000:]
    assert "--strict: a warning fails the case" in strict.stdout
    data = json.loads(out.read_text())
    row = {r["id"]: r for r in data["cases"]}["FC-093"]
    assert row["outcome"] == "failed" and row["strict_failure"] and data["strict"] is True
    assert row["rerun"].startswith("python3 run --strict --case FC-093 -- ")   # keeps --strict


def test_level_and_list_json(tmp):
    proc = run(tmp, "--list", "--json", "--level", "v1.1")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert {c["since"] for c in data["cases"]} == {"v1", "v1.1"}
    assert [c["id"] for c in data["cases"]] == [c.id for c in registry.REGISTRY
                                               if c.since in ("v1", "v1.1")]
    assert data["version"] == report.version() and "v1.5" in data["levels"]
    bad = run(tmp, "--level", "v7")
    assert bad.returncode == 2 and "unknown protocol level 'v7'" in bad.stderr


def test_version(tmp):
    proc = run(tmp, "--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == (f"forge-conformance {report.version()} (protocol 1.6, "
                                   f"matrix {release.matrix_digest()})")


def test_rerun_failed_runs_what_failed(tmp, tmp_path, known_run):
    _, _, paths = known_run
    proc = run(tmp, "--rerun-failed", str(paths["json"]), "--list")
    assert proc.returncode == 0, proc.stderr
    assert [ln.split()[0] for ln in proc.stdout.splitlines()] == ["FC-020", "FC-021"]
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps({"cases": [{"id": "FC-001", "outcome": "passed"}]}))
    none = run(tmp, "--rerun-failed", str(clean))
    assert none.returncode == 0 and "nothing to rerun" in none.stdout
    (tmp_path / "junk.json").write_text("{")
    junk = run(tmp, "--rerun-failed", str(tmp_path / "junk.json"))
    assert junk.returncode == 2 and "not a forge-conformance JSON report" in junk.stderr


def test_the_argv_grammar():
    assert cli.split_argv(["--case", "FC-001", "--pytest", "-x", "-k", "FC-001", "--",
                           "./a", "--pytest", "--", "-x"]) == (
        ["--case", "FC-001"], ["-x", "-k", "FC-001"], ["./a", "--pytest", "--", "-x"])
    assert cli.split_argv(["--", "./a", "--pytest"]) == ([], [], ["./a", "--pytest"])
    assert cli.split_argv(["--pytest", "-x"]) == ([], ["-x"], [])


def test_pytest_args_pass_through(tmp, tmp_path):
    out = tmp_path / "r.json"
    proc = run(tmp, "--case", "FC-001", "--case", "FC-002", "--json", str(out),
               "--pytest", "-k", "FC-002")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    rows = {r["id"]: r for r in json.loads(out.read_text())["cases"]}
    assert rows["FC-002"]["outcome"] == "passed"
    assert rows["FC-001"]["outcome"] == "skipped"


# ------------------------------------------------------------------ HTML

class _Sections(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.tiles, self.scripts, self.external = [], [], 0, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details" and "case" in (a.get("class") or ""):
            self.ids.append((a.get("id"), a.get("class")))
        if tag == "a" and "tile" in (a.get("class") or ""):
            self.tiles.append(a.get("href"))
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href"):
            if a.get(key) and not a[key].startswith("#"):
                self.external.append(a[key])


def test_html_report_has_every_case_and_no_external_asset(known_run):
    _, _, paths = known_run
    parser = _Sections()
    text = paths["html"].read_text(encoding="utf-8")
    parser.feed(text)
    assert [i for i, _ in parser.ids] == [c.id for c in registry.REGISTRY]
    assert parser.tiles == [f"#{c.id}" for c in registry.REGISTRY]
    assert parser.scripts == 0 and parser.external == []
    classes = dict(parser.ids)
    assert "o-known" in classes["FC-021"] and "o-failed" in classes["FC-020"]
    assert "o-passed" in classes["FC-022"] and "o-skipped" in classes["FC-001"]
    assert "repo/tree" in text and "→" in text and "rerun" in text


def test_html_escapes_what_the_adapter_sent():
    evil = '<script>alert(1)</script><img src=x onerror=alert(2)>'
    frame = {"t": 0.0, "generation": 1, "direction": "in", "kind": "violation", "raw": evil,
             "outcome": "malformed", "size": len(evil)}
    results = {"FC-001": report.CaseResult("FC-001", "failed", evil, [evil], rerun=evil,
                                           wire=[("adapter", 0, [frame])],
                                           stderr=[("adapter", evil)])}
    rep = report.build(results, selected=["FC-001"], collected=["FC-001"],
                       adapter_argv=[evil], interrupted=False, duration_s=0.1)
    text = html_report.render(rep, results)
    assert "<script" not in text and "<img" not in text
    assert text.count("&lt;script&gt;") >= 5 and "violation" in text


# ------------------------------------------------------------------ replay

@pytest.fixture(scope="module")
def transcripts(tmp_path_factory):
    d = tmp_path_factory.mktemp("replay")
    (d / "tmp").mkdir()
    proc = run(d / "tmp", "--case", "FC-021", "--case", "FC-045", "--case", "FC-013",
               "--transcripts", str(d / "tr"))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    return d


@pytest.mark.parametrize("case", ["FC-021", "FC-045", "FC-013"])
def test_replay_against_the_reference_matches(transcripts, case):
    proc = run(transcripts / "tmp", "--replay", str(transcripts / "tr" / f"{case}.jsonl"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "the adapter's frames match the recording" in proc.stdout


@pytest.mark.parametrize("case, switch, words", [
    ("FC-021", "dirs-typed-dir", 'type: recorded "tree", now "dir"'),
    ("FC-013", "ids-salted-per-process", "content id inconsistent"),
])
def test_replay_against_a_mutant_says_where_it_differs(transcripts, case, switch, words):
    proc = run(transcripts / "tmp", "--replay", str(transcripts / "tr" / f"{case}.jsonl"),
               "--", *MUTANT, switch)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "differ from the recording" in proc.stdout and words in proc.stdout, proc.stdout


def test_replay_of_something_else_is_bad_usage(tmp, tmp_path):
    (tmp_path / "x.jsonl").write_text("hello\n")
    proc = run(tmp, "--replay", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 2 and "not a forge-conformance transcript" in proc.stderr


# ------------------------------------------------------------------ clean behaviour

def test_temp_folders_only_for_a_failing_case_and_named_once(tmp):
    ok = run(tmp, "--case", "FC-021")
    assert ok.returncode == 0
    assert list(tmp.iterdir()) == []
    bad = run(tmp, "--case", "FC-021", "--", *MUTANT, "dirs-typed-dir")
    assert bad.returncode == 1
    kept = list(tmp.iterdir())
    assert len(kept) == 1 and kept[0].name.startswith("forge-transcripts-"), kept
    assert [p.name for p in kept[0].iterdir()] == ["FC-021.jsonl"]
    assert bad.stdout.count(f"transcripts of the failing cases: {kept[0]}") == 1


def _startup_s() -> float:
    """How long this machine's interpreter takes to start, before `run` runs at all."""
    t = time.monotonic()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - t


def _in_interpreter_start_up(stderr: str) -> bool:
    """A KeyboardInterrupt inside the interpreter's own start-up (site, .pth
    files) or in `run` before its first statement holds SIGINT back: no other
    frame of the suite in it."""
    first = next(i for i, ln in enumerate(RUN.read_text("utf-8").splitlines(), 1)
                 if "SIG_BLOCK" in ln)
    frames = [ln.strip() for ln in stderr.splitlines() if ln.strip().startswith("File ")]
    mine = [ln for ln in frames if str(ROOT) in ln]
    early = [ln for ln in mine if ln.startswith(f'File "{RUN}", line ')
             and int(ln.split(", line ")[1].split(",")[0]) <= first]
    return bool(frames) and len(early) == len(mine)


def test_ctrl_c_at_any_instant_after_start_up_is_one_line(tmp, tmp_path):
    """SIGINT at stepped instants through bootstrap, imports, pre-flight and
    the cases: never a traceback; exit 130 (or 0 if it finished first); once a
    case may have started, the JSON report is there."""
    base = _startup_s()
    out = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env["TMPDIR"] = str(tmp)
    for step in range(12):
        out.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, str(RUN), "--group", "handshake", "--json",
                                 str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        threading_wait = base * 1.5 + step * 0.08
        try:
            proc.wait(threading_wait)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        # the run's own stop bound (stopping.STOP_BOUND_S) ended a stop that hung:
        # its thread stacks say where
        assert "the stop took over" not in stderr, (threading_wait, stderr[-6000:])
        if proc.returncode == -signal.SIGINT and "Traceback" not in stdout + stderr \
                and "FC-" not in stdout and not out.exists():
            continue   # stopped silently before its handler was in place and before any case
        if "Traceback" in stdout + stderr and _in_interpreter_start_up(stderr):
            continue   # a slow start-up outlasted the wait: Python's, before `run` ran
        assert "Traceback" not in stdout + stderr, (threading_wait, stderr[-2000:])
        # killed by the SIGINT itself (the shell's 130) is fine once the handler is
        # gone at exit: no traceback, and the report is checked below
        assert proc.returncode in (0, 130, -signal.SIGINT), (threading_wait, proc.returncode,
                                                              stderr)
        if proc.returncode == 130:
            assert "interrupted" in stderr
        if "preflight" in stdout or "FC-001" in stdout:
            assert out.exists()


CLEANUP_STEP_S = 0.004   # the end of a run (report, adapters stopped, temp area removed) lasts ~30 ms


def test_ctrl_c_as_the_run_ends_keeps_its_report_and_leaves_no_temp_area(tmp, tmp_path):
    """SIGINT at stepped instants after the last case's line: the run still
    ends with one line at most (exit 0, 130 or the shell's SIGINT once Python
    is finishing), keeps the report it wrote (all five cases, not a "not run"
    skeleton) and removes its pre-flight temp area, also when the signal lands
    inside that cleanup."""
    out = tmp_path / "r.json"
    areas = tmp_path / "areas"
    areas.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in KNOBS}
    env.update(TMPDIR=str(tmp), FORGE_TMPDIR=str(areas))
    for step in range(10):
        out.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, str(RUN), "--group", "handshake", "--json",
                                 str(out)], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        head = []
        for line in proc.stdout:
            head.append(line)
            if "FC-005" in line:
                break
        threading.Event().wait(step * CLEANUP_STEP_S)   # the instant stepped through is the test
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
        stdout = "".join(head) + stdout
        when = f"{step * CLEANUP_STEP_S * 1000:.0f} ms after FC-005's line"
        assert "the stop took over" not in stderr, (when, stderr[-6000:])
        assert "Traceback" not in stdout + stderr, (when, stderr[-2000:])
        assert proc.returncode in (0, 130, -signal.SIGINT), (when, proc.returncode, stderr)
        assert not list(areas.iterdir()), (when, sorted(p.name for p in areas.iterdir()))
        rep = json.loads(out.read_text("utf-8"))
        ran = [c["id"] for c in rep["cases"] if c["outcome"] == "passed"]
        assert len(ran) == 5, (when, rep["summary"])
