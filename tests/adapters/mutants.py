"""The mutant matrix: one small, documented defect per switch.

``MUTANTS`` maps a switch to its Variant: the hook set, the exact set of case
ids the suite must fail against it (``expected``) and a one-line description
(the first docstring line of its hook class). Every id of cases.registry.REGISTRY needs at
least one mutant whose expected set is exactly that id (tests/test_mutants.py
enforces it). Where one defect honestly breaks two related cases the
expectation names both and the hook's docstring says why.

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

import base64
import os
import threading

from fixture.catalog import VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
from tests.adapters.hooks import (
    MIB, AwaitsCancel, BigBlobsFromDisk, BlobIds, CachedIds, EveryBranchDefault, GitIds, InitResult, KindRewrite,
    LastBatch, OneShotFirstPage, Refuse, RelistedGenuine, SaltedIds, SearchLock, StreamedItemsInReply,
    Variant, fixture_repos, is_git, read_worktree, registrar, repo_name, sha256_hex)
from tests.adapters.proxy import Hooks, hits_of, params_id, result_of
from tests.adapters import gates


MUTANTS: dict[str, Variant] = {}
mutant = registrar(MUTANTS)


# ---------------------------------------------------------------- handshake

@mutant("protocol-string", "FC-001")
class ProtocolString(InitResult):
    """initialize answers protocol "1" (a string; the host tolerates it)."""

    def edit(self, proxy, req, result):
        result["protocol"] = "1"


@mutant("name-number", "FC-002")
class NameNumber(InitResult):
    """initialize answers name 42."""

    def edit(self, proxy, req, result):
        result["name"] = 42


@mutant("capability-string", "FC-003")
class CapabilityString(InitResult):
    """capabilities.code_search is the string "yes" (the host reads it as its default, true)."""

    def edit(self, proxy, req, result):
        result.setdefault("capabilities", {})["code_search"] = "yes"


@mutant("icon-misspelled", "FC-004")
class IconMisspelled(InitResult):
    """icon "GitLab": neither a builtin name (exact spelling) nor one code point."""

    def edit(self, proxy, req, result):
        result["icon"] = "GitLab"


@mutant("icon-private-use", "FC-080")
class IconPrivateUse(InitResult):
    """icon "\\ue709": one code point, but a Nerd Font private-use glyph."""

    def edit(self, proxy, req, result):
        result["icon"] = "\ue709"


@mutant("needs-cache-dir", "FC-005")
class NeedsCacheDir(Hooks):
    """initialize fails (error reply) when cache_dir is absent."""

    def request(self, proxy, req, msg):
        if req.method == "initialize" and not isinstance(req.params.get("cache_dir"), str):
            proxy.error(req, "cache_dir is required", kind="provider")
            return None
        return msg


# ---------------------------------------------------------------- content ids

@mutant("ids-salted-per-call", "FC-010")
class IdsSaltedPerCall(BlobIds):
    """Plain-directory trees salt blob ids with a per-process call counter from the second tree call on.

    The counter restarts with the process, so a respawned process repeats the
    same ids for the same call sequence (FC-013 stays green); git worktrees and
    trees at refs are left alone (FC-096 compares those).
    """

    def __init__(self):
        super().__init__()
        self.calls = 0

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/tree" and req.params.get("ref") is None
                and result_of(msg) is not None and not is_git(proxy, req.params.get("repo"))):
            self.calls += 1
            req.state["call"] = self.calls
        return super().reply(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        call = req.state.get("call", 1) if where == "tree" else 1
        return sha if call == 1 else sha256_hex(f"call-{call}:{sha}".encode())


@mutant("ids-cached-by-path", "FC-011")
class IdsCachedByPath(CachedIds):
    """Working-tree blob ids are cached by (repo, path) for the process lifetime."""


@mutant("ids-by-basename-size", "FC-012")
class IdsByBasenameSize(BlobIds):
    """Plain-directory blob ids are keyed by (file name, size), not by content.

    The reverse map keeps the latest file listed under a key, so repo/blob
    serves one of the colliding files. Git worktrees and refs are left alone.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref is not None or is_git(proxy, repo) or not isinstance(path, str):
            return sha
        data = read_worktree(proxy, repo, path)
        size = len(data) if data is not None else -1
        return sha256_hex(f"{path.rsplit('/', 1)[-1]}\0{size}".encode())


