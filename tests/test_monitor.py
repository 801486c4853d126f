"""wire.monitor: each frame rule fires on the frame that breaks it, and only there.

Frames are classified by wire.framing exactly as the transport does; the
monitor is fed the host's own requests first, as the transport feeds it.
"""

from __future__ import annotations

import base64
import json

import pytest

from wire import monitor as m
from wire.framing import classify


def frame(obj) -> object:
    line = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return classify(line)


def mon(*requests) -> m.Monitor:
    mo = m.Monitor()
    for rid, method, params in requests:
        mo.outbound(1, {"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    return mo


def rules(mo, obj, generation=1):
    return [f.rule for f in mo.inbound(generation, frame(obj))]


TREE = (2, "repo/tree", {"repo": "local/alpha", "ref": None})
SEARCH = (3, "search/code", {"q": "x", "limit": 500, "partial": True})
ONESHOT = (4, "search/code", {"q": "x", "limit": 500})
BLOB = (5, "repo/blob", {"repo": "local/alpha", "sha": "s"})
HIT = {"repo": "local/alpha", "path": "a.rs", "matches": ["x"]}


def ok(rid, result):
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def test_a_conforming_exchange_has_no_findings():
    mo = mon(TREE, SEARCH, BLOB)
    assert rules(mo, ok(2, {"entries": [{"path": "a", "type": "blob", "sha": "1"}],
                            "x_unknown": [1]})) == []
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",
                      "params": {"id": 3, "items": [HIT]}}) == []
    assert rules(mo, ok(3, {"items": [], "truncated": False})) == []
    assert rules(mo, ok(5, {"bytes_b64": base64.b64encode(b"\0\1\2").decode()})) == []
    assert rules(mo, {"jsonrpc": "2.0", "method": "window/logMessage", "params": {}}) == []


@pytest.mark.parametrize("line, rule", [
    (b"\xff\xfe not utf-8", m.STDOUT_UTF8),
    (b"adapter v1.0 starting", m.STDOUT_JSON),
    (b'{"jsonrpc":"2.0","id":2,"result":{}} {"jsonrpc":"2.0"}', m.STDOUT_JSON),
    (b'[{"jsonrpc":"2.0","id":2,"result":{}}]', m.STDOUT_JSON),
    (b"42", m.STDOUT_JSON),
])
def test_what_is_not_a_protocol_message(line, rule):
    assert rules(mon(TREE), line) == [rule]


def test_reply_ids():
    mo = mon(TREE, BLOB)
    assert rules(mo, {"jsonrpc": "2.0", "id": None, "error": {"code": -32603,
                                                            "message": "m"}}) == [m.REPLY_ID]
    assert rules(mo, {"jsonrpc": "2.0", "id": "2", "result": {}}) == [m.REPLY_ID]
    assert rules(mo, {"jsonrpc": "2.0", "id": 2.0, "result": {}}) == [m.REPLY_ID]
    assert rules(mo, ok(99, {})) == [m.REPLY_UNKNOWN]
    assert rules(mo, ok(2, {"entries": []})) == []
    assert rules(mo, ok(2, {"entries": []})) == [m.REPLY_TWICE]


def test_an_id_sent_to_another_generation_is_unknown_to_this_one():
    mo = mon(TREE, SEARCH)   # both sent to generation 1
    assert rules(mo, ok(2, {"entries": []}), generation=2) == [m.REPLY_UNKNOWN]
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",
                      "params": {"id": 3, "items": [HIT]}}, generation=2) == [m.PARTIAL_ID]
    assert rules(mo, ok(2, {"entries": []}), generation=1) == []   # its own process's reply


def test_envelope_members():
    mo = mon(TREE, BLOB)
    assert rules(mo, {"id": 2, "result": {"entries": []}}) == [m.JSONRPC]
    assert rules(mo, {"jsonrpc": "2.0", "id": 5, "result": {"bytes_b64": ""},
                      "error": None}) == [m.REPLY_MEMBERS]


