"""Lifecycle cases (FC-050..FC-055): restarts, startup hygiene, reader
tolerance, the host's cache root.

FC-050..052 run their own adapter processes (``spawn``); FC-053..055 use the
group adapter. The only fixed wait is FC-054's named SILENCE_S window.

They run in RUN_ORDER: FC-053 (a streamed search) and FC-054 (the
notifications) first, so the group adapter's end-of-group window (TAIL_S
after its last streamed reply or notification) is over before the run ends.
"""

import threading
import time
from pathlib import Path

from cases.kit.api import case, fail, fc_assert, listing, need, owner, show, skip
from cases.report.explain import describe
from cases.kit.loopback_proxy import GatedProxy
from cases.kit.netwatch import Canary, SocketSampler
from cases.kit.replies import (folded, listed_ids, path_types, reply_like, same_handshake_members,
                           serves_like, tree, tree_what, try_request, wait_first_partial_or_end)
from cases.kit.gitfacts import git_text
from cases.kit.settings import CACHE_PROVIDER, SILENCE_S, active as active_settings
from fixture.catalog import (ALPHA, TERM_LINE, TERM_LINE_PATH, TERM_MANY_ALPHA, VCS,
                             VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH, VCS_THREE_COMMITS, WIDE)
from wire import ProviderError, SpawnError
from wire.messages import (KNOWN_CAPABILITIES, Blame, Blob, BlobAt, CloneUrl, Commit, Log, OrgRepos,
                           OrgUrl, Refs, SearchRepos, SearchResult, Tree, WebUrl, read)

FUTURE = {"x_forge_future": {"a": [1]}}     # an unknown params member
ENVELOPE = {"x_forge_trace": {"span": 1}}   # an unknown top-level member
NEVER_ISSUED = 2_000_000_054                # a cancel for an id the client never issues
RUN_ORDER = ("FC-053", "FC-054", "FC-050", "FC-051", "FC-052", "FC-055")


@case("FC-050")
def test_respawn_after_kill_mid_request(adapter, spawn, fx):
    """Killed while a slow-ish request is in flight (a streaming search after
    its first batch; when the search has already ended, a repo/tree of wide
    written just before the kill: an adapter that buffers its stream or is
    fast is not warned), the adapter respawns
    (initialize answered) within DEADLINE_S and the new generation serves
    as the group adapter does (replies.serves_like): repo/tree of alpha and
    vcs, a search (one-shot and streamed), the log at the feature branch and
    the default branch tip's commit.

    Falsified by: stale-lock: A streaming search holds a lock file in cache_dir; a start that finds
    a stale lock fails.
    """
    provider = spawn()
    first = threading.Event()
    if provider.caps.code_search:
        # a term whose hits stream early (alpha) while the scan goes on through wide
        call = provider.call("search/code", {"q": TERM_MANY_ALPHA, "limit": 500, "partial": True},
                             on_partial=lambda _: first.set())
        wait_first_partial_or_end(call, first, active_settings().deadline_s)
    else:
        call = provider.call("repo/tree", {"repo": fx.repo(WIDE), "ref": None})
    if call.done:
        # An adapter may buffer a whole stream and send it with its reply
        # (RULINGS "Streaming": one batch is a legal stream), or simply be fast:
        # the search may be over before the kill. That is no defect, so no
        # warning (PROTOCOL is silent on it); a tree of wide, written just
        # before the kill, is what is in flight then.
        provider.call("repo/tree", {"repo": fx.repo(WIDE), "ref": None})
    provider.kill()
    try:   # the respawn's initialize has DEADLINE_S, like every request
        provider.respawn()
    except (ProviderError, SpawnError) as exc:
        fail("a restart after a kill must be cheap and idempotent",
             expected=f"the respawned adapter answers initialize within "
                      f"{active_settings().deadline_s:g} s",
             got=describe(exc))
    serves_like(provider, adapter, fx, "respawned after a kill mid-request",
                [ALPHA, *([VCS] if fx.vcs_built else [])])   # the git-backed path too


