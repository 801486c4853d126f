"""The matrix mutants that break a case of cases/test_transport.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from tests.adapters.common import with_note
from tests.adapters.hooks import AwaitsCancel, BlobIds, PairReplies, Variant, matrix
from tests.adapters.proxy import Hooks, params_id, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


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


@promoted("banner-on-stdout", "FC-123", '§7.2: "MUST NOT Adapters write anything except protocol messages to stdout"')
class BannerOnStdout(Hooks):
    """Prints a banner line on stdout at start, before any reply.

    Hides on: the wire client drops it as junk; no case judges stdout hygiene yet.
    """

    def start(self, proxy):
        proxy.send_host(b"fs adapter 0.1 ready (serving the fixture)\n")


@promoted("partial-without-jsonrpc", "FC-124",
      '§5.2: "MUST It is a notification: top-level jsonrpc and method: \\"$/partial\\""')
class PartialWithoutJsonrpc(Hooks):
    """Every $/partial lacks the top-level jsonrpc member.

    Hides on: the client routes partials without it; no case checks the envelope.
    """

    def partial(self, proxy, req, msg):
        msg.pop("jsonrpc", None)
        return msg


@promoted("null-id-error-extra", "FC-120",
      '§1.2: "MUST ... A reply repeats the request\'s id"; §7.3 "MUST Adapters echo the id exactly"')
class NullIdErrorExtra(Hooks):
    """Before each repo/blob reply, an extra {"id": null, "error": ...} line.

    Hides on: the host drops unroutable ids; the real reply still follows.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob":
            proxy.send_host({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32603, "message": "internal: request context lost"}})
        return msg


@promoted("reply-echo-previous-id", "FC-120",
      '§1.2: "MUST ... A reply repeats the request\'s id"; §7.6 a reply is the only one for its id')
class ReplyEchoPreviousId(Hooks):
    """Before each repo/blob reply, a copy of it carrying the previous request's id.

    Hides on: the previous id is retired, so the host drops the copy.
    """

    def __init__(self):
        self.last_id = None

    def request(self, proxy, req, msg):
        req.state["previous"], self.last_id = self.last_id, req.id
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob" and req.state.get("previous") is not None:
            proxy.send_host(dict(msg, id=req.state["previous"]))
        return msg


@promoted("reply-id-string-extra", "FC-120", '§7.3: "MUST Adapters echo the id exactly, as the same JSON '
      'integer (not a string, not a float)"')
class ReplyIdStringExtra(Hooks):
    """Before each repo/blob reply, a copy of it whose id is the string "N".

    Hides on: the host drops string ids (invalid_id); the integer reply still follows.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob":
            proxy.send_host(dict(msg, id=str(req.id)))
        return msg


@promoted("request-to-host", "FC-124", '§7.6: "MUST NOT Adapters send requests to the host"')
class RequestToHost(Hooks):
    """Before each search/code reply, sends the host a window/showMessage request.

    Hides on: the host treats it as a reply for an id it never issued and drops it.
    """

    def __init__(self):
        self.next_id = 1 << 50

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "search/code":
            self.next_id += 1
            proxy.send_host({"jsonrpc": "2.0", "id": self.next_id, "method": "window/showMessage",
                             "params": {"type": 3, "message": "search finished"}})
        return msg


@promoted("error-reply-with-result", "FC-124",
          '§1.2: "MUST ... A reply repeats the request\'s id and contains exactly one of result / '
          'error"; §6.1: "MUST An error reply has the request\'s id and no result"')
class ErrorReplyWithResult(Hooks):
    """Error replies of repo/blob_at and repo/log also carry "result": null.

    Hides on: the error replies of revision methods; the host reads them as
    errors all the same (an error member decides), so no error case sees it.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method in ("repo/blob_at", "repo/log") and "error" in msg:
            return {**msg, "result": None}
        return msg


CACHE_PARAMS = ("cache_dir", "cache_bytes")


@promoted("reinitialize-other-cache-refused", "FC-121",
          '§2.1: "MUST Answer every `initialize`, including a second one on the same process"')