def test_requests_to_the_host():
    mo = mon(TREE, SEARCH)
    assert rules(mo, {"jsonrpc": "2.0", "id": 3, "method": "$/partial",
                      "params": {"id": 3, "items": [HIT]}}) == [m.REQUEST_TO_HOST]
    assert rules(mo, {"jsonrpc": "2.0", "id": 2, "method": "workspace/configuration",
                      "params": {}}) == [m.REQUEST_TO_HOST]


def test_partials():
    part = lambda rid, items=(HIT,): {"jsonrpc": "2.0", "method": "$/partial",  # noqa: E731
                                       "params": {"id": rid, "items": list(items)}}
    mo = mon(TREE, ONESHOT)   # no stream in flight
    assert rules(mo, part(4)) == [m.PARTIAL_OPT_IN]
    assert rules(mo, part(2)) == [m.PARTIAL_OPT_IN]
    assert rules(mo, part(77)) == [m.PARTIAL_ID]
    mo = mon(SEARCH)
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",
                      "params": {"id": None, "items": []}}) == [m.PARTIAL_ID]
    assert rules(mo, part(3, [{"path": "a.rs"}])) == [m.PARTIAL_ITEMS]
    assert rules(mo, {"method": "$/partial", "params": {"id": 3, "items": []}}) == [m.JSONRPC]
    assert rules(mo, ok(3, {"items": []})) == []
    assert rules(mo, part(3)) == [m.PARTIAL_AFTER_REPLY]

def test_result_shapes_by_method():
    mo = mon(TREE, BLOB, (6, "repo/log", {"repo": "r", "path": None, "ref": None,
                                          "limit": None}))
    found = mo.inbound(1, frame(ok(2, {"entries": [{"path": "a", "type": "blob"}]})))
    assert [f.rule for f in found] == [m.RESULT_SHAPE]
    assert "entries[0].sha" in found[0].detail and found[0].method == "repo/tree"
    assert found[0].where() == "repo/tree (id 2), generation 1"
    assert rules(mo, ok(6, {"items": [{"sha": "c", "subject": "s", "author": 7,
                                       "date": "2026-01-01T00:00:00Z"}]})) == [m.RESULT_SHAPE]


def test_hits_in_a_streamed_search_reply_are_a_result_finding_of_that_stream_only():
    mo = mon(SEARCH, ONESHOT)
    found = mo.inbound(1, frame(ok(3, {"items": [HIT], "truncated": False})))
    assert [f.rule for f in found] == [m.RESULT_SHAPE] and found[0].streaming
    assert found[0].detail.startswith("search/code result: items: 1 hit(s)")
    assert rules(mo, ok(4, {"items": [HIT]})) == []   # a one-shot reply carries its hits


@pytest.mark.parametrize("text", ["AAEC\n", "AAE", "AA-_", "AAE=AAE=x", "QR=="])
def test_base64_is_strict_everywhere(text):
    mo = mon(BLOB, (7, "repo/blob_at", {"repo": "r", "path": "p", "ref": None}))
    assert rules(mo, ok(5, {"bytes_b64": text})) == [m.BASE64]
    assert rules(mo, ok(7, {"bytes_b64": text, "sha": "s"})) == [m.BASE64]


@pytest.mark.parametrize("error, strength", [
    ({"code": "1", "message": "m"}, "must"),
    ({"code": 1, "message": ""}, "must"),
    ({"code": 1, "message": "m", "data": "auth"}, "must"),
    ({"code": 1, "message": "m", "data": {"kind": 3}}, "must"),
    ({"code": 1, "message": "m", "data": {"kind": "rate_limited", "retry_after_s": 1.5}}, "must"),
    ({"code": 1, "message": "m", "data": {"retry_after_s": -1}}, "must"),
    ({"code": 0, "message": "m"}, "should"),
])
def test_error_shapes(error, strength):
    mo = mon(TREE)
    found = mo.inbound(1, frame({"jsonrpc": "2.0", "id": 2, "error": error}))
    assert [(f.rule, f.strength) for f in found] == [(m.ERROR_SHAPE, strength)]