@case("FC-051")
def test_same_answer_every_generation(spawn, fx):
    """With cache params, two respawns after real work (a repo/tree each; each
    re-initialized with generation 1's params) get the same initialize result as generation 1: the
    same known members (protocol, name, icon, the known capability keys), `cache` and
    unknown members aside; a member sent with the wrong type is left out (its
    type is FC-001..004's, FC-099's for the revision keys).

    Falsified by: caps-change-on-respawn: An initialize whose id is not 1 (a respawned generation)
    flips capabilities.orgs.
    """
    provider = spawn()
    for _ in range(2):   # real work before each respawn (a cache written meanwhile)
        try_request(provider, "repo/tree", {"repo": fx.repo(ALPHA), "ref": None})
        provider.respawn()
    # a member one generation sends with the wrong type is its type owner's
    # (FC-001..004, FC-099): left out here, as the rest is compared
    answers, left_out = same_handshake_members(provider.init_results)
    for generation, answer in enumerate(answers[1:], 2):
        fc_assert(answer == answers[0], expected=f"generation 1's answer {show(answers[0])}",
                  got=f"generation {generation}: {show(answer)}",
                  why="startup is idempotent: every generation answers initialize alike")
    need(not left_out, f"the other handshake members agree; {listing(left_out, 3)}")


def known_members(result):
    """The handshake members FC-053 compares, as sent (unknown members are ignored)."""
    if not isinstance(result, dict):
        return result
    known = {k: result[k] for k in ("protocol", "name", "icon") if k in result}
    caps = result.get("capabilities")
    if "capabilities" in result:
        known["capabilities"] = ({k: caps[k] for k in KNOWN_CAPABILITIES if k in caps}
                                 if isinstance(caps, dict) else caps)
    return known


@case("FC-052")
def test_no_network_during_initialize(adapter, spawn, fx):
    """With FORGE_CANARY_URL pointing at a canary and the proxy variables at a
    gated loopback proxy, in the usual environment without credentials, no
    connection is opened by the adapter's process tree while it starts and
    answers initialize (canary, proxy, backend or a test double: sockets with
    a remote address; listening sockets are not network I/O), on the first
    start and on a respawn; the first generation, the proxy relaying, serves
    as the group adapter does (replies.serves_like: trees, searches, a log, a
    commit).

    Falsified by: canary-get: initialize makes an HTTP GET to FORGE_CANARY_URL before answering.
    """
    with Canary() as canary, GatedProxy() as proxy:
        provider = spawn(env={**proxy.env(), **canary.env()}, start=False)
        with SocketSampler() as sampler:
            provider.start()
            proxy.open_gate()   # initialize has returned: relay from now on
            seen = sampler.seen + [str(s) for s in provider.child.inet_sockets() if s.raddr]
        judge_quiet(canary, proxy.early(), seen, "initialize")
        # the first generation: how a respawn serves is FC-050's
        serves_like(provider, adapter, fx, "started without credentials")
        # a respawned generation answers initialize under the same rule (§2.1)
        reached = canary.connections()
        with SocketSampler() as sampler:
            provider.respawn()
            seen = sampler.seen + [str(s) for s in provider.child.inet_sockets() if s.raddr]
        judge_quiet(canary, [], seen, "a respawned generation's initialize", before=reached)


def judge_quiet(canary, early, seen, when, before=0):
    """No canary connection since ``before``, nothing at the closed proxy
    gate, no socket with a remote address in the adapter's tree."""
    reached = canary.connections() - before
    fc_assert(reached == 0, expected=f"no connection to FORGE_CANARY_URL during {when}",
              got=f"{reached} connection(s) from {listing(canary.peers()) or 'a queued client'}",
              why="initialize must not touch the network (credentials are lazy)")
    fc_assert(not early, expected=f"no connection to the HTTP(S)_PROXY proxy during {when}",
              got=f"{len(early)} connection(s) from {listing(early, 3)}",
              why="initialize must not touch the network (credentials are lazy)")
    fc_assert(not seen, expected=f"no connection opened by the adapter's process tree during "
              f"{when}", got=listing(seen, 3), why="initialize must not touch the network")


