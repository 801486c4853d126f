"""Hostile: serves the reference, but every reply after a correct initialize
(results and errors alike) is ``"result": null``.

Expected: exit 1, no traceback: each case fails with a reply-shape sentence
(a null where an object was expected), or because an error was expected and
a result came back.
"""
import _common
from tests.adapters.proxy import Hooks


class NullResult(Hooks):
    def reply(self, proxy, req, msg):
        if req is not None and req.method != "initialize":
            return {"jsonrpc": "2.0", "id": msg.get("id"), "result": None}
        return msg


opts, rest = _common.options()
_common.serve(NullResult(), rest)