def test_legal_errors_pass():
    mo = mon(TREE, BLOB)
    assert rules(mo, {"jsonrpc": "2.0", "id": 2, "error": {
        "code": -32601, "message": "unknown method", "data": {"kind": "x_future",
                                                              "retry_after_s": 0, "y": None}}}) == []
    assert rules(mo, {"jsonrpc": "2.0", "id": 5, "error": {"code": 404, "message": "m",
                                                           "data": None}}) == []


def test_null_kind_and_retry_after_are_no_value():
    # §3.0: a genuinely optional member sent as null is no value, as absent
    mo = mon(TREE)
    assert rules(mo, {"jsonrpc": "2.0", "id": 2, "error": {
        "code": 1, "message": "m", "data": {"kind": None, "retry_after_s": None}}}) == []


def test_answers_to_notifications():
    mo = mon(TREE)
    assert rules(mo, ok(2, {"entries": []})) == []
    mo.outbound(1, {"jsonrpc": "2.0", "method": "window/logMessage", "params": {}})
    found = mo.inbound(1, frame({"jsonrpc": "2.0", "id": None,
                                 "error": {"code": -32601, "message": "unknown"}}))
    assert [(f.rule, f.method) for f in found] == [(m.NOTIFICATION_ANSWERED, "window/logMessage")]
    mo.outbound(1, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 2}})
    found = mo.inbound(1, frame({"jsonrpc": "2.0", "id": 2, "error": {"code": 1, "message": "x"}}))
    assert [(f.rule, f.method) for f in found] == [(m.NOTIFICATION_ANSWERED, "$/cancelRequest")]
    # once a request follows, a bad id is that request's problem again
    mo.outbound(1, {"jsonrpc": "2.0", "id": 3, "method": "repo/tree", "params": {}})
    assert rules(mo, {"jsonrpc": "2.0", "id": None, "result": {}}) == [m.REPLY_ID]
    assert rules(mo, ok(3, {"entries": []})) == []


def test_a_reply_to_a_live_request_after_a_cancel_is_normal():
    mo = mon(SEARCH)
    mo.outbound(1, {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": 3}})
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",
                      "params": {"id": 3, "items": [HIT]}}) == []
    assert rules(mo, ok(3, {"items": [], "truncated": True})) == []


def test_a_partial_naming_another_request_while_a_stream_is_live_is_a_wrong_id():
    mo = mon(TREE, SEARCH)   # the tree (2) and a stream (3) in flight together
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",
                      "params": {"id": 2, "items": [HIT]}}) == [m.PARTIAL_ID]
    assert rules(mo, ok(3, {"items": []})) == []
    assert rules(mo, {"jsonrpc": "2.0", "method": "$/partial",      # no stream live any more
                      "params": {"id": 2, "items": [HIT]}}) == [m.PARTIAL_OPT_IN]


def test_a_late_partial_of_an_ended_stream_is_after_reply_while_another_stream_is_live():
    second = (6, "search/code", {"q": "y", "limit": 500, "partial": True})
    mo = mon(SEARCH, second)   # two streams in flight; 3 ends first
    part = {"jsonrpc": "2.0", "method": "$/partial", "params": {"id": 3, "items": [HIT]}}
    assert rules(mo, part) == []
    assert rules(mo, ok(3, {"items": []})) == []
    assert rules(mo, part) == [m.PARTIAL_AFTER_REPLY]   # 6 is still streaming


def test_handshake_null_icon_and_cache_are_none():
    # §3.0: icon and cache have no default, so null is no icon and no cache size
    assert m.handshake_problems({"protocol": 1, "icon": None, "cache": None}) == []
    assert [rule for rule, _, _ in m.handshake_problems({"protocol": 1, "icon": 7, "cache": 3})] \
        == [m.HANDSHAKE_ICON, m.HANDSHAKE_CACHE]
