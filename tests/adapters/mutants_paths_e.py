"""Path mutants, part e: repo/commit patches whose contents are not the
file's first-parent change (PROTOCOL §3.12), which FC-103 judges by
applying each patch to git's bytes of the first parent; and a control whose
patches are the same changes written by other diff options (the check must
not read the patch text as git's).

Written like tests/adapters/mutants_paths_c.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:"). mutants.py and
controls.py import this module at their end; it registers with their
``mutant`` and ``control`` (defined before those imports), so either table
may be loaded first.
"""

from __future__ import annotations

import re
import threading
import zlib

from tests.adapters.hooks import is_git, repo_name
from tests.adapters.mutants import mutant
from tests.adapters.controls import control
from tests.adapters.mutants_v16 import CommitReply, commit_files

HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
FIRST_PARENT = '§3.12: "MUST Changes are computed against the first parent"'


def header(old: int, old_count: int, new: int, new_count: int, tail: str = "") -> str:
    """A hunk header from 0-based side starts (an empty side names the line before)."""
    def side(start: int, count: int) -> str:
        return f"{start + 1 if count else start},{count}"
    return f"@@ -{side(old, old_count)} +{side(new, new_count)} @@{tail}"


def parsed(patch: str) -> list[tuple[int, int, int, int, str, list[str]]]:
    """The hunks of a well-formed patch: (0-based old start, old count,
    0-based new start, new count, header tail, raw body lines)."""
    out = []
    for line in patch.split("\n"):
        m = HEADER.match(line)
        if m:
            oc = int(m.group(2)) if m.group(2) is not None else 1
            nc = int(m.group(4)) if m.group(4) is not None else 1
            out.append((int(m.group(1)) - (1 if oc else 0), oc,
                        int(m.group(3)) - (1 if nc else 0), nc, m.group(5), []))
        elif out:
            out[-1][5].append(line)
    return out


def counted(f: dict) -> None:
    """Counts that match the file's patch (when the file carries counts)."""
    lines = f["patch"].split("\n")
    if "additions" in f:
        f["additions"] = sum(1 for ln in lines if ln.startswith("+"))
    if "deletions" in f:
        f["deletions"] = sum(1 for ln in lines if ln.startswith("-"))


# ---------------------------------------------------------------- mutants (FC-103)

def modified_patches(result):
    """The files of a repo/commit result that are modified and carry a non-empty patch."""
    return [f for f in commit_files(result) if f.get("status") == "modified"
            and isinstance(f.get("patch"), str) and f["patch"]]


@mutant("patch-cached-by-path", "FC-103")
class PatchCachedByPath(CommitReply):
    """repo/commit patches (and counts) are cached by repository and path: a later commit touching a path gets the first-seen commit's patch.

    Hides on: every commit but the first asked that touches a path (main's
    tip, then its history newest first): its own patch is right, and
    FC-103 compared paths and statuses only, FC-105 the format, FC-107 the
    counts with the patch itself.
    """

    rule = FIRST_PARENT + "; each file's patch is its change"

    def __init__(self):
        self.seen: dict = {}
        self.lock = threading.Lock()

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if not isinstance(f.get("patch"), str) or not f["patch"]:
                continue
            key = (req.params.get("repo"), f.get("path"))
            with self.lock:
                sha, *kept = self.seen.setdefault(
                    key, (result.get("sha"), f["patch"], f.get("additions"), f.get("deletions")))
            if sha != result.get("sha"):
                f["patch"], f["additions"], f["deletions"] = kept


@mutant("patch-reversed", "FC-103")
class PatchReversed(CommitReply):
    """The patch of every modified file is computed child -> parent: sides and +/- lines swapped, counts swapped to match.

    Hides on: the patch contents of modified files; paths, statuses,
    parents and the hunk format stay right and the counts match the patch.
    """

    rule = FIRST_PARENT + " (not child -> parent)"

    def edit(self, proxy, req, result):
        for f in modified_patches(result):
            out = []
            for old, oc, new, nc, tail, body in parsed(f["patch"]):
                out.append(header(new, nc, old, oc, tail))
                out += [{"+": "-", "-": "+"}.get(ln[:1], ln[:1]) + ln[1:] for ln in body]
            f["patch"] = "\n".join(out)
            counted(f)


