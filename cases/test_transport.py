"""Transport cases (FC-120..FC-124): what the wire itself must carry (PROTOCOL §1.2, §2.1, §5.4,
§7.2, §7.4).

Several requests in flight at once (the host's reader routes by id, so any
order is fine and a strictly sequential adapter passes too), a second
initialize on one process, a cancel naming a finished request, and stdout
carrying nothing but protocol messages. The only fixed wait is FC-122's
named SILENCE_S window (a rule about absence).

They run in RUN_ORDER, FC-122 last: its cancels are the group adapter's
last notifications, so the end-of-group window (TAIL_S after the last
streamed reply or notification) runs alongside FC-122's own window instead
of starting after it.
"""

import time

from cases.kit.api import case, fc_assert, listing, need, owner, show
from cases.kit.facts import disk_blobs
from cases.kit.formats import b64_loose
from cases.judges.monitoring import judge_own_traffic
from cases.kit.replies import (HITS, blob_ids, by_path, folded, listed_ids, no_cache_start, tree,
                           tree_what, try_request)
from cases.kit.settings import SILENCE_S
from fixture.catalog import (ALPHA, ALPHA_TWINS, TERM_LINE, TERM_LINE_PATH, TERM_MANY_ALPHA,
                             TERM_SEVERAL, VCS, VCS_BLAME_TWO_AUTHORS, VCS_FEATURE_BRANCH,
                             VCS_THREE_COMMITS, WIDE)
from wire.messages import Blob, Log, SearchResult, Tree, read

BLOB_PATHS = (TERM_LINE_PATH, ALPHA_TWINS[0], "Cargo.toml")   # three different contents
# the streams of FC-120: different terms, different files (none is cut by its limit);
# three, so an adapter whose stream table holds two (or pairs streams) shows. The
# one of several batches (TERM_SEVERAL: alpha, then beta) is written last, so
# the request after it is a tree: a later batch under a wrong id names no
# stream (FC-040's, through the monitor), not a neighbour's (crossed: here).
STREAM_TERMS = (TERM_MANY_ALPHA, TERM_LINE, TERM_SEVERAL)
RUN_ORDER = ("FC-120", "FC-121", "FC-123", "FC-124", "FC-122")


def replies_per_id(adapter, mark):
    """id -> number of reply frames the adapter sent for it since ``mark``."""
    counts = {}
    for e in adapter.transcript.since(mark):
        if e.direction == "in" and e.kind == "reply" and e.id is not None:
            counts[e.id] = counts.get(e.id, 0) + 1
    return counts


def view(method, result):
    """What a reply says, for comparing a concurrent answer with a lone one."""
    if not isinstance(result, dict):
        return ("not an object", show(result, 60))
    if method == "repo/tree":
        return ("paths", frozenset(by_path(read(result, Tree).model)))
    if method == "repo/blob":
        return ("bytes", b64_loose(read(result, Blob).model.bytes_b64))
    return ("result", show(result, 200))


def streamed(call):
    """The files a streamed search/code call's batches name (folded like the
    host; a batch whose items is not an array names none)."""
    return folded(hit for batch in call.partials if isinstance(batch, list)
                  for hit in read(batch, HITS).model)


def tree_paths(result):
    """The paths a repo/tree result lists (none when it is not an object)."""
    listed = read(result, Tree).model
    return set(by_path(listed)) if listed is not None else set()