@mutant("ids-salted-per-process", "FC-013")
class IdsSaltedPerProcess(SaltedIds):
    """Every blob id is salted with a per-process random value (self-consistent within a process)."""


# ---------------------------------------------------------------- trees and blobs

@mutant("tree-page-overlap", "FC-020")
class TreePageOverlap(Hooks):
    """The working-tree walk lists its last entry twice (two backend pages overlapping by one)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/tree" and req.params.get("ref") is None
                and result is not None and result.get("entries")):
            result["entries"].append(dict(result["entries"][-1]))
        return msg


@mutant("dirs-typed-dir", "FC-021")
class DirsTypedDir(Hooks):
    """Directories are typed "dir" instead of "tree"."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            for entry in result.get("entries") or []:
                if isinstance(entry, dict) and entry.get("type") == "tree":
                    entry["type"] = "dir"
        return msg


@mutant("tree-capped-1000", "FC-022")
class TreeCapped1000(Hooks):
    """Trees stop at 1,000 entries without setting truncated."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            entries = result.get("entries") or []
            if len(entries) > 1000:
                result["entries"] = entries[:1000]
                result["truncated"] = False
        return msg


@mutant("dir-capped-1000", "FC-022")
class DirCapped1000(Hooks):
    """Each directory lists at most 1,000 of its own entries (a directory API's page), truncated false.

    Hides on: a directory past the cap inside a tree of thousands of
    entries; a cap on the whole tree cuts elsewhere.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            seen: dict = {}
            kept = []
            for entry in result.get("entries") or []:
                path = entry.get("path") if isinstance(entry, dict) else None
                parent = path.rsplit("/", 1)[0] if isinstance(path, str) and "/" in path else ""
                seen[parent] = seen.get(parent, 0) + 1
                if seen[parent] <= 1000:
                    kept.append(entry)
            if len(kept) < len(result.get("entries") or []):
                result["entries"], result["truncated"] = kept, False
        return msg


@mutant("big-blob-cut", "FC-023")
class BigBlobCut(BigBlobsFromDisk):
    """Blobs over 1 MiB are served cut to their first 1 MiB (the reference refuses them)."""

    cut = MIB


@mutant("binary-as-text", "FC-024")
class BinaryAsText(Hooks):
    """Small binary blobs (with NUL bytes) are text-decoded: invalid UTF-8 becomes U+FFFD."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/blob" and result is not None:
            b64 = result.get("bytes_b64")
            if isinstance(b64, str) and len(b64) < MIB:
                data = base64.b64decode(b64)
                if b"\0" in data:
                    text = data.decode("utf-8", "replace").encode("utf-8")
                    result["bytes_b64"] = base64.b64encode(text).decode("ascii")
        return msg


@mutant("unknown-repo-empty-tree", "FC-025")
class UnknownRepoEmptyTree(Hooks):
    """repo/tree of a repository that does not exist answers an empty tree."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree" and "error" in msg:
            name = repo_name(req.params.get("repo"))
            if name not in fixture_repos(proxy) and name not in FAULTS:
                return {"jsonrpc": "2.0", "id": req.id,
                        "result": {"entries": [], "truncated": False, "branch": "main"}}
        return msg


FAULTS = ("denied", "throttled", "broken")


# ---------------------------------------------------------------- search

class EveryHit(Hooks):
    """Apply ``edit(hit)`` to every search hit, streamed or not."""

    def edit(self, hit: dict) -> None:
        pass

    def _all(self, req, msg):
        for hit in hits_of(req, msg):
            self.edit(hit)
        return msg

    def reply(self, proxy, req, msg):
        return self._all(req, msg) if req is not None and req.method == "search/code" else msg

    def partial(self, proxy, req, msg):
        return self._all(req, msg)


@mutant("pathonly-prefixed", "FC-030")
class PathOnlyPrefixed(EveryHit):
    """Path-only hits (no matches) carry a path prefixed with the repository name."""

    def edit(self, hit):
        if not hit.get("matches") and isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


@mutant("lines-zero-based", "FC-031")
class LinesZeroBased(EveryHit):
    """Search hit lines are 0-based."""

    def edit(self, hit):
        if isinstance(hit.get("line"), int):
            hit["line"] -= 1


@mutant("located-string", "FC-032")
class LocatedString(EveryHit):
    """Every hit carries located "stale" (a string, not a boolean)."""

    def edit(self, hit):
        hit["located"] = "stale"


@mutant("index-as-of-number", "FC-033")
class IndexAsOfNumber(Hooks):
    """Search results carry index {"as_of": 1732838400} (a number, not a string)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and result is not None:
            result["index"] = {"as_of": 1732838400}
        return msg


@mutant("no-file-search", "FC-034")
class NoFileSearch(InitResult):
    """file_search is omitted (so it inherits code_search: true) but path: queries answer an error."""

    def edit(self, proxy, req, result):
        (result.get("capabilities") or {}).pop("file_search", None)

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and isinstance(q, str) and "path:" in q:
            proxy.error(req, "path: qualifier is not supported", kind="provider")
            return None
        return msg


# ---------------------------------------------------------------- streaming

@mutant("partial-id-echo", "FC-040")
class PartialIdEcho(Hooks):
    """Every $/partial is followed by a copy whose params.id names no request of the run.

    The correctly addressed batch still arrives, so the hits are delivered
    (FC-042 stays green); only the stray copy breaks the rule. Its id is far
    past any the suite issues: an id one off would land on the next request,
    which FC-120 (two streams in flight) rightly sees as a crossed batch.
    """

    STRAY = 1 << 30

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict) and isinstance(params.get("id"), int):
            proxy.send_host(msg)
            copy = dict(msg, params=dict(params, id=params["id"] + self.STRAY))
            return copy
        return msg


@mutant("partial-after-reply", "FC-041")
class PartialAfterReply(LastBatch):
    """A streamed search sends one more $/partial (its last batch again) after its reply."""

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and req.method == "search/code":
            proxy.send_host(msg)
            return self.late(req)
        return msg


@mutant("items-in-streamed-reply", "FC-042")
class ItemsInStreamedReply(StreamedItemsInReply):
    """A streamed search repeats every streamed hit in its final reply."""


@mutant("stream-stall-4s", "FC-043")
class StreamStall4s(gates.Stall):
    """A 4 s silence after the first batch of every streamed search."""


@mutant("bad-item-in-big-batch", "FC-044")
class BadItemInBigBatch(Hooks):
    """Every streamed batch of more than 10 items gets one malformed item (path 7)."""

    def partial(self, proxy, req, msg):
        items = (msg.get("params") or {}).get("items")
        if isinstance(items, list) and len(items) > 10:
            first = items[0] if isinstance(items[0], dict) else {}
            items.insert(len(items) // 2, {"repo": first.get("repo", ""), "path": 7})
        return msg


@mutant("cancel-answers-error", "FC-045")
class CancelAnswersError(AwaitsCancel):
    """A cancelled streaming search is answered with an error reply.

    A fast stream may finish before the host's cancel arrives, so the final
    reply of a stream is held up to CANCEL_WAIT_S for a cancel to show up.
    """

    def reply(self, proxy, req, msg):
        if req is None or not req.streaming:
            return msg
        if self.cancelled(proxy, req):
            return {"jsonrpc": "2.0", "id": req.id,
                    "error": {"code": 1, "message": "request cancelled", "data": {"kind": "provider"}}}
        return msg


# ---------------------------------------------------------------- lifecycle

@mutant("stale-lock", "FC-050")
class StaleLock(SearchLock):
    """A streaming search holds a lock file in cache_dir; a start that finds a stale lock fails.

    The lock is taken when the search arrives and dropped when its reply goes
    out; the search pauses HOLD_S before its final reply (a legal pause, well
    inside the inactivity window), so a kill after the first batch leaves the
    lock behind. The failing start removes the lock, so only the start right
    after an interrupted request fails.
    """

    def request(self, proxy, req, msg):
        lock = self.lock(proxy)
        if req.method == "initialize" and lock is not None and lock.exists():
            lock.unlink()
            proxy.error(req, f"another search holds {lock}", kind="provider")
            return None
        self.take_lock(proxy, req)
        return msg


@mutant("caps-change-on-respawn", "FC-051")
class CapsChangeOnRespawn(InitResult):
    """An initialize whose id is not 1 (a respawned generation) flips capabilities.orgs."""

    def edit(self, proxy, req, result):
        if req.id != 1:
            caps = result.setdefault("capabilities", {})
            caps["orgs"] = not caps.get("orgs", True)


@mutant("canary-get", "FC-052")
class CanaryGet(Hooks):
    """initialize makes an HTTP GET to FORGE_CANARY_URL before answering."""

    def request(self, proxy, req, msg):
        url = os.environ.get("FORGE_CANARY_URL")
        if req.method == "initialize" and url:
            import urllib.request

            try:
                urllib.request.urlopen(url, timeout=2).read()
            except Exception as exc:   # the canary need not speak HTTP
                proxy.log(f"canary GET: {exc}")
        return msg


KNOWN_PARAMS = {
    "initialize": {"protocol", "cache_bytes", "cache_dir"},
    "search/repos": {"query"},
    "org/repos": {"org"},
    "org/url": {"org"},
    "repo/tree": {"repo", "ref"},
    "repo/blob": {"repo", "sha"},
    "repo/blob_at": {"repo", "path", "ref"},
    "repo/refs": {"repo"},
    "repo/log": {"repo", "path", "ref", "limit"},
    "repo/blame": {"repo", "path", "ref"},
    "repo/commit": {"repo", "sha"},
    "repo/clone_url": {"repo"},
    "repo/web_url": {"repo", "path", "branch", "line", "end_line"},
    "search/code": {"q", "limit", "partial"},
}
ENVELOPE = {"jsonrpc", "id", "method", "params"}


@mutant("unknown-params-error", "FC-053")
class UnknownParamsError(Hooks):
    """Requests with members the adapter does not know (params or envelope) answer an error."""

    def request(self, proxy, req, msg):
        known = KNOWN_PARAMS.get(req.method)
        extra = set(msg) - ENVELOPE
        if known is not None:
            extra |= set(req.params) - known
        if extra:
            proxy.error(req, f"invalid params: unknown member(s) {sorted(extra)}", code=2)
            return None
        return msg


@mutant("answers-notifications", "FC-054")
class AnswersNotifications(Hooks):
    """Unknown notifications are answered like requests: {"id": null, "error": method not found}."""

    def notification(self, proxy, msg):
        if msg.get("method") != "$/cancelRequest":
            proxy.send_host({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32601, "message": f"method not found: {msg.get('method')}"}})
        return msg


# ---------------------------------------------------------------- errors

@mutant("auth-as-provider", "FC-060")
class AuthAsProvider(KindRewrite):
    """Credential failures are reported with kind "provider"."""

    def __init__(self):
        super().__init__("auth", "provider")


@mutant("throttle-as-network", "FC-061")
class ThrottleAsNetwork(KindRewrite):
    """Rate limits are reported with kind "network"."""

    def __init__(self):
        super().__init__("rate_limited", "network")


@mutant("blob-notfound-as-provider", "FC-062")
class BlobNotFoundAsProvider(KindRewrite):
    """repo/blob answers unknown ids and repositories with kind "provider"."""

    def __init__(self):
        super().__init__("not_found", "provider", methods=("repo/blob",))


@mutant("empty-error-messages", "FC-063")
class EmptyErrorMessages(Hooks):
    """Every error message is the empty string."""

    def reply(self, proxy, req, msg):
        if isinstance(msg.get("error"), dict):
            msg["error"]["message"] = ""
        return msg


# ---------------------------------------------------------------- bounded compute

@mutant("search-one-page", "FC-070")
class SearchOnePage(OneShotFirstPage):
    """One-shot searches return only the first 100 hits (one backend page) without truncated."""


@mutant("search-page-20", "FC-070")
class SearchPage20(OneShotFirstPage):
    """One-shot searches return only their first 20 hits (a backend page of 20) with truncated false."""

    def edit(self, proxy, req, result):
        items = result.get("items") or []
        if len(items) > 20:
            result["items"], result["truncated"] = items[:20], False


# ---------------------------------------------------------------- revisions

@mutant("two-defaults", "FC-090")
class TwoDefaults(EveryBranchDefault):
    """repo/refs marks every branch default."""


@mutant("tag-tree-worktree-bytes", "FC-091")
class TagTreeWorktreeBytes(BlobIds):
    """Trees at refs other than main/feature list the checked-out files' ids (so their bytes) where the path exists.

    Hides on: tags and commit ids as ref; FC-091 fetches bytes at main and
    feature only and compares paths elsewhere.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref in (None, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH):
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else sha256_hex(data)

    def _swap(self, proxy, req, holder, repo, path, ref, where):
        sha = holder.get("sha")
        if isinstance(sha, str) and sha:
            holder["sha"] = self.fake(proxy, req, sha, repo, path, ref, where)   # real ids: no back map


@mutant("unknown-ref-default", "FC-092")
class UnknownRefDefault(Hooks):
    """repo/tree at a ref the adapter cannot resolve serves the default branch instead."""

    def reply(self, proxy, req, msg):
        if req is None or req.method != "repo/tree" or "error" not in msg or req.params.get("ref") is None:
            return msg

        def fallback(answer: dict) -> None:
            if "result" in answer:
                proxy.reply(req, answer["result"])
            else:
                proxy.send_host(msg)

        proxy.call_child("repo/tree", {"repo": req.params.get("repo"), "ref": None}, fallback)
        return None


@mutant("ref-ids-from-worktree", "FC-093")
class RefIdsFromWorktree(RelistedGenuine):
    """Blob ids at a ref are the checked-out (default branch) file's ids; blobs resolve by the last tree listed.

    Trees at refs and blob_at report, for every path that exists in the
    working tree, the id of the working-tree file, so a file that differs
    between main and feature gets one id at both refs. repo/blob resolves a
    fake id through the most recent listing that emitted it, which is what
    keeps tree-at-ref bytes (FC-091) and blob_at (FC-096) right.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if ref is None or where == "hit":
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else sha256_hex(data)


@mutant("log-oldest-first", "FC-094")
class LogOldestFirst(Hooks):
    """repo/log lists commits oldest first."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None:
            result["items"] = list(reversed(result.get("items") or []))
        return msg


@mutant("log-ignores-limit", "FC-095")
class LogIgnoresLimit(Hooks):
    """repo/log ignores limit (serves its default page)."""

    def request(self, proxy, req, msg):
        if req.method == "repo/log":
            req.params["limit"] = None
        return msg


@mutant("blob-at-git-sha", "FC-096")
class BlobAtGitSha(GitIds):
    """repo/blob_at reports git's blob id while trees report sha256 ids."""

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return super().fake(proxy, req, sha, repo, path, ref, where) if where == "blob_at" else sha


@mutant("blob-at-empty-for-unknown", "FC-097")
class BlobAtEmptyForUnknown(Hooks):
    """repo/blob_at answers empty bytes for a path or ref it cannot resolve in a served repository."""

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/blob_at" and "error" in msg
                and repo_name(req.params.get("repo")) in fixture_repos(proxy)):
            return {"jsonrpc": "2.0", "id": req.id,
                    "result": {"bytes_b64": "", "sha": sha256_hex(b"")}}
        return msg