@mutant("patch-hunks-one-late", "FC-103")
class PatchHunksOneLate(CommitReply):
    """Hunk headers of modified files start one line late on both sides (the lines themselves are right).

    Hides on: the hunk positions; FC-105 checks only that each header's
    counts match its body, and no case placed a hunk's lines in the parent.
    """

    rule = FIRST_PARENT + '; §3.12: "each hunk starts with an @@ -a,b +c,d @@ header"'

    def edit(self, proxy, req, result):
        for f in modified_patches(result):
            out = []
            for old, oc, new, nc, tail, body in parsed(f["patch"]):
                out.append(header(old + 1, oc, new + 1, nc, tail))
                out += body
            f["patch"] = "\n".join(out)


# ---------------------------------------------------------------- control

OPTIONS = (("--diff-algorithm=patience", "-U1"), ("--histogram", "-U5"),
           ("--minimal", "-U0"), ("--diff-algorithm=myers", "-U2"))


def resplit(patch: str) -> str:
    """Each hunk with a removed line followed by an added one cut in two there:
    the removal, then the addition at the same place (a legal spelling)."""
    out = []
    for old, oc, new, nc, tail, body in parsed(patch):
        cut = next((k for k in range(1, len(body))
                    if body[k - 1].startswith("-") and body[k].startswith("+")), None)
        if cut is None:
            out.append(header(old, oc, new, nc, tail))
            out += body
            continue
        first, second = body[:cut], body[cut:]
        o1 = sum(1 for ln in first if ln[:1] in " -")
        n1 = sum(1 for ln in first if ln[:1] in " +")
        out.append(header(old, o1, new, n1, tail))
        out += first
        out.append(header(old + o1, oc - o1, new + n1, nc - n1))
        out += second
    return "\n".join(out)


@control("patch-other-diff-options")
class PatchOtherDiffOptions(CommitReply):
    """Patches are recomputed by git diff with another algorithm and context size per file (patience -U1, histogram -U5, minimal -U0, myers -U2), removals and additions cut into separate hunks, counts to match.

    The same first-parent change, written differently: FC-103 must not
    compare patch text with git's.
    """

    legal = ('§3.12: patch is "unified hunks" (any diff algorithm, context size or hunk '
             'split writing the first-parent change)')

    def edit(self, proxy, req, result):
        repo = req.params.get("repo")
        sha, parents = result.get("sha"), result.get("parents") or []
        if not is_git(proxy, repo) or not isinstance(sha, str):
            return
        where = str(proxy.fixture / repo_name(repo))
        import subprocess
        base = parents[0] if parents else subprocess.run(
            ["git", "-C", where, "hash-object", "-t", "tree", "--stdin"], input=b"",
            capture_output=True, text=False).stdout.decode().strip()
        for f in commit_files(result):
            if not isinstance(f.get("patch"), str) or not f["patch"] or f.get("binary"):
                continue
            paths = [p for p in (f.get("previous_path"), f.get("path")) if isinstance(p, str)]
            pick = zlib.crc32(f"{sha} {f.get('path')}".encode()) % len(OPTIONS)
            run = subprocess.run(["git", "-C", where, "diff", "--no-color", "--no-ext-diff",
                                  "--no-textconv", "-M", *OPTIONS[pick], base, sha, "--", *paths],
                                 capture_output=True)
            lines = run.stdout.decode("utf-8", "replace").split("\n")
            start = next((n for n, ln in enumerate(lines) if ln.startswith("@@")), None)
            if run.returncode != 0 or start is None:
                continue
            f["patch"] = resplit("\n".join(ln for ln in lines[start:] if ln))
            counted(f)
