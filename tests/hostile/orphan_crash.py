"""Hostile: like orphan.py (a setsid grandchild that ignores SIGTERM holds
stdout open), but the adapter exits with code 3 when it is asked repo/blob.

Because the grandchild keeps the pipe open, the suite never sees EOF: the
in-flight repo/blob can only end by its deadline (or by the suite noticing
the exit). Expected: exit 1; that case fails with a timeout or crash
sentence; the next case gets a fresh adapter and passes; no process survives.
"""
import os

import _common
from tests.adapters.proxy import Hooks


class CrashOnBlob(Hooks):
    def request(self, proxy, req, msg):
        if req.method == "repo/blob":
            _common.log("asked repo/blob: exiting with code 3, the grandchild keeps stdout")
            os._exit(3)                 # the reference runs in this process: it ends too
        return msg


opts, rest = _common.options()
_common.log(f"left grandchild {_common.orphan()} holding stdout")
_common.serve(CrashOnBlob(), rest)