@case("FC-120")
def test_requests_in_flight_at_once(adapter, fx):
    """Three streaming searches (different terms), the slow tree of wide, the
    tree of alpha and three blobs written back to back, before any reply:
    each is answered exactly once, under its own id (in any order), with what
    the same request answers alone (each tree lists the paths of the
    repository it asked for, some of them when it says truncated true: a
    walk's budget is the adapter's, §3.3; each stream's $/partial batches
    carry the files its own term finds, so batches sent under another
    stream's id show; a stream that says truncated true may carry fewer of
    them, none of another's: a backend may cut a search under load, §3.13). An
    error reply (a backend that throttles requests in flight, §6.2) says
    nothing about routing: it is left out of the comparison, and the case
    skips when every reply in flight was one.

    Falsified by: concurrent-blobs-swapped: Replies to repo/blob requests in flight together are
    sent under each other's ids.
    """
    ids = listed_ids(adapter, fx, ALPHA, set(BLOB_PATHS), every=True)
    # two trees of different repositories: a swap of their replies shows in their paths
    asks = [("repo/tree", {"repo": fx.repo(WIDE), "ref": None}),
            ("repo/tree", {"repo": fx.repo(ALPHA), "ref": None})]
    asks += [("repo/blob", {"repo": fx.repo(ALPHA), "sha": ids[p]}) for p in BLOB_PATHS]
    mark = adapter.transcript.mark()
    # three streams in flight together: a batch routed to another one shows in its files
    streams = [adapter.call("search/code", {"q": term, "limit": 500, "partial": True})
               for term in STREAM_TERMS] if adapter.caps.code_search else []
    calls = [adapter.call(method, params) for method, params in asks]
    for call in streams + calls:
        call.wait()
    judge_answered_once(replies_per_id(adapter, mark), streams + calls)
    judged = judge_as_alone(adapter, calls, asks)
    errors = [f"{c.method} #{c.id}: {c.error.message!r}" for c in calls if c.outcome == "error"]
    answered = [s for s in streams if s.outcome == "result"]
    need(judged or answered,
         f"no reply in flight could be compared with the same request alone (errors in "
         f"flight: {listing(errors, 3) or 'none'}; the others failed alone)")
    crossed = []
    for stream, term in zip(streams, STREAM_TERMS):
        if stream.outcome != "result":
            continue
        alone = adapter.call("search/code", {"q": term, "limit": 500, "partial": True})
        alone.result()
        want = streamed(alone)
        need(want, f"the streamed search/code {term!r} found nothing alone",
             owner("streamed hits are"))
        hits = streamed(stream)
        # a stream in flight may be cut honestly (a backend's budget under load):
        # with truncated true it carries some of its own files and none of another's
        cut = isinstance(stream.value, dict) and stream.value.get("truncated") is True
        if hits != want and not (cut and hits <= want):
            crossed.append(f"search/code {term!r} #{stream.id}: missing "
                           f"{listing(want - hits, 3) or 'none'}; "
                           f"extra {listing(hits - want, 3) or 'none'}")
    fc_assert(not crossed, expected="each stream's batches carry the files it streams alone",
              got=listing(crossed, 2),
              why="a stream in flight beside other requests (another stream among them) "
                  "carries its own hits, under its own id")


def judge_answered_once(counts: dict, together: list) -> None:
    """FC-120 on requests written together (``counts``: replies_per_id since
    before them): each is answered exactly once, and every one is answered."""
    twice = [f"{c.method} #{c.id} answered {counts.get(c.id, 0)} times" for c in together
             if counts.get(c.id, 0) > 1]
    fc_assert(not twice, expected="one reply per request", got=listing(twice),
              why="each request in flight is answered exactly once")
    unanswered = [f"{c.method} #{c.id} ({c.outcome})" for c in together
                  if c.outcome not in ("result", "error")]
    fc_assert(not unanswered, expected="a reply to every request in flight",
              got=listing(unanswered), why="requests in flight together are all answered")


def judge_as_alone(adapter, calls: list, asks: list) -> int:
    """FC-120: each result of ``calls`` (written together, ``asks`` their
    (method, params)) says what the same request answers alone (``view``);
    returns how many could be compared."""
    differ, judged = [], 0
    for call, (method, params) in zip(calls, asks):
        if call.outcome != "result":
            # An error under the request's own id (a backend may throttle
            # requests in flight: rate_limited, §6.2) carries no content
            # whose routing could be judged; a misrouted reply shows on the
            # request whose content it carries.
            continue
        alone, err = try_request(adapter, method, params)
        if err is not None:
            continue   # what the request answers alone is another case's business
        judged += 1
        got, want = view(method, call.value), view(method, alone)
        if got != want and not cut_of(method, call.value, got, want):
            what = f"{method} {params.get('sha', params.get('repo'))}"[:60]
            differ.append(f"#{call.id} {what}: {show(got[1], 50)}")
    fc_assert(not differ, expected="each reply as the same request answers alone",
              got=listing(differ, 3),
              why="replies to requests in flight together carry their own ids")
    return judged


