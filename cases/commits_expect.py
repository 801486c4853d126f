"""What repo/commit must answer for the vcs repo, from git alone (v1.6, PROTOCOL §3.12).

Owns the git facts of one commit (parents, message, author date, the
first-parent change list with git's own numstat), the reading of a `patch`
(hunk headers, bodies, the lines that are not hunks), and the commit
replies of one adapter process, asked once per process and shared by the
commit cases (FC-100..109): asking the thirteen commits of the fixture again
in every case would cost the suite a second.

Commits are asked by git's full id: a git-backed adapter resolves it (§3.12
"SHOULD accept any commit-ish the backend resolves"); the reply is judged
by what it says about that commit, never by string comparison with the
reference's output.
"""

from __future__ import annotations

import re
import weakref
from dataclasses import dataclass, field

from cases.expect import git_bytes, git_text, instant, need, show
from cases.plugin import skip
from fixture import GIT_MISSING_REASON
from fixture.catalog import VCS, VCS_DEFAULT_BRANCH
from wire import ProviderError

# Whose rule it is when a commit case's evidence is missing.
COMMIT_REPLIES = "commit replies are FC-100's"

STATUS_OF_LETTER = {"A": "added", "D": "removed", "M": "modified", "T": "modified",
                    "R": "renamed", "C": "added"}
EMPTY_OID = re.compile(r"^0+$")


def require_commit(adapter, fx) -> None:
    """Skip unless the vcs repo exists and the adapter declares ``commit``
    (false or absent: the host never sends repo/commit)."""
    if not fx.vcs_built:
        skip(f"the vcs repo is missing: {fx.vcs_skip_reason or GIT_MISSING_REASON}")
    if not adapter.caps.commit:
        skip("needs the 'commit' capability, which the adapter declares false or omits")


# ---------------------------------------------------------------- git facts


@dataclass(frozen=True)
class Change:
    """One entry of git's first-parent diff (``diff-tree -r -M``)."""
    letter: str                 # A D M T R C
    path: str                   # after the change (for a removal, the removed path)
    previous_path: str | None   # R and C only
    same_bytes: bool            # old and new blob ids equal (pure rename, mode-only change)
    binary: bool                # git's numstat says "-" (no line counts)
    additions: int | None
    deletions: int | None

    @property
    def status(self) -> str:
        return STATUS_OF_LETTER.get(self.letter, "modified")


@dataclass(frozen=True)
class GitCommitFacts:
    sha: str
    parents: tuple[str, ...]
    message: str                # the complete message without its terminating newline
    subject: str
    date: object                # the author date's instant
    changes: tuple[Change, ...] = field(default=())

    def change_of(self, path: str) -> Change | None:
        return next((c for c in self.changes if c.path == path), None)


def all_commits(fx) -> list[str]:
    """Every commit of the vcs repo (both branches and the merged topic), newest first."""
    return git_text(fx, "rev-list", "--all").split()


def tip_sha(fx) -> str:
    """The default branch's tip (the commit FC-099 asks)."""
    return git_text(fx, "rev-parse", VCS_DEFAULT_BRANCH).strip()


_facts_cache: dict[tuple[str, str], GitCommitFacts] = {}


def facts(fx, sha: str) -> GitCommitFacts:
    key = (str(fx.path), sha)
    if key not in _facts_cache:
        _facts_cache[key] = _facts(fx, sha)
    return _facts_cache[key]


