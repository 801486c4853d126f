"""Whether a repo/commit file's ``patch`` is that file's first-parent change
(PROTOCOL §3.12 "MUST Changes are computed against the first parent"), for
FC-103.

The patch text is never compared with git's diff: a backend may use another
diff algorithm (patience, histogram, minimal), another number of context
lines, or split and merge hunks differently, and every one of those is the
same change. What all of them share, and what this module judges, is what
the hunks *say* about the two sides:

- every context (' ') and removed ('-') line is the first parent's line at
  the position its hunk header gives (``@@ -a,b``: line a, or after line a
  when b is 0), exactly: §3.12 defines no fuzz or offset, so none is allowed;
- hunks come in file order and do not overlap, and each hunk's new-side
  start (``+c,d``) is where its lines land in the result;
- the hunks applied to the first parent's text of the path (empty for an
  added file and on the root commit) give exactly the commit's text of the
  path (empty for a removed file).

Line ends are §3.12's: lines are split on \\n only (a \\r belongs to its
line), and ``\\ No newline at end of file`` after a body line says that line
has no \\n. Both sides' bytes come from git (``git ls-tree`` and ``git
cat-file`` of the vcs repo), never from the adapter.

Not judged here (``sides`` answers why): a binary change (no text patch:
FC-106's), a change of type (file <-> symlink: two diffs in one patch) or of
a submodule, and a side whose bytes are not UTF-8 (a JSON string cannot
carry them exactly). A malformed patch is FC-105's and is read by nobody
else; an absent patch is "unavailable" (§3.12) and says nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from cases.kit.commitfacts import HUNK_HEADER
from cases.kit.gitfacts import GitCommitFacts, git_bytes
from cases.kit.memo import remembered
from wire.messages import CommitFile


@dataclass(frozen=True)
class Hunk:
    header: str
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    body: tuple[tuple[str, str], ...]   # (prefix " ", "-" or "+", the line with its \n if any)


def hunks(patch: str) -> list[Hunk]:
    """The hunks of a well-formed patch (``patch_problem`` is None for it):
    each body line with its line end, the one before a ``\\`` marker without."""
    out: list[Hunk] = []
    lines = patch.split("\n") if patch else []
    i = 0
    while i < len(lines):
        m = HUNK_HEADER.match(lines[i])
        want_old = int(m.group(2)) if m.group(2) is not None else 1
        want_new = int(m.group(4)) if m.group(4) is not None else 1
        body: list[list[str]] = []
        old = new = 0
        i += 1
        while i < len(lines) and (old < want_old or new < want_new or lines[i].startswith("\\")):
            line = lines[i]
            if line.startswith("\\"):
                if body and body[-1][1].endswith("\n"):
                    body[-1][1] = body[-1][1][:-1]
            else:
                body.append([line[0], line[1:] + "\n"])
                old += line[0] in " -"
                new += line[0] in " +"
            i += 1
        out.append(Hunk(m.group(0), int(m.group(1)), want_old, int(m.group(3)), want_new,
                        tuple((p, t) for p, t in body)))
    return out


def text_lines(text: str) -> list[str]:
    """``text`` as lines split on \\n, each keeping its \\n (the last may have none)."""
    pieces = text.split("\n")
    return [p + "\n" for p in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def _start(line: int, count: int) -> int:
    """0-based index a hunk side starts at: line ``line`` or, for an empty side, after it."""
    return line - 1 if count else line


def apply_problem(patch: str, old: str, new: str) -> str | None:
    """What keeps the hunks of ``patch`` from turning ``old`` into ``new``
    exactly, or None (see the module docstring)."""
    was = text_lines(old)
    out: list[str] = []
    pos = 0
    for n, h in enumerate(hunks(patch), 1):
        where = f"hunk {n} {h.header!r}"
        start = _start(h.old_start, h.old_count)
        if start < pos:
            return f"{where} starts at parent line {start + 1}, inside or before the previous hunk"
        if start > len(was):
            return f"{where} starts past the end of the parent's {len(was)} lines"
        out.extend(was[pos:start])
        if _start(h.new_start, h.new_count) != len(out):
            return (f"{where} says its lines start at line {_start(h.new_start, h.new_count) + 1}"
                    f" of the commit's side; they land at line {len(out) + 1}")
        i = start
        for prefix, line in h.body:
            if prefix in " -":
                have = was[i] if i < len(was) else None
                if line != have:
                    what = "context" if prefix == " " else "removed"
                    return (f"{where}: {what} line {line!r} is not the parent's line {i + 1} "
                            f"({'past the end' if have is None else repr(have)})")
                i += 1
            if prefix in " +":
                out.append(line)
        pos = i
    out.extend(was[pos:])
    got = "".join(out)
    if got == new:
        return None
    mine, want = text_lines(got), text_lines(new)
    k = next((k for k, (a, b) in enumerate(zip(mine, want)) if a != b), min(len(mine), len(want)))
    return (f"applied to the parent it gives {len(mine)} lines, line {k + 1} "
            f"{mine[k] if k < len(mine) else '(none)'!r}; the commit has {len(want)} lines, "
            f"line {k + 1} {want[k] if k < len(want) else '(none)'!r}")


# ---------------------------------------------------------------- git's two sides

def tree_entries(fx, rev: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) of every entry of the tree at ``rev``, read
    once per view (each file of a commit asks for both its trees)."""
    def read() -> dict[str, tuple[str, str]]:
        out: dict[str, tuple[str, str]] = {}
        for record in git_bytes(fx, "ls-tree", "-r", "-z", rev).decode("utf-8", "replace").split("\0"):
            meta, _, path = record.partition("\t")
            if path:
                mode, _kind, oid = meta.split()
                out[path] = (mode, oid)
        return out
    return remembered(fx, ("tree-entries", rev), read)