def cut_of(method, result, got, want) -> bool:
    """Whether a tree reply in flight is a cut of the same tree alone: it says
    truncated true and lists some of that tree's paths and no other (a walk's
    budget is the adapter's and may shrink under load, §3.3; a tree of
    another request lists paths this one has not)."""
    return (method == "repo/tree" and isinstance(result, dict) and result.get("truncated") is True
            and got[0] == want[0] == "paths" and bool(got[1]) and got[1] <= want[1])


NO_CACHE = ("cache_dir", "cache_bytes")   # the v1.6 host's first initialize had neither


def other_answers(adapter, fx) -> dict:
    """What FC-121 compares across its extra initializes besides the tree: the
    files a one-shot search/code finds and the subjects of the log at
    feature (when declared), or an error's message: each must be answered
    after them as before (an error before is its own cases' business, and
    the same error after passes)."""
    out = {}
    if adapter.caps.code_search:
        params = {"q": TERM_MANY_ALPHA, "limit": 500}
        result, err = try_request(adapter, "search/code", params)
        hits = read(result, SearchResult).model if err is None else None
        out[f"search/code {show(params)}"] = (f"error {err.message!r}" if err is not None else
                                              sorted(folded(hits.items)) if hits is not None
                                              else show(result, 60))
    if adapter.caps.log and fx.vcs_built:
        params = {"repo": fx.repo(VCS), "path": None, "ref": VCS_FEATURE_BRANCH, "limit": None}
        result, err = try_request(adapter, "repo/log", params)
        log = read(result, Log).model if err is None else None
        out[f"repo/log {show(params)}"] = (f"error {err.message!r}" if err is not None else
                                           [i.subject for i in log.items] if log is not None
                                           else show(result, 60))
    return out


