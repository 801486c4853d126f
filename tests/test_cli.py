"""The command line's contract: exit codes, one-line refusals, the reports.

Every run here is a real `python3 run` subprocess (the user's view: exit code,
stderr, files written), with the knobs cleared so the caller's environment
cannot leak in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from xml.etree import ElementTree as ET

import psutil
import pytest

from cases import registry

ROOT = Path(__file__).resolve().parent.parent
RUN = ROOT / "run"
PROGRAMS = Path(__file__).resolve().parent / "programs"
HOSTILE = Path(__file__).resolve().parent / "hostile"
IDS = [c.id for c in registry.REGISTRY]
KNOBS = ("FORGE_PROVIDER", "PROVIDER", "FORGE_ORG", "FORGE_DEADLINE_S", "FORGE_INACTIVITY_S",
         "FORGE_NO_APPEND", "FORGE_NO_FAULTS", "FORGE_FIXTURE_ROOT", "FORGE_FIXTURE_DIR")
# Python start + pytest import + materializing the fixture: what a refused run
# may take beyond the deadline it waited for.
STARTUP_BOUND_S = 15


def env(**extra: str) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if k not in KNOBS}
    e.update(extra)
    return e


def run(*args: str, timeout: float = 120, **knobs: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(RUN), *args], env=env(**knobs), cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def assert_refused(proc: subprocess.CompletedProcess, *words: str) -> str:
    """Exit 2, exactly one line on stderr naming the reason, no traceback."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr, proc.stdout[-2000:])
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


# ------------------------------------------------------------ bad usage: exit 2

@pytest.mark.parametrize("args, words", [
    (["--bogus"], ["--bogus"]),
    (["--case", "FC-999"], ["FC-999"]),
    (["--case", "FC-001", "--case", "nonsense"], ["nonsense"]),
    (["--group", "nope"], ["nope"]),
    (["--json"], ["--json"]),
])
def test_bad_options_exit_2_with_one_line(args, words):
    assert_refused(run(*args), *words)


def test_adapter_path_missing(tmp_path):
    missing = tmp_path / "no-such-adapter"
    assert_refused(run("--", str(missing)), str(missing), "does not exist")


def test_adapter_not_executable(tmp_path):
    script = tmp_path / "adapter.py"
    script.write_text("print('hi')\n")
    script.chmod(0o644)
    assert_refused(run("--", str(script)), "not executable")


def test_adapter_command_not_on_path():
    assert_refused(run("--", "forge-no-such-command-xyz"), "not found on PATH")


def test_adapter_from_provider_knob_is_checked_too(tmp_path):
    assert_refused(run(PROVIDER=str(tmp_path / "gone")), "does not exist")


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf"])
def test_bad_deadline_exit_2(value):
    assert_refused(run(FORGE_DEADLINE_S=value), "FORGE_DEADLINE_S", repr(value))


def test_bad_inactivity_exit_2():
    assert_refused(run(FORGE_INACTIVITY_S="soon"), "FORGE_INACTIVITY_S")


def test_corrupt_fixture_exit_2(tmp_path):
    copy = tmp_path / "fixture"
    shutil.copytree(ROOT / "fixture", copy, ignore=shutil.ignore_patterns("__pycache__"))
    victim = sorted(p for p in (copy / "alpha").rglob("*") if p.is_file())[0]
    victim.write_bytes(victim.read_bytes() + b"\nedited\n")
    line = assert_refused(run(FORGE_FIXTURE_ROOT=str(copy)), "fixture")
    assert victim.relative_to(copy).as_posix() in line


# ------------------------------------------------------- adapters that cannot run