@mutant("blame-zero-based", "FC-098")
class BlameZeroBased(Hooks):
    """repo/blame ranges are 0-based."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/blame" and result is not None:
            for rng in result.get("ranges") or []:
                for key in ("start_line", "end_line"):
                    if isinstance(rng.get(key), int):
                        rng[key] -= 1
        return msg


@mutant("commit-unimplemented", "FC-099")
class CommitUnimplemented(Refuse):
    """Declares commit true but answers repo/commit "unknown method"."""

    def __init__(self):
        super().__init__(("repo/commit",))


# The modules that register into this table too (skipped when tests/mutant.py
# loads one switch's module alone: tests/adapters/__init__.py FULL_TABLES).
import tests.adapters as _package  # noqa: E402

if _package.FULL_TABLES:
    from tests.adapters import mutants_v16  # noqa: E402,F401  (registers the v1.6 mutants)
    # The deep mutants in the matrix are marked ``@promoted`` where they are
    # written (tests/adapters/mutants_deep.py): importing it registers them here.
    from tests.adapters import mutants_deep  # noqa: E402,F401
    # The deep mutants promoted into the matrix register themselves here (their
    # classes stay beside the deep ones they share bases with).
    from tests.adapters import mutants_deep as _promoted  # noqa: E402,F401
    # Path mutants: each case's rules broken where it does not look first:
    from tests.adapters import mutants_paths_a, mutants_paths_b, mutants_paths_c  # noqa: E402,F401
    from tests.adapters import mutants_paths_f  # noqa: E402,F401  (handshakes everywhere, ids after re-init, concurrency)
    # The errors and lifecycle cases judged on more of the run (mutants and a control):
    from tests.adapters import mutants_paths_i  # noqa: E402,F401
    from tests.adapters import mutants_paths_h  # noqa: E402,F401  (search, listing and icon paths)
    from tests.adapters import mutants_paths_d  # noqa: E402,F401  (refs/log/blame round trips)
    from tests.adapters import mutants_paths_e  # noqa: E402,F401  (patch contents, FC-103)
    from tests.adapters import mutants_paths_g  # noqa: E402,F401  (tree sweep at tags, hit shas)
    from tests.adapters import mutants_paths_j  # noqa: E402,F401  (two requests of a kind in flight)
    from tests.adapters import mutants_paths_k  # noqa: E402,F401  (hit ids after a respawn)
    from tests.adapters import mutants_paths_l  # noqa: E402,F401  (streams of a filename-search-only forge)
    from tests.adapters import mutants_paths_m  # noqa: E402,F401  (repo/commit refusals)
    from tests.adapters import mutants_paths_n  # noqa: E402,F401  (listed ids served back, review C)
    from tests.adapters import mutants_paths_o  # noqa: E402,F401  (line ends and dates of the vcs tip commit)
    from tests.adapters import mutants_paths_p  # noqa: E402,F401  (truncated claims off their owners' paths)
    from tests.adapters import mutants_paths_q  # noqa: E402,F401  (respawned truncation, log at ids, streams, clone URLs)
    from tests.adapters import controls_pace  # noqa: E402,F401  (a paced stream's error after a cancel)
    from tests.adapters import mutants_backend  # noqa: E402,F401  (a real backend's defects: dates, `#` names, wedges)
    from tests.adapters import mutants_process  # noqa: E402,F401  (unasked exits after a cancel or a notification)
    from tests.adapters import mutants_one_red  # noqa: E402,F401  (one defect, one red)