class ReinitializeOtherCacheRefused(Hooks):
    """A later initialize whose cache params differ from the first's answers an error.

    Hides on: an initialize without the cache params (the v1.6 host's pair was
    one without and one with them); FC-121 repeated the first initialize's
    params unchanged.
    """

    def __init__(self):
        self.first: dict | None = None

    def request(self, proxy, req, msg):
        if req.method != "initialize":
            return msg
        params = req.params if isinstance(req.params, dict) else {}
        cache = {k: params.get(k) for k in CACHE_PARAMS}
        if self.first is None:
            self.first = cache
            return msg
        if cache != self.first:
            proxy.error(req, f"already initialized with cache_dir {self.first.get('cache_dir')!r}",
                        kind="provider")
            return None
        return msg


@promoted("cancel-finished-oneshot-answered", "FC-122",
          '§5.4: "MUST NOT Reply to the cancel notification"; "MUST Ignore cancels for unknown '
          'or already-completed ids — no error"')
class CancelFinishedOneShotAnswered(CancelFinishedAnswered):
    """A cancel naming an answered one-shot search/code is answered with an error under that id.

    Hides on: a finished search that did not stream (the adapter keeps its scan
    handle only for streams, and a lookup that misses answers "no such
    search"); FC-122 cancelled a finished repo/tree and a finished stream.
    """

    def remembers(self, req) -> bool:
        return req.method == "search/code" and not req.streaming

    def complaint(self, rid) -> str:
        return f"no such search {rid}"


def streaming_search(req) -> bool:
    return req is not None and req.method == "search/code" and req.streaming


@promoted("concurrent-streams-crossed", "FC-120",
          '§5.4/§7.4: "$/partial ... params.id: the request it belongs to"; replies and '
          'partials are routed by id, with several requests in flight')
class ConcurrentStreamsCrossed(Hooks):
    """$/partial batches of a stream go out under the id of another streaming search in flight.

    While a second streaming search/code request is waiting for its reply,
    the batches of the first are sent under the second's id (still before
    the second's reply, so no batch follows its reply); a stream alone is
    never touched.

    Hides on: two streams in flight together; FC-120 had one stream beside
    trees and blobs, every other case streams one search at a time.
    """

    def partial(self, proxy, req, msg):
        if not streaming_search(req):
            return msg
        others = [r for r in list(proxy.requests.values())
                  if r.id != req.id and streaming_search(r)]
        if others:
            msg["params"]["id"] = others[-1].id
        return msg


@promoted("three-streams-crossed", "FC-120",
          '§5.2: "params.id is the opted-in request\'s id"; §7.4: replies and partials are '
          'routed by id, with several requests in flight')
class ThreeStreamsCrossed(Hooks):
    """With three or more streaming searches in flight, each batch goes out under the id of the newest one (a stream table of two slots that evicts).

    Two streams in flight together are never touched, and every batch still
    precedes its reply (the newest stream is answered last).

    Hides on: three streams in flight together; FC-120 had two, and every
    other case streams one search at a time.
    """

    def partial(self, proxy, req, msg):
        if not streaming_search(req):
            return msg
        live = [r for r in list(proxy.requests.values()) if streaming_search(r)]
        if len(live) >= 3:
            msg["params"]["id"] = max(r.id for r in live)
        return msg


@promoted("stale-cancel-aborts-next-stream", "FC-122",
          '§5.4: "MUST Ignore cancels for unknown or already-completed ids"')
class StaleCancelAbortsNextStream(Hooks):
    """A cancel naming an answered repo/tree sets an abort flag that the next streaming search consumes: it is answered at once, with no batch and truncated true.

    Hides on: the requests after the cancel; FC-122 asked a repo/tree after
    its cancels, which the flag does not touch.
    """

    def __init__(self):
        self.methods: dict = {}
        self.abort = False

    def request(self, proxy, req, msg):
        self.methods[req.id] = req.method
        if req.method == "search/code" and req.streaming and self.abort:
            self.abort = False
            proxy.reply(req, {"items": [], "truncated": True})
            return None
        return msg

    def notification(self, proxy, msg):
        params = msg.get("params")
        rid = params.get("id") if isinstance(params, dict) else None
        if (msg.get("method") == "$/cancelRequest" and rid not in proxy.requests
                and self.methods.get(rid) == "repo/tree"):
            self.abort = True
        return msg


@promoted("reinit-search-refused", "FC-121",
          '§2.1: "MUST Answer every initialize, including a second one on the same process" '
          '(and go on serving: RULINGS, startup is idempotent)')
