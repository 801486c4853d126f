"""Streaming cases (FC-040..FC-045): search/code with partial: true.

Every stream is read only as far as its case needs (cases.kit.replies.search:
the hits its rule needs, at most STREAM_READ_S, then a cancel and
AFTER_CANCEL_S for the reply; a stream still going then is left and its
process retired), so a slow but legal streamer never makes a run long.

The inactivity window is DEADLINE_S except in FC-043. Frames are read from
the transcript where a rule is about what went over the wire (ids, order),
and from the client's routed batches where it is about their content.

Filename search streams too. PROTOCOL §2.4 carries it over `search/code` as
path-only (`path:`) queries, §3.13 names the same method and params for it,
and §5.1 says the host sets `partial: true` on every progressive (global)
search, so a streamed path: query is held to the $/partial rules of §5.2 and
§5.3 like a content search. An adapter that declares code_search false and
file_search true (a forge with no content index) is therefore judged on
path: streams here rather than skipped. With both capabilities the content
streams stay the evidence of FC-040, FC-041 and FC-044 (the protocol monitor
already judges the path: streams of FC-030, FC-034 and FC-042 on ids, order
and items, on every frame); FC-043 and FC-045 also stream a path: query,
since nothing else looks at a filename search under the inactivity window
or after a cancel (a backend's filename search can be another code path).
"""


from cases.kit.api import case, fail, fc_assert, listing, need, owner, show, skip, warn
from cases.kit.formats import is_int
from cases.kit.facts import files_containing, files_named
from cases.judges.monitoring import judge_own_traffic
from cases.kit.replies import (MANY_TIMES, attempt, folded, frame_items, judge_path_cut,
                           partial_frames, partial_id, read_reply, search, stream_read_s, tree,
                           unreached_budget)
from cases.kit.settings import active as active_settings
from fixture.catalog import (ALPHA, TERM_LINE, TERM_MANY_ALPHA, TERM_PATHONLY, TERM_SEVERAL,
                             TERM_WIDE, WIDE_BIG_DIR)
from wire import ProviderTimeout
from wire.messages import SearchResult

CUT_LIMIT = 20   # cuts TERM_WIDE's 600 files: the stream ends truncated
PATH_Q = f"path:{TERM_PATHONLY}"      # filename search: one file name in alpha (FC-034 finds it)
PATH_CUT_Q = f"path:{WIDE_BIG_DIR}"   # 1,200 file names in wide: CUT_LIMIT cuts that stream


def require_search(adapter) -> None:
    """Skip the running case when the host would send no search/code at all."""
    if not (adapter.caps.code_search or adapter.caps.file_search):
        skip("needs content or filename search, and the adapter declares both false")


def path_stream(adapter, q: str, **kwargs):
    """A streamed path: query, or None when the adapter refused it. Refusing
    path: queries is FC-034's: the case skips unless it has content streams
    to judge (code_search true), when it just leaves the path: stream out."""
    found, err = attempt(search, adapter, q, partial=True, **kwargs)
    if err is not None:
        need(adapter.caps.code_search, f"search/code {q!r} (streamed) answered an error "
             f"({err.message})", owner("path: queries are"))
    return found


def streams(adapter, content: tuple, paths: tuple, **kwargs) -> list:
    """The streams a case judges: its content queries with code_search, else
    (filename search only) its path: queries; (q, limit) pairs."""
    require_search(adapter)
    if adapter.caps.code_search:
        return [search(adapter, q, limit=limit, partial=True, **kwargs) for q, limit in content]
    return [path_stream(adapter, q, limit=limit, **kwargs) for q, limit in paths]


@case("FC-040")
def test_partials_carry_request_id(adapter):
    """Every $/partial of every batch received while a streaming search is
    live (a stream of one batch, and one of a batch per repository; a
    streamed path: query when the adapter has filename search only) carries
    params.id equal to that request's id.

    Falsified by: partial-id-echo: Every $/partial is followed by a copy whose params.id names no
    request of the run.
    """
    wrong = []
    # A batch naming an earlier stream of this process that has been answered
    # is a partial after its reply: FC-041's (the run-wide monitor hands it over).
    late = adapter.monitor.stream_ended if adapter.monitor is not None else (lambda rid: False)
    for found in streams(adapter, ((TERM_MANY_ALPHA, 500), (TERM_SEVERAL, 500)),
                         ((PATH_Q, 500),)):
        frames = found.need_partials()
        wrong += [f"params.id {show(partial_id(f))} on batch {n} of {found.what} (id "
                  f"{found.call.id})" for n, f in enumerate(frames, 1)
                  if not (is_int(partial_id(f)) and partial_id(f) == found.call.id)
                  and not (partial_id(f) != found.call.id and late(partial_id(f)))]
    fc_assert(not wrong, expected="the streaming request's id on every $/partial",
              got=listing(wrong, 3), why="a partial names the request it belongs to")