def _facts(fx, sha: str) -> GitCommitFacts:
    head = git_text(fx, "rev-list", "--parents", "-n1", sha).split()
    parents = tuple(head[1:])
    raw = git_bytes(fx, "cat-file", "commit", sha).decode("utf-8", "replace")
    _, _, message = raw.partition("\n\n")
    if message.endswith("\n"):
        message = message[:-1]
    date = instant(git_text(fx, "log", "-1", "--format=%aI", sha).strip())
    base = [parents[0], sha] if parents else ["--root", sha]
    common = ["diff-tree", "-r", "-M", "--no-commit-id", "-z"]
    raw_diff = git_bytes(fx, *common, "--raw", *base).split(b"\0")
    numstat = git_bytes(fx, *common, "--numstat", *base).split(b"\0")
    counts = _numstat(numstat)
    changes, i = [], 0
    while i < len(raw_diff):
        meta = raw_diff[i].decode("utf-8", "replace")
        i += 1
        if not meta.startswith(":"):
            continue
        _old_mode, _new_mode, old_oid, new_oid, status = meta[1:].split()
        letter = status[0]
        if letter in "RC":
            old, new = (raw_diff[i].decode("utf-8", "replace"),
                        raw_diff[i + 1].decode("utf-8", "replace"))
            i += 2
        else:
            old, new = None, raw_diff[i].decode("utf-8", "replace")
            i += 1
        added, removed = counts.get(new, (None, None))
        changes.append(Change(letter, new, old, old_oid == new_oid and not EMPTY_OID.match(old_oid),
                              added is None, added, removed))
    return GitCommitFacts(sha, parents, message, message.split("\n", 1)[0], date, tuple(changes))


def _numstat(fields: list[bytes]) -> dict[str, tuple[int | None, int | None]]:
    """path (after the change) -> (additions, deletions); (None, None) for binary."""
    out: dict[str, tuple] = {}
    i = 0
    while i < len(fields):
        record = fields[i].decode("utf-8", "replace")
        i += 1
        if not record:
            continue
        added, removed, path = (record.split("\t", 2) + ["", ""])[:3]
        if path == "":   # a rename: the two paths follow as their own fields
            path = fields[i + 1].decode("utf-8", "replace") if i + 1 < len(fields) else ""
            i += 2
        out[path] = ((None, None) if added == "-" else (int(added), int(removed)))
    return out


# ---------------------------------------------------------------- the adapter's replies


@dataclass
class Asked:
    """The adapter's answer to repo/commit of one sha: a result or an error."""
    sha: str
    result: object = None
    error: ProviderError | None = None


_asked: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def ask(adapter, fx, sha: str) -> Asked:
    """repo/commit of ``sha`` in vcs, asked once per adapter process (generation)."""
    book = _asked.setdefault(adapter, {})
    key = (adapter.generation, sha)
    if key not in book:
        try:
            book[key] = Asked(sha, adapter.request("repo/commit",
                                                   {"repo": fx.repo(VCS), "sha": sha}))
        except ProviderError as err:
            if err.origin != "adapter":
                raise
            book[key] = Asked(sha, error=err)
    return book[key]


def files(result: dict) -> list[dict]:
    """The file objects of a commit result that have a string path (read tolerantly)."""
    raw = result.get("files")
    if not isinstance(raw, list):
        return []
    return [f for f in raw if isinstance(f, dict) and isinstance(f.get("path"), str)]


def need_files(result: dict, sha: str) -> list[dict]:
    got = files(result)
    need(isinstance(result.get("files"), list),
         f"repo/commit of {sha[:12]} carried files {show(result.get('files'), 40)}",
         COMMIT_REPLIES)
    return got


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


def is_count(value) -> bool:
    return type(value) is int and value >= 0


def canonical(result_files: list[dict], git: GitCommitFacts) -> dict[str, dict]:
    """The adapter's files by path, a rename git detected but the adapter
    reported as removed + added folded into one renamed entry (both are honest
    descriptions of the change; rename detection is the backend's)."""
    by_path: dict[str, dict] = {}
    for f in result_files:
        by_path.setdefault(f["path"], f)
    for change in git.changes:
        if change.letter != "R" or change.previous_path is None:
            continue
        old, new = by_path.get(change.previous_path), by_path.get(change.path)
        if (old is not None and new is not None and old.get("status") == "removed"
                and new.get("status") == "added"):
            del by_path[change.previous_path]
            by_path[change.path] = {**new, "status": "renamed",
                                    "previous_path": change.previous_path, "_split": True}
    return by_path
