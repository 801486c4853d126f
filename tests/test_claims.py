"""cases/judges/claims.py: what the ClaimsMonitor records for judging, sans-IO.

The judging itself (against the fixture and git) is proved by the truncation
mutants (``respawn-*-truncated-lie``, ``respawn-*-cut-untruncated``... in
tests/adapters/mutants/); here, which replies are recorded, and
which are left out as another rule's business.
"""

from __future__ import annotations

import json

from cases.judges.claims import ABSENT, ClaimsMonitor
from wire.framing import classify


def frame(obj):
    return classify(json.dumps(obj).encode())


def ask(mo, rid, method, params, generation=1):
    mo.outbound(generation, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def answer(mo, rid, result, generation=1):
    mo.inbound(generation, frame({"jsonrpc": "2.0", "id": rid, "result": result}))


HIT = {"repo": "local/alpha", "path": "a.rs"}


def test_a_lone_reply_is_recorded_with_what_it_lists():
    mo = ClaimsMonitor("/fx")
    ask(mo, 2, "repo/tree", {"repo": "local/alpha", "ref": None})
    answer(mo, 2, {"entries": [{"path": "a", "type": "blob", "sha": "s"}]})
    (claim,) = mo.claims
    assert (claim.method, claim.truncated, claim.listed, claim.judgeable) == \
        ("repo/tree", ABSENT, ("a",), True)


def test_requests_in_flight_together_are_marked_crowded():
    mo = ClaimsMonitor("/fx")
    ask(mo, 2, "repo/tree", {"repo": "local/alpha", "ref": None})
    ask(mo, 3, "repo/tree", {"repo": "local/wide", "ref": None})
    answer(mo, 3, {"entries": []})
    answer(mo, 2, {"entries": []})
    ask(mo, 4, "repo/tree", {"repo": "local/alpha", "ref": None})
    answer(mo, 4, {"entries": []})
    assert [c.crowded for c in mo.claims] == [True, True, False]


def test_a_stream_is_judged_on_its_batches_unless_cancelled_or_malformed():
    mo = ClaimsMonitor("/fx")
    params = {"q": "frobnicate", "limit": 500, "partial": True}
    for rid in (2, 3, 4):
        ask(mo, rid, "search/code", params)
        batch = [HIT] if rid != 4 else [{"repo": "local/alpha", "path": 7}]
        mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                             "params": {"id": rid, "items": batch}}))
        if rid == 3:
            mo.outbound(1, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}})
        answer(mo, rid, {"items": [], "truncated": False})
    assert [(c.listed, c.judgeable) for c in mo.claims] == \
        [((("local/alpha", "a.rs"),), True), ((("local/alpha", "a.rs"),), False), ((), False)]


def test_initialize_icons_are_recorded_whatever_the_directory():
    mo = ClaimsMonitor("/elsewhere")
    ask(mo, 1, "initialize", {"protocol": 1})
    answer(mo, 1, {"protocol": 1, "icon": "\ue709"})
    (claim,) = mo.claims
    assert (claim.method, claim.listed) == ("initialize", ("\ue709",))


def test_a_commit_is_recorded_with_its_paths_and_previous_paths():
    mo = ClaimsMonitor("/fx")
    ask(mo, 2, "repo/commit", {"repo": "local/vcs", "sha": "feature"})
    answer(mo, 2, {"sha": "c", "author": "a", "date": "d", "message": "m", "truncated": True,
                   "files": [{"path": "new.rs", "status": "renamed", "previous_path": "old.rs"},
                             {"path": "b.rs", "status": "modified"}, "junk", {"path": 5}]})
    (claim,) = mo.claims
    assert (claim.method, claim.truncated, claim.listed, claim.params["sha"]) == \
        ("repo/commit", True, ("new.rs", "old.rs", "b.rs"), "feature")


def test_log_items_are_recorded_with_their_dates_in_order():
    mo = ClaimsMonitor("/fx")
    ask(mo, 2, "repo/log", {"repo": "local/vcs", "path": None, "ref": "v1.0", "limit": 2})
    answer(mo, 2, {"items": [{"sha": "a1", "date": "2026-01-18T10:00:00+01:00"}, "junk",
                             {"sha": "b2", "date": 20260117}], "truncated": True})
    (claim,) = mo.claims
    assert (claim.listed, claim.dates) == (("a1", "b2"), ("2026-01-18T10:00:00+01:00", 20260117))


def test_hit_lines_are_recorded_one_shot_and_streamed():
    mo = ClaimsMonitor("/fx")
    line = {"repo": "local/alpha", "path": "a.rs", "line": 3}
    odd = [{"repo": "local/alpha", "path": "b.rs", "line": True},    # not an integer
           {"repo": "local/alpha", "path": "c.rs"}]                  # no line
    ask(mo, 2, "search/code", {"q": "frobnicate", "limit": 500})
    answer(mo, 2, {"items": [line, *odd]})
    ask(mo, 3, "search/code", {"q": "frobnicate", "limit": 500, "partial": True})
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 3, "items": [line, *odd]}}))
    answer(mo, 3, {"items": [], "truncated": False})
    assert [c.lines for c in mo.claims] == [(("local/alpha", "a.rs", 3),)] * 2


def test_a_batch_for_no_request_in_flight_joins_no_claim():
    """A $/partial naming an id not yet asked (or already answered) is
    FC-040's or FC-041's; the stream later asked under that id is judged on
    its own batches only."""
    mo = ClaimsMonitor("/fx")
    early = {"repo": "local/beta", "path": "elsewhere.md", "line": 12}
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 4, "items": [early]}}))
    ask(mo, 4, "search/code", {"q": "frobnicate", "limit": 500, "partial": True})
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 4, "items": [HIT]}}))
    answer(mo, 4, {"items": [], "truncated": False})
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 4, "items": [early]}}))
    (claim,) = mo.claims
    assert claim.listed == (("local/alpha", "a.rs"),) and claim.lines == ()



def test_a_stream_the_suite_stopped_reading_keeps_its_lines_not_its_completeness(monkeypatch):
    """A stream the suite cut and whose process it retired (cases.kit.replies
    read_as_needed) is recorded from its batches: its hits' lines are judged,
    its completeness is not (a cut stream claims nothing), and a batch after
    the cut joins no claim."""
    from types import SimpleNamespace

    from cases.judges import claims

    mo = ClaimsMonitor("/fx")
    line = {"repo": "local/wide", "path": "w.txt", "line": 2}
    ask(mo, 5, "search/code", {"q": "tessellate", "limit": 500, "partial": True})
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 5, "items": [line]}}))
    mo.abandon(1, 5)
    mo.inbound(1, frame({"jsonrpc": "2.0", "method": "$/partial",
                         "params": {"id": 5, "items": [HIT]}}))
    (claim,) = mo.claims
    assert (claim.listed, claim.lines, claim.judgeable, claim.truncated) == \
        ((("local/wide", "w.txt"),), (("local/wide", "w.txt", 2),), False, ABSENT)
    called = []
    monkeypatch.setattr(claims, "JUDGES", {
        "all": claims.Judge("all", "search/code", lambda c, fx: called.append("all"), False),
        "lines": claims.Judge("lines", "search/code", lambda c, fx: called.append("lines"), True)})
    claims.harvest(SimpleNamespace(monitor=mo), SimpleNamespace(path="/fx"))
    assert called == ["lines"]