@case("FC-041")
def test_no_partial_after_reply(adapter):
    """No $/partial for a request arrives after its reply, for a complete
    stream and one cut by its limit (path: queries, a file name and wide's
    1,200, when the adapter has filename search only). What came late by the time both replies
    are in fails the case here; anything later is the protocol monitor's
    (this case owns its "partial after the reply" rule on every frame of the
    run): the group's adapter serves the rest of the group and is watched for
    settings.TAIL_S after its last stream, in the background, so this case
    keeps no silence window of its own.

    Falsified by: partial-after-reply: A streamed search sends one more $/partial (its last batch
    again) after its reply.
    """
    found = streams(adapter, ((TERM_MANY_ALPHA, 500), (TERM_WIDE, CUT_LIMIT)),
                    ((PATH_Q, 500), (PATH_CUT_Q, CUT_LIMIT)))
    found[0].need_partials()   # a stream of no batch has nothing to send late
    judge_own_traffic()
    late = [f"{len(frames)} for {s.what} (id {s.call.id}, truncated "
            f"{show(s.result.truncated)})" for s in found
            for frames in [[f for f in partial_frames(adapter.transcript.since(s.mark))
                            if partial_id(f) == s.call.id and f.outcome == "retired_id"]]
            if frames]
    fc_assert(not late, expected="no partial after the reply",
              got=f"$/partial frame(s) after the reply: {listing(late)}",
              why="every partial precedes its request's reply")


# FC-042's streams: (q, term, limit). A term in alpha only (one batch per
# repository: one batch), in alpha and beta (two or more batches), in one
# file only (a stream of a single hit), and wide's 600 files cut at 20 and at
# the host's 500 (a large cut stream).
METADATA_STREAMS = ((TERM_MANY_ALPHA, 500), (TERM_SEVERAL, 500), (TERM_LINE, 500),
                    (TERM_WIDE, CUT_LIMIT), (TERM_WIDE, 500))


@case("FC-042")
def test_streamed_reply_is_metadata_only(adapter, fx):
    """A streamed reply, complete or cut by its limit (streams of one batch,
    of several batches, of a single hit, and of wide's 600 files at limits 20
    and 500, and with file search streamed path: queries for one file name
    and for wide's 1,200 flat/ files at limit 20), has `items` absent or [],
    and `truncated` absent or a boolean that is true exactly when the
    streamed hits miss a matching file (for a path: query, a file whose path
    holds the text), never with far fewer hits than the limit; the hits of a
    matching query arrived through $/partial and name files that contain the
    term. A stream still going after STREAM_READ_S (a legal slow one) is
    cancelled and judged on the hits it streamed, not on its truncated. Items
    in the final reply of any stream of the run fail here too
    (the protocol monitor's verdict names where), and so does the truncated
    of any stream of the run for one of the fixture's terms, in every
    generation (cases/judges/claims.py).

    Falsified by: items-in-streamed-reply: A streamed search repeats every streamed hit in its final
    reply.
    """
    require_search(adapter)
    if adapter.caps.file_search:   # a file-search-only adapter streams path: queries too
        for q, text, limit in ((PATH_Q, TERM_PATHONLY, 500), (PATH_CUT_Q, WIDE_BIG_DIR, CUT_LIMIT)):
            found, err = attempt(search, adapter, q, limit=limit, partial=True, own=True)
            if err is not None:   # a path: query refused is FC-034's
                need(adapter.caps.code_search, f"search/code {q!r} (streamed) answered an "
                     f"error ({err.message})", owner("path: queries are"))
                continue
            judge_metadata_only(found, None)
            if found.whole:   # a stream the case cut claims nothing about completeness
                judge_path_cut(found, text, found.streamed, files_named(fx, text))
    if adapter.caps.code_search:
        for term, limit in METADATA_STREAMS:
            found = search(adapter, term, limit=limit, partial=True, own=True)
            judge_metadata_only(found, files_containing(fx, term))
            if term == TERM_MANY_ALPHA:
                # any $/partial frame counts here: its params.id is FC-040's business
                streamed = found.streamed or [f for f in partial_frames(found.window())
                                              if f.msg is None or frame_items(f)]
                fc_assert(streamed, expected=f"the hits for {term!r} in $/partial batches",
                          got="no $/partial carried a hit",
                          why="streamed hits travel in partials")


