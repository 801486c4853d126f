"""For the interruption tests: leaves a setsid grandchild that ignores
SIGTERM and holds stdout (like orphan.py), serves the reference, and when
first asked ``search/code`` writes "ready" to the FIFO ``--ready=PATH`` and
never answers that request. With ``--stay=1`` it also ignores SIGTERM and
stdin EOF (like ignore_eof.py) and writes "eof" to the FIFO when the suite
closes its stdin, i.e. when the suite has begun to stop it.
"""
import _common
from tests.adapters.proxy import Hooks


class HangOnSearch(Hooks):
    def __init__(self, ready):
        self.ready = ready

    def request(self, proxy, req, msg):
        if req.method != "search/code":
            return msg
        _common.tell(self.ready, b"ready")
        self.ready = None
        return None                    # never answered


opts, rest = _common.options()
_common.orphan()
_common.serve(HangOnSearch(opts.get("ready")), rest, stay=bool(opts.get("stay")),
              on_eof=lambda: _common.tell(opts.get("ready"), b"eof"))
