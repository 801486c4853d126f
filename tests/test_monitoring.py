"""cases/monitoring: each monitor finding goes to the one case that owns its rule,
and a verdict names where in the run it was seen."""

from __future__ import annotations

import pytest

from cases.judges import claims, monitoring, null_params
from wire import monitor as m
from wire.monitor import Finding


def finding(rule, detail="d", method=None, streaming=False, strength="must"):
    return Finding(rule, detail, 1, strength, 7, method, 3, "raw", streaming)


@pytest.mark.parametrize("f, owner", [
    (finding(m.STDOUT_JSON), "FC-123"),
    (finding(m.PARTIAL_AFTER_REPLY), "FC-041"),
    (finding(m.PARTIAL_ITEMS, "$/partial params: items[0].located: expected a boolean"),
     "FC-032"),
    (finding(m.PARTIAL_ITEMS, "$/partial params: items[0].line: expected an integer"), "FC-044"),
    (finding(m.BASE64, method="repo/blob_at"), "FC-024"),
    (finding(m.NOTIFICATION_ANSWERED, method="$/cancelRequest"), "FC-122"),
    (finding(m.NOTIFICATION_ANSWERED, method="window/logMessage"), "FC-054"),
    (finding(m.RESULT_SHAPE, "repo/tree result: entries[3].sha: missing", "repo/tree"), "FC-021"),
    (finding(m.RESULT_SHAPE, "repo/tree result: truncated: expected a boolean", "repo/tree"),
     "FC-022"),
    (finding(m.RESULT_SHAPE, "repo/log result: truncated: expected a boolean", "repo/log"),
     "FC-095"),
    (finding(m.RESULT_SHAPE, "repo/log result: items[0].sha: missing", "repo/log"), "FC-094"),
    (finding(claims.TREE_TRUNCATED, method="repo/tree"), "FC-022"),
    (finding(claims.LOG_TRUNCATED, method="repo/log"), "FC-095"),
    (finding(claims.SEARCH_TRUNCATED, method="search/code"), "FC-070"),
    (finding(claims.STREAM_TRUNCATED, method="search/code", streaming=True), "FC-042"),
    (finding(claims.ICON_DISPLAY, method="initialize"), "FC-080"),
    (finding(claims.COMMIT_TRUNCATED, method="repo/commit"), "FC-109"),
    (finding(claims.SEARCH_LINE, method="search/code"), "FC-031"),
    (finding(claims.LOG_DATE, method="repo/log"), "FC-094"),
    (finding(claims.LOG_ORDER, method="repo/log"), "FC-094"),
    (finding(m.RESULT_SHAPE, "search/code result: index.as_of: expected a string",
             "search/code"), "FC-033"),
    (finding(m.RESULT_SHAPE, "search/code result: items[2].located: expected a boolean",
             "search/code"), "FC-032"),
    (finding(m.RESULT_SHAPE, "search/code result: items[0].repo: missing", "search/code"),
     "FC-070"),
    (finding(m.RESULT_SHAPE, "search/code result: truncated: expected a boolean",
             "search/code"), "FC-070"),
    (finding(m.RESULT_SHAPE, "search/code result: truncated: expected a boolean",
             "search/code", streaming=True), "FC-042"),
    (finding(m.RESULT_SHAPE, "search/code result: index: expected an object",
             "search/code", streaming=True), "FC-033"),
    (finding(m.RESULT_SHAPE, "search/code result: items: expected an array", "search/code",
             streaming=True), "FC-042"),
    (finding(null_params.NULL_LIKE_ABSENT, method="repo/tree"), "FC-053"),
    (finding(m.EXIT_AFTER_CANCEL), "FC-122"),
    (finding(m.EXIT_AFTER_NOTIFICATION), "FC-054"),
    (finding(m.EXIT_IDLE, method="repo/tree", strength="should"), "FC-050"),
    (finding(m.EXIT_IN_FLIGHT, method="repo/blame"), None),   # the waiting case's
])
def test_owners(f, owner):
    assert monitoring.owner_of(f) == owner


def test_a_cache_root_finding_names_the_process_and_fails_fc055(tmp_path):
    """What a process left in its host cache root is FC-055's, whatever case
    started the process; the sentence names the entries, the case and the
    process, and speaks of processes, not frames."""
    seen = [monitoring.cache_root_seen(tmp_path / "rootle", ["blobs", "crash.json"], "spawn#2",
                                       "FC-005")]
    out = monitoring.verdicts(seen, {"FC-055", "FC-005"})
    assert set(out) == {"FC-055"}
    text = out["FC-055"].failure
    assert "blobs, crash.json" in text and "during FC-005, spawn#2" in text
    assert "process(es)" in text and "frame" not in text and "generation" not in text


