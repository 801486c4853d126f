"""Capability gating: what an adapter does not declare is never asked.

- tests/incapable.py declares refs, log, blame and commit false and fails
  loudly (error reply + a stderr marker) on any revision request. The
  revision group must skip with reasons citing each case id, everything else
  must pass, the exit code must be 0, and the transcripts of every case must
  show that no revision request was ever sent (the "never asked" half of
  FC-099).
- Without git on PATH (a PATH holding only a python symlink), the vcs repo
  cannot be built: the revision cases skip with a reason saying git is
  missing, and the rest of the suite stays green.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from cases.registry import REGISTRY
from fixture import GIT_MISSING_REASON
from tests import gate
from tests.adapters.gates import MARKER, is_revision_request

# The groups that need a revision capability and the vcs repo (FC-099 judges the declarations).
REVISION_GROUPS = ("revisions", "commits", "roundtrips")
REVISION_CASES = {c.id for c in REGISTRY if c.group in REVISION_GROUPS and c.id != "FC-099"}
OTHER_CASES = {c.id for c in REGISTRY if c.id not in REVISION_CASES and c.id != "FC-099"}


_TEMP: list[Path] = []


def _temp() -> Path:
    """This module's scratch dir (transcripts, the git-less PATH), removed at exit."""
    if not _TEMP:
        _TEMP.append(Path(tempfile.mkdtemp(prefix="forge-gating-")))
        atexit.register(shutil.rmtree, _TEMP[0], True)
    return _TEMP[0]


def _jobs(items):
    """The incapable adapter with transcripts; the reference with a PATH that has no git
    (only a python symlink: the suite and the reference need nothing else from PATH)."""
    nogit = _temp() / "nogit-bin"
    nogit.mkdir(exist_ok=True)
    for name in ("python3", "python"):
        if not (nogit / name).exists():
            (nogit / name).symlink_to(sys.executable)
    env = dict(os.environ, PATH=str(nogit))
    return {"gating:incapable": {"adapter": gate.script("incapable.py"),
                                 "options": ("--transcripts", str(_temp() / "transcripts"))},
            "gating:nogit": {"adapter": gate.reference(), "env": env}}


gate.plan(__name__, _jobs)


@pytest.fixture
def runs(request):
    found = gate.verdicts(request, ["gating:incapable", "gating:nogit"])
    return {"incapable": found["gating:incapable"], "nogit": found["gating:nogit"]}, _temp() / "transcripts"


def sent_frames(transcripts: Path):
    for path in sorted(transcripts.rglob("*.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            yield path.name, entry


def test_incapable_skips_the_revision_group(runs):
    verdict = runs[0]["incapable"]
    assert verdict.code == 0 and not verdict.failed, verdict.explain()
    assert REVISION_CASES <= verdict.skipped, verdict.explain()
    uncited = [cid for cid in REVISION_CASES if cid not in verdict.message(cid)]
    assert not uncited, f"skip reasons must cite the case id: {uncited}\n{verdict.explain()}"


def test_incapable_passes_everything_else(runs):
    verdict = runs[0]["incapable"]
    assert OTHER_CASES <= verdict.passed, verdict.explain()
    assert verdict.cases.get("FC-099", {}).get("outcome") == "passed", verdict.explain()


def test_incapable_was_never_asked_a_revision_method(runs):
    verdict, transcripts = runs[0]["incapable"], runs[1]
    frames = list(sent_frames(transcripts))
    requests = [(name, entry["msg"]) for name, entry in frames
                if entry.get("direction") == "out" and isinstance(entry.get("msg"), dict)
                and "id" in entry["msg"] and "method" in entry["msg"]]
    assert len({name for name, _ in requests}) >= len(OTHER_CASES) // 2, (
        f"too few transcripts with requests in {transcripts}\n{verdict.explain()}")
    asked = [f"{name}: {msg['method']} {json.dumps(msg.get('params'))[:120]}" for name, msg in requests
             if is_revision_request(msg["method"], msg.get("params") or {})]
    assert not asked, "revision requests sent to an adapter that declared them false:\n" + "\n".join(asked)
    loud = [name for name, entry in frames if MARKER in str(entry.get("raw", ""))]
    assert not loud, f"the incapable adapter reported being asked (stderr) in: {loud}"


def test_without_git_the_revision_cases_skip_saying_so(runs):
    verdict = runs[0]["nogit"]
    assert verdict.code == 0 and not verdict.failed, verdict.explain()
    assert REVISION_CASES <= verdict.skipped, verdict.explain()
    silent = [cid for cid in REVISION_CASES if "git" not in verdict.message(cid).lower()]
    assert not silent, f"skip reasons must say git is missing: {silent}\n{verdict.explain()}"
    assert OTHER_CASES <= verdict.passed, verdict.explain()


def test_git_missing_reason_is_the_fixtures(runs):
    """The reason is the fixture's own sentence, not a paraphrase."""
    verdict = runs[0]["nogit"]
    assert all(GIT_MISSING_REASON in verdict.message(cid) for cid in REVISION_CASES), verdict.explain()