@dataclass(frozen=True)
class Sides:
    """git's text of a file object's path before (each base a patch may be
    read against, with the path it is from) and after the change; or why
    the change is not judged (``skip``)."""
    bases: tuple[tuple[str, str], ...] = ()
    after: str = ""
    skip: str | None = None


def _text(fx, entries: dict, path: str) -> str | None:
    """The UTF-8 text of ``path`` in a tree ("" when absent); None when it is
    not a regular file or symlink, or not UTF-8 text without NULs."""
    if path not in entries:
        return ""
    mode, oid = entries[path]
    if not mode.startswith(("100", "120")):
        return None
    data = git_bytes(fx, "cat-file", "blob", oid)
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def sides(fx, git: GitCommitFacts, f: CommitFile) -> Sides:
    """The first-parent sides of the adapter's file object ``f`` (root: the
    empty tree before). A patch may be read against the path the change
    came from (the reply's previous_path, or git's rename source) or against
    the path itself (nothing when it is new: a copy or rename reported as
    an addition); which of them the status word names is FC-103's and
    FC-104's, not the patch's (an unknown status is read as modified)."""
    change = git.change_of(f.path)
    if f.binary is True or (change is not None and change.binary):
        return Sides(skip="binary (no text patch: FC-106's)")
    if change is not None and change.letter == "T":
        return Sides(skip="a change of type (two diffs in one patch)")
    after_tree = tree_entries(fx, git.sha)
    before_tree = tree_entries(fx, git.parents[0]) if git.parents else {}
    froms = [f.previous_path if isinstance(f.previous_path, str) else None,
             change.previous_path if change is not None else None, f.path]
    froms = list(dict.fromkeys(p for p in froms if p is not None))
    after = _text(fx, after_tree, f.path)
    bases = [(p, text) for p in froms if (text := _text(fx, before_tree, p)) is not None]
    if after is None or not bases:
        return Sides(skip="not UTF-8 text on both sides")
    return Sides(tuple(bases), after)


def patch_content_problem(fx, git: GitCommitFacts, f: CommitFile) -> str | None:
    """Why ``f.patch`` (a well-formed string) is not the change of ``f.path``
    from the first parent to the commit, or None (also when not judged)."""
    both = sides(fx, git, f)
    if both.skip is not None:
        return None
    problems = []
    for base_path, before in both.bases:
        problem = apply_problem(f.patch, before, both.after)
        if problem is None:
            return None
        problems.append(problem)
    before = both.bases[0][1]
    if f.patch == "":
        return "patch \"\" (a metadata-only change), but the bytes changed"
    if apply_problem(f.patch, both.after, before) is None:
        return "the patch is reversed: it turns the commit's text into the parent's"
    source = both.bases[0][0]
    side = ("the empty tree (the root commit)" if not git.parents else
            f"the parent's {source}" if source != f.path else
            "the parent's text" if before else "nothing (the path is new)")
    return f"against {side}: {problems[0]}"