@case("FC-053")
def test_unknown_request_members_ignored(adapter, spawn, fx):
    """Requests carrying an unknown params member answer as without it, on
    every method the adapter serves (initialize, search/repos, org/*, repo/*,
    one-shot and streamed search/code; web_url with the host's is_file), and
    an unknown top-level member changes nothing either. Only the members each
    reply is about are compared (read through the models: unknown reply
    members never count), and only when the answer without them is a result
    worth comparing. Run-wide, each optional param the host may send as null
    is also sent null and left out on the first request of its method, and
    a difference between the two answers fails this case too (§3.0;
    cases/judges/null_params.py, through the protocol monitor's findings).

    Falsified by: unknown-params-error: Requests with members the adapter does not know (params or
    envelope) answer an error.
    """
    unjudged = []
    for method, params, model, view, whose in unknown_member_asks(adapter, fx):
        want = answer(adapter, method, params, model, view)
        why_not = nothing_to_compare(method, want, whose, None)
        if why_not:
            unjudged.append(why_not)
            continue
        for extra, envelope, what in ((FUTURE, None, "an unknown params member"),
                                      ({}, ENVELOPE, "an unknown envelope member")):
            got = answer(adapter, method, {**params, **extra}, model, view, envelope=envelope)
            fc_assert(got == want, expected=told(want), got=told(got),
                      why=f"{what} must not change the answer to {method} {show(params, 80)}")
    # initialize: a process started with an unknown param answers as the group adapter
    bare = spawn(start=False)
    bare.init_params.update(FUTURE)
    try:
        bare.start()
        got = ("result", known_members(bare.init_result))
    except ProviderError as exc:
        got = ("error", describe(exc))
    want = ("result", known_members(adapter.init_result))
    fc_assert(got == want, expected=told(want), got=told(got),
              why="an unknown params member must not change the answer to initialize")
    need(not unjudged, "; ".join(unjudged))


def unknown_member_asks(adapter, fx):
    """(method, params, model, view, owner of the reply) for every method the
    adapter serves; ``view`` picks the members compared (None: the model)."""
    repo, caps = fx.repo(ALPHA), adapter.caps
    sha = listed_ids(adapter, fx, ALPHA, {TERM_LINE_PATH}, every=True)[TERM_LINE_PATH]
    asks = [("repo/tree", {"repo": repo, "ref": None}, Tree, path_types,   # ids: FC-010
             owner("tree replies are")),
            ("repo/blob", {"repo": repo, "sha": sha}, Blob, None, owner("blob replies are")),
            ("repo/web_url", {"repo": repo, "path": TERM_LINE_PATH, "branch": "", "line": 1,
                              "end_line": None, "is_file": True}, WebUrl, None, None),
            ("repo/clone_url", {"repo": repo}, CloneUrl, None, None),
            ("search/repos", {"query": ALPHA}, SearchRepos, None, None)]
    if caps.orgs:
        asks += [("org/repos", {"org": fx.org}, OrgRepos, None, None),
                 ("org/url", {"org": fx.org}, OrgUrl, None, None)]
    if caps.code_search:
        hits = lambda r: folded(r.items)   # noqa: E731 (hits by file identity, like the host)
        asks += [("search/code", {"q": TERM_LINE, "limit": 500}, SearchResult, hits,
                  owner("one-shot search replies are")),
                 ("search/code", {"q": TERM_LINE, "limit": 500, "partial": True}, SearchResult,
                  lambda r: r.truncated, owner("streamed replies are"))]
    if fx.vcs_built:
        vcs = fx.repo(VCS)
        if caps.refs:
            asks.append(("repo/refs", {"repo": vcs}, Refs,   # default: true is FC-090's
                         lambda r: sorted((x.name, x.sha) for x in (*r.branches, *r.tags)),
                         owner("refs replies are")))
        if caps.log:
            asks += [("repo/log", {"repo": vcs, "path": None, "ref": None, "limit": 5}, Log,
                      None, owner("log replies are")),
                     ("repo/blob_at", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": None},
                      BlobAt, None, None)]
        if caps.blame:
            asks.append(("repo/blame", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": None},
                         Blame, None, owner("blame replies are")))
        if caps.commit:
            tip = git_text(fx, "rev-parse", VCS_DEFAULT_BRANCH).strip()
            asks.append(("repo/commit", {"repo": vcs, "sha": tip}, Commit,
                         lambda c: (c.sha, c.parents, tuple(f.path for f in c.files)), None))
    return asks


