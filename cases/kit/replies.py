"""Requests the cases share, and their replies read through wire.messages.

Every reply a case reads goes through the attrs models (``read``: the model
as far as it could be read plus each shape problem once, with its member
path). A case that owns a shape judges the problems it owns
(``Reading.at`` / ``Reading.of``); every other case reads around them, and
when the evidence it needs is missing because of another case's defect it
skips naming that case (``need`` with ``owner``: RULINGS "Attribution").

Also here: expected errors and their kinds, searches (one-shot and
streamed) with their place in the transcript, and transcript views of
partial frames and reply-like lines.

It owns every request several cases share and the one way each reply is
read and attributed, so the owners a skip names come from one place.
"""

from __future__ import annotations

import threading
import time
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from cases.kit.api import fail, fc_assert, listing, need, owner, show, skip, warn
from cases.kit.facts import disk_blobs
from cases.kit.formats import b64_loose
from fixture.catalog import ALPHA
from wire import ProviderError
from wire.messages import Blob, Reading, SearchHit, SearchResult, Tree, TreeEntry, read

HITS = tuple[SearchHit, ...]


def read_reply(result: Any, cls: type, what: str, whose: str | None) -> Reading:
    """``result`` read as ``cls``. A reply that is not an object fails the
    running case when it owns the reply's shape (``whose`` None), and skips
    any other case naming the owner."""
    reading = read(result, cls)
    if reading.model is None:
        if whose is None:
            fail(f"{what} must answer a JSON object", expected="a result object",
                 got=show(result))
        need(False, f"{what} answered {show(result, 60)}, not an object", whose)
    return reading


# ---------------------------------------------------------------- trees and blobs

def by_path(tree: Tree) -> dict[str, TreeEntry]:
    """Tree entries by path (the first entry listing a path wins)."""
    out: dict[str, TreeEntry] = {}
    for entry in tree.entries:
        out.setdefault(entry.path, entry)
    return out


def path_types(tree: Tree) -> dict[str, Any]:
    """path -> type of the listed entries (ids left out)."""
    return {path: e.type for path, e in by_path(tree).items()}


def blob_ids(tree: Tree, files: set[str]) -> dict[str, str]:
    """path -> sha for the listed entries that are files on disk (their ``type``
    is FC-021's business) and carry a string sha."""
    return {path: e.sha for path, e in by_path(tree).items()
            if path in files and isinstance(e.sha, str)}


def tree_what(fx, name: str, ref: str | None = None) -> str:
    """The repo/tree request as sent, for a failure an author can send again."""
    return f"repo/tree {show({'repo': fx.repo(name), 'ref': ref})}"


def tree(adapter, fx, name: str, ref: str | None = None, *, own: bool = False,
         seen: bool = False) -> Reading:
    """repo/tree read as a Tree. One that is not an object fails the running
    case when it ``own``s tree replies, else skips it (FC-020's; FC-091's at a ref).
    ``seen``: the reply this process generation already gave a sweep for the
    same repository and ref, asked now if none did (see ``remembered``)."""
    memo = remembered(adapter) if seen else {}
    key = ("repo/tree", str(fx.path), name, ref)
    if key not in memo:
        result = adapter.request("repo/tree", {"repo": fx.repo(name), "ref": ref})
        memo[key] = (result, read(result, Tree))
    result, reading = memo[key]
    if reading.model is not None:
        return reading
    whose = None if own else owner("tree replies are" if ref is None else "trees at a ref are")
    return read_reply(result, Tree, tree_what(fx, name, ref), whose)


_REMEMBERED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def remembered(adapter) -> dict:
    """Replies one process generation of ``adapter`` gave the sweeps (trees,
    a search), so that every rule judged on a tree judges the same
    reply and the sweep's many trees are asked once per process, not once
    per case. A new generation (a respawn) starts afresh; a case that must
    see a fresh reply (a second call, a rewritten file) asks without it."""
    generation = getattr(adapter, "generation", None)
    held = _REMEMBERED.get(adapter)
    if held is None or held[0] != generation:
        held = _REMEMBERED[adapter] = (generation, {})
    return held[1]


