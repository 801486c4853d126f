"""Hostile: serves the reference, but before every reply after initialize
prints a line that is not JSON and a line that is not UTF-8.

The junk line is dropped by the host (a conformance smell); the invalid UTF-8
ends the generation (PROTOCOL 7.2 HOST-QUIRK), so every request after the
handshake fails. Expected: exit 1, failures naming the framing violation.
"""
import _common
from tests.adapters.proxy import Hooks

JUNK = b"this is not JSON, just a debug print\n"
BAD_UTF8 = b"\xff\xfe not utf-8 \xc3\x28\n"


class Garbage(Hooks):
    def reply(self, proxy, req, msg):
        if req is not None and req.method != "initialize":
            proxy.send_host(JUNK)
            proxy.send_host(BAD_UTF8)
        return msg


opts, rest = _common.options()
_common.serve(Garbage(), rest)