def answer(adapter, method, params, model=None, view=None, envelope=None):
    """("result", the result read as ``model`` seen through ``view``), ("error",
    its data.kind), or ("not an object", the result) when it is not an object."""
    result, err = try_request(adapter, method, params, envelope=envelope)
    if err is not None:
        return "error", err.raw_kind
    if not isinstance(result, dict):
        return "not an object", result
    if model is None:
        return "result", result
    seen = read(result, model).model
    return "result", view(seen) if view is not None else seen


def nothing_to_compare(method, want, reply_owner, empty):
    """Why the answer without unknown members gives nothing to compare, or None."""
    what, value = want
    whose = f" ({reply_owner})" if reply_owner else ""
    if what == "error":
        return f"{method} answered an error (kind {show(value)}) without unknown members{whose}"
    if what == "not an object":
        return f"{method} answered {show(value, 60)}, not an object{whose}"
    if empty is not None and not value:
        return f"{empty[0]} ({empty[1]})"
    return None


def told(outcome):
    what, value = outcome
    if what == "error":
        return f"an error (kind {show(value)})"
    return f"the result {show(value, 100)}" + (" (not an object)" if what != "result" else "")


@case("FC-054")
def test_unsolicited_notifications_ignored(adapter, fx):
    """Unsolicited notifications (a cancel for an id never issued, $/progress,
    window/logMessage, array params) get nothing reply-like back within
    SILENCE_S, and the next repo/tree is answered as the one before them.
    Anywhere in the run, an adapter process that ends right after a
    notification other than a cancel fails this case (the protocol monitor's
    unasked exits, cases/judges/monitoring.py).

    Falsified by: answers-notifications: Unknown notifications are answered like requests: {"id":
    null, "error": method not found}.
    """
    before = path_types(tree(adapter, fx, ALPHA).model)
    need(before, f"{tree_what(fx, ALPHA)} listed nothing, so an answer after the "
         f"notifications has nothing to be compared with", owner("coverage is"))
    mark = adapter.transcript.mark()
    # The cancel goes first: the monitor takes an answer for one to the last
    # notification sent (an answered cancel is FC-122's), so an answer to a
    # later one that arrives late is never taken for the cancel's.
    adapter.notify("$/cancelRequest", {"id": NEVER_ISSUED})
    adapter.notify("$/progress", {"token": "fc-054", "value": {"kind": "begin", "title": "x"}})
    adapter.notify("window/logMessage", {"type": 3, "message": "hello from the harness"})
    adapter.notify("x/forgeFuture", [1, 2, 3])   # params an array
    time.sleep(SILENCE_S)   # the rule is about absence: a named silence window
    follow_up = adapter.call("repo/tree", {"repo": fx.repo(ALPHA), "ref": None})
    after = follow_up.result()
    # the follow-up's reply, and a respawn's handshake reply (an adapter that
    # died on a notification is the protocol monitor's: an unasked exit), are
    # replies to requests
    entries = adapter.transcript.since(mark)
    asked = {e.id for e in entries if e.direction == "out" and e.kind == "request"}
    answered = [e.raw[:120] for e in entries
                if reply_like(e) and not (e.kind == "reply" and e.id in asked)]
    fc_assert(not answered, expected="no reply to any notification", got=listing(answered, 3),
              why="notifications are never answered")
    listed = read(after, Tree).model
    fc_assert(listed is not None and path_types(listed) == before,
              expected=f"the {len(before)} paths (and types) listed before the notifications",
              got=changed_listing(before, after),
              why="after unsolicited notifications, a request is answered as before them")


