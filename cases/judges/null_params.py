"""Optional params sent as `null` and left out, judged alike (§3.0), on the requests the run sends
anyway.

§3.0: "Treat a param whose value is JSON `null` exactly like an absent
param", and a receiver "MUST accept every member marked optional being
absent". The cases send the host's spelling (every member, `null` where
there is no value), so neither the absent spelling nor a `null` `limit` on
search/code would ever reach an adapter. After each case, for each
(method, optional param) the run has not judged yet, the first request of
that method the case sent is asked twice more on the same process: once
with the param `null`, once without it, every other param as the case sent
it (one-shot: `partial` left out unless it is the param judged). The two
answers must agree on the members the rule is about (content ids are
opaque, so paths and types, hits, commit ids within one generation, bytes,
URLs, `truncated`): a difference is a finding for ``NULL_LIKE_ABSENT``'s
owner (cases.registry.OWNERS), wherever in the run it was seen. About 20
requests a run; wide's requests are never repeated (their answers are big).

A process that ends with one of these requests in flight fails the
owner too (no case waits on them, so nothing else would say so), unless a
frame ended its output whose own rule says so (invalid UTF-8). Left out,
as another rule's business: an answer that is not a readable result (its
method's shape owner), a timeout (the harness's), a hit set cut by `truncated` (which hits a cut
keeps is the adapter's), and every param the host never sends as `null`.
"""

from __future__ import annotations

import json
from typing import Any

from cases.kit.formats import b64_loose
from fixture.catalog import WIDE
from wire.errors import ProviderError
from wire.messages import Blame, BlobAt, Log, SearchResult, Tree, WebUrl, read
from wire.monitor import ENDS_GENERATION, Finding

NULL_LIKE_ABSENT = "null-like-absent"
RULES = (NULL_LIKE_ABSENT,)
MEMO_KEY = "null-params-judged"   # the run's memo: (method, param) pairs judged so far

# §3.0's table of params the host sends as null, and search/code's optional ones
OPTIONAL: dict[str, tuple[str, ...]] = {
    "repo/tree": ("ref",),
    "repo/blob_at": ("ref",),
    "repo/blame": ("ref",),
    "repo/log": ("path", "ref", "limit"),
    "repo/web_url": ("line", "end_line"),
    "search/code": ("limit", "partial"),
}


def _tree(m: Tree):
    return frozenset((e.path, e.type) for e in m.entries), m.truncated


def _log(m: Log):
    return tuple(i.sha for i in m.items), m.truncated


def _blame(m: Blame):
    return tuple((r.start_line, r.end_line, r.sha) for r in m.ranges)


def _blob_at(m: BlobAt):
    return b64_loose(m.bytes_b64)


def _search(m: SearchResult):
    hits = frozenset((h.repo, h.path) for h in m.items)
    return (None if m.truncated else hits), m.truncated


# method -> (model, the members compared)
VIEWS = {"repo/tree": (Tree, _tree), "repo/log": (Log, _log), "repo/blame": (Blame, _blame),
         "repo/blob_at": (BlobAt, _blob_at), "repo/web_url": (WebUrl, lambda m: m.url),
         "search/code": (SearchResult, _search)}


def respell(provider, since: int, fx, judged: set) -> None:
    """Judge the (method, param) pairs not in ``judged`` on the requests
    ``provider`` was sent since transcript seq ``since``; findings go to
    ``provider.findings`` (harvested like the monitor's)."""
    if not provider.alive or provider.in_flight:
        return
    for entry in provider.transcript.since(since):
        msg = entry.msg
        if entry.direction != "out" or entry.kind != "request" or not isinstance(msg, dict):
            continue
        method, params = msg.get("method"), msg.get("params")
        if method not in OPTIONAL or not isinstance(params, dict) \
                or params.get("repo") == fx.repo(WIDE) or any(k.startswith("x_") for k in params):
            continue
        for name in OPTIONAL[method]:
            if (method, name) not in judged and provider.alive:
                judged.add((method, name))
                _judge(provider, method, params, name)


def _judge(provider, method: str, params: dict, name: str) -> None:
    base = {k: v for k, v in params.items() if k not in (name, "partial")}
    with_null, _ = _answer(provider, method, {**base, name: None})
    without, rid = _answer(provider, method, base)
    if with_null is None or without is None:
        return
    if with_null == without and with_null[0] != "ended":   # an end is never an answer
        return
    asked = json.dumps(base, ensure_ascii=False)[:120]
    detail = (f"{method} {asked}: with {name} null it {_told(with_null)}, without {name} it "
              f"{_told(without)} (a null param is treated exactly like an absent one)")
    provider.findings.append(Finding(NULL_LIKE_ABSENT, detail, provider.generation, "must",
                                     rid, method))


def _answer(provider, method: str, params: dict) -> tuple[Any, int | None]:
    """(("result", the view) or ("error", its kind), the request's id); the
    answer is None when nothing can be compared (no reply, or a result its
    model cannot read)."""
    calls = getattr(provider, "case_calls", None)
    before = len(calls) if calls is not None else 0
    try:
        call = provider.call(method, params)
    except ProviderError:
        return None, None
    call.wait()
    if calls is not None:
        del calls[before:]   # the harness's own question, not the next case's
    if call.outcome == "error":
        return ("error", call.error.raw_kind), call.id
    if call.outcome == "closed":   # the process ended with it in flight: nothing else says so
        if any(f.rule in ENDS_GENERATION and f.generation == call.generation
               for f in provider.findings):
            return None, call.id   # ended by a frame whose rule's owner says so
        return ("ended", call.error.message), call.id
    if call.outcome != "result":
        return None, call.id
    model, view = VIEWS[method]
    reading = read(call.value, model).model
    return (None if reading is None else ("result", view(reading))), call.id


def _told(answer) -> str:
    what, value = answer
    if what == "ended":
        return f"got no answer ({value})"
    return (f"answered an error (kind {value!r})" if what == "error"
            else f"answered a result: {_brief(value)}")


def _brief(value: Any) -> str:
    if isinstance(value, frozenset):
        shown = sorted(str(v) for v in value)
        return f"{len(shown)} listed ({', '.join(shown[:2])}{', ...' if len(shown) > 2 else ''})"
    if isinstance(value, tuple):
        return "(" + ", ".join(_brief(v) for v in value) + ")"
    if isinstance(value, bytes):
        return f"{len(value)} bytes"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
