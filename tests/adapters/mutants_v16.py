"""Mutants of the v1.6 cases: repo/commit (FC-100..109), listings and links
(FC-110..), transport (FC-120..), the broken fault's kind (FC-064), the cache
root (FC-055) and revision round trips (FC-130..).

They register into the same ``MUTANTS`` table as tests/adapters/mutants.py
(which imports this module last). Each breaks its rule where its case does
not look first: another commit, method, repository or ref.
"""

from __future__ import annotations


from tests.adapters.hooks import (AwaitsCancel, BlobIds, KindRewrite, PairReplies, ResultEdit,
                                  fixture_repos, git_blob_id, is_git, read_worktree, repo_name)
from tests.adapters.mutants import MUTANTS, mutant
from tests.adapters.proxy import Hooks, params_id, result_of

__all__ = ["MUTANTS"]


def git_out(proxy, repo, *args: str) -> bytes:
    """``git <args>`` in a served git repository ("" when it fails)."""
    import subprocess
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), *args],
                         capture_output=True)
    return run.stdout if run.returncode == 0 else b""


def committed_lines(proxy, repo, sha: str, path: str) -> list[str]:
    """The lines of ``path`` at commit ``sha`` (no final empty one)."""
    lines = git_out(proxy, repo, "show", f"{sha}:{path}").decode("utf-8", "replace").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


class CommitReply(ResultEdit):
    """Rewrite repo/commit results with ``edit(proxy, req, result)``."""

    method = "repo/commit"


def commit_files(result: dict) -> list[dict]:
    return [f for f in result.get("files") or [] if isinstance(f, dict)]


# ---------------------------------------------------------------- repo/commit

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


# ---------------------------------------------------------------- transport

@mutant("concurrent-blobs-swapped", "FC-120")
class ConcurrentBlobsSwapped(PairReplies):
    """Replies to repo/blob requests in flight together are sent under each other's ids.

    A blob reply is held (up to HOLD_S) while another repo/blob request is
    outstanding; when that one's reply comes, the two swap ids. One request
    at a time (every other case) is never touched.
    """

    HOLD_S = 0.5

    def holds(self, req):
        return req.method == "repo/blob"

    def waits(self, proxy, req):
        return any(r.method == "repo/blob" and r.id != req.id for r in list(proxy.requests.values()))

    def pair(self, proxy, held, msg):
        held["id"], msg["id"] = msg["id"], held["id"]
        proxy.send_host(held)
        return msg


@mutant("second-initialize-refused", "FC-121")
class SecondInitializeRefused(Hooks):
    """An initialize after the first on the same process answers an error."""

    def __init__(self):
        self.initialized = False

    def request(self, proxy, req, msg):
        if req.method != "initialize":
            return msg
        if self.initialized:
            proxy.error(req, "already initialized", kind="provider")
            return None
        self.initialized = True
        return msg


@mutant("cancel-finished-answered", "FC-122")
class CancelFinishedAnswered(AwaitsCancel):
    """A cancel naming an answered request is answered with an error under that id.

    The protocol monitor reads a reply that comes right after a notification,
    for an id already answered, as an answer to that notification: FC-122's
    rule for a $/cancelRequest (no reply to a cancel), not FC-120's.
    A search's reply waits up to CANCEL_WAIT_S for its cancel (AwaitsCancel):
    a cancel sent with its search (FC-045) names a live request, not an
    answered one, however the proxy's two pumps are scheduled."""

    def __init__(self):
        super().__init__()
        self.answered: set = set()

    def remembers(self, req) -> bool:
        """Whether a cancel naming ``req`` once answered gets an error back."""
        return True

    def complaint(self, rid) -> str:
        return f"request {rid} already finished"

    def reply(self, proxy, req, msg):
        if req is not None and self.remembers(req) and not self.cancelled(proxy, req):
            self.answered.add(req.id)
        return msg

    def notification(self, proxy, msg):
        msg = super().notification(proxy, msg)
        rid = params_id(msg)
        if msg.get("method") == "$/cancelRequest" and rid in self.answered:
            proxy.send_host({"jsonrpc": "2.0", "id": rid,
                             "error": {"code": 1, "message": self.complaint(rid)}})
        return msg


@mutant("cancel-finished-forgets", "FC-122")
class CancelFinishedForgets(Hooks):
    """A cancel naming an answered repo/tree request makes the next repo/tree reply leave out its
    last entry."""

    def __init__(self):
        self.trees: set = set()
        self.forget = False

    def reply(self, proxy, req, msg):
        if req is None or req.method != "repo/tree":
            return msg
        result = result_of(msg)
        if self.forget and isinstance(result, dict) and result.get("entries"):
            self.forget = False
            result["entries"] = result["entries"][:-1]
        self.trees.add(req.id)
        return msg

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest" and params_id(msg) in self.trees:
            self.forget = True
        return msg