def _leftovers(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        try:
            if any(marker in part for part in proc.info["cmdline"] or ()):
                found.append(proc)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            pass
    return found


def test_initialize_never_answered_exit_2_within_deadline():
    deadline = 1.0
    started = time.monotonic()
    proc = run("--", sys.executable, str(HOSTILE / "silent.py"),
               FORGE_DEADLINE_S=str(deadline), timeout=deadline + STARTUP_BOUND_S + 30)
    elapsed = time.monotonic() - started
    assert_refused(proc, "never answered initialize", "1 s")
    assert elapsed < deadline + STARTUP_BOUND_S, elapsed
    assert not _leftovers(str(HOSTILE / "silent.py"))


def test_adapter_exiting_at_start_exit_2():
    line = assert_refused(run("--", sys.executable, str(HOSTILE / "exit_at_start.py")),
                          "closed its output", "exited with code 3")
    assert "giving up before the handshake" in line   # the adapter's own last stderr line


def test_initialize_error_exit_2():
    assert_refused(run("--", sys.executable, str(PROGRAMS / "adapter_init_error.py")),
                   "initialize", "network", "backend unreachable")


# ------------------------------------------------------------------ listing

def test_list_shows_the_matrix():
    proc = run("--list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == IDS
    for line, c in zip(lines, registry.REGISTRY):
        assert c.group in line and c.title in line and c.spec in line


def test_list_honours_the_selection():
    proc = run("--list", "--group", "errors", "--case", "FC-001")
    assert [ln.split()[0] for ln in proc.stdout.splitlines()] == \
        ["FC-001", "FC-060", "FC-061", "FC-062", "FC-063", "FC-064"]


# ------------------------------------------------- runs against the reference

def test_reference_adapter_is_green(tmp_path):
    report = tmp_path / "report.json"
    proc = run("--json", str(report))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    data = json.loads(report.read_text())
    assert [c["id"] for c in data["cases"]] == IDS
    assert data["summary"]["failed"] == 0
    assert "protocol levels met in full" in proc.stdout


def test_selection_reports_every_id_once_in_order(tmp_path):
    report, junit, transcripts = tmp_path / "r.json", tmp_path / "junit.xml", tmp_path / "tr"
    proc = run("--case", "FC-020", "--case", "FC-001", "--json", str(report),
               "--junit", str(junit), "--transcripts", str(transcripts))
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr
    data = json.loads(report.read_text())
    assert {"suite", "version", "protocol", "adapter", "summary", "cases"} <= set(data)
    assert data["suite"] == "forge-conformance" and data["protocol"] == "1.6"
    assert data["version"] not in ("", "unknown")
    assert data["adapter"]["argv"][-1].endswith("vendor/fs_provider.py")
    assert [c["id"] for c in data["cases"]] == IDS
    by_id = {c["id"]: c for c in data["cases"]}
    for cid in ("FC-001", "FC-020"):
        assert by_id[cid]["outcome"] == "passed", by_id[cid]
        assert by_id[cid]["transcript"] == str(transcripts / f"{cid}.jsonl")
        assert (transcripts / f"{cid}.jsonl").exists()
    others = [c for c in data["cases"] if c["id"] not in ("FC-001", "FC-020")]
    assert all(c["outcome"] == "skipped" and c["message"] == "not selected" for c in others)
    s = data["summary"]
    assert (s["passed"], s["failed"], s["skipped"]) == (2, 0, len(IDS) - 2)
    assert s["warnings"] == sum(len(c["warnings"]) for c in data["cases"])
    assert isinstance(s["duration_s"], float)
    for c in data["cases"]:
        assert {"id", "group", "title", "spec", "outcome", "message", "warnings",
                "duration_s", "transcript"} <= set(c)
        entry = registry.by_id(c["id"])
        assert (c["group"], c["title"], c["spec"]) == (entry.group, entry.title, entry.spec)
    cases = ET.parse(junit).getroot().findall(".//testcase")
    assert [tc.get("name") for tc in cases] == [f"{c.id} {c.title}" for c in registry.REGISTRY]
    assert [tc.get("classname") for tc in cases] == [c.group for c in registry.REGISTRY]


def test_failure_output_is_one_sentence_plus_evidence(tmp_path):
    """A case failing on the adapter's behaviour: exit 1, the case id and title,
    the spec, the wire frames, the rerun command; no traceback."""
    report = tmp_path / "r.json"
    proc = run("--case", "FC-020", "--json", str(report), "--",
               sys.executable, str(PROGRAMS / "adapter_stalls.py"), FORGE_DEADLINE_S="1")
    assert proc.returncode == 1, proc.stdout[-4000:] + proc.stderr
    out = proc.stdout
    c = registry.by_id("FC-020")
    assert f"[FC-020] {c.title}" in out and f"spec: {c.spec}" in out
    assert "timed out after 1 s" in out and "repo/tree" in out
    assert "wire transcript" in out and "-> request" in out
    rerun = f"--case FC-020 -- {sys.executable} {PROGRAMS / 'adapter_stalls.py'}"
    assert "rerun: FORGE_DEADLINE_S=1 python3 run " + rerun in out
    assert "Traceback" not in out
    row = {r["id"]: r for r in json.loads(report.read_text())["cases"]}["FC-020"]
    assert row["outcome"] == "failed" and row["message"].startswith("timed out after 1 s")
    assert row["transcript"] and Path(row["transcript"]).exists()   # failing: always kept
    assert not _leftovers("adapter_stalls.py")


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_pytest_arguments_that_deselect_every_case_are_bad_usage(tmp_path, jobs):
    """`--pytest -k` names what runs; the cases it leaves out say so (never
    "not implemented"), and a -k that leaves out every case is exit 2, not a
    green run of nothing."""
    report = tmp_path / "r.json"
    proc = run("--jobs", jobs, "--json", str(report), "--pytest", "-k", "FC-001")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr
    rows = {r["id"]: r for r in json.loads(report.read_text())["cases"]}
    assert rows.pop("FC-001")["outcome"] == "passed"
    assert {(r["outcome"], r["message"]) for r in rows.values()} == \
        {("skipped", "not run (deselected by the pytest arguments, -k or -m)")}
    proc = run("--jobs", jobs, "--pytest", "-k", "no_case_has_this_name")
    assert_refused(proc, "deselect every selected case")


def test_self_test_with_nothing_collected_is_a_failure():
    proc = run("--self-test", "-k", "no_test_has_this_name_xyz", timeout=300)
    assert proc.returncode == 1
    assert "no tests were collected" in proc.stderr


def test_self_test_exits_with_pytests_code_after_a_test_drove_the_stop_path():
    """A self-test that raises and records a stop signal in its own process
    (the weakref-callback test of test_cli_edges) still ends with pytest's
    code, 0 here: the stop state is a run's, not the self-test's."""
    proc = run("--self-test", "tests/test_cli_edges.py", "-k", "weakref_callback", timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "interrupted" not in proc.stderr


# ------------------------------------------- the plugin, straight through pytest

PLUGIN_PROBE = '''
from cases.kit.api import case, fc_assert, skip, warn

PIDS = []


@case("FC-001")
def test_warns(adapter):
    PIDS.append(adapter.child.pid)
    warn("a warning")


@case("FC-002")
def test_suite_bug(adapter):
    raise ValueError("boom")


@case("FC-003")
def test_times_out(adapter):
    PIDS.append(adapter.child.pid)
    adapter.call("repo/tree", {"repo": "local/alpha", "ref": None}, deadline_s=0.2).wait()


@case("FC-004")
def test_fresh_adapter_after_a_timeout(adapter):
    PIDS.append(adapter.child.pid)
    fc_assert(PIDS[1] != PIDS[2], why="a timed-out adapter serves no further case")
    fc_assert(PIDS[0] == PIDS[1], why="a clean adapter serves the next case")
    skip("nothing more to see")


@case("FC-005")
def test_adapter_error(adapter):
    adapter.request("repo/tree", {"repo": "local/alpha", "ref": None}, deadline_s=0.2)


@case("FC-010")
def test_evidence(adapter):
    fc_assert(False, expected=1, got=[2], why="numbers differ")
'''


def test_plugin_outcomes_through_plain_pytest(tmp_path):
    """`python3 -m pytest` with the plugin: outcomes, one-sentence messages,
    warnings, skips citing the id, adapter replacement after a timeout, and a
    suite bug keeping its traceback."""
    (tmp_path / "test_probe.py").write_text(PLUGIN_PROBE)
    report = tmp_path / "r.json"
    stalls = f"{sys.executable} {PROGRAMS / 'adapter_stalls.py'}"
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", str(tmp_path / "test_probe.py"), "-p", "cases.harness.plugin",
         "-q", "--rootdir", str(tmp_path), "--forge-json", str(report)],
        env=env(PROVIDER=stalls, PYTHONPATH=str(ROOT)), cwd=tmp_path,
        capture_output=True, text=True, timeout=120)
    rows = {r["id"]: r for r in json.loads(report.read_text())["cases"]}
    out = proc.stdout
    assert proc.returncode == 1, out[-4000:] + proc.stderr
    assert rows["FC-001"]["outcome"] == "passed" and rows["FC-001"]["warnings"] == ["a warning"]
    assert rows["FC-002"]["outcome"] == "failed"
    assert rows["FC-002"]["message"].startswith("suite bug at test_probe.py:")
    assert "ValueError: boom" in rows["FC-002"]["message"]
    # a suite bug keeps its traceback, and says whose bug it is
    assert "suite bug in [FC-002]" in out and 'raise ValueError("boom")' in out
    assert "bug in the suite, not in the adapter" in out
    assert rows["FC-003"]["outcome"] == "passed"
    assert rows["FC-004"]["outcome"] == "skipped", rows["FC-004"]
    assert rows["FC-004"]["message"] == "[FC-004] nothing more to see"
    assert rows["FC-005"]["outcome"] == "failed"
    assert rows["FC-005"]["message"] == \
        "timed out after 0.2 s waiting for the reply to repo/tree (id 2)"
    assert rows["FC-010"]["message"] == "numbers differ: expected 1, got [2]"
    assert "rerun: python3" in out and "--case FC-010 -- " + stalls in out
    assert rows["FC-011"]["message"] == "not selected"
    assert not _leftovers("adapter_stalls.py")


@pytest.mark.parametrize("flag", ["--json", "--junit"])
def test_report_path_that_cannot_be_written(tmp_path, flag):
    target = tmp_path / "missing-folder" / "report"
    assert_refused(run("--case", "FC-001", flag, str(target)), flag, str(target.parent))


# ------------------------------------------------- bytecode under PYTHONDONTWRITEBYTECODE

_KEEP = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from cases.kit.invocation import keep_bytecode; keep_bytecode(); "
         "import cases.kit.formats; print(sys.pycache_prefix or '')")