def listed_ids(adapter, fx, name: str, files: Iterable[str] | None = None, *,
               ref: str | None = None, every: bool = False, listed: Tree | None = None
               ) -> dict[str, str]:
    """path -> sha of ``files`` (default: every file of the repo on disk) as
    the tree (``listed``, or a fresh repo/tree) lists them.

    The running case skips when the listing gives it nothing to compare: none
    of the files (or, with ``every``, not all of them) listed with a string
    sha; listing is FC-020's (FC-091's at a ref), shas are FC-021's."""
    files = set(disk_blobs(fx, name) if files is None else files)
    if listed is None:
        listed = tree(adapter, fx, name, ref).model
    ids = blob_ids(listed, files)
    paths = set(by_path(listed)) & files
    where = tree_what(fx, name, ref)
    whose = owner("coverage is" if ref is None else "trees at a ref are")
    shas = owner("entry shas are")
    if every:
        need(paths == files, f"{where} did not list {listing(files - paths)}", whose)
        need(set(ids) == files, f"{where} listed {listing(files - set(ids))} without a string "
             f"sha", shas)
    else:
        need(paths, f"{where} listed none of the {len(files)} files on disk", whose)
        need(ids, f"{where} listed no file with a string sha", shas)
    return ids


def blob_bytes(adapter, fx, name: str, sha: str) -> bytes | None:
    """repo/blob decoded leniently (None when bytes_b64 does not decode even
    leniently). A reply that is not an object, or has no string bytes_b64,
    skips the running case (blob replies are FC-024's)."""
    what = f"repo/blob of {sha[:16]} in {fx.repo(name)}"
    whose = owner("blob replies are")
    blob = read_reply(adapter.request("repo/blob", {"repo": fx.repo(name), "sha": sha}),
                      Blob, what, whose).model
    need(isinstance(blob.bytes_b64, str), f"{what} carried no string bytes_b64", whose)
    return b64_loose(blob.bytes_b64)


def serves_like(provider, adapter, fx, when: str, names: Iterable[str] = (ALPHA,)) -> None:
    """``provider`` (a process started another way: without cache params,
    without credentials, after a kill) serves as the group ``adapter`` does:
    repo/tree of each repository of ``names`` (alpha by default) lists every
    path on disk that the group adapter lists; when both declare code_search,
    a search finds every file the group adapter finds that holds the term
    one-shot and streamed (or some of them: a cut, whose truncated flag
    FC-070 and FC-042 judge; an empty page is no search served);
    when both declare log (and vcs is built), the log at the feature branch
    has the group adapter's subjects, in its order (or a leading part of
    them: a cut, whose truncated flag FC-095 judges); when both declare
    commit, repo/commit of the tip answers. When the group adapter
    itself lists or finds none, or refuses, nothing can be compared (that is
    the owning case's business)."""
    for name in names:
        disk = set(fx.walk(name))
        usual = set(by_path(tree(adapter, fx, name).model)) & disk
        need(usual, f"{tree_what(fx, name)} listed none of the {len(disk)} paths on disk",
             owner("coverage is"))
        result = provider.request("repo/tree", {"repo": fx.repo(name), "ref": None})
        listed = read(result, Tree).model
        missing = usual - (set(by_path(listed)) if listed is not None else set())
        fc_assert(not missing, expected=f"the {len(usual)} paths the group adapter lists",
                  got=f"missing {listing(missing)}" if listed is not None else show(result, 60),
                  why=f"{when}, the adapter must serve {tree_what(fx, name)} as usual")
    if adapter.caps.code_search and provider.caps.code_search:
        _serves_search_like(provider, adapter, fx, when)
    if fx.vcs_built and adapter.caps.log and provider.caps.log:
        _serves_log_like(provider, adapter, fx, when)
    if fx.vcs_built and adapter.caps.commit and provider.caps.commit:
        _serves_commit_like(provider, adapter, fx, when)


def _hit_files(found) -> set[tuple[str, str]]:
    model = found.reading.model if found is not None else None
    return {(h.repo, h.path) for h in (model.items if model is not None else ())
            if isinstance(h, SearchHit)}


