"""Git facts: what git itself says about the vcs repo (paths and bytes at a
ref, refs, log, blame coalesced into ranges, ids that name nothing, and one
commit's parents, message, author and committer dates and first-parent change list with
git's numstat), the expectations of the revision and commit cases. Answers are remembered per
fixture copy: the vcs repo never changes during a run."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import re
from dataclasses import dataclass
from typing import Any

from cases.kit.formats import epoch_instant, instant
from cases.kit.memo import remembered
from fixture.catalog import VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH

def git_bytes(fx, *args: str) -> bytes:
    """fx.git_bytes, remembered: the vcs repo never changes during a run, and
    several cases ask git the same questions."""
    return remembered(fx, ("git", *args), lambda: fx.git_bytes(*args))


def git_text(fx, *args: str) -> str:
    return git_bytes(fx, *args).decode("utf-8", "replace")


def git_paths(fx, ref: str) -> set[str] | None:
    """Every path (files and directories) of the tree at ``ref``; None when git
    cannot resolve ``ref``."""
    try:
        out = git_text(fx, "ls-tree", "-r", "-t", "--name-only", "-z", ref)
    except RuntimeError:   # fx.git raises when git exits non-zero
        return None
    return {p for p in out.split("\0") if p}


def git_show(fx, ref: str, path: str) -> bytes:
    return git_bytes(fx, "show", f"{ref}:{path}")


def unknown_commit_id(fx) -> str:
    """A 40-hex id naming no object of the vcs repo."""
    for n in range(100):
        candidate = hashlib.sha1(f"forge-conformance: no such commit {n}".encode()).hexdigest()
        try:
            git_bytes(fx, "cat-file", "-e", candidate)
        except RuntimeError:   # fx.git raises when git exits non-zero: no such object
            return candidate
    raise RuntimeError("could not find an unused commit id")


UNKNOWN_REF = "forge-conformance-no-such-ref"


def git_refs(fx, kind: str) -> dict[str, str]:
    """Short name -> object id of every branch ("heads") or tag ("tags")."""
    out = git_text(fx, "for-each-ref", "--format=%(refname:short)%00%(objectname)", f"refs/{kind}")
    return dict(line.split("\0", 1) for line in out.splitlines() if "\0" in line)


def git_ref_commit(fx, kind: str, name: str) -> str | None:
    """git's commit id of the branch ("heads") or tag ("tags") ``name`` (an
    annotated tag peeled to its commit); None when git has no such ref."""
    try:
        return git_text(fx, "rev-parse", "--verify", "-q",
                        f"refs/{kind}/{name}^{{commit}}").strip() or None
    except RuntimeError:   # no such ref
        return None


def telling_files(fx, commit: str) -> list[str]:
    """The text files at ``commit`` whose bytes differ from the default
    branch's (at the default branch's tip: from the feature branch's), sorted:
    where a reply at ``commit`` shows which revision was served."""
    other = VCS_FEATURE_BRANCH if commit == git_tip(fx) else VCS_DEFAULT_BRANCH
    out = git_text(fx, "diff", "--name-only", "--no-renames", "-z", other, commit)
    at, there = git_paths(fx, commit) or set(), git_paths(fx, other) or set()
    return sorted(p for p in out.split("\0") if p in at and b"\0" not in git_show(fx, commit, p)
                  and (p not in there or git_show(fx, other, p) != git_show(fx, commit, p)))


def blame_telling_file(fx, commit: str) -> str | None:
    """A text file whose git blame at ``commit`` differs from its blame at the
    default branch (at the default branch's tip: at the feature branch), or
    None: where a blame at ``commit`` shows which revision was blamed."""
    other = VCS_FEATURE_BRANCH if commit == git_tip(fx) else VCS_DEFAULT_BRANCH
    there = git_paths(fx, other) or set()

    def spans(ref, path):
        return [(b.start_line, b.end_line, b.sha) for b in git_blame(fx, ref, path)]
    return next((p for p in telling_files(fx, commit)
                 if p not in there or spans(commit, p) != spans(other, p)), None)


@dataclass(frozen=True)
class GitCommit:
    sha: str
    subject: str
    author: str
    email: str
    date: _dt.datetime           # the author date's instant
    committed: _dt.datetime      # the committer date's instant (the same for most commits)

    @property
    def dates(self) -> tuple[_dt.datetime, ...]:
        """The instants a backend may report as the commit's date (RULINGS
        "Content and revisions": author or committer date)."""
        return (self.date, self.committed)


def git_log(fx, ref: str, path: str | None = None) -> list[GitCommit]:
    """git log of ``ref`` (newest first), narrowed to ``path`` when given."""
    args = ["log", "--format=%H%x1f%s%x1f%an%x1f%ae%x1f%aI%x1f%cI%x1e", ref]
    if path is not None:
        args += ["--", path]
    out = []
    for record in git_text(fx, *args).split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) == 6:
            sha, subject, author, email, date, committed = fields
            out.append(GitCommit(sha, subject, author, email, instant(date), instant(committed)))
    return out


def author_matches(sent: Any, name: str, email: str) -> bool:
    """The author as git knows it: the name, or 'name <email>'."""
    return sent in (name, f"{name} <{email}>")


@dataclass(frozen=True)
class GitBlame:
    """Lines start_line..end_line (1-based, inclusive) last changed by ``sha``,
    as git blame says (named apart from wire.messages.BlameRange, the reply's shape)."""
    start_line: int
    end_line: int
    sha: str
    author: str
    email: str
    date: _dt.datetime


def git_blame(fx, ref: str, path: str) -> list[GitBlame]:
    """git blame of ``path`` at ``ref``, adjacent same-commit lines coalesced."""
    out = git_text(fx, "blame", "--line-porcelain", ref, "--", path)
    ranges: list[GitBlame] = []
    info: dict[str, str] = {}
    for line in out.split("\n"):
        if not line:
            continue
        if line.startswith("\t"):
            final = int(info["final"])
            sha = info["sha"]
            if ranges and ranges[-1].sha == sha and ranges[-1].end_line == final - 1:
                ranges[-1] = dataclasses.replace(ranges[-1], end_line=final)
            else:
                ranges.append(GitBlame(final, final, sha, info.get("author", ""),
                                       info.get("author-mail", "").strip("<>"),
                                       epoch_instant(info.get("author-time", "0"))))
            info = {}
            continue
        head = line.split(" ")
        if not info and re.fullmatch(r"[0-9a-f]{40,64}", head[0]):
            info = {"sha": head[0], "final": head[2]}
        else:
            key, _, value = line.partition(" ")
            info[key] = value
    return ranges


# ---------------------------------------------------------------- one commit (repo/commit)

STATUS_OF_LETTER = {"A": "added", "D": "removed", "M": "modified", "T": "modified",
                    "R": "renamed", "C": "added"}
_EMPTY_OID = re.compile(r"^0+$")


@dataclass(frozen=True)
class GitChange:
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
    date: _dt.datetime | None   # the author date's instant
    changes: tuple[GitChange, ...] = ()
    committed: _dt.datetime | None = None   # the committer date's instant

    @property
    def dates(self) -> tuple:
        """The instants a backend may report as the commit's date (author or committer)."""
        return tuple(d for d in (self.date, self.committed) if d is not None)

    def change_of(self, path: str) -> GitChange | None:
        return next((c for c in self.changes if c.path == path), None)


def git_all_commits(fx) -> list[str]:
    """Every commit of the vcs repo (both branches and the merged topic), newest first."""
    return git_text(fx, "rev-list", "--all").split()


def git_ancestors(fx) -> dict[str, frozenset[str]]:
    """Every commit of the vcs repo -> its ancestors (parents, their parents, ...;
    not itself)."""
    parents = {}
    for line in git_text(fx, "rev-list", "--all", "--parents").splitlines():
        sha, *ps = line.split()
        parents[sha] = ps
    out: dict[str, frozenset[str]] = {}
    for sha in reversed(list(parents)):   # rev-list lists children before their parents
        stack, seen = list(parents[sha]), set()
        while stack:
            c = stack.pop()
            if c not in seen:
                seen.add(c)
                stack.extend(parents.get(c, ()))
        out[sha] = frozenset(seen)
    return out


def git_log_touching(fx, ref: str, path: str) -> frozenset[str]:
    """Every commit of ``ref``'s history that touches ``path`` by any reading
    of §3.7's "commits that touch that path": git's log of the path without
    history simplification (a side line whose change a merge discarded or
    repeated), and every merge whose tree differs there from one of its
    parents (§3.12 reads a merge's changes against its first parent). git's
    default ``git log -- path`` is the least such listing (FIXTURES.md,
    "repo/log of a path across merges")."""
    def walk():
        out = set(git_text(fx, "log", "--full-history", "--format=%H", ref, "--", path).split())
        for line in git_text(fx, "rev-list", "--merges", "--parents", ref).splitlines():
            merge, *parents = line.split()
            if any(git_text(fx, "diff-tree", "--name-only", "-r", "-z", p, merge, "--", path)
                   for p in parents):
                out.add(merge)
        return frozenset(out)
    return remembered(fx, ("log touching", ref, path), walk)


def log_left_out(got: list, want: list[str]) -> list[str]:
    """git's commits ``want`` a listing ``got`` leaves out: each touches the
    path by every reading, so a listing without one is cut short."""
    listed = set(got)
    return [w for w in want if w not in listed]


def log_complete(got: list, want: list[str], may: frozenset[str] = frozenset()) -> bool:
    """Whether ``got`` lists every commit that touches the path by any reading
    (``want`` and ``may``): then no further commit exists, and a listing
    saying truncated true claims one that does not."""
    return not log_left_out(got, want) and set(got) >= may


def not_newest_first(fx, got: list, want: list[str],
                     may: frozenset[str] = frozenset()) -> str | None:
    """Why the commits ``got`` (git ids, in the adapter's order) are not a
    newest-first listing of (a leading part of) git's commits ``want``, or None.
    ``may``: further commits a listing may hold (git_log_touching: a path's log
    by another reading of "touch"), each then judged for its order too.

    Newest first is read as children before parents: each commit is listed
    before its ancestors, and none is listed while a newer commit of the
    same history (one of its descendants in ``want``) is left out. Git's
    default order, --date-order and --topo-order all pass; commits on lines
    of history that do not descend from each other may come in any order
    (FIXTURES.md, "repo/log order")."""
    ancestors, wanted = git_ancestors(fx), set(want)
    pos: dict[str, int] = {}
    for i, c in enumerate(got):
        if c not in wanted and c not in may:
            return f"item {i + 1} ({(c or 'no commit')[:12]}) is not in git's log"
        if c in pos:
            return f"{c[:12]} is listed twice"
        pos[c] = i
    for c, i in pos.items():
        for d in (*want, *(x for x in pos if x not in wanted)):
            if c in ancestors.get(d, ()) and pos.get(d, len(got)) > i:
                return (f"{c[:12]} is listed before its descendant {d[:12]}" if d in pos else
                        f"{c[:12]} is listed while its descendant {d[:12]} (newer) is not")
    return None


def git_tip(fx) -> str:
    """The default branch's tip."""
    return git_text(fx, "rev-parse", VCS_DEFAULT_BRANCH).strip()


def git_commit(fx, sha: str) -> GitCommitFacts:
    """What git says about commit ``sha``; the change list is the diff against
    its first parent (a root commit: against the empty tree)."""
    return remembered(fx, ("commit facts", sha), lambda: _git_commit(fx, sha))


def _git_commit(fx, sha: str) -> GitCommitFacts:
    head = git_text(fx, "rev-list", "--parents", "-n1", sha).split()
    parents = tuple(head[1:])
    raw = git_text(fx, "cat-file", "commit", sha)
    _, _, message = raw.partition("\n\n")
    if message.endswith("\n"):
        message = message[:-1]
    date, _, committed = git_text(fx, "log", "-1", "--format=%aI %cI", sha).strip().partition(" ")
    date, committed = instant(date), instant(committed)
    base = [parents[0], sha] if parents else ["--root", sha]
    common = ["diff-tree", "-r", "-M", "--no-commit-id", "-z"]
    raw_diff = git_bytes(fx, *common, "--raw", *base).split(b"\0")
    counts = _numstat(git_bytes(fx, *common, "--numstat", *base).split(b"\0"))
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
        changes.append(GitChange(letter, new, old,
                                 old_oid == new_oid and not _EMPTY_OID.match(old_oid),
                                 added is None, added, removed))
    return GitCommitFacts(sha, parents, message, message.split("\n", 1)[0], date, tuple(changes),
                          committed)


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