def _keep(tmp_path, **env):
    base = {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPYCACHEPREFIX", "FORGE_FIXTURE_CACHE", "XDG_CACHE_HOME",
                         "FORGE_BYTECODE_DIR")}
    out = subprocess.run([sys.executable, "-c", _KEEP, str(ROOT)],
                         env={**base, "PYTHONDONTWRITEBYTECODE": "1", **env},
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_bytecode_is_kept_in_the_private_cache_when_the_environment_says_not_beside_sources(tmp_path):
    where = _keep(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert where == str(tmp_path / "xdg" / "forge-conformance" / "bytecode")
    assert list(Path(where).rglob("formats*.pyc")), "cases/kit/formats.py was not cached there"


def test_bytecode_goes_where_the_self_tests_pin_it_whatever_xdg_says(tmp_path):
    """A test adapter runs with the XDG_CACHE_HOME of its spawn (fresh each
    time); FORGE_BYTECODE_DIR keeps its bytecode in one folder."""
    pinned = tmp_path / "pinned" / "bytecode"
    where = _keep(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"), FORGE_BYTECODE_DIR=str(pinned))
    assert where == str(pinned)
    assert list(pinned.rglob("formats*.pyc")) and not (tmp_path / "xdg").exists()
    assert _keep(tmp_path, FORGE_BYTECODE_DIR=str(pinned), FORGE_FIXTURE_CACHE="off") == ""


def test_bytecode_is_left_alone_when_turned_off_or_the_folder_is_not_private(tmp_path):
    assert _keep(tmp_path, XDG_CACHE_HOME=str(tmp_path / "xdg"), FORGE_FIXTURE_CACHE="off") == ""
    shared = tmp_path / "shared"
    (shared / "bytecode").mkdir(parents=True)
    shared.chmod(0o777)
    assert _keep(tmp_path, FORGE_FIXTURE_CACHE=str(shared)) == ""
    assert not list(shared.rglob("*.pyc"))


# ------------------------------------------------- the reference starts from its compiled script

def test_reference_starts_from_its_compiled_script_named_by_its_bytes(tmp_path, monkeypatch):
    """The suite starts the reference from a .pyc of vendor/fs_provider.py
    kept in its private folder (compiling the script was 14 ms of each start):
    the same bytes give the same file, other bytes another, and what runs is
    the script (it answers initialize; refusing two arguments, it names itself)."""
    from cases.kit import settings

    monkeypatch.setenv("FORGE_BYTECODE_DIR", str(tmp_path / "cache" / "bytecode"))
    monkeypatch.delenv("FORGE_FIXTURE_CACHE", raising=False)
    argv = settings.reference_argv()
    assert argv[:2] == [sys.executable, "-S"] and argv[2].endswith(".pyc"), argv
    assert Path(argv[2]).parent == tmp_path / "cache" / "bytecode" / "reference"
    assert settings.reference_argv() == argv

    copy = tmp_path / "fs_provider.py"
    copy.write_bytes(settings.REFERENCE_ADAPTER.read_bytes() + b"\n# another byte\n")
    monkeypatch.setattr(settings, "REFERENCE_ADAPTER", copy)
    other = settings.reference_argv()
    assert other[2] != argv[2] and Path(other[2]).is_file()

    fixture_dir = tmp_path / "fx"
    (fixture_dir / "repo").mkdir(parents=True)
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocol": 1}})
    out = subprocess.run([*other, str(fixture_dir)], input=line + "\n", capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["result"]["capabilities"], out.stdout
    crash = subprocess.run([*other, "one", "two"], capture_output=True, text=True, timeout=60)
    assert crash.returncode != 0 and "fs_provider" in crash.stderr


def test_reference_starts_from_the_script_when_caching_is_off(monkeypatch):
    from cases.kit import settings

    monkeypatch.setenv("FORGE_FIXTURE_CACHE", "off")
    assert settings.reference_argv() == [sys.executable, "-S", str(settings.REFERENCE_ADAPTER)]
    run_settings = settings.Settings(None, {"FORGE_FIXTURE_CACHE": "off"})
    assert run_settings.argv_for(Path("/fx"))[2] == str(settings.REFERENCE_ADAPTER)