def _serves_search_like(provider, adapter, fx, when: str) -> None:
    from cases.kit.facts import files_containing
    from fixture.catalog import TERM_LINE
    group, err = attempt(search, adapter, TERM_LINE, limit=50)
    usual = _hit_files(group) & files_containing(fx, TERM_LINE) if err is None else set()
    if not usual:
        return   # the group adapter finds nothing to compare with (the search cases' concern)
    for partial in (False, True):   # one-shot, then streamed (§5: code_search streams)
        _serves_one_search(provider, TERM_LINE, partial, usual, when)


def _serves_one_search(provider, term: str, partial: bool, usual: set, when: str) -> None:
    """A search of ``term`` finds the ``usual`` files, or is a cut another
    case judges: without truncated true a lie (FC-070's on one-shot replies,
    FC-042's on streams: cases.judges.claims judges every reply of the run,
    respawned generations included); with it a page, legal unless it holds
    no hit at all. Hits sent in a stream's final reply are FC-042's too (the
    protocol monitor, on every frame of the run)."""
    params = {"q": term, "limit": 50, **({"partial": True} if partial else {})}
    got, err = attempt(search, provider, term, limit=50, partial=partial)
    model = got.reading.model if got is not None else None
    found = (set() if got is None else
             {(h.repo, h.path) for h in got.streamed if isinstance(h, SearchHit)} if partial
             else _hit_files(got))
    if err is None and model is not None and not usual <= found:
        if model.truncated is not True or found or (partial and model.items):
            return
    fc_assert(err is None and usual <= found,
              expected=f"search/code {show(params)} finds {listing(sorted(usual))}, as the "
                       f"group adapter does",
              got=f"an error: {err.message}" if err is not None else
              f"missing {listing(sorted(usual - found))}",
              why=f"{when}, the adapter must serve search/code as usual")


def _serves_commit_like(provider, adapter, fx, when: str) -> None:
    """repo/commit of the default branch's tip, by git's full id, answers a
    result when the group adapter's does. What the result says is judged
    where it is certain: its shape by the protocol monitor, a false
    truncated by cases.judges.claims (FC-109's), both on every reply of the run."""
    from cases.kit.gitfacts import git_tip
    from fixture.catalog import VCS
    params = {"repo": fx.repo(VCS), "sha": git_tip(fx)}
    _result, err = try_request(adapter, "repo/commit", params)
    if err is not None:
        return   # the group adapter's refusal is the commit cases' concern
    _result, err = try_request(provider, "repo/commit", params)
    fc_assert(err is None, expected=f"repo/commit {show(params)} answers a result, as the group "
              f"adapter's does", got=f"an error: {err.message}" if err is not None else "",
              why=f"{when}, the adapter must serve repo/commit as usual")


def _serves_log_like(provider, adapter, fx, when: str) -> None:
    from fixture.catalog import VCS, VCS_FEATURE_BRANCH
    from wire.messages import Log
    params = {"repo": fx.repo(VCS), "path": None, "ref": VCS_FEATURE_BRANCH, "limit": None}

    def subjects(result) -> list[str] | None:
        model = read(result, Log).model
        return None if model is None else [i.subject for i in model.items]

    result, err = try_request(adapter, "repo/log", params)
    usual = subjects(result) if err is None else None
    if not usual:
        return   # the group adapter's log is the revision cases' concern
    result, err = try_request(provider, "repo/log", params)
    got = subjects(result) if err is None else None
    if got and len(got) < len(usual) and got == usual[:len(got)]:
        return   # a leading part: a cut, whose truncated is FC-095's (every reply of the run)
    fc_assert(got == usual, expected=f"repo/log {show(params)} lists the group adapter's "
              f"{len(usual)} commits: {listing(usual, 3)}",
              got=f"an error: {err.message}" if err is not None else
              f"{listing(got, 3)}" if got is not None else show(result, 80),
              why=f"{when}, the adapter must serve repo/log as usual")


# ---------------------------------------------------------------- errors