def judge_metadata_only(found, expected):
    """FC-042 on one stream: no items in the reply; for a content term
    (``expected``: the files containing it, None for a path: query) the
    streamed hits (folded by file) are files of ``expected``, and the reply's
    truncated says whether they miss one."""
    asked = f"{found.what} limit {found.call.params.get('limit')}"
    items = found.reading.at("items...")
    fc_assert(not found.items and not items, expected="items [] (or absent)",
              got=f"{len(found.items)} items in the reply to {asked}" if found.items
              else listing(f"{p}: {m}" for p, m in items),
              why="with partial: true the host ignores the reply's items: every hit "
              "travels in $/partial")
    truncated = found.reading.at("truncated")
    fc_assert(not truncated, expected="truncated a boolean",
              got=listing(m for _, m in truncated),
              why="the streamed reply's truncated is authoritative")
    if expected is None:
        return   # a path: query: judge_path_cut
    limit, count = found.call.params.get("limit"), len(found.streamed)
    got = folded(found.streamed)
    wrong = got - expected
    fc_assert(not wrong, expected="streamed hits on files that contain the term",
              got=f"{len(wrong)} hit(s) of {asked} on other files: "
              f"{listing(f'{r} {p}' for r, p in wrong)}",
              why="a hit names the repository and path of a file the query matches")
    if not found.whole:
        return   # cancelled by the case (read as far as STREAM_READ_S): any truncated is legal
    if found.result.truncated is True and unreached_budget(count, limit) \
            and not expected <= got:   # a true cut, only early (a false one fails below)
        warn(f"{count} hit(s) streamed and truncated true for {asked}: a true cut, far below "
             f"the limit; bounded compute advises stopping at about the limit (at least "
             f"{-(-limit // MANY_TIMES)} hits)")
    if not got:
        return   # nothing streamed: the presence check is the case's own
    complete = expected <= got
    fc_assert(complete or found.result.truncated is True,
              expected=f"truncated true, or all {len(expected)} matching files streamed",
              got=f"{len(got & expected)} of them streamed and truncated "
              f"{show(found.result.truncated)} for {asked}",
              why="a stream cut short must say so in its reply's truncated")
    fc_assert(not (complete and found.result.truncated is True),
              expected="truncated false when every matching file was streamed",
              got=f"all {len(expected)} streamed and truncated true for {asked}",
              why="truncated true claims a cut that was not made")


# FC-043 reads wide's large scan only this far (then cancels): what the rule
# needs is batches inside the window, not all 600 hits.
WINDOW_HITS = 5


@case("FC-043")
def test_stream_within_inactivity_window(adapter):
    """Streaming searches complete although the client allows only
    INACTIVITY_S of silence before each batch and the reply: one whose hits
    lie in two repositories (so at least two batches: each $/partial resets
    the window) and one whose 600 hits lie in wide (a large scan, read for
    its first WINDOW_HITS hits and then cancelled), and a streamed path:
    query (filename search) whenever file_search is true. A stream with no
    hit tests no batch against the window: it is left out, and the case is
    not evaluated only when every stream is.

    Falsified by: stream-stall-4s: A 4 s silence after the first batch of every streamed search.
    """
    require_search(adapter)
    queries = ((TERM_SEVERAL, TERM_WIDE) if adapter.caps.code_search else ()) + (
        (PATH_Q,) if adapter.caps.file_search else ())
    judged, empty = 0, []
    window = active_settings().inactivity_s
    for q in queries:
        try:
            found = (path_stream(adapter, q, inactivity_s=window) if q == PATH_Q
                     else search(adapter, q, partial=True, inactivity_s=window,
                                 enough=WINDOW_HITS if q == TERM_WIDE else None))
        except ProviderTimeout as err:
            fail(f"the stream of search/code {q!r} went silent for {window:g} s",
                 expected=f"a batch or the reply at least every {window:g} s", got=str(err))
        if found is None:
            continue   # a path: query refused: FC-034's
        if found.streamed:
            judged += 1
        else:
            empty.append(found)
    # one batch is a legal stream (RULINGS "Streaming"); none tests no window
    if not judged and empty:
        empty[0].need_hits()


@case("FC-044")
def test_batches_are_well_formed(adapter):
    """Streaming a term with more matches than the limit, and one of small
    batches (with filename search only: wide's 1,200 file names cut by the
    limit, and one file name), every item of every batch is a well-formed hit
    (the host drops a whole batch for one bad item).

    Falsified by: bad-item-in-big-batch: Every streamed batch of more than 10 items gets one
    malformed item (path 7).
    """
    # a large cut stream, and small batches (one per repo)
    found = streams(adapter, ((TERM_WIDE, CUT_LIMIT), (TERM_SEVERAL, 500)),
                    ((PATH_CUT_Q, CUT_LIMIT), (PATH_Q, 500)))
    found[0 if adapter.caps.code_search else 1].need_hits()   # PATH_Q's hit is FC-034's
    bad = [f"batch {n} of {s.what} ({len(raw)} items): {path}: {message}"
           for s in found
           for n, (raw, batch) in enumerate(zip(s.call.partials, s.batches), 1)
           for path, message in batch.problems
           if (path, message) not in batch.at("[*].located")]   # located is FC-032's
    fc_assert(not bad, expected="every streamed item a well-formed hit", got=listing(bad, 3),
              why="one malformed item makes the host drop its whole batch")