@mutant("web-url-debug-line", "FC-123")
class WebUrlDebugLine(Hooks):
    """A debug line is printed to stdout before each repo/web_url reply."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/web_url":
            proxy.send_host(b"[fs_provider] web_url computed\n")
        return msg


# ---------------------------------------------------------------- listings and links

@mutant("search-repos-nested-serves-parent", "FC-110")
class SearchReposNestedServesParent(Hooks):
    """search/repos also lists <org>/alpha/docs, a nested id, whose repo/tree then serves the whole of alpha (not what docs/ holds)."""

    NESTED = "alpha/docs"

    def request(self, proxy, req, msg):
        repo = req.params.get("repo")
        if req.method == "repo/tree" and isinstance(repo, str) and repo.endswith("/" + self.NESTED):
            req.params["repo"] = repo[:-len("/docs")]
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/repos" and result is not None:
            items = [i for i in result.get("items") or [] if isinstance(i, dict)]
            org = next((str(i["full_name"]).split("/", 1)[0] for i in items
                        if "full_name" in i), "local")
            result["items"] = [{"full_name": f"{org}/{self.NESTED}"}, *items]
        return msg


@mutant("org-repos-full-ids", "FC-111")
class OrgReposFullIds(Hooks):
    """org/repos lists full ids (<org>/<name>) instead of names relative to the org."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            org = req.params.get("org")
            result["repos"] = [f"{org}/{n}" if isinstance(n, str) else n
                               for n in result.get("repos") or []]
        return msg


@mutant("org-repos-epoch-pushed-at", "FC-112")
class OrgReposEpochPushedAt(Hooks):
    """org/repos answers objects whose pushed_at is epoch seconds as a string (names kept)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            result["repos"] = [{"name": n, "pushed_at": "1705312800"} if isinstance(n, str) else n
                               for n in result.get("repos") or []]
        return msg


@mutant("clone-url-parent-dir", "FC-113")
class CloneUrlParentDir(Hooks):
    """repo/clone_url of a git repository names the directory above it (not a repository)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/clone_url" and result is not None
                and is_git(proxy, req.params.get("repo"))):
            result["clone_url"] = str(proxy.fixture)
        return msg


@mutant("web-url-root-refused", "FC-114")
class WebUrlRootRefused(Hooks):
    """repo/web_url of the repository root (path "") answers an error."""

    def request(self, proxy, req, msg):
        if (req.method == "repo/web_url" and not req.params.get("path")
                and repo_name(req.params.get("repo")) in fixture_repos(proxy)):
            proxy.error(req, "repo/web_url needs a path", kind="not_found")
            return None
        return msg


@mutant("org-url-href", "FC-115")
class OrgUrlHref(Hooks):
    """org/url answers {"href": ...} instead of {"url": ...}."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/url" and result is not None and "url" in result:
            result["href"] = result.pop("url")
        return msg


# ---------------------------------------------------------------- errors and caches

@mutant("broken-clone-url-network", "FC-064")
class BrokenCloneUrlNetwork(KindRewrite):
    """repo/clone_url reports the backend failure (kind provider) with kind "network"."""

    def __init__(self):
        super().__init__("provider", "network", methods=("repo/clone_url",))


@mutant("blobs-in-host-root", "FC-055")
class BlobsInHostRoot(Hooks):
    """repo/blob caches each blob it serves in <cache_dir>/../../blobs/ (the host's cache root)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        cache = proxy.init_params.get("cache_dir")
        if req is not None and req.method == "repo/blob" and result is not None \
                and isinstance(cache, str):
            from pathlib import Path
            blobs = Path(cache).parent.parent / "blobs"
            blobs.mkdir(parents=True, exist_ok=True)
            (blobs / str(req.params.get("sha"))[:64]).write_text(str(result.get("bytes_b64")))
        return msg


# ---------------------------------------------------------------- revision round trips

@mutant("log-ignores-ref", "FC-130")
class LogIgnoresRef(Hooks):
    """repo/log walks the default branch whatever ref is asked."""

    def request(self, proxy, req, msg):
        if req.method == "repo/log" and isinstance(msg.get("params"), dict):
            msg["params"]["ref"] = None
        return msg


@mutant("blame-ignores-ref", "FC-131")
class BlameIgnoresRef(Hooks):
    """repo/blame blames the default branch whatever ref is asked."""

    def request(self, proxy, req, msg):
        if req.method == "repo/blame" and isinstance(msg.get("params"), dict):
            msg["params"]["ref"] = None
        return msg


@mutant("blob-at-hex-ref-worktree", "FC-132")
class BlobAtHexRefWorktree(Hooks):
    """repo/blob_at at a commit id (hex, one git resolves) serves the working tree's bytes."""

    def request(self, proxy, req, msg):
        ref = req.params.get("ref")
        if (req.method == "repo/blob_at" and isinstance(ref, str)
                and all(c in "0123456789abcdef" for c in ref) and len(ref) >= 4
                and git_out(proxy, req.params.get("repo"), "rev-parse", "--verify", "-q",
                            f"{ref}^{{commit}}")):
            msg["params"]["ref"] = None
        return msg


@mutant("blob-at-null-ref-git-sha", "FC-133")
class BlobAtNullRefGitSha(BlobIds):
    """repo/blob_at with ref null reports git's blob id while trees report sha256 ids."""

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "blob_at" or ref is not None:
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else git_blob_id(data)