def test_verdicts_fail_for_a_must_warn_for_a_should_and_say_where():
    seen = [monitoring.Seen(finding(m.STDOUT_JSON, "junk"), "FC-020", "adapter"),
            monitoring.Seen(finding(m.STDOUT_JSON, "junk"), "FC-021", "adapter"),
            monitoring.Seen(finding(m.ERROR_SHAPE, "code 0", "repo/tree", strength="should"),
                            None, "spawn#1")]
    out = monitoring.verdicts(seen, {"FC-123", "FC-063"})
    assert "2 frame(s)" in out["FC-123"].failure and "during FC-020" in out["FC-123"].failure
    assert out["FC-063"].failure is None and "between cases" in out["FC-063"].warnings[0]
    assert monitoring.verdicts(seen, {"FC-001"}) == {}   # owners that did not run say nothing


# ---------------------------------------------------------------- unasked exits

# A stand-in adapter: answers every request, and ends (exit status 3) where
# EXIT_AT says: "request:<method>" (on reading it), "reply:<method>" (right
# after answering it) or "note:<method>" (on reading that notification).
EXITER = r"""
import json, os, sys
at = os.environ.get("EXIT_AT", "")
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if "id" not in msg:
        if at == "note:" + method:
            sys.exit(3)
        continue
    if at == "request:" + method:
        sys.exit(3)
    result = {"protocol": 1} if method == "initialize" else {"entries": []}
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}) + "\n")
    sys.stdout.flush()
    if at == "reply:" + method:
        sys.exit(3)
"""


def _exits(at: str, act) -> list:
    """The monitor's findings on a stand-in adapter told to end at ``at``
    after ``act(provider)``, once its generation 1 has ended."""
    import os
    import sys

    from wire.transport import Provider

    env = {**os.environ, "EXIT_AT": at}
    # the suite's monitor (cases/judges/claims.py builds on the protocol monitor)
    with Provider([sys.executable, "-c", EXITER], env=env, deadline_s=10,
                  monitor=claims.ClaimsMonitor("no-fixture")) as p:
        p.start()
        act(p)
        assert p._gens[1].ended.wait(10)   # the reader saw the end and judged it
        return list(p.findings)


def _tree(p):
    return p.call("repo/tree", {"repo": "local/alpha"}).wait()


def test_an_exit_after_a_cancel_fails_the_cancels_owner_with_generation_and_status():
    def act(p):
        call = p.call("repo/tree", {"repo": "local/alpha"})
        call.wait()
        p.cancel(call)
    found = _exits("note:$/cancelRequest", act)
    assert [(f.rule, f.strength, f.generation) for f in found] == [
        (m.EXIT_AFTER_CANCEL, "must", 1)]
    assert "generation 1 exited with code 3" in found[0].detail
    assert "repo/tree (id 2), answered" in found[0].detail
    assert monitoring.owner_of(found[0]) == "FC-122"


def test_an_exit_after_another_notification_fails_fc054():
    found = _exits("note:$/progress", lambda p: (_tree(p), p.notify("$/progress", {"token": 1})))
    assert [(f.rule, f.strength) for f in found] == [(m.EXIT_AFTER_NOTIFICATION, "must")]
    assert "$/progress" in found[0].detail and "exited with code 3" in found[0].detail
    assert monitoring.owner_of(found[0]) == "FC-054"


def test_an_exit_with_a_request_in_flight_is_the_waiting_cases():
    """The request fails as in the host (closed output, with the exit
    status), in the case waiting on it; the finding names it, no other case
    is failed for it."""
    calls = []
    found = _exits("request:repo/blame",
                   lambda p: calls.append(p.call("repo/blame", {"repo": "r"})) or calls[0].wait())
    assert [(f.rule, f.method, f.request_id) for f in found] == [
        (m.EXIT_IN_FLIGHT, "repo/blame", 2)]
    assert "generation 1 exited with code 3" in found[0].detail
    assert calls[0].outcome == "closed" and "exited with code 3" in str(calls[0].error)
    assert monitoring.owner_of(found[0]) is None


def test_an_exit_after_a_reply_with_nothing_in_flight_warns_fc050():
    """Nothing the host wrote is left unanswered: a SHOULD finding, a
    warning on the restart case, naming the request it followed."""
    found = _exits("reply:repo/tree", _tree)
    assert [(f.rule, f.strength, f.method) for f in found] == [
        (m.EXIT_IDLE, "should", "repo/tree")]
    assert "after answering repo/tree (id 2)" in found[0].detail
    seen = monitoring.tagged(found, type("P", (), {"label": "adapter"})(), "FC-013")
    verdict = monitoring.verdicts(seen, {"FC-050", "FC-013"})
    assert set(verdict) == {"FC-050"} and verdict["FC-050"].failure is None
    assert "during FC-013" in verdict["FC-050"].warnings[0]


def test_an_end_the_host_asked_for_is_no_finding():
    """A kill, a respawn and a close end generations on the host's word."""
    import os
    import sys

    from wire.transport import Provider

    with Provider([sys.executable, "-c", EXITER], env=dict(os.environ), deadline_s=10,
                  monitor=m.Monitor()) as p:
        p.start()
        _tree(p)
        p.kill()
        _tree(p)   # a lazy respawn: generation 2
        p.respawn()
        _tree(p)
    assert p.generation == 3 and p.findings == []