def attempt(ask: Callable[..., Any], *args: Any, **kwargs: Any
            ) -> tuple[Any, ProviderError | None]:
    """(what ``ask(...)`` returned, None) or (None, the adapter's error reply):
    the one place an adapter's error is told from a host-side failure
    (timeout, closed output), which propagates for the plugin to report."""
    try:
        return ask(*args, **kwargs), None
    except ProviderError as err:
        if err.origin != "adapter":
            raise
        return None, err


def try_request(adapter, method: str, params: Any, *, envelope: dict | None = None
                ) -> tuple[Any, ProviderError | None]:
    """(result, None) or (None, the adapter's error reply); see ``attempt``.
    ``envelope``: extra top-level members of the request."""
    return attempt(adapter.request, method, params, envelope=envelope)


def expect_error(adapter, method: str, params: dict, *, what: str) -> ProviderError:
    """Send a request that must fail; return the adapter's error. A result
    fails the running case."""
    result, err = try_request(adapter, method, params)
    if err is None:
        fail(f"{what} must answer an error", expected="an error reply",
             got=f"a result {show(result)}")
    return err


def judge_kind(err: ProviderError, expected: str, *, what: str) -> None:
    """A named kind: the wrong kind fails; an absent kind passes with a warning."""
    raw = err.raw_kind
    if raw is None:
        warn(f"{what}: the error carries no data.kind ({expected!r} expected); "
             f"message {err.message!r}")
        return
    fc_assert(raw == expected, expected=f"data.kind {expected!r}",
              got=f"data.kind {show(raw)} (message {err.message!r})",
              why=f"{what} must be reported with kind {expected}")


# ---------------------------------------------------------------- searches

def require_code_search(adapter) -> None:
    """Skip the running case when the adapter declares code_search false (the
    host then never sends content searches)."""
    if not adapter.caps.code_search:
        skip("needs content search and the adapter declares code_search false")


def folded(hits: Iterable[SearchHit]) -> set[tuple[str, str]]:
    """Hits folded by file identity (repo, path), like the host."""
    return {(h.repo, h.path) for h in hits}


# "About N", both ways (RULINGS "Bounded compute"): past MANY_TIMES the limit
# a cut warns; below limit / MANY_TIMES hits a claimed cut fails.
MANY_TIMES = 5


def unreached_budget(hits: int, limit: object) -> bool:
    """A cut claimed with fewer than limit / MANY_TIMES hits: no stop at about
    the limit (the budget was barely spent), so the claim is false."""
    return isinstance(limit, int) and hits * MANY_TIMES < limit


def judge_path_cut(found: "Search", term: str, hits: list, at_least: frozenset) -> None:
    """A path: query's truncated (one-shot or streamed: ``hits`` are its items
    or its streamed hits): a reply that names some of ``at_least`` (the files
    whose path holds ``term``) but not all of them is cut, and must say so.
    Files the adapter's matching adds are never held against it, nor files
    it does not match (RULINGS "Search": `path:` may be an ordinary term), so
    a claimed cut cannot be proved false here; one far below the limit warns
    (§3.13 "SHOULD Stop scanning at about N results")."""
    limit, truncated = found.call.params.get("limit"), found.result.truncated
    asked = f"{found.what} limit {limit}"
    if truncated is True and unreached_budget(len(hits), limit):
        warn(f"{asked}: truncated true with {len(hits)} hit(s), far below the limit: bounded "
             f"compute advises stopping at about the limit (at least "
             f"{-(-limit // MANY_TIMES)} hits)")
    got = folded(hits) & at_least
    if got and at_least - got and truncated is not True:
        fail(f"{asked}: a result cut short must say truncated true",
             expected=f"all {len(at_least)} files whose path holds {term!r}, or truncated true",
             got=f"{len(got)} of them, truncated {show(truncated)}; missing e.g. "
             f"{listing(f'{r} {p}' for r, p in sorted(at_least - got))} (a silently capped "
             f"page of file names?)")