@case("FC-121")
def test_second_initialize(adapter, fx, spawn):
    """More initializes on the same process (an older host sent two: one
    without the cache params, one with them) are each answered with a
    result: the first's params again, then without the cache params, then
    with them; and the process goes on serving repo/tree of alpha as before,
    each unchanged file under the id it had (§4), and a one-shot search and
    the log at feature (when declared) as before. (An error without the cache
    params is FC-005's when a process started without them fails as well;
    ids that already change between two calls before any extra initialize
    are FC-010's.)

    Falsified by: second-initialize-refused: An initialize after the first on the same process
    answers an error.
    """
    listed = tree(adapter, fx, ALPHA).model
    before = set(by_path(listed))
    need(before, f"{tree_what(fx, ALPHA)} listed nothing", owner("coverage is"))
    files = set(disk_blobs(fx, ALPHA))
    ids_before = blob_ids(listed, files)
    # ids that change from one call to the next with no initialize between
    # are FC-010's defect, not a re-initialize's
    again = blob_ids(tree(adapter, fx, ALPHA).model, files)
    unstable = sorted(p for p in set(ids_before) & set(again) if ids_before[p] != again[p])
    served_before = other_answers(adapter, fx)
    first = dict(adapter.init_params)
    bare = {k: v for k, v in first.items() if k not in NO_CACHE}
    for params in (first, bare, first):
        result, err = try_request(adapter, "initialize", dict(params))
        asked = f"initialize {show(params, 160)}"
        if err is not None and params is bare:   # refused without the cache params at all?
            need(no_cache_start(spawn), f"{asked} answered an error, and so does a process "
                 f"started without the cache params", owner("starting without the cache params is"))
        fc_assert(err is None, expected="a result",
                  got=f"an error: {err.message!r}" if err else "",
                  why=f"{asked}: every initialize is answered, a later one on the same process too")
        fc_assert(isinstance(result, dict), expected="an initialize result object",
                  got=show(result, 60), why=f"{asked}: every initialize is answered")
    relisted = tree(adapter, fx, ALPHA).model
    after = set(by_path(relisted))
    fc_assert(after == before, expected=f"the {len(before)} paths listed before",
              got=f"missing {listing(before - after) or 'none'}",
              why="after more initializes the process serves as before")
    served_after = other_answers(adapter, fx)
    for asked, was in served_before.items():
        now = served_after.get(asked)
        fc_assert(now == was, expected=f"{asked}: {show(was, 100)}, as before",
                  got=show(now, 100), why="after more initializes the process serves every "
                  "method as before (a re-initialize that drops an index or a cache?)")
    # The fixture did not change: each file listed with a string sha both
    # times keeps its id (§4: the same unchanged content, the same id on
    # every call). Only ids, only of the same paths; a missing sha is FC-021's.
    ids_after = blob_ids(relisted, files)
    need(not unstable, f"{tree_what(fx, ALPHA)} listed other ids on a second call before any "
         f"extra initialize ({listing(unstable, 3)})", owner("ids from one call to the next are"))
    moved = [f"{path}: {show(ids_before[path], 40)} before, {show(ids_after[path], 40)} after"
             for path in sorted(set(ids_before) & set(ids_after))
             if ids_before[path] != ids_after[path]]
    fc_assert(not moved, expected="the ids listed before the extra initializes",
              got=f"{len(moved)} of {len(set(ids_before) & set(ids_after))} ids changed: "
              f"{listing(moved, 3)}",
              why=f"{tree_what(fx, ALPHA)} after more initializes: unchanged content keeps "
              f"its id")


@case("FC-122")
def test_cancel_for_finished_request(adapter, fx):
    """A $/cancelRequest naming a request already answered (a tree, a blob, a
    one-shot search and a finished stream) gets nothing back (here within
    SILENCE_S; anywhere in the run, through the protocol monitor), and the
    next repo/tree is answered as the one before, and the stream asked again
    streams the same files with the same truncated (no stale abort).
    Anywhere in the run, an adapter process that ends right after a cancel
    fails this case (§5.4 "no error, no crash"; the protocol monitor's
    unasked exits, cases/judges/monitoring.py).

    Falsified by: cancel-finished-answered: A cancel naming an answered request is answered with an
    error under that id.
    """
    first = adapter.call("repo/tree", {"repo": fx.repo(ALPHA), "ref": None})
    before = tree_paths(first.result())
    need(before, f"{tree_what(fx, ALPHA)} listed nothing", owner("coverage is"))
    sha = listed_ids(adapter, fx, ALPHA, {TERM_LINE_PATH}).get(TERM_LINE_PATH, "")
    asks = [("repo/blob", {"repo": fx.repo(ALPHA), "sha": sha})]
    if adapter.caps.code_search:
        asks += [("search/code", {"q": TERM_MANY_ALPHA, "limit": 500}),
                 ("search/code", {"q": TERM_MANY_ALPHA, "limit": 500, "partial": True})]
    finished = [first]
    for method, params in asks:
        call = adapter.call(method, params)
        call.wait()
        finished.append(call)
    for call in finished:
        adapter.cancel(call)
    time.sleep(SILENCE_S)   # the rule is about absence: a named silence window
    follow_up = adapter.call("repo/tree", {"repo": fx.repo(ALPHA), "ref": None})
    after = follow_up.result()
    # the stream asked again: a stale cancel must not abort work that starts later
    again = adapter.call(*asks[-1]) if adapter.caps.code_search else None
    if again is not None:
        again.wait()
    # Anything in answer to the cancels (a reply under a finished id, an error
    # without an id) is the protocol monitor's "notification answered" rule,
    # this case's on every frame of the run.
    judge_own_traffic()
    fc_assert(isinstance(after, dict) and tree_paths(after) == before,
              expected=f"the {len(before)} paths listed before", got=show(after, 80),
              why="after a cancel for a finished request the process serves as before")
    if again is not None and finished[-1].outcome == "result":
        stream = finished[-1]
        was, now = streamed(stream), streamed(again) if again.outcome == "result" else set()
        flag = lambda c: show(c.value.get("truncated")) if isinstance(c.value, dict) else "?"
        fc_assert(again.outcome == "result" and now == was and flag(again) == flag(stream),
                  expected=f"search/code {show(asks[-1][1])} streams the {len(was)} files it "
                           f"streamed before the cancels (truncated {flag(stream)})",
                  got=f"{again.outcome}: {len(now)} files (missing "
                      f"{listing(was - now, 3) or 'none'}), truncated {flag(again)}",
                  why="a cancel naming a finished request is ignored: it must not abort a "
                      "request that starts after it (a stale abort flag?)")


