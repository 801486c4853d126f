"""The matrix mutants that break a case of cases/test_lifecycle.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import json
import os

from tests.adapters.common import FirstInitialize, RespawnedEdit, RespawnedInitialize
from tests.adapters.hooks import InitResult, SearchLock, Variant, is_git, matrix, repo_name
from tests.adapters.proxy import Hooks, error_reply, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


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


@promoted("stale-vcs-lock", "FC-050",
      '§7.11: "MUST Startup is cheap and idempotent"; §7.1 "MUST Adapters tolerate being killed at '
      'any instant"')
class StaleVcsLock(SearchLock):
    """A streaming search holds cache_dir/vcs.lock; a process started over a stale lock fails every vcs request.

    The search pauses HOLD_S before its final reply, so a kill after the first
    batch leaves the lock behind (as the matrix's stale-lock does).

    Hides on: the git-backed repo after the restart; FC-050's respawned
    process is asked for alpha only.
    """

    LOCK_NAME = "vcs.lock"

    def __init__(self):
        self.stale = False

    def request(self, proxy, req, msg):
        lock = self.lock(proxy)
        if req.method == "initialize":
            self.stale = lock is not None and lock.exists() and lock.read_text() != str(os.getpid())
            return msg
        if self.stale and is_git(proxy, req.params.get("repo")):
            proxy.error(req, f"{lock} exists: another process is using the repository", kind="provider")
            return None
        self.take_lock(proxy, req)
        return msg


@promoted("caps-change-after-cache-write", "FC-051",
      '§7.11: "MUST Startup is cheap and idempotent: ... must give the same answer every time"')
class CapsChangeAfterCacheWrite(InitResult):
    """Once a request has written to cache_dir, later initializes flip capabilities.orgs.

    Hides on: a respawn after real work; FC-051 respawns twice without a request in between.
    """

    def marker(self, proxy):
        cache = proxy.init_params.get("cache_dir")
        from pathlib import Path
        return Path(cache) / "served" if isinstance(cache, str) else None

    def request(self, proxy, req, msg):
        marker = self.marker(proxy)
        if req.method != "initialize" and marker is not None and not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("1")
        return msg

    def edit(self, proxy, req, result):
        marker = self.marker(proxy)
        if marker is not None and marker.exists():
            caps = result.setdefault("capabilities", {})
            caps["orgs"] = not caps.get("orgs", True)


@promoted("canary-get-on-respawn", "FC-052",
          '§2.1: "MUST NOT Perform network I/O or credential lookups while answering initialize"')
class CanaryGetOnRespawn(CanaryGet):
    """A respawned generation's initialize (id != 1: not the process's first start) makes an HTTP GET to FORGE_CANARY_URL before answering.

    Hides on: the first start, which FC-052 judges first.
    """

    def request(self, proxy, req, msg):
        return msg if req.id == 1 else super().request(proxy, req, msg)


PROBED_BY_FC053 = ("repo/tree", "repo/blob", "repo/web_url", "repo/clone_url")


@promoted("unknown-params-error-unprobed", "FC-053",
      '§3.0: "MUST params members not listed for a method are ignored"; §7.2 reader tolerance')
class UnknownParamsErrorUnprobed(UnknownParamsError):
    """Unknown params (or envelope members) answer an error on every method FC-053 does not probe.

    Hides on: initialize, search/repos, org/*, repo/refs, log, blame, blob_at,
    commit and streamed search/code; FC-053 probes tree, blob, web_url,
    clone_url and one-shot search.
    """

    def request(self, proxy, req, msg):
        probed = req.method in PROBED_BY_FC053 or (req.method == "search/code" and not req.streaming)
        return msg if probed else super().request(proxy, req, msg)


@promoted("answers-array-params-notification", "FC-054",
          '§1.2: "MUST Notifications (messages with no id) are never answered"')
class AnswersArrayParamsNotification(AnswersNotifications):
    """Only a notification whose params is an array is answered {"id": null, "error": method not found}.

    Hides on: $/progress, window/logMessage and the cancel for an id never issued, which FC-054 sends first.
    """

    def notification(self, proxy, msg):
        return super().notification(proxy, msg) if isinstance(msg.get("params"), list) else msg


@promoted("ref-index-in-host-root", "FC-055",
          '§10.2: "MUST NOT Write into the host\'s own cache root (`~/.cache/rootle/`) directly"')
class RefIndexInHostRoot(Hooks):
    """A repo/tree at a named ref records ref -> tree in <host root>/index/refs/<repo>/<ref>
    (the GitHub layout, rooted two levels above cache_dir).

    Hides on: repo/tree at a branch; the lifecycle group and FC-055's own
    requests ask trees of the default branch (ref null) only, so the index is
    never written where FC-055 looks.
    """

    def reply(self, proxy, req, msg):
        cache = proxy.init_params.get("cache_dir")
        ref = req.params.get("ref") if req is not None else None
        if (req is None or req.method != "repo/tree" or not isinstance(ref, str) or not ref
                or result_of(msg) is None or not isinstance(cache, str)):
            return msg
        from pathlib import Path
        index = Path(cache).parent.parent / "index" / "refs" / repo_name(req.params.get("repo"))
        index.mkdir(parents=True, exist_ok=True)
        (index / ref.replace("/", "_")).write_text(str(result_of(msg).get("branch", ref)))
        return msg


@mutant("cache-root-on-respawn", "FC-055")
class CacheRootOnRespawn(FirstInitialize):
    """A respawned generation writes provider-crash.json into the host's cache root (<cache_dir>/../..) when it starts."""

    def on_first_initialize(self, proxy, req):
        cache_dir = req.params.get("cache_dir")
        if self.respawned and isinstance(cache_dir, str):
            root = os.path.dirname(os.path.dirname(cache_dir))
            with open(os.path.join(root, "provider-crash.json"), "w") as f:
                json.dump({"respawned_at_id": req.id}, f)


@mutant("cache-fallback-xdg", "FC-055")
class CacheFallbackXdg(FirstInitialize):
    """A process started without cache_dir caches the blobs it serves in $XDG_CACHE_HOME/rootle/blobs/ (the host's cache root)."""

    no_cache_dir = False

    def on_first_initialize(self, proxy, req):
        self.no_cache_dir = not isinstance(req.params.get("cache_dir"), str)

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        xdg = os.environ.get("XDG_CACHE_HOME")
        if (self.no_cache_dir and xdg and req is not None and req.method == "repo/tree"
                and result is not None):
            blobs = os.path.join(xdg, "rootle", "blobs")
            os.makedirs(blobs, exist_ok=True)
            with open(os.path.join(blobs, "tree-seen"), "w") as f:
                f.write(str(req.params.get("repo")))
        return msg


@mutant("respawn-search-refused", "FC-050")
class RespawnSearchRefused(FirstInitialize):
    """A respawned generation refuses every search/code with kind provider (a search index it finds half-written)."""

    def request(self, proxy, req, msg):
        msg = super().request(proxy, req, msg)
        if self.respawned and req.method == "search/code":
            proxy.error(req, "search index is corrupt", kind="provider")
            return None
        return msg


@mutant("respawn-log-ignores-ref", "FC-050")
class RespawnLogIgnoresRef(FirstInitialize):
    """A respawned generation's repo/log walks the default branch whatever the ref."""

    def request(self, proxy, req, msg):
        msg = super().request(proxy, req, msg)
        if self.respawned and req.method == "repo/log" and req.params.get("ref") is not None:
            msg["params"] = {**req.params, "ref": None}
        return msg


@promoted("respawn-search-empty-page", "FC-050",
          '§2.1 and §10.2: a respawned generation serves as the first one did')
class RespawnSearchEmptyPage(RespawnedEdit):
    """A respawned generation's one-shot searches answer no hit at all, with truncated true.

    Hides on: a respawned generation; truncated true makes any cut a page
    (FC-070's cases.judges.claims judge no lie in it), so FC-050 tells a page that
    holds some of the files from one that holds none: a search not served.
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        result["items"] = []
        result["truncated"] = True


@mutant("exits-on-unknown-notification", "FC-054")
class ExitsOnUnknownNotification(Hooks):
    """The adapter exits (status 0) on any notification but $/cancelRequest ($/progress, window/logMessage, x/...).

    Hides on: FC-054's own check, which sees no reply to the notifications
    and the lazily respawned generation list the tree as before.
    """

    def notification(self, proxy, msg):
        if msg.get("method") != "$/cancelRequest":
            proxy.log(f"an unknown notification {msg.get('method')!r}: exiting")
            proxy._shutdown(0)
        return msg


@mutant("tree-ref-absent-refused", "FC-053")
class TreeRefAbsentRefused(Hooks):
    """repo/tree without a ref member is refused (not_found "unknown revision"); with ref null it serves the default branch.

    Hides on: every case, which sends the host's spelling (ref null, or a
    ref); only the run-wide null-and-absent judge leaves ref out.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/tree" and "ref" not in req.params:
            proxy.error(req, "unknown revision (no ref given)", kind="not_found")
            return None
        return msg


@mutant("search-limit-null-refused", "FC-053")
class SearchLimitNullRefused(Hooks):
    """search/code with limit null is refused as invalid params; with limit left out it searches.

    Hides on: every case, which sends a limit (the host's 500, or another);
    only the run-wide null-and-absent judge sends limit null.
    """

    def request(self, proxy, req, msg):
        if req.method == "search/code" and "limit" in req.params and req.params["limit"] is None:
            proxy.error(req, "invalid params: limit must be an integer", code=-32602)
            return None
        return msg


@mutant("exits-on-search-limit-null", "FC-053")
class ExitsOnSearchLimitNull(Hooks):
    """The adapter exits (status 3) on search/code with limit null, the search in flight; with limit left out it searches.

    Hides on: every case, which sends a limit; the run-wide null-and-absent
    judge's search with limit null is in flight when the process ends (its
    closed output is the judge's to report: no case waits on it).
    """

    def request(self, proxy, req, msg):
        if req.method == "search/code" and "limit" in req.params and req.params["limit"] is None:
            proxy.log("search/code with limit null: exiting")
            proxy._shutdown(3)
        return msg


@mutant("respawn-initialize-error", "FC-050")
class RespawnInitializeError(RespawnedInitialize):
    """A respawned generation answers initialize with an error (kind provider).

    Hides on: the first start of each process; every case that needed a
    respawned generation skips, naming FC-050's defect.
    """

    def answer(self, proxy, req, msg):
        return error_reply(req.id, "cache is locked by a previous run", kind="provider")


@mutant("respawn-no-capabilities", "FC-051")
class RespawnNoCapabilities(RespawnedInitialize):
    """A respawned generation answers initialize without capabilities.

    Hides on: the first start of each process; the cases read generation
    1's capabilities and the respawned generation still serves everything.
    """

    def answer(self, proxy, req, msg):
        result = result_of(msg)
        if result is not None:
            result.pop("capabilities", None)
        return msg
