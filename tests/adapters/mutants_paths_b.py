"""Path mutants, part b: each breaks a case's MUST where the case does not look
first (another repository, ref, commit, file, batch, method, generation or
moment), is in the matrix (``@promoted``) and fails exactly its owner.

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

from tests.adapters.mutants_deep import promoted  # noqa: F401
from tests.adapters.proxy import Hooks  # noqa: F401

import re

from tests.adapters.mutants_v16 import CommitReply, commit_files, committed_lines

HEX = re.compile(r"[0-9a-fA-F]{4,39}")


def abbreviated(req) -> bool:
    """The request names its commit by an abbreviated id (4 to 39 hex digits)."""
    sha = req.params.get("sha") if isinstance(req.params, dict) else None
    return isinstance(sha, str) and HEX.fullmatch(sha) is not None


class AbbreviatedCommitReply(CommitReply):
    """Rewrite repo/commit results asked by an abbreviated id (a second code
    path: the adapter first resolves the prefix, then builds the reply)."""

    def applies(self, proxy, req):
        return abbreviated(req)


# ---------------------------------------------------------------- repo/commit (FC-100..109)

@promoted("short-id-parents-string", "FC-100",
          '§3.12: parents "array of strings" (FC-100: the optional members typed when present)')
class ShortIdParentsString(AbbreviatedCommitReply):
    """A commit asked by an abbreviated id lists its parents as git's one space-separated string.

    Hides on: FC-100 asks every commit by its full id first, where parents is
    an array; only the replies to the short ids a host shows and asks back
    (git's %P copied as it is on the prefix-resolving path) carry the string.
    """

    def edit(self, proxy, req, result):
        if isinstance(result.get("parents"), list):
            result["parents"] = " ".join(result["parents"])


@promoted("short-id-merge-first-parent", "FC-101",
          '§3.12: parents "parent commit ids when the backend reports them"; first parent first')
class ShortIdMergeFirstParent(AbbreviatedCommitReply):
    """A merge asked by an abbreviated id lists only its first parent.

    Hides on: FC-101 judges the merge asked by its full id first, whose
    parents are both listed; resolving a prefix with `git rev-list
    --first-parent --parents -n1` rewrites a merge's parents to the first one.
    """

    def edit(self, proxy, req, result):
        parents = result.get("parents")
        if isinstance(parents, list) and len(parents) > 1:
            result["parents"] = parents[:1]


@promoted("short-id-message-subject", "FC-102",
          '§3.12: message "MUST be the complete message — subject and body"')
class ShortIdMessageSubject(AbbreviatedCommitReply):
    """A commit asked by an abbreviated id answers the subject line as its message.

    Hides on: FC-102 reads the messages of the commits asked by full id,
    which are complete; the prefix path fills the reply from the commit
    search's listing, which carries the subject only.
    """

    def edit(self, proxy, req, result):
        if isinstance(result.get("message"), str):
            result["message"] = result["message"].split("\n", 1)[0]


@promoted("short-id-root-no-files", "FC-103",
          '§3.12: "MUST ... a root commit is compared against the empty tree (everything added)"')
class ShortIdRootNoFiles(AbbreviatedCommitReply):
    """The root commit asked by an abbreviated id lists no files.

    Hides on: FC-103 checks the root asked by its full id, where the diff
    runs with --root; the prefix path runs `git diff-tree` without it, which
    prints nothing for a commit with no parent.
    """

    def edit(self, proxy, req, result):
        if result.get("parents") == []:
            result["files"] = []


@promoted("short-id-rename-previous-is-path", "FC-104",
          '§3.12: previous_path "MUST be present for renamed" (the path it was renamed from)')
class ShortIdRenamePreviousIsPath(AbbreviatedCommitReply):
    """A renamed file of a commit asked by an abbreviated id names its new path as previous_path.

    Hides on: FC-104 looks at the rename commit asked by its full id, whose
    previous_path is the old name; the prefix path copies the file's own
    path into previous_path.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if f.get("status") == "renamed" and isinstance(f.get("path"), str):
                f["previous_path"] = f["path"]


@promoted("short-id-patch-trailing-newline", "FC-105",
          '§3.12: patch "MUST ... no trailing newline after the last line"')
class ShortIdPatchTrailingNewline(AbbreviatedCommitReply):
    """Patches of a commit asked by an abbreviated id end with git's newline.

    Hides on: FC-105 reads the patches of the commits asked by full id,
    which are trimmed; the prefix path keeps the newline git prints after
    the last hunk line.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if isinstance(f.get("patch"), str) and f["patch"]:
                f["patch"] += "\n"


@promoted("short-id-mode-change-context-hunk", "FC-106",
          '§3.12: patch "" → a metadata-only change (mode change, pure rename)')
class ShortIdModeChangeContextHunk(AbbreviatedCommitReply):
    """A mode-only change asked by an abbreviated id carries a context hunk of the whole file.

    Hides on: FC-106 looks at the chmod commit asked by its full id, whose
    patch is ""; the prefix path asks the forge for the file's diff, which
    answers the unchanged file as one context-only hunk.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if f.get("status") != "modified" or f.get("patch") != "":
                continue
            lines = committed_lines(proxy, req.params.get("repo"), result["sha"], f["path"])
            if lines:
                f["patch"] = "\n".join([f"@@ -1,{len(lines)} +1,{len(lines)} @@",
                                        *(" " + ln for ln in lines)])


@promoted("short-id-counts-swapped", "FC-107",
          '§3.12: additions "lines added", deletions "lines removed" (counts match the patch)')
class ShortIdCountsSwapped(AbbreviatedCommitReply):
    """Files of a commit asked by an abbreviated id carry additions and deletions swapped.

    Hides on: FC-107 compares the counts of the commits asked by full id,
    read from numstat in order; the prefix path reads the forge's stats with
    the two columns the other way round.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if "additions" in f and "deletions" in f:
                f["additions"], f["deletions"] = f["deletions"], f["additions"]


@promoted("short-id-truncated-true", "FC-109",
          '§3.12: truncated "true = the file list is incomplete"')
class ShortIdTruncatedTrue(AbbreviatedCommitReply):
    """Every commit asked by an abbreviated id says truncated true over its full file list.

    Hides on: FC-109 reads truncated on the commits asked by full id, where
    it is false; the prefix path reads "more pages" from a Link header the
    forge always sends.
    """

    def edit(self, proxy, req, result):
        result["truncated"] = True
