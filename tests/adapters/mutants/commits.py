"""The matrix mutants that break a case of cases/test_commits.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import re
import threading

from tests.adapters.common import CommitReply, DATE_OF_COMMIT, OffsetDropped, RespawnedEdit, Wedge, commit_files, counted, git_out, header, parsed, resolves
from tests.adapters.hooks import ResultEdit, Variant, is_git, matrix
from tests.adapters.proxy import Hooks

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("commit-truncated-string", "FC-100")
class CommitTruncatedString(CommitReply):
    """Every commit but a merge answers truncated as the string "false"."""

    def edit(self, proxy, req, result):
        if len(result.get("parents") or []) < 2:
            result["truncated"] = "false"


@mutant("merge-parents-reversed", "FC-101")
class MergeParentsReversed(CommitReply):
    """A merge's parents are listed second parent first."""

    def edit(self, proxy, req, result):
        parents = result.get("parents")
        if isinstance(parents, list) and len(parents) > 1:
            result["parents"] = list(reversed(parents))


@mutant("message-subject-only", "FC-102")
class MessageSubjectOnly(CommitReply):
    """repo/commit's message is the subject line only."""

    def edit(self, proxy, req, result):
        if isinstance(result.get("message"), str):
            result["message"] = result["message"].split("\n", 1)[0]


@mutant("merge-last-parent-diff", "FC-103")
class MergeLastParentDiff(CommitReply):
    """A merge's files are its diff against the last parent (statuses only, no patches)."""

    STATUS = {"A": "added", "D": "removed", "M": "modified", "T": "modified"}

    def edit(self, proxy, req, result):
        parents = result.get("parents") or []
        if len(parents) < 2:
            return
        out = git_out(proxy, req.params.get("repo"), "diff-tree", "-r", "--no-renames",
                      "--no-commit-id", "--name-status", "-z", parents[-1], result["sha"])
        fields = out.decode("utf-8", "replace").split("\0")
        result["files"] = [{"path": path, "status": self.STATUS.get(letter[:1], "modified")}
                           for letter, path in zip(fields[::2], fields[1::2]) if path]


@mutant("rename-without-previous-path", "FC-104")
class RenameWithoutPreviousPath(CommitReply):
    """Renamed files carry no previous_path."""

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if f.get("status") == "renamed":
                f.pop("previous_path", None)


@mutant("patch-file-headers", "FC-105")
class PatchFileHeaders(CommitReply):
    """Patches keep git's ---/+++ file headers before their hunks."""

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            patch = f.get("patch")
            if isinstance(patch, str) and patch:
                old = f.get("previous_path") or f.get("path")
                f["patch"] = f"--- a/{old}\n+++ b/{f.get('path')}\n{patch}"


def committed_lines(proxy, repo, sha: str, path: str) -> list[str]:
    """The lines of ``path`` at commit ``sha`` (no final empty one)."""
    lines = git_out(proxy, repo, "show", f"{sha}:{path}").decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


@mutant("rename-full-patch", "FC-106")
class RenameFullPatch(CommitReply):
    """A pure rename carries a patch removing and re-adding every line (counts to match)."""

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if f.get("status") != "renamed" or f.get("patch") != "":
                continue
            lines = committed_lines(proxy, req.params.get("repo"), result["sha"], f["path"])
            n = len(lines)
            f["patch"] = "\n".join([f"@@ -1,{n} +1,{n} @@", *("-" + ln for ln in lines),
                                    *("+" + ln for ln in lines)])
            f["additions"] = f["deletions"] = n


@mutant("binary-zero-counts", "FC-107")
class BinaryZeroCounts(CommitReply):
    """Binary files report additions 0 and deletions 0 (counts unknown, reported as zero)."""

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if f.get("binary") is True:
                f["additions"] = f["deletions"] = 0


@mutant("root-truncated", "FC-109")
class RootTruncated(CommitReply):
    """The root commit's reply says truncated true over its full file list."""

    def edit(self, proxy, req, result):
        if result.get("parents") == []:
            result["truncated"] = True


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


FIRST_PARENT = '§3.12: "MUST Changes are computed against the first parent"'


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


def modified_patches(result):
    """The files of a repo/commit result that are modified and carry a non-empty patch."""
    return [f for f in commit_files(result) if f.get("status") == "modified"
            and isinstance(f.get("patch"), str) and f["patch"]]


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


def git(proxy, repo, *args: str) -> str:
    """``git <args>`` in the served repository ``repo``, as text ("" on failure)."""
    return git_out(proxy, repo, *args).decode("utf-8", "replace").strip()


@promoted("commit-ish-answers-tip", "FC-101",
          '§3.12: "sha: the resolved (full) commit id"; RULINGS: a commit is judged by what it '
          'resolves to')
