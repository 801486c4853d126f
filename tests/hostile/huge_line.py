"""Hostile: serves the reference, but one reply of the whole run
(``--state=DIR`` holds the claim across processes) is one 50 MB line: the
real reply padded with a 50 MB string, still valid JSON, far over the
suite's framing cap. Which reply: the first after initialize, or with
``--at=initialize`` the first handshake (the suite's pre-flight).

Expected: exit 1, the one case that waited for that reply failing and naming
the framing violation, every other case passing; or, for the handshake,
exit 2 with one line naming it. Either way the suite's memory stays bounded
(the line is cut, not buffered).
"""
import json

import _common
from tests.adapters.proxy import Hooks

PAD_BYTES = 50 * 2**20


class HugeLine(Hooks):
    def __init__(self, state, at_handshake):
        self.state = state
        self.at_handshake = at_handshake
        self.tried = False

    def reply(self, proxy, req, msg):
        if self.tried or req is None or (req.method == "initialize") != self.at_handshake:
            return msg
        self.tried = True
        if not _common.claim_once(self.state, "sent"):
            return msg                  # another process of this run sent it
        result = msg.get("result")
        padded = {"x_pad": "x" * PAD_BYTES, **(result if isinstance(result, dict) else {})}
        line = json.dumps({"jsonrpc": "2.0", "id": msg.get("id"), "result": padded},
                          separators=(",", ":")).encode() + b"\n"
        _common.log(f"answering {req.method} (id {req.id}) with one line of {len(line)} bytes")
        proxy.send_host(line)
        return None


opts, rest = _common.options()
_common.serve(HugeLine(opts["state"], opts.get("at") == "initialize"), rest)