class ReinitSearchRefused(Hooks):
    """After a second initialize on the same process, search/code answers a provider error (the re-initialize dropped the search index).

    Hides on: the methods after a second initialize; FC-121 asked only
    repo/tree of alpha after its extra initializes.
    """

    def __init__(self):
        self.initializes = 0

    def request(self, proxy, req, msg):
        if req.method == "initialize":
            self.initializes += 1
        elif req.method == "search/code" and self.initializes > 1:
            proxy.error(req, "search index not loaded", kind="provider")
            return None
        return msg


@mutant("exits-on-finished-cancel", "FC-122")
class ExitsOnFinishedCancel(Hooks):
    """The adapter exits (status 0) on a $/cancelRequest naming a request it answered before it read a later one.

    Hides on: FC-122's own check, which sees the lazily respawned generation
    serve the next tree and the stream asked again as before. A cancel of an
    id never issued (FC-054's) is ignored, and so is a cancel of the latest
    request: one sent with its request (FC-045's) may find a fast answer
    already out, and the host would then be writing its next request as the
    adapter dies (that request's owner would fail, as in the host).
    """

    def start(self, proxy):
        self.answered: set = set()
        self.latest = None

    def request(self, proxy, req, msg):
        self.latest = req.id
        return msg

    def reply(self, proxy, req, msg):
        if req is not None:
            self.answered.add(req.id)
        return msg

    def notification(self, proxy, msg):
        target = params_id(msg) if msg.get("method") == "$/cancelRequest" else None
        if target in self.answered and target != self.latest:
            proxy.log("a cancel for a finished request: exiting")
            proxy._shutdown(0)
        return msg


class Latin1Reply(Hooks):
    """Base: the first reply of ``method`` a process sends is written with
    NOTE_TEXT in Latin-1 (invalid UTF-8: the host ends the generation)."""

    method = ""

    def start(self, proxy):
        self.done = False

    def reply(self, proxy, req, msg):
        if self.done or req is None or req.method != self.method or result_of(msg) is None:
            return msg
        self.done = True
        proxy.send_host(with_note(msg, "latin-1"))
        proxy.requests.pop(req.id, None)
        return None


@mutant("latin1-first-tree", "FC-123")
class Latin1FirstTree(Latin1Reply):
    """Each process's first repo/tree reply carries an unknown member written in
    Latin-1 (invalid UTF-8).

    Hides on: every case whose tree died with that generation: they skip,
    naming FC-123's defect; the lazily respawned generation serves the next
    request (its own first tree dies again).
    """

    method = "repo/tree"


@mutant("latin1-first-commit", "FC-123")
class Latin1FirstCommit(Latin1Reply):
    """Each process's first repo/commit reply carries an unknown member written in
    Latin-1 (invalid UTF-8).

    Hides on: the commit cases (a late group) and every other case whose
    repo/commit died with that generation: they skip, naming FC-123's defect.
    """

    method = "repo/commit"


REKEY = "v2-"


@mutant("blob-ids-rekeyed-after-second-init", "FC-121")
class BlobIdsRekeyedAfterSecondInit(BlobIds):
    """After a second initialize on a process every blob id it lists gets a "v2-" prefix (repo/blob
    resolves both).

    Hides on: FC-121, which compared only the paths listed before and after
    the extra initializes; no other case sends one.
    """

    def __init__(self):
        super().__init__()
        self.inits = 0

    def request(self, proxy, req, msg):
        if req.method == "initialize":
            self.inits += 1
        return super().request(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return REKEY + sha if self.inits > 1 else sha


@mutant("concurrent-trees-swapped", "FC-120")
class ConcurrentTreesSwapped(PairReplies):
    """Replies to repo/tree requests in flight together are sent under each other's ids.

    Hides on: FC-120, which had only one repo/tree in flight (beside blobs
    and a stream). A tree reply is held (up to HOLD_S) while another
    repo/tree is outstanding; one request at a time is never touched.
    """

    # Long enough for wide's 3,000-entry tree on a loaded machine (0.5 s let
    # alpha's reply go alone under a whole self-test's load); only a tree
    # reply with another tree outstanding waits, so only FC-120 pays it.
    HOLD_S = 2.0

    def holds(self, req):
        return req.method == "repo/tree"

    def waits(self, proxy, req):
        return any(r.method == "repo/tree" and r.id != req.id
                   for r in list(proxy.requests.values()))

    def pair(self, proxy, held, msg):
        held["id"], msg["id"] = msg["id"], held["id"]
        proxy.send_host(held)
        return msg
