"""repo/commit replies and patches (v1.6, PROTOCOL §3.12), for the commit
cases (FC-100..109); git's side of a commit is cases/kit/gitfacts.py's
(``git_commit``).

Owns the commit replies of one adapter process, asked once per process and
read as wire.messages.Commit (asking every commit of the fixture
again in every case would cost the suite a second), the folding of a rename
reported as removed + added, whether an id the adapter spells names a
commit, and the reading of a ``patch`` (hunk headers, bodies, the lines
that are not hunks).

Commits are asked by git's full id: a git-backed adapter resolves it (§3.12
"SHOULD accept any commit-ish the backend resolves"); then by git's
abbreviated id (``abbreviated``), whose reply, when there is one, is judged
like the full id's (an adapter may build it on another code path); the reply is judged
by what it says about that commit, never by string comparison with the
reference's output.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass
from typing import Any

import attrs

from cases.kit.api import need, owner, show, skip
from cases.kit.formats import either_instant
from cases.kit.gitfacts import GitCommitFacts, git_all_commits, git_commit, git_text
from cases.kit.replies import attempt
from fixture import GIT_MISSING_REASON
from fixture.catalog import VCS
from wire import ProviderError
from wire.messages import Commit, CommitFile, Reading, read


def require_commit(adapter, fx) -> None:
    """Skip unless the vcs repo exists and the adapter declares ``commit``
    (false or absent: the host never sends repo/commit)."""
    if not fx.vcs_built:
        skip(f"the vcs repo is missing: {fx.vcs_skip_reason or GIT_MISSING_REASON}")
    if not adapter.caps.commit:
        skip("needs the 'commit' capability, which the adapter declares false or omits")


# ---------------------------------------------------------------- the adapter's replies


@dataclass
class Asked:
    """The adapter's answer to repo/commit of one sha: a result (as sent, and
    read as a Commit) or an error."""
    sha: str
    result: Any = None
    reading: Reading | None = None
    error: ProviderError | None = None

    @property
    def commit(self) -> Commit | None:
        """The reply read as a Commit (None for an error or a non-object)."""
        return self.reading.model if self.reading is not None else None


_asked: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def ask(adapter, fx, sha: str) -> Asked:
    """repo/commit of ``sha`` in vcs, asked once per adapter process (generation)."""
    book = _asked.setdefault(adapter, {})
    key = (adapter.generation, sha)
    if key not in book:
        result, err = attempt(adapter.request, "repo/commit", {"repo": fx.repo(VCS), "sha": sha})
        book[key] = Asked(sha, error=err) if err is not None else \
            Asked(sha, result, read(result, Commit))
    return book[key]


def abbreviated(fx) -> list[tuple[str, str]]:
    """(git's abbreviated id, the full id) of every commit of vcs, newest
    first: the short ids a host shows and asks back (§3.12 "SHOULD accept
    any commit-ish the backend resolves"). A reply to one is judged like the
    full id's: the same commit, whatever spelling named it."""
    short = dict(line.split() for line in
                 git_text(fx, "log", "--all", "--format=%H %h").splitlines() if line.strip())
    return [(short[sha], sha) for sha in git_all_commits(fx) if short.get(sha, sha) != sha]


def need_files(commit: Commit, sha: str, result: Any) -> list[CommitFile]:
    """The files of a commit reply that have a string path; the running case
    skips when files is not an array (commit replies are FC-100's)."""
    need(commit.files is not None,
         f"repo/commit of {sha[:12]} carried files {show(result.get('files'), 40)}",
         owner("commit replies are"))
    return [f for f in commit.files if isinstance(f.path, str)]


def canonical(files: list[CommitFile], git: GitCommitFacts
              ) -> tuple[dict[str, CommitFile], set[str]]:
    """(the adapter's files by path, the paths folded), a rename git detected
    but the adapter reported as removed + added folded into one renamed entry
    (both are honest descriptions of the change; rename detection is the
    backend's). A folded entry says nothing about the adapter's own fields."""
    by_path: dict[str, CommitFile] = {}
    for f in files:
        by_path.setdefault(f.path, f)
    folded: set[str] = set()
    for change in git.changes:
        if change.letter != "R" or change.previous_path is None:
            continue
        old, new = by_path.get(change.previous_path), by_path.get(change.path)
        if (old is not None and new is not None and old.status == "removed"
                and new.status == "added"):
            del by_path[change.previous_path]
            by_path[change.path] = attrs.evolve(new, status="renamed",
                                                previous_path=change.previous_path)
            folded.add(change.path)
    return by_path, folded


def resolves_to(adapter, fx, spelled: Any, sha: str) -> bool:
    """Whether the commit id ``spelled`` (the adapter's vocabulary) names git's
    commit ``sha``: the same id, or one repo/commit accepts and answers with
    that commit's message and one of its dates (RULINGS "Content and revisions")."""
    if spelled == sha:
        return True
    if not isinstance(spelled, str) or not spelled:
        return False
    again = ask(adapter, fx, spelled).commit
    if again is None:
        return False
    want = git_commit(fx, sha)
    return again.message == want.message and either_instant(again.date) in want.dates


# ---------------------------------------------------------------- patches

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
FILE_HEADERS = ("diff --git ", "index ", "--- ", "+++ ", "old mode ", "new mode ",
                "deleted file mode ", "new file mode ", "similarity index ", "rename from ",
                "rename to ", "copy from ", "copy to ", "Binary files ")


def patch_problem(patch: str) -> str | None:
    """What keeps ``patch`` from being hunks only (§3.12), or None.

    Every hunk starts with an ``@@ -a,b +c,d @@`` header (",1" may be left
    out) whose counts its body matches; body lines start with ' ', '+', '-'
    or '\\' (the no-newline marker); lines are joined with \\n and no newline
    follows the last one."""
    if patch == "":
        return None
    if patch.endswith("\n"):
        return "ends with a newline"
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        m = HUNK_HEADER.match(line)
        if not m:
            if line.startswith(FILE_HEADERS):
                return f"carries the file header line {line[:60]!r}"
            return f"line {i + 1} {line[:60]!r} is not a hunk header"
        want_old = int(m.group(2)) if m.group(2) is not None else 1
        want_new = int(m.group(4)) if m.group(4) is not None else 1
        old = new = 0
        i += 1
        while i < len(lines) and (old < want_old or new < want_new or lines[i].startswith("\\")):
            body = lines[i]
            if body.startswith(" "):
                old, new = old + 1, new + 1
            elif body.startswith("-"):
                old += 1
            elif body.startswith("+"):
                new += 1
            elif not body.startswith("\\"):
                return f"line {i + 1} {body[:60]!r} has no ' ', '+', '-' or '\\' prefix"
            i += 1
        if (old, new) != (want_old, want_new):
            return (f"hunk {line[:40]!r} announces {want_old} old and {want_new} new lines, "
                    f"its body has {old} and {new}")
    return None


def patch_counts(patch: str) -> tuple[int, int]:
    """(+ lines, - lines) of the hunk bodies: lines after the first hunk header
    (anything before it is FC-105's business), headers excluded."""
    lines = patch.split("\n")
    start = next((n for n, line in enumerate(lines) if HUNK_HEADER.match(line)), len(lines))
    body = [line for line in lines[start:] if not HUNK_HEADER.match(line)]
    return (sum(1 for line in body if line.startswith("+")),
            sum(1 for line in body if line.startswith("-")))