def changed_listing(before, result):
    """How a tree answer differs from the path -> type listing ``before``."""
    listed = read(result, Tree).model
    if listed is None:
        return f"the result {show(result, 60)}"
    after = path_types(listed)
    retyped = [p for p in set(before) & set(after) if before[p] != after[p]]
    return (f"missing {listing(set(before) - set(after))}; not listed before "
            f"{listing(set(after) - set(before))}; typed otherwise {listing(retyped)}")


# ---------------------------------------------------------------- FC-055


def exercise(adapter, fx):
    """One request of the usual kinds, and of each revision method at a named
    branch (the group asks the default branch only), so whatever the adapter
    caches is written."""
    alpha, caps = fx.repo(ALPHA), adapter.caps
    ids = listed_ids(adapter, fx, ALPHA, {TERM_LINE_PATH})
    asks = [("repo/blob", {"repo": alpha, "sha": ids.get(TERM_LINE_PATH, "")}),
            ("repo/tree", {"repo": fx.repo(WIDE), "ref": None}),
            ("repo/clone_url", {"repo": alpha})]
    if caps.code_search:
        asks.append(("search/code", {"q": TERM_LINE, "limit": 500}))
    if fx.vcs_built:
        vcs = fx.repo(VCS)
        for ref in (VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH):
            if caps.refs:
                asks.append(("repo/tree", {"repo": vcs, "ref": ref}))
            if caps.log:
                asks += [("repo/log", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": ref,
                                       "limit": None}),
                         ("repo/blob_at", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": ref})]
            if caps.blame:
                asks.append(("repo/blame", {"repo": vcs, "path": VCS_THREE_COMMITS, "ref": ref}))
            if caps.commit:
                asks.append(("repo/commit", {"repo": vcs, "sha": ref}))
    for method, params in asks:
        try_request(adapter, method, params)


@case("FC-055")
def test_host_cache_root_untouched(adapter, fx):
    """Handed cache_dir in the host's layout (<root>/rootle/providers/<name>),
    the adapter writes nothing into <root>/rootle/ outside providers/ (the
    host's own cache root), whatever it served: the group's earlier cases
    plus a blob, a tree, a clone_url, a search, and a tree, log, blob_at,
    blame and commit at each of main and feature. The same rule holds for
    every process of the run (respawned generations, processes started
    without cache_dir, whose XDG_CACHE_HOME is their <root>): the harness
    looks at every cache root once the run is over (harness.scan_cache_roots)
    and a stray entry fails this case, naming the case and process.

    Falsified by: blobs-in-host-root: repo/blob caches each blob it serves in
    <cache_dir>/../../blobs/ (the host's cache root).
    """
    cache_dir = adapter.init_params.get("cache_dir")
    if not isinstance(cache_dir, str):
        skip("the group adapter was started without cache_dir")
    cache = Path(cache_dir)
    if cache.parent.name != "providers" or cache.parent.parent.name != "rootle":
        fail("the suite hands cache_dir in the host's layout", expected="<root>/rootle/"
              f"providers/{CACHE_PROVIDER}", got=cache_dir)
    exercise(adapter, fx)
    root = cache.parent.parent
    stray = sorted(str(p.relative_to(root)) for p in root.iterdir() if p.name != "providers")
    fc_assert(not stray, expected=f"nothing in {root} but providers/",
              got=f"the adapter wrote {listing(stray)}",
              why="an adapter must not write into the host's cache root (use cache_dir)")
