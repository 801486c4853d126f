"""Hostile: serves the reference, but every reply after a correct initialize
carries the wrong id (the right one plus 1,000,000: an id never issued).

The host drops such replies (unknown_id), so every request can only time
out. Expected: exit 1; each case that asks something fails with a timeout
sentence naming what it waited for.
"""
import _common
from tests.adapters.proxy import Hooks

OFFSET = 1_000_000


class WrongId(Hooks):
    def reply(self, proxy, req, msg):
        if req is not None and req.method != "initialize" and isinstance(msg.get("id"), int):
            msg["id"] += OFFSET
        return msg


opts, rest = _common.options()
_common.serve(WrongId(), rest)
