"""The matrix mutants that break a case of cases/test_streaming.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import time

from fixture.catalog import WIDE
from tests.adapters import gates
from tests.adapters.common import FirstInitialize, HitEdit, PacedStream, SearchEdit, TRUNCATED_RULE, is_path_query, query
from tests.adapters.gates import Stall
from tests.adapters.hooks import AwaitsCancel, FilesearchOnly, LastBatch, StreamPause, StreamedItemsInReply, Variant, matrix, repo_name
from tests.adapters.proxy import Hooks, error_reply, hits_of, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


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
            return error_reply(req.id, "request cancelled", kind="provider")
        return msg


@promoted("partial-id-echo-later-batches", "FC-040",
      '§5.2: "MUST params.id is the opted-in request\'s id (same integer)"')
class PartialIdEchoLaterBatches(Hooks):
    """From the second batch of a stream on, each $/partial is followed by a copy with params.id + 1.

    Hides on: the second and later batches; FC-040's term streams one batch.
    """

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if req is not None and req.partials >= 1 and isinstance(params, dict) and isinstance(params.get("id"), int):
            proxy.send_host(msg)
            return dict(msg, params=dict(params, id=params["id"] + 1))
        return msg


@promoted("partial-late-1s", "FC-041", '§5.3: "MUST ... After N\'s reply there are no more partials for N"')
class PartialLate1s(LastBatch):
    """A streamed search sends its last batch again 1 s after its reply.

    Hides on: 1 s later; FC-041 watches SILENCE_S (0.5 s) after the reply.
    """

    LATE_S = 1.0

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and req.method == "search/code":
            late = self.late(req)
            proxy.later(self.LATE_S, lambda: proxy.send_host(late))
        return msg


@promoted("partial-after-truncated-reply", "FC-041",
      '§5.3: "MUST ... After N\'s reply there are no more partials for N"')
class PartialAfterTruncatedReply(LastBatch):
    """A stream cut by its limit sends one more batch right after the reply (the scan thread ran on).

    Hides on: streams cut by limit (FC-044's); FC-041's stream is never cut.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None and result.get("truncated") is True:
            proxy.send_host(msg)
            return self.late(req)
        return msg


@promoted("streamed-truncated-false-when-cut", "FC-042",
      '§5.3: "MUST Metadata-only reply: ... carries the authoritative truncated"; §3.13 truncated '
      '"true = the result set is provably incomplete"')
class StreamedTruncatedFalseWhenCut(Hooks):
    """A stream cut by its limit ends with truncated false.

    Hides on: streams cut by limit (FC-044's); FC-042's stream is complete.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None and result.get("truncated") is True:
            result["truncated"] = False
        return msg


@promoted("items-in-truncated-streamed-reply", "FC-042",
      '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has items: []"')
class ItemsInTruncatedStreamedReply(StreamedItemsInReply):
    """A stream cut by its limit repeats its streamed hits in the final reply.

    Hides on: streams cut by limit; FC-042's stream is complete.
    """

    def applies(self, result):
        return result.get("truncated") is True


@promoted("bad-item-in-small-batch", "FC-044",
      '§5.2: "MUST params.items is an array of the method\'s own result-item shape"')
class BadItemInSmallBatch(Hooks):
    """Every streamed batch of at most 10 items gets one malformed item (path 7).

    Hides on: small batches (alpha's 8 hits, one-hit streams); FC-044 reads
    only its own stream of wide, whose batch is large.
    """

    def partial(self, proxy, req, msg):
        items = (msg.get("params") or {}).get("items")
        if isinstance(items, list) and 0 < len(items) <= 10:
            first = items[0] if isinstance(items[0], dict) else {}
            items.append({"repo": first.get("repo", ""), "path": 7})
        return msg


@promoted("cancel-poisons-next-search", "FC-045",
      '§5.4: "MUST Ignore cancels for unknown or already-completed ids — no error"; RULINGS: after '
      '$/cancelRequest the adapter must ... stay usable')
class CancelPoisonsNextSearch(AwaitsCancel):
    """After a cancel reaches a live stream, the process's next search/code answers an error.

    Hides on: the next search; FC-045 checks only a repo/tree after the cancel.
    A stream's final reply waits up to CANCEL_WAIT_S for its cancel (AwaitsCancel).
    """

    def __init__(self):
        super().__init__()
        self.poisoned = False

    def holds(self, req):
        return req.method == "search/code" and req.streaming

    def request(self, proxy, req, msg):
        if req.method == "search/code" and self.poisoned:
            self.poisoned = False
            proxy.error(req, "scan aborted by an earlier cancel", kind="provider")
            return None
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and self.cancelled(proxy, req):
            self.poisoned = True
        return msg


@promoted("cancel-oneshot-error", "FC-045",
      'RULINGS: "After $/cancelRequest the adapter must still send a terminal reply ... An error '
      'reply after a cancel fails FC-045"; §5.4 cancel is advisory')
class CancelOneshotError(AwaitsCancel):
    """A cancelled non-streaming request (the host cancels previews) is answered with an error.

    Hides on: one-shot requests; FC-045 cancels a stream only.
    A one-shot search's reply waits up to CANCEL_WAIT_S for its cancel (AwaitsCancel).
    """

    def holds(self, req):
        return req.method == "search/code" and not req.streaming

    def reply(self, proxy, req, msg):
        if req is not None and not req.streaming and "result" in msg \
                and (req.cancelled or self.cancelled(proxy, req)):
            return error_reply(req.id, "request cancelled", kind="provider")
        return msg


@promoted("partial-on-oneshot", "FC-046",
      '§5.1: "MUST NOT Send $/partial for a request that did not opt in"')
class PartialOnOneshot(Hooks):
    """One-shot search/code also sends its hits in a $/partial before the reply.

    Hides on: the host drops it (not_streaming); no case looks at partials of one-shot requests.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and not req.streaming and result and result.get("items"):
            proxy.send_host({"jsonrpc": "2.0", "method": "$/partial",
                             "params": {"id": req.id, "items": result["items"]}})
        return msg


STALL_S = 4.0   # twice the suite's 2 s inactivity window


@promoted("stream-stall-wide-scan", "FC-043",
          '§5.3: "SHOULD Emit batches at least every couple of seconds"; §7: a stream silent '
          'for a full inactivity window fails with timeout')
class StreamStallWideScan(StreamPause):
    """A streamed search goes silent for 4 s before its batch of hits in the wide repository.

    Hides on: a search whose hits lie in wide (600 files, scanned in one go
    before anything is sent); FC-043 streamed only TERM_SEVERAL, whose hits
    are in alpha and beta, and every other streamed search runs under the
    30 s deadline, not the 2 s inactivity window.
    """

    def partial(self, proxy, req, msg):
        if (req is not None and req.streaming and not req.state.get("stalled")
                and any(repo_name(h.get("repo")) == WIDE for h in hits_of(req, msg)
                        if isinstance(h, dict))):
            req.state["stalled"] = True
            time.sleep(STALL_S)      # the behaviour under test: a silent adapter
        return msg


@promoted("single-hit-stream-in-reply", "FC-042",
          '§5.1: "Adapters therefore MUST deliver every item through $/partial when the '
          'request opted in"')
class SingleHitStreamInReply(Hooks):
    """A streamed content search whose whole result is one hit sends no $/partial; the hit is in the reply.

    Hides on: streams of a single hit; FC-042 streamed terms of 8 and 600 files.
    """

    def partial(self, proxy, req, msg):
        if req is None or is_path_query(req):
            return msg
        req.state.setdefault("held", []).append(msg)
        return None

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or not req.streaming or "held" not in req.state or result is None:
            return msg
        hits = [h for m in req.state["held"] for h in hits_of(req, m)]
        if len(hits) == 1:
            result["items"] = hits
        else:
            for held in req.state["held"]:
                proxy.send_host(held)
        return msg


@promoted("multibatch-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class MultibatchItemsInReply(StreamedItemsInReply):
    """A stream of two or more batches repeats every streamed hit in its final reply.

    Hides on: streams of several batches (a term in alpha and beta); FC-042
    streamed terms of one repository (one batch each).
    """

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state["batches"] = req.state.get("batches", 0) + 1
        return super().partial(proxy, req, msg)

    def reply(self, proxy, req, msg):
        if req is not None and req.state.get("batches", 0) >= 2:
            return super().reply(proxy, req, msg)
        return msg


class Batches(Hooks):
    """Count each stream's batches."""

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state["batches"] = req.state.get("batches", 0) + 1
        return msg


@promoted("multibatch-truncated-lie", "FC-042",
          '§3.13: truncated "true = the result set is provably incomplete"; RULINGS "Bounded '
          'compute": a claim of truncation that is false fails')
class MultibatchTruncatedLie(Batches):
    """A complete stream of two or more batches says truncated true.

    Hides on: streams of several batches; FC-042 judged truncated on one-repo streams only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None \
                and req.state.get("batches", 0) >= 2:
            result["truncated"] = True
        return msg


@promoted("bigstream-cut-no-truncated", "FC-042",
          '§5.3: the final reply "carries the authoritative truncated"; RULINGS "Bounded '
          'compute": a cut without truncated: true fails')
class BigstreamCutNoTruncated(Hooks):
    """A stream cut by a limit of 100 or more (the host's 500) ends with truncated false.

    Hides on: limits of 100 and more; FC-042 cut wide's stream at 20 only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        limit = req.params.get("limit") if req is not None else None
        if req is not None and req.streaming and result is not None \
                and isinstance(limit, int) and limit >= 100:
            result["truncated"] = False
        return msg


@promoted("path-stream-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class PathStreamItemsInReply(StreamedItemsInReply):
    """Streamed path: searches (filename search) repeat every streamed hit in the final reply.

    Hides on: path: queries; FC-042 streamed content terms only.
    """

    def reply(self, proxy, req, msg):
        return super().reply(proxy, req, msg) if is_path_query(req) else msg


@promoted("filesearch-only-items-in-streamed-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class FilesearchOnlyItemsInStreamedReply(FilesearchOnly, StreamedItemsInReply):
    """Declares code_search false, file_search true (legal), and repeats streamed path: hits in the reply.

    Hides on: an adapter without content search; FC-042 streamed content
    terms only.
    """


@promoted("scoped-stream-items-in-reply", "FC-042",
          '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has '
          'items: []"')
class ScopedStreamItemsInReply(StreamedItemsInReply):
    """repo:-scoped streamed searches repeat every streamed hit in the final reply.

    Hides on: repo:-scoped streams, which FC-042 does not ask (FC-031 does):
    the protocol monitor sees the reply's items wherever they are sent.
    """

    def reply(self, proxy, req, msg):
        return super().reply(proxy, req, msg) if "repo:" in query(req) else msg


@promoted("streamed-beta-hits-under-alpha", "FC-042",
          '§3.13: hit "repo": "repository id", "path": "repository-relative path"')
class StreamedBetaHitsUnderAlpha(HitEdit):
    """Streamed hits in beta are reported under alpha's repository id (the path kept).

    Hides on: streams of a term in alpha and beta; FC-042 streamed terms of
    one repository, and FC-031 skipped hits naming no file of the fixture.
    """

    def applies(self, req):
        return req.streaming

    def edit(self, proxy, req, hit):
        if repo_name(hit.get("repo")) == "beta":
            hit["repo"] = hit["repo"].rsplit("/", 1)[0] + "/alpha"


@promoted("filesearch-only-cancel-answers-error", "FC-045",
          '§5.4: "MUST (client side) Cancellation is not terminal"; "SUITE FC-045 requires the '
          'stream to stop cleanly and the adapter not to error" (RULINGS: an error reply after '
          'a cancel fails FC-045)')
class FilesearchOnlyCancelAnswersError(FilesearchOnly, AwaitsCancel):
    """Declares code_search false, file_search true (legal); a cancelled streamed path: search answers an error.

    A fast stream may finish before the host's cancel arrives, so the final
    reply of a stream is held up to CANCEL_WAIT_S for a cancel to show up;
    uncancelled streams and one-shot searches are answered as usual.

    Hides on: an adapter without content search; FC-045 cancelled content
    searches only and skipped when code_search was false.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and req.streaming \
                and self.cancelled(proxy, req):
            return error_reply(req.id, "request cancelled", kind="provider")
        return super().reply(proxy, req, msg)


def path_query(req) -> bool:
    q = req.params.get("q") if req is not None else None
    return isinstance(q, str) and q.startswith("path:")


@promoted("path-stream-stall-4s", "FC-043",
          '§5.3: "SHOULD Emit batches at least every couple of seconds (FC-043 runs a 2 s '
          'inactivity window against a 1.2 s batch cadence)"')
class PathStreamStall4s(Stall):
    """A 4 s silence after the first batch of every streamed path: search (filename search).

    Content streams are left alone; the adapter declares both search
    capabilities, as the reference does.

    Hides on: streamed path: queries; FC-043 timed content streams only, and
    the path: streams of FC-030, FC-034 and FC-042 wait a whole deadline.
    """

    def before(self, req, n):
        return super().before(req, n) if path_query(req) else 0.0

    def before_reply(self, req):
        return super().before_reply(req) if path_query(req) else 0.0


@promoted("path-stream-cut-untruncated", "FC-042",
          '§5.3: "the final reply ... carries the authoritative truncated"; RULINGS "Bounded '
          'compute": a cut without truncated: true fails')
class PathStreamCutUntruncated(SearchEdit):
    """Streamed path: searches stopped by their limit end with truncated false.

    Hides on: path: streams; FC-042 judged the truncated of content streams
    only (a path: stream had no expected set), and path:flat at limit 20
    was streamed by FC-041 and FC-044, which do not read it.
    """

    def applies(self, proxy, req):
        return req.streaming and path_query(req)

    def edit(self, proxy, req, result):
        result["truncated"] = False


@promoted("respawn-stream-cut-untruncated", "FC-042",
          '§5.3: the final reply\'s truncated is authoritative; ' + TRUNCATED_RULE)
class RespawnStreamCutUntruncated(FirstInitialize):
    """A respawned generation's streamed searches send no batch at all and end with truncated false.

    Hides on: a respawned generation; the streaming cases stream in the
    group adapter's first generation (FC-050 streams one after a respawn, and
    cases.judges.claims judges its cut as on every stream of the run).
    """

    def partial(self, proxy, req, msg):
        if self.respawned and req is not None and req.method == "search/code":
            return None
        return msg


@mutant("paced-cancel-error", "FC-045")
class PacedCancelError(PacedStream):
    """Streams one hit per batch 0.3 s apart, ignores cancels, and ends a cancelled stream with an error reply.

    The error is the defect (RULINGS "Streaming and cancellation": after a
    cancel the adapter must still send a normal terminal reply); the pace and
    the ignored cancel are legal, so every case but FC-045 must pass, and
    quickly: the cases that cancel a stream of their own judge what they saw
    before the cancel, whatever the reply after it.
    """

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest":
            return None   # never reaches the reference: req.cancelled is the proxy's record
        return msg

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        if req is not None and req.streaming and req.cancelled:
            return error_reply(req.id, "request cancelled", kind="provider")
        return msg