# How far a case reads a stream (PROTOCOL §5.3: a stream that keeps sending
# batches inside the inactivity window may run indefinitely, and §5.4: a
# cancel is advisory). A case reads a stream until its reply, until it has
# the hits its rule needs (``enough``), or for at most STREAM_READ_S, ten
# inactivity windows (20 s at the default 2 s: a stream of 10 hits, each in
# its own batch at the slowest legal pace; the reference's 600-hit stream
# takes well under a second); then it cancels the request and waits
# AFTER_CANCEL_S, one window (an adapter that honours the cancel answers
# inside it; one that goes on streaming, as it may, would send its next
# batch inside it anyway), for the terminal reply. A stream still going then
# is left: the case retires that process (the next request gets a fresh one)
# and judges what it saw.
STREAM_READ_WINDOWS = 10
AFTER_CANCEL_WINDOWS = 1


def stream_read_s() -> float:
    """STREAM_READ_S: the longest a case reads one stream before it cancels it."""
    from cases.kit import settings
    return STREAM_READ_WINDOWS * settings.active().inactivity_s


def after_cancel_s() -> float:
    """AFTER_CANCEL_S: how long a case waits for the reply after its own cancel."""
    from cases.kit import settings
    return AFTER_CANCEL_WINDOWS * settings.active().inactivity_s


@dataclass
class Search:
    """One finished search/code request, its reply read as a SearchResult,
    its streamed batches read as hits, and where it sits in the transcript.

    ``cut`` says why the case stopped reading a stream before its reply
    ("" when it read the stream to its reply): the case cancelled it, and
    ``reading`` is the reply that came after the cancel (any truncated is
    legal then, and an error reply there is FC-045's) or, when none came
    within AFTER_CANCEL_S, an empty result (``replied`` false)."""
    adapter: Any
    call: Any
    reading: Reading | None
    mark: int               # transcript seq just before the request
    q: str = ""
    partial: bool = False
    _batches: list[Reading] | None = field(default=None, repr=False)
    cut: str = ""
    replied: bool = True

    @property
    def what(self) -> str:
        return f"search/code {self.q!r}" + (" (streamed)" if self.partial else "")

    @property
    def whole(self) -> bool:
        """Read to its reply, uncancelled: its truncated and completeness can be judged."""
        return not self.cut

    @property
    def result(self) -> SearchResult:
        return self.reading.model

    @property
    def items(self) -> tuple[SearchHit, ...]:
        """The reply's hits (those with a string repo and path)."""
        return self.result.items

    @property
    def batches(self) -> list[Reading]:
        """Each batch the client routed to this request, read as hits (a batch
        whose items is not an array reads as none)."""
        if self._batches is None:
            self._batches = [read(b, HITS) if isinstance(b, list) else Reading(())
                             for b in list(self.call.partials)]
        return self._batches

    @property
    def streamed(self) -> list[SearchHit]:
        return [hit for batch in self.batches for hit in batch.model]

    def need_hits(self) -> list[SearchHit]:
        """The hits of a query the fixture matches (the streamed ones for a
        streamed search); the running case skips when there are none."""
        got = list(self.streamed if self.partial else self.items)
        whose = owner("path: queries are" if self.q.startswith("path:") else
                      "streamed hits are" if self.partial else "search recall is")
        need(got, f"{self.what} returned no hit although the fixture matches it", whose)
        return got

    def need_partials(self) -> list:
        """The $/partial frames between the request and its reply (whatever
        their params.id); the running case skips when there are none."""
        frames = partial_frames(self.window())
        need(frames, f"{self.what} sent no $/partial although the fixture matches it",
             owner("streamed hits are"))
        return frames

    def window(self) -> list:
        """Inbound transcript entries from the request up to and including its
        reply (of the request's generation: a retired stream's end there)."""
        out = []
        for entry in self.adapter.transcript.since(self.mark):
            if entry.direction != "in" or entry.generation != self.call.generation:
                continue
            out.append(entry)
            if entry.kind == "reply" and entry.id == self.call.id:
                break
        return out


