"""Controls of the adapter process's life: legal ways to talk to a backend
and to end, kept green (tests/test_controls.py). Each hook class carries
``legal``: the PROTOCOL.md / RULINGS.md text that makes it legal. They
register into CONTROLS (tests/adapters/controls.py imports this module at
its end).

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

import os

from tests.adapters.controls import control as matrix_control
from tests.adapters.http_double import HttpDouble
from tests.adapters.proxy import Hooks


def control(switch: str, legal: str, warns: tuple[str, ...] = ()):
    def add(cls):
        cls.legal = legal
        return matrix_control(switch, warns=warns)(cls)
    return add


@control("keep-alive-proxy-client",
         'RULINGS: FC-052 "... a client that honours the proxy variables must still work after '
         'initialize"; RFC 9112 §3.2.1: a proxy forwards each request to the origin in origin-form')
class KeepAliveProxyClient(Hooks):
    """An HTTP/1.1 client keeps one connection to its backend alive (through HTTP_PROXY when set) and GETs a path-routing loopback test double before answering each request.

    The test double answers an absolute-form target 404, as the doubles an
    adapter's CI embeds do; a request whose backend call fails answers kind
    network, as a real adapter would. Nothing connects before the first
    request after initialize (initialize stays quiet).
    """

    def start(self, proxy):
        self.double = HttpDouble(lambda path: b'{"path": "' + path.encode() + b'"}')
        self.conn = None
        self.fetches = 0

    def _get(self, path: str) -> None:
        import http.client
        from urllib.parse import urlsplit

        host, port = self.double.address
        via = os.environ.get("HTTP_PROXY") or os.environ.get("http_proxy")
        if self.conn is None:
            where = urlsplit(via) if via else None
            self.conn = http.client.HTTPConnection(where.hostname if where else host,
                                                   where.port if where else port, timeout=5)
        target = f"http://{host}:{port}{path}" if via else path   # absolute-form to a proxy
        self.conn.request("GET", target)
        reply = self.conn.getresponse()
        body = reply.read()
        if reply.status != 200 or path.encode() not in body:
            raise OSError(f"the test double answered {reply.status} for {path}: {body[:80]!r}")

    def request(self, proxy, req, msg):
        if req.method != "initialize":
            self.fetches += 1
            try:
                self._get(f"/api/v4/{req.method}/{self.fetches}")
            except (OSError, ValueError) as exc:
                proxy.log(f"backend call failed: {exc}")
                proxy.error(req, f"backend unreachable: {exc}", kind="network")
                return None
        return msg