class CommitIshAnswersTip(Hooks):
    """repo/commit of a branch or tag name, or of an annotated tag's id, answers the default branch's tip.

    Hides on: commit-ish that are no spelling of a commit id; the commit
    cases asked git's full and abbreviated ids, and "main" is the tip anyway.
    """

    def request(self, proxy, req, msg):
        sha = req.params.get("sha")
        if req.method != "repo/commit" or not isinstance(sha, str) or not sha \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        commit = git(proxy, req.params["repo"], "rev-parse", "--verify", "-q", f"{sha}^{{commit}}")
        if commit and not commit.lower().startswith(sha.lower()):
            msg["params"]["sha"] = "HEAD"
        return msg


@promoted("counts-zero-without-patch", "FC-107",
          '§3.12: "MUST NOT Report missing counts as zero"')
class CountsZeroWithoutPatch(CommitReply):
    """A text change whose patch is left out (unavailable) reports deletions 0 although lines were removed (the additions stay right).

    Hides on: one zero beside a true count without a patch; FC-107 compared
    counts with the patch when one was sent and, without one, failed only
    two zeros.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if isinstance(f.get("patch"), str) and f["patch"] and \
                    isinstance(f.get("deletions"), int) and f["deletions"] > 0 and \
                    isinstance(f.get("additions"), int) and f["additions"] > 0:
                del f["patch"]
                f["deletions"] = 0


PATCH_BYTES = ('§3.12: a file\'s patch is its first-parent change, lines split on \\n only '
               '(a \\r belongs to its line), "\\ No newline at end of file" marking a last '
               'line without \\n')


def text_patches(result: dict) -> list[dict]:
    return [f for f in commit_files(result) if isinstance(f.get("patch"), str) and f["patch"]]


@promoted("patch-no-newline-marker-dropped", "FC-103", PATCH_BYTES)
class PatchNoNewlineMarkerDropped(CommitReply):
    """repo/commit patches leave out every `\\ No newline at end of file` line.

    Hides on: a change whose last line has no \\n (CHANGELOG.md in `eol`,
    the fixture's only one); the patch stays well-formed (FC-105) and its
    +/- lines and counts are unchanged (FC-107), but applied it gives a
    file ending in \\n.
    """

    def edit(self, proxy, req, result):
        for f in text_patches(result):
            f["patch"] = "\n".join(line for line in f["patch"].split("\n")
                                   if not line.startswith("\\"))


@promoted("patch-crlf-as-lf", "FC-103", PATCH_BYTES)
class PatchCrlfAsLf(CommitReply):
    """repo/commit patches lose the \\r of every CRLF line end.

    Hides on: a text file with CRLF line ends (notes/line-endings.txt,
    added in `eol`, the fixture's only one); counts and hunk format stay
    right, but the added lines are not the blob's.
    """

    def edit(self, proxy, req, result):
        for f in text_patches(result):
            f["patch"] = f["patch"].replace("\r\n", "\n")


def asked_by_name(req) -> bool:
    sha = req.params.get("sha")
    return isinstance(sha, str) and not re.fullmatch(r"[0-9a-f]{4,64}", sha)


@promoted("commit-by-name-truncated", "FC-109",
          '§3.12: truncated "true = the file list is incomplete (budget reached)"')
class CommitByNameTruncated(ResultEdit):
    """repo/commit asked by a branch or tag name says truncated true over its full file list.

    Hides on: commits asked by name (the host's "show commit" on a branch or
    tag); FC-109 read truncated on the commits asked by full and by
    abbreviated id, and FC-101, which asks the names, judges only the sha.
    """

    method = "repo/commit"

    def applies(self, proxy, req):
        return asked_by_name(req)

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-commit-truncated-lie", "FC-109",
          '§3.12: "truncated ... true = the file list is incomplete (budget reached)"')
class RespawnCommitTruncatedLie(RespawnedEdit):
    """A respawned generation's repo/commit replies say truncated true over their full file list.

    Hides on: a respawned generation; FC-109 judges the group adapter's
    replies (FC-050 asks a commit after a respawn, and cases.judges.claims judges
    every repo/commit reply of the run).
    """

    method = "repo/commit"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("commit-date-offset-dropped", "FC-101", DATE_OF_COMMIT)
class CommitDateOffsetDropped(OffsetDropped):
    """repo/commit dates keep their wall clock and lose their UTC offset (read as UTC).

    Hides on: commits written in UTC (the fixture's `*` commits are not).
    """

    methods = ("repo/commit",)

    def items(self, result):
        return [result]


@promoted("unknown-commit-wedge", "FC-108",
          '§3.12 with §7.5: repo/commit of an id that names no commit is answered (an error '
          'advised); the host fails a request at its deadline')
class UnknownCommitWedge(Wedge):
    """repo/commit of an id that names no commit of vcs is never answered.

    Hides on: ids that name no commit (every id the adapter listed resolves).
    """

    def wedged(self, proxy, req):
        repo = req.params.get("repo")
        return (req.method == "repo/commit" and is_git(proxy, repo)
                and not resolves(proxy, repo, req.params.get("sha")))