@case("FC-045")
def test_cancel_ends_stream_cleanly(adapter, fx):
    """After $/cancelRequest on a live stream, and on a one-shot search (the
    host cancels those too), of a content term and, whenever file_search is
    true, of a path: query (filename search), a terminal reply arrives within
    the deadline and it is a result (an error reply fails), and afterwards
    the adapter answers a fresh search and a tree. A stream that goes on
    inside the inactivity window after the cancel may (a cancel is
    advisory): one still going STREAM_READ_S after the request is left, its
    process retired, and the case judges the rest.

    The cancel goes in the same write as the request (a user typing ahead),
    so it reaches the adapter while the request is surely in flight, however
    fast the adapter answers.

    Falsified by: cancel-answers-error: A cancelled streaming search is answered with an error
    reply.
    """
    require_search(adapter)
    queries = ((TERM_MANY_ALPHA,) if adapter.caps.code_search else ()) + (
        (PATH_Q,) if adapter.caps.file_search else ())
    for q in queries:
        for partial in (True, False):
            what = f"search/code {q!r}" + (" (streamed)" if partial else " (one-shot)")
            params = {"q": q, "limit": 500, **({"partial": True} if partial else {})}
            call = adapter.call("search/code", params, cancel_at_once=True)
            if not call.wait(stream_read_s()):
                # still streaming inside the window: legal (a cancel is advisory);
                # what it sent is judged, its end is not awaited
                adapter.retire_stream(call, f"still streaming STREAM_READ_S ({stream_read_s():g} "
                                            f"s) after its cancel")
                continue
            if call.outcome in ("timeout", "closed"):
                call.result()   # raises; the plugin reports the timeout or the closed output
            if call.outcome == "error" and q == PATH_Q and refuses_path_queries(adapter, partial):
                break   # not a cancel's doing: the same query uncancelled is refused too
            judge_cancelled_reply(call, params, what)
    # the adapter stays usable: a fresh search and a tree are answered as usual
    fresh = TERM_LINE if adapter.caps.code_search else PATH_Q
    _, err = attempt(search, adapter, fresh)
    judge_served_after_cancel(f"a fresh search/code {fresh!r}", err)
    tree(adapter, fx, ALPHA)


def judge_cancelled_reply(call, params: dict, what: str, method: str = "search/code",
                          shape=SearchResult) -> None:
    """FC-045 on a ``call`` cancelled in flight that has ended (a search/code,
    or any ``method`` whose result reads as ``shape``): its terminal reply is
    a result object (an error, a timeout or a closed output fails)."""
    fc_assert(call.outcome == "result", expected=f"a terminal result for {method} "
              f"{show(params)} after the cancel",
              got=f"{call.outcome}: {call.error}" if call.error else str(call.outcome),
              why="a cancelled request still ends with a normal reply (cancel is "
              "advisory)")
    read_reply(call.value, shape, f"{what}, cancelled,", None)


def judge_served_after_cancel(what: str, err) -> None:
    """FC-045 on a request sent after a cancel (``err``: its error reply, or
    None): it is answered with a result."""
    fc_assert(err is None, expected=f"a result for {what} after the cancels",
              got=f"an error: {err.message}" if err else "",
              why="a cancel must not break later requests")


def refuses_path_queries(adapter, partial: bool) -> bool:
    """FC-045 on an error to a cancelled path: query: when the same request
    without a cancel is refused as well, refusing path: queries is FC-034's
    (the case skips unless it judged content searches too)."""
    _, err = attempt(search, adapter, PATH_Q, partial=partial)
    if err is not None:
        need(adapter.caps.code_search, f"search/code {PATH_Q!r} answered an error without a "
             f"cancel too ({err.message})", owner("path: queries are"))
    return err is not None


@case("FC-046")
def test_no_partial_without_opt_in(adapter, fx):
    """No $/partial names a request that did not send partial: true: one-shot
    searches and tree requests here, and every request of the run (the
    protocol monitor judges every frame; its verdict names where it saw one).

    Falsified by: partial-on-oneshot: One-shot search/code also sends its hits in a $/partial before
    the reply.
    """
    tree(adapter, fx, ALPHA)
    if adapter.caps.code_search:   # the one-shot path a non-streaming UI uses
        search(adapter, TERM_MANY_ALPHA)
        search(adapter, TERM_SEVERAL)
    judge_own_traffic()