def search(adapter, q: str, *, limit: int = 500, partial: bool = False,
           inactivity_s: float | None = None, on_partial: Callable[..., Any] | None = None,
           extra: dict | None = None, own: bool = False, enough: int | None = None) -> Search:
    """search/code, one-shot or streaming (``partial``), with ``extra`` params
    members if given; raises ProviderError. A reply that is not an object
    fails the running case when it ``own``s that reply, else skips it
    (path: queries are FC-034's, streamed replies FC-042's, others FC-070's).

    A stream is read only as far as the case needs: ``enough`` hits (None:
    all of them), at most STREAM_READ_S (see ``Search.cut``)."""
    params: dict = {"q": q, "limit": limit, **(extra or {})}
    if partial:
        params["partial"] = True
    mark = adapter.transcript.mark()
    kwargs: dict = {}
    if inactivity_s is not None:
        kwargs["inactivity_s"] = inactivity_s
    stop = threading.Event()
    if partial:
        seen = [0]
        # With enough >= limit, an honest stream ends there by itself: a cancel
        # racing its reply would only hand the process a cancel to recover
        # from (FC-045's business), so the case cancels only past the limit.
        at_least = enough if enough is None or enough < limit else limit + 1

        def counted(items, then=on_partial):
            seen[0] += len(items) if isinstance(items, list) else 0
            if at_least is not None and seen[0] >= at_least:
                stop.set()
            if then is not None:
                then(items)
        kwargs["on_partial"] = counted
    elif on_partial is not None:
        kwargs["on_partial"] = on_partial
    call = adapter.call("search/code", params, **kwargs)
    found = Search(adapter, call, None, mark, q, partial)
    whose = None if own else owner("path: queries are" if q.startswith("path:") else
                                   "streamed replies are" if partial else
                                   "one-shot search replies are")
    if partial:
        found.cut = read_as_needed(adapter, call, stop, at_least)
    if found.cut:
        found.replied = call.outcome == "result"
        value = call.value if found.replied else {}
        found.reading = read_reply(value, SearchResult, found.what, whose)
        return found
    result = call.result()
    found.reading = read_reply(result, SearchResult, found.what, whose)
    return found


def read_as_needed(adapter, call: Any, stop: threading.Event, enough: int | None) -> str:
    """Wait for ``call``'s stream to end, for ``stop`` (set once the case
    has the hits it needs), or for STREAM_READ_S; "" when it ended (its
    reply, a timeout, a closed output: ``call.result()`` says which), else
    cancel it and say why the case stopped reading. A stream still going
    AFTER_CANCEL_S after the cancel is left: its process is retired."""
    threading.Thread(target=lambda: (call.wait(), stop.set()), daemon=True,
                     name=f"forge-stream-{call.id}").start()
    bound = stream_read_s()
    stop.wait(max(0.0, call.sent_at + bound - time.monotonic()))
    if call.done:
        return ""
    why = (f"stopped reading after {enough} hit(s), all its rule needs" if stop.is_set()
           else f"stopped reading after STREAM_READ_S ({bound:g} s, {STREAM_READ_WINDOWS} "
                f"inactivity windows)")
    adapter.cancel(call)
    grace = after_cancel_s()
    if call.wait(grace) and call.outcome in ("result", "error"):
        return f"{why}, and cancelled it"
    if call.outcome == "closed":
        return ""   # the process ended after the cancel: call.result() reports it
    why = (f"{why}, cancelled it, and no reply came within AFTER_CANCEL_S ({grace:g} s, "
           f"{AFTER_CANCEL_WINDOWS} inactivity window)")
    retire = getattr(adapter, "retire_stream", None)
    if retire is not None:
        retire(call, why)
    return why


def wait_first_partial_or_end(call: Any, event: threading.Event, timeout: float) -> None:
    """Block until ``event`` (set by on_partial) fires or the call ends, at most ``timeout``."""
    done = threading.Thread(target=lambda: (call.wait(), event.set()), daemon=True)
    done.start()
    event.wait(timeout)


# ---------------------------------------------------------------- transcript views

def partial_frames(entries_: Iterable[Any]) -> list[Any]:
    """Inbound $/partial frames, whatever their params.id (usable or not)."""
    out = []
    for e in entries_:
        if e.direction != "in":
            continue
        if e.kind == "partial" or (isinstance(e.msg, dict) and e.msg.get("method") == "$/partial"
                                   and "id" not in e.msg):
            out.append(e)
    return out


