"""Hostile adapters: whatever the adapter does, the suite ends in bounded
time with a verdict (exit 1 when cases failed, 2 when it could not run at
all), says per case what happened in one sentence, leaves no process and no
temp file behind, never writes the repo's fixture/, and keeps its memory
bounded.

Each adapter of tests/hostile/ is run under the real CLI (``python3 run
--json ... -- python3 tests/hostile/<name>.py --mark=<uuid> ...``), several
at a time in threads, and observed from outside (tests/hostile/harness.py).

The bound. With D = FORGE_DEADLINE_S of the run, S = the longest one
Child.stop() may take (wire.process: STOP_GRACE_S + TERM_GRACE_S +
KILL_DEADLINE_S = 3 s), SPAWN_S = 1 s to start a process, P = SPAWN_S + D + S
(one adapter process: start, handshake, stop), G the number of case groups
run, n the number of cases run, k = 2 deadline-long waits per case and
T0 = 20 s for interpreters, pytest, materializing the fixture and the report:

    bound = T0 + P * (1 + G) + n * (k * D + P)

(the pre-flight process, one adapter per group, and per case its waits plus
one replacement or private process). A run that only gets as far as the
pre-flight (the adapter exits at once, or never answers initialize) is
bounded by T0 + P. Each run is a subprocess with that timeout; overrunning it
is a failure (the suite is then killed). Memory: the summed RSS of the
suite's own processes (its session; the adapter runs in another) stays under
MAX_RSS.

Expected verdicts follow the protocol and RULINGS. Three adapters are
hostile only in how their processes behave and serve correctly, so their
honest verdict is exit 0 and what is asserted for them is the bound, the
cleanup and the memory: orphan (a setsid grandchild that ignores SIGTERM and
holds stdout: PROTOCOL 7.1 SHOULD NOT, owned by no case), ignore_eof
(ignores stdin EOF and SIGTERM: allowed by RULINGS "Process behaviour") and
stderr_flood (200 MB on stderr, which is free-form: PROTOCOL 7.8).
orphan_crash makes the grandchild matter: the adapter dies while the
grandchild keeps stdout open, so no EOF ever comes.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import pytest

from fixture import git_available
from tests.hostile import harness
from tests.hostile.harness import TRACEBACK, SuiteRun

MAX_RSS = 300 * 2**20
WORKERS = 3


@dataclass(frozen=True)
class Plan:
    program: str
    exit: int                        # the expected exit code
    cases: tuple[str, ...] = ()      # () = the whole matrix
    deadline_s: float = 2
    inactivity_s: float = 1
    preflight_only: bool = False     # exit 2 at the pre-flight: bound T0 + P
    transcripts: bool = False        # also --transcripts DIR
    opts: dict = field(default_factory=dict)


# Adapters that serve the reference get a larger deadline and the default
# inactivity window, so that a loaded machine cannot turn a correct answer
# into a timeout; adapters that make everything wait get the small ones.
SERVING = dict(deadline_s=6, inactivity_s=2)

PLANS: dict[str, Plan] = {
    "exit_at_start": Plan("exit_at_start.py", 2, preflight_only=True),
    "silent": Plan("silent.py", 2, preflight_only=True),
    "garbage": Plan("garbage.py", 1, cases=("FC-001", "FC-005", "FC-010", "FC-020", "FC-031",
                                            "FC-045", "FC-062"), **SERVING),
    "huge_line": Plan("huge_line.py", 1, cases=("FC-001", "FC-005", "FC-010", "FC-023",
                                                "FC-024", "FC-031"),
                      opts={"state": "{state}"}, deadline_s=4, inactivity_s=2),
    "huge_handshake": Plan("huge_line.py", 2, preflight_only=True,
                           opts={"state": "{state}", "at": "initialize"}),
    "flood": Plan("flood.py", 1, cases=("FC-001", "FC-010", "FC-062"), transcripts=True),
    "stderr_flood": Plan("stderr_flood.py", 0, cases=("FC-001", "FC-010"),
                         opts={"state": "{state}"}, **SERVING),
    "orphan": Plan("orphan.py", 0, cases=("FC-001", "FC-005", "FC-013", "FC-021", "FC-050"),
                   **SERVING),
    "orphan_crash": Plan("orphan_crash.py", 1, cases=("FC-020", "FC-024", "FC-025"),
                         deadline_s=3, inactivity_s=2),
    "close_stdout": Plan("close_stdout.py", 1, cases=("FC-001", "FC-005", "FC-013", "FC-020",
                                                      "FC-045", "FC-050", "FC-054")),
    # FC-005 is the first case that asks anything: its process changes the copy.
    "mutate_fixture": Plan("mutate_fixture.py", 1,
                           cases=("FC-001", "FC-002", "FC-003", "FC-004", "FC-005", "FC-010",
                                  "FC-011", "FC-020", "FC-031", "FC-041", "FC-053", "FC-062",
                                  "FC-094"),
                           opts={"state": "{state}"}, **SERVING),
    "ignore_eof": Plan("ignore_eof.py", 0, cases=("FC-001", "FC-005", "FC-013", "FC-021",
                                                  "FC-050"), **SERVING),
    "wrong_id": Plan("wrong_id.py", 1, cases=("FC-001", "FC-010", "FC-062"), deadline_s=3,
                     inactivity_s=2),
    # The whole matrix: every case's reading of an unexpected null.
    "null_result": Plan("null_result.py", 1, **SERVING),
}
# Longest first, so the pool finishes early.
ORDER = ("null_result", "mutate_fixture", "huge_line", "garbage", "close_stdout", "orphan",
         "ignore_eof", "orphan_crash", "wrong_id", "flood", "stderr_flood", "silent",
         "huge_handshake", "exit_at_start")


def _execute(name: str, workdir) -> tuple[SuiteRun, str]:
    plan = PLANS[name]
    run = harness.run_suite(name, plan.program, cases=plan.cases, deadline_s=plan.deadline_s,
                            inactivity_s=plan.inactivity_s, opts=plan.opts, workdir=workdir,
                            preflight_only=plan.preflight_only, transcripts=plan.transcripts)
    return run, harness.fixture_digest()


@pytest.fixture(scope="module")
def runs(request, tmp_path_factory):
    """Starts, in a thread pool, the runs of every plan a selected test needs;
    ``runs(name)`` waits for one."""
    wanted = set()
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if item.module is request.module and callspec and callspec.params.get("name") in PLANS:
            wanted.add(callspec.params["name"])
    before = harness.fixture_digest()
    pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="hostile")
    futures = {name: pool.submit(_execute, name, tmp_path_factory.mktemp(name))
               for name in ORDER if name in wanted}
    done: dict[str, SuiteRun] = {}

    def get(name: str) -> SuiteRun:
        if name not in done:
            run, after = futures[name].result()
            run.fixture_changed = after != before
            done[name] = run
        return done[name]

    yield get
    pool.shutdown(wait=True)
    _print_table([done[name] for name in ORDER if name in done])


def _print_table(table: list[SuiteRun]) -> None:
    """The verdict table (shown with pytest -s)."""
    if not table:
        return
    print("\nhostile adapter verdicts")
    print(f"{'adapter':<15} {'exit':>4} {'wall s':>7} {'bound s':>7} {'peak MB':>7}  key phrase")
    for run in table:
        failed = [c.get("message") or "" for c in run.with_outcome("failed").values()]
        said = [line for line in run.stderr.splitlines() if line.strip()][-1:]
        phrase = failed[0] if failed else said[0] if said and run.returncode == 2 else ""
        print(f"{run.name:<15} {run.returncode!s:>4} {run.wall_s:7.1f} {run.bound_s:7.0f} "
              f"{run.peak_rss / 2**20:7.0f}  {phrase[:110]}")


# ----------------------------------------------------------------- invariants

@pytest.mark.parametrize("name", list(PLANS))
def test_run_ends_within_its_bound_with_a_report_and_no_traceback(runs, name):
    run = runs(name)
    assert not run.timed_out, f"the run overran its bound\n{run.describe()}"
    assert run.returncode in (0, 1, 2), f"not a verdict\n{run.describe()}"
    assert TRACEBACK not in run.output, f"a traceback reached the user\n{run.describe()}"
    for case in run.cases().values():
        assert TRACEBACK not in (case.get("message") or "") + (case.get("details") or ""), \
            f"{case['id']} carries a traceback\n{run.describe()}"
    if run.returncode in (0, 1):
        assert run.report is not None, f"{run.report_error}\n{run.describe()}"
        ids = [c["id"] for c in run.report["cases"]]
        assert len(ids) == len(set(ids)), f"a case is reported twice: {ids}"
        for cid in PLANS[name].cases:
            assert cid in ids, f"{cid} is missing from the report\n{run.describe()}"


@pytest.mark.parametrize("name", list(PLANS))
def test_nothing_survives_the_run(runs, name):
    run = runs(name)
    assert not run.survivors, ("processes of the adapter's tree survived the run:\n  "
                               + "\n  ".join(run.survivors) + "\n" + run.describe())
    assert not run.leftovers, f"the suite left {run.leftovers} in its temp area\n{run.describe()}"
    assert not run.fixture_changed, f"the repo's fixture/ changed during the run\n{run.describe()}"


@pytest.mark.parametrize("name", list(PLANS))
def test_the_suite_memory_stays_bounded(runs, name):
    run = runs(name)
    assert run.peak_rss < MAX_RSS, (f"the suite's memory peaked at {run.peak_rss / 2**20:.0f} MB"
                                    f"\n{run.describe()}")


# --------------------------------------------------------------- the verdict

@pytest.mark.parametrize("name", list(PLANS))
def test_exit_code_is_the_verdict(runs, name):
    run = runs(name)
    assert run.returncode == PLANS[name].exit, f"wrong exit code\n{run.describe()}"


# ------------------------------------------------- which cases failed, and why

def _failed(run: SuiteRun) -> dict[str, str]:
    return {cid: c.get("message") or "" for cid, c in run.with_outcome("failed").items()}


def _outcome(run: SuiteRun, cid: str) -> str:
    return run.cases()[cid]["outcome"]


def _could_not_run_line(run: SuiteRun) -> str:
    lines = [line for line in run.output.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line saying why, got {len(lines)}\n{run.describe()}"
    return lines[0]


def outcomes_could_not_run(run):
    _could_not_run_line(run)


def outcomes_garbage(run):
    assert _outcome(run, "FC-001") == "passed", run.describe()   # only the handshake is clean
    for cid in PLANS["garbage"].cases[1:]:
        assert _outcome(run, cid) == "failed", run.describe()


def outcomes_huge_line(run):
    # One line per run: exactly the case waiting for it fails (the first to ask).
    assert list(_failed(run)) == ["FC-005"], run.describe()


def outcomes_timeouts(run):
    assert _outcome(run, "FC-001") == "passed", run.describe()   # answered in time
    for cid in ("FC-010", "FC-062"):
        assert _outcome(run, cid) == "failed", run.describe()


def outcomes_all_pass(run):
    bad = {cid: c["outcome"] for cid, c in run.cases().items()
           if c["outcome"] != "passed" and c.get("message") != "not selected"}
    assert not bad, f"cases did not pass: {bad}\n{run.describe()}"


def outcomes_orphan_crash(run):
    assert _outcome(run, "FC-024") == "failed", run.describe()
    for cid in ("FC-020", "FC-025"):    # before the crash, and on a fresh adapter after it
        assert _outcome(run, cid) == "passed", run.describe()


def outcomes_close_stdout(run):
    assert _outcome(run, "FC-001") == "passed", run.describe()
    for cid in PLANS["close_stdout"].cases[1:]:
        assert _outcome(run, cid) == "failed", run.describe()


def outcomes_mutate_fixture(run):
    """The copy changed in the handshake group (FC-005's own process); every
    later group got a fresh copy: no process was handed the changed one (it
    would refuse to start) and every later case passed."""
    state = run.workdir / "state"
    assert (state / "mutated").exists(), "the adapter never changed its copy"
    assert not (state / "stale-copy").exists(), \
        f"a later process was handed the changed copy: {(state / 'stale-copy').read_text()}"
    later = {cid: c["outcome"] for cid, c in run.cases().items()
             if cid in PLANS["mutate_fixture"].cases and c["group"] != "handshake"}
    assert set(later.values()) == {"passed"}, f"{later}\n{run.describe()}"


# null_result answers initialize correctly and `result: null` to everything
# else. A case may pass against it only if all it reads is initialize replies:
NULL_RESULT_MAY_PASS = {
    "FC-001": "judges the protocol member of the initialize reply",
    "FC-002": "judges the name member of the initialize reply",
    "FC-003": "judges the capabilities member of the initialize reply",
    "FC-004": "judges the icon member of the initialize reply",
    "FC-080": "judges the icon glyph of the initialize reply",
    "FC-051": "compares the initialize replies of three generations, and nothing else",
    "FC-055": "judges what the adapter wrote into the host's cache root, whatever it answered",
}
# The cases that own what a null breaks (the shape of that method's reply, or
# that it is an error) fail; every other case skips as not evaluated, naming
# what was missing and whose rule that is.
NULL_RESULT_FAILS = {
    "FC-020": "repo/tree replies (coverage)",
    "FC-021": "repo/tree replies' shape (the protocol monitor, on every tree reply)",
    "FC-022": "repo/tree replies (truncated)",
    "FC-024": "repo/blob replies' shape (the protocol monitor, on every blob reply)",
    "FC-025": "an error for a missing repository",
    "FC-034": "the reply to a path: query",
    "FC-042": "the reply of a streamed search",
    "FC-045": "the reply to a cancelled stream",
    "FC-060": "an error for the denied fault",
    "FC-061": "an error for the throttled fault",
    "FC-062": "errors for unknown blobs",
    "FC-064": "errors for the broken fault",
    "FC-070": "one-shot search replies",
    "FC-090": "repo/refs replies",
    "FC-091": "repo/tree replies at a ref",
    "FC-092": "an error for an unknown ref",
    "FC-094": "repo/log replies",
    "FC-095": "repo/log replies with a limit",
    "FC-096": "repo/blob_at replies",
    "FC-097": "errors for blob_at of unknown things",
    "FC-098": "repo/blame replies",
    "FC-100": "repo/commit replies' shape",
    "FC-110": "search/repos replies",
    "FC-111": "org/repos replies (their entries)",
    "FC-113": "repo/clone_url replies",
    "FC-114": "repo/web_url replies",
    "FC-115": "org/url replies",
}
# (FC-099 judges capability honesty only: a probe answered with something that
# is not an object is left out, and with none left FC-099 skips, naming the
# owners of the replies it could not read (FC-108 too: a null commit is FC-100's). The round trips FC-130..133 and
# FC-112's object members skip too: the replies they read are FC-094's,
# FC-096's, FC-098's and FC-111's.)
VCS_GROUPS = ("revisions", "commits", "roundtrips")   # they skip for want of git
NOT_EVALUATED = re.compile(r"^\[FC-\d{3}\] not evaluated: .+ \(.*\bFC-\d{3}'s\b.*\)$")


def outcomes_null_result(run):
    cases = run.cases()
    passed = {cid for cid, c in cases.items() if c["outcome"] == "passed"}
    assert passed <= set(NULL_RESULT_MAY_PASS), \
        f"passed without comparing anything: {sorted(passed - set(NULL_RESULT_MAY_PASS))}" \
        f"\n{run.describe()}"
    no_vcs = not git_available()   # the revision cases then skip for want of git
    want = {cid for cid in NULL_RESULT_FAILS if not (no_vcs and cases[cid]["group"] in VCS_GROUPS)}
    assert set(_failed(run)) == want, run.describe()
    for cid, c in cases.items():
        if c["outcome"] == "skipped" and not (no_vcs and c["group"] in VCS_GROUPS):
            assert NOT_EVALUATED.match(c.get("message") or ""), \
                f"{cid}: a skip must say what was missing and whose rule it is: {c.get('message')!r}"


OUTCOMES = {
    "exit_at_start": outcomes_could_not_run,
    "silent": outcomes_could_not_run,
    "huge_handshake": outcomes_could_not_run,
    "garbage": outcomes_garbage,
    "huge_line": outcomes_huge_line,
    "flood": outcomes_timeouts,
    "orphan": outcomes_all_pass,
    "orphan_crash": outcomes_orphan_crash,
    "close_stdout": outcomes_close_stdout,
    "mutate_fixture": outcomes_mutate_fixture,
    "ignore_eof": outcomes_all_pass,
    "stderr_flood": outcomes_all_pass,
    "wrong_id": outcomes_timeouts,
    "null_result": outcomes_null_result,
}


@pytest.mark.parametrize("name", list(OUTCOMES))
def test_the_right_cases_fail(runs, name):
    run = runs(name)
    if PLANS[name].exit != 2:
        assert run.report is not None, f"{run.report_error}\n{run.describe()}"
    OUTCOMES[name](run)


# -------------------------------------- each failure says what happened, once

ONE_LINE = "the one line of a run that could not run"
# name -> (what to read, the pattern it must match): ONE_LINE, some case ids,
# or None for every failed case.
SENTENCES: dict[str, tuple] = {
    "exit_at_start": (ONE_LINE, r"exited with code 3"),
    "silent": (ONE_LINE, r"never answered initialize within 2 ?s"),
    # The first offending line is the junk one; the invalid UTF-8 after it is fatal.
    "garbage": (None, r"framing violation.*(this is not JSON|\\xff\\xfe)"),
    "huge_line": (None, r'framing violation.*\{"jsonrpc":"2\.0"'),
    "huge_handshake": (ONE_LINE, r'framing violation.*\{"jsonrpc":"2\.0"'),
    "flood": (("FC-010", "FC-062"), r"timed out after 2 ?s waiting for .*\(id \d+\)"),
    "orphan_crash": (("FC-024",), r"exited with code 3"),
    "close_stdout": (None, r"closed its output"),
    "mutate_fixture": (None, r"fixture.*(chang|modif)|(chang|modif).*fixture"),
    "wrong_id": (("FC-010", "FC-062"), r"timed out after 3 ?s waiting for .*\(id \d+\)"),
    "null_result": (None, r"\bnull\b"),
}




@pytest.mark.parametrize("name", list(SENTENCES))
def test_each_failure_says_what_happened_in_one_sentence(runs, name):
    run = runs(name)
    ids, pattern = SENTENCES[name]
    if ids == ONE_LINE:
        line = _could_not_run_line(run)
        assert re.search(pattern, line), f"{line!r} does not match {pattern!r}"
        return
    failed = _failed(run)
    for cid, message in failed.items():
        assert message.strip() and "\n" not in message.strip(), \
            f"{cid}: not one sentence: {message!r}"
    chosen = failed if ids is None else {cid: failed.get(cid, "") for cid in ids}
    assert chosen, f"no failed case to read\n{run.describe()}"
    for cid, message in chosen.items():
        assert re.search(pattern, message), f"{cid}: {message!r} does not match {pattern!r}"


# ------------------------------------------------- what a flood leaves behind

TRANSCRIPT_CAP = 16 * 2**20   # per case file; the transcript ring holds about 4 MiB of text
STDERR_CAP = 16 * 2**20       # what the suite may keep of one process's stderr


@pytest.mark.parametrize("name", ["flood"])
def test_a_flood_leaves_bounded_transcripts(runs, name):
    run = runs(name)
    files = sorted(run.transcripts.glob("*.jsonl"))
    assert files, f"no transcript written\n{run.describe()}"
    for path in files:
        assert path.stat().st_size < TRANSCRIPT_CAP, f"{path.name}: {path.stat().st_size} bytes"


@pytest.mark.parametrize("name", ["stderr_flood"])
def test_chatty_stderr_is_kept_only_up_to_a_cap(runs, name):
    run = runs(name)
    kept = (run.workdir / "state" / "stderr-kept").read_text().split()
    kind, size = kept[0], int(kept[1])
    assert kind != "file" or size <= STDERR_CAP, \
        f"the suite kept {size / 2**20:.0f} MB of one process's stderr in {kept[2]}"
