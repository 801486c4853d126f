"""The one outbound encoder (wire.framing) and the one id counter.

Every frame the client writes is encoded by encode_request /
encode_notification, deliberately unusual envelopes included, and every
request id comes from the session counter (PROTOCOL §7.3; RULINGS "Process
behaviour"): FC-053's request with an unknown top-level member takes the
next id like any other.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from wire import Provider
from wire.errors import WriteFailed
from wire.framing import encode_notification, encode_request

ADAPTER = Path(__file__).resolve().parents[1] / "vendor" / "fs_provider.py"


def test_requests_are_compact_and_envelope_members_come_last_without_replacing():
    text, msg = encode_request(7, "repo/tree", {"repo": "o/ü", "ref": None},
                               {"x_trace": {"span": 1}, "id": 99, "method": "other"})
    assert text == ('{"jsonrpc":"2.0","id":7,"method":"repo/tree",'
                    '"params":{"repo":"o/ü","ref":null},"x_trace":{"span":1}}')
    assert json.loads(text) == msg


def test_notifications_take_any_params():
    text, _ = encode_notification("x/forgeFuture", [1, 2, 3])
    assert text == '{"jsonrpc":"2.0","method":"x/forgeFuture","params":[1,2,3]}'


def test_an_envelope_request_takes_the_next_id_of_the_counter(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_bytes(b"a\n")
    with Provider([sys.executable, str(ADAPTER), str(tmp_path)], deadline_s=20) as p:
        p.start()                                                       # id 1
        plain = p.call("repo/clone_url", {"repo": "local/plain"})       # id 2
        odd = p.call("repo/clone_url", {"repo": "local/plain"}, envelope={"x_trace": {"s": 1}})
        assert (plain.id, odd.id) == (2, 3)
        assert odd.result() == plain.result()
        out = [e for e in p.transcript.entries() if e.direction == "out"]
        assert [e.id for e in out] == [1, 2, 3]
        assert out[-1].msg["x_trace"] == {"s": 1} and '"id":3' in out[-1].raw


def test_a_write_failure_is_typed():
    err = WriteFailed("broken pipe", request_id=4, method="repo/tree")
    assert err.origin == "host" and err.kind == "provider"
    assert err.message == "provider write: broken pipe" and err.reason == "broken pipe"