def partial_id(entry: Any) -> Any:
    """params.id of a partial frame as sent (the entry's id when the frame was cut)."""
    if isinstance(entry.msg, dict):
        params = entry.msg.get("params")
        return params.get("id") if isinstance(params, dict) else None
    return entry.id


def frame_items(entry: Any) -> list:
    """params.items of a parsed $/partial frame ([] when absent or malformed)."""
    params = entry.msg.get("params") if isinstance(entry.msg, dict) else None
    items = params.get("items") if isinstance(params, dict) else None
    return items if isinstance(items, list) else []


def reply_like(entry: Any) -> bool:
    """An inbound line that looks like a reply: an id member, or result/error."""
    if entry.direction != "in":
        return False
    if isinstance(entry.msg, dict):
        return any(k in entry.msg for k in ("id", "result", "error"))
    return entry.kind == "reply" or entry.outcome == "invalid_id"


# ---------------------------------------------------------------- every handshake

NO_CACHE_INIT = {"protocol": 1}   # what a host without a cache budget sends (§2.2)
NO_CACHE_KEY = "handshake without cache params"


def handshakes(adapter, spawn) -> list[tuple[str, Any]]:
    """(where, initialize result as sent) for the handshakes a handshake case
    reads itself: each generation of the group adapter, and a process started
    with exactly {"protocol": 1} (no cache params). A start without cache
    params that fails is FC-005's defect: its handshake is left out. Every
    other initialize result of the run is judged by the protocol monitor on
    the same rules (wire.monitor.handshake_problems)."""
    seen = [(f"the group adapter's initialize (generation {n})", result)
            for n, result in enumerate(adapter.init_results, 1)]
    # The no-cache start is the same question for every handshake rule, so it
    # is asked once a run (the spawn factory carries the run's memo) and every
    # case judges the same answer.
    return seen + [(f"initialize with params {show(NO_CACHE_INIT)} (no cache params)", result)
                   for result in no_cache_start(spawn)]


def no_cache_start(spawn) -> list:
    """The initialize results of a process started with exactly {"protocol": 1},
    or [] when that start failed (FC-005's defect)."""
    memo = getattr(spawn, "memo", {})
    if NO_CACHE_KEY not in memo:
        provider = spawn(init_params=dict(NO_CACHE_INIT), start=False)
        try:
            provider.start()
            memo[NO_CACHE_KEY] = list(provider.init_results)
        except Exception:   # noqa: BLE001 (an error reply, a crash, a timeout: FC-005 judges it)
            memo[NO_CACHE_KEY] = []
    return memo[NO_CACHE_KEY]


def same_handshake_members(results: list) -> tuple[list, list[str]]:
    """The handshake members FC-051 compares across generations, per result:
    the known ones (protocol, name, icon, the known capability keys; `cache`
    and unknown members aside, RULINGS), with each member left out of every
    result when one result sends it with the wrong type or value, which is
    its type owner's defect, not a difference between generations (protocol
    FC-001's, name FC-002's, capabilities and their base keys FC-003's, icon
    FC-004's, the revision keys FC-099's; RULINGS "Attribution"). Returns
    (the members of each result, one not-evaluated reason per member left
    out, naming its owner)."""
    from wire.messages import KNOWN_CAPABILITIES
    from wire.monitor import BASE_CAPABILITIES, BUILTIN_ICONS

    def members(result) -> dict:
        if not isinstance(result, dict):
            return {"protocol": None}   # no protocol at all: FC-001's
        out = {k: result[k] for k in ("protocol", "name", "icon") if k in result
               and not (k == "icon" and result[k] is None)}   # a null icon is none (§3.0)
        if "capabilities" in result:
            caps = result["capabilities"]
            if isinstance(caps, dict):
                out.update({f"capabilities.{k}": caps[k] for k in KNOWN_CAPABILITIES
                            if k in caps})
            else:
                out["capabilities"] = caps
        return out

    def whose_if_wrong(key: str, value: Any) -> str | None:
        """None when ``value`` has its type, else whose defect it is."""
        if key == "protocol":
            return None if type(value) is int and value == 1 else \
                owner("handshake protocol values are")
        if key == "name":
            return None if isinstance(value, str) else owner("handshake names are")
        if key == "icon":
            return None if isinstance(value, str) and (value in BUILTIN_ICONS or len(value) == 1) \
                else owner("handshake icons are")
        if key == "capabilities" or (key.split(".", 1)[1] in BASE_CAPABILITIES
                                     and not isinstance(value, bool)):
            return owner("base capability values are")   # not an object, or a base key
        return None if isinstance(value, bool) else owner("revision capability values are")

    each = [members(r) for r in results]
    wrong: dict[str, str] = {}
    for generation, found in enumerate(each, 1):
        for key, value in found.items():
            whose = whose_if_wrong(key, value)
            if whose is not None and key not in wrong:
                wrong[key] = (f"generation {generation}'s {key} {show(value, 40)} could not be "
                              f"compared ({whose})")
    kept = [{k: v for k, v in found.items() if k not in wrong} for found in each]
    return kept, list(wrong.values())