def sweep(adapter, fx):
    """One request of every method the adapter declares (and an error), so
    stdout is seen around each of them."""
    alpha = fx.repo(ALPHA)
    caps = adapter.caps
    sha = listed_ids(adapter, fx, ALPHA, {TERM_LINE_PATH}).get(TERM_LINE_PATH, "")
    asks = [("search/repos", {"query": ALPHA}),
            ("repo/blob", {"repo": alpha, "sha": sha}),
            ("repo/clone_url", {"repo": alpha}),
            ("repo/web_url", {"repo": alpha, "path": TERM_LINE_PATH, "branch": "", "line": 2,
                              "end_line": None, "is_file": True}),
            ("repo/tree", {"repo": f"{fx.org}/no-such-repo-fc123", "ref": None})]
    if caps.orgs:
        asks += [("org/repos", {"org": fx.org}), ("org/url", {"org": fx.org})]
    if caps.code_search:
        asks += [("search/code", {"q": TERM_MANY_ALPHA, "limit": 500}),
                 ("search/code", {"q": TERM_MANY_ALPHA, "limit": 500, "partial": True})]
    if fx.vcs_built:
        vcs = fx.repo(VCS)
        if caps.refs:
            asks += [("repo/refs", {"repo": vcs}), ("repo/tree", {"repo": vcs, "ref": "main"})]
        if caps.log:
            asks += [("repo/log", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": None,
                                   "limit": None}),
                     ("repo/blob_at", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": None})]
        if caps.blame:
            asks.append(("repo/blame", {"repo": vcs, "path": VCS_BLAME_TWO_AUTHORS, "ref": None}))
        if caps.commit:
            asks.append(("repo/commit", {"repo": vcs, "sha": "main"}))
    for method, params in asks:
        try_request(adapter, method, params)
    return [m for m, _ in asks]


@case("FC-123")
def test_stdout_carries_only_protocol(adapter, fx):
    """Everything the adapter writes to stdout is a protocol message (valid
    UTF-8, one JSON object per line, a reply or a notification): no banner,
    log line or other junk, even though the host drops such lines. Asked here
    around one request of every declared method; judged by the protocol
    monitor on every frame of the run.

    Falsified by: web-url-debug-line: A debug line is printed to stdout before each repo/web_url
    reply.
    """
    sweep(adapter, fx)
    judge_own_traffic()   # the monitor's stdout rules: this case's on every frame of the run


@case("FC-124")
def test_envelope(adapter, fx):
    """Every reply and notification carries "jsonrpc": "2.0"; a reply has
    exactly one of result and error; no message carries both an id and a
    method (adapters send the host no requests, and a $/partial has no
    top-level id). Asked around one request of every declared method; judged
    by the protocol monitor on every frame of the run.

    Falsified by: partial-without-jsonrpc: Every $/partial lacks the top-level jsonrpc member.
    """
    sweep(adapter, fx)
    judge_own_traffic()