# ---------------------------------------------------------------- every repository and ref

def swept_trees(adapter, fx) -> list[tuple[str, str | None]]:
    """(repo dir name, ref) of every tree a coverage, typing, truncation or id
    rule is judged on: every served repository at ref null, and, when the
    adapter declares refs (trees at a ref, §3.3), the git repository at each
    branch and at each tag (by name: repo/refs lists them, §3.6). Trees at
    commit ids are the round-trip cases' (FC-132 judges a tree at each id
    repo/log lists, counting as coverage only what the default branch shows too)."""
    from cases.kit.facts import served
    out: list[tuple[str, str | None]] = [(name, None) for name in served(fx).values()]
    if fx.vcs_built and adapter.caps.refs:
        from cases.kit.gitfacts import git_refs
        from fixture.catalog import VCS, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
        refs = [VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH, *sorted(git_refs(fx, "tags"))]
        out += [(VCS, ref) for ref in dict.fromkeys(refs)]
    return out


@dataclass
class Sweep:
    """The trees of ``swept_trees`` as one process serves them (each asked
    once a process generation, ``tree(seen=True)``): ``trees`` is
    [(name, ref, reading)]. A tree at a ref the adapter answers with an error
    is left out and noted in ``refused``: the sweep judges every other tree
    (FC-091 asks a tree at every name repo/refs lists and fails an error
    there); the case skips naming FC-091 (``done``) only when no tree was
    left to judge."""
    trees: list = field(default_factory=list)
    refused: list = field(default_factory=list)

    def done(self) -> None:
        need(self.trees, f"{listing(self.refused, 2)} answered an error",
             owner("trees at a ref are"))


def sweep(adapter, fx, *, own: bool = False) -> Sweep:
    """Every swept tree read (see ``Sweep``); ``own``: the running case owns
    the reply shape of the trees at ref null (FC-020, FC-022)."""
    out = Sweep()
    for name, ref in swept_trees(adapter, fx):
        if ref is None:
            out.trees.append((name, ref, tree(adapter, fx, name, ref, own=own, seen=True)))
            continue
        reading, err = attempt(tree, adapter, fx, name, ref, seen=True)
        if err is not None:
            out.refused.append(f"{tree_what(fx, name, ref)} ({err.message!r})")
        else:
            out.trees.append((name, ref, reading))
    return out


def files_at(fx, name: str, ref: str | None) -> frozenset[str]:
    """The files (not directories) of a repo: on disk at ref null, from git at a ref."""
    if ref is None:
        return disk_blobs(fx, name)
    from cases.kit.gitfacts import git_text
    return frozenset(p for p in git_text(fx, "ls-tree", "-r", "--name-only", "-z", ref)
                     .split("\0") if p)


def paths_at(fx, name: str, ref: str | None) -> set[str]:
    """Every path (files and directories): on disk at ref null, from git at a ref."""
    if ref is None:
        return set(fx.walk(name))
    from cases.kit.gitfacts import git_paths
    return git_paths(fx, ref) or set()
