"""Controls of the adapter process's life: legal ways to talk to a backend and to end, kept green.

``TABLE`` maps each switch to its Variant (tests/adapters/controls/__init__.py
gathers the tables into CONTROLS).
"""

from __future__ import annotations

import os
import threading

from tests.adapters.hooks import Variant, cited
from tests.adapters.http_double import HttpDouble
from tests.adapters.proxy import Hooks

TABLE: dict[str, Variant] = {}
control = cited(TABLE)


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


@control("exits-when-idle",
         'RULINGS "Process behaviour": an exit the suite did not ask for "after a reply with nothing '
         'in flight it warns (the host restarts it with a backoff the user feels)"; §7.10 the host '
         'replaces a dead child lazily, on the next request', warns=("FC-050",))
class ExitsWhenIdle(Hooks):
    """The adapter exits (status 0) once it has answered a streamed search, nothing else is in flight, and it read nothing for IDLE_S (a server that stops when idle).

    Only after a reply: a notification read last keeps it running (an exit
    then would follow that notification). The end-of-group window (TAIL_S,
    1.5 s) after the transport group's last stream (FC-122's, last in its
    group) gives it its idle time in every run, so FC-050 carries the
    warning; mid-run, a case's next request seldom comes that late after a
    stream (if it came just as the adapter exits, it would fail as in the
    host, in flight).
    """

    IDLE_S = 1.2

    def start(self, proxy):
        self.lock = threading.Lock()
        self.inputs = 0          # lines read from the host so far
        self.timer = None

    def _read(self) -> None:
        with self.lock:
            self.inputs += 1
            if self.timer is not None:
                self.timer.cancel()
                self.timer = None

    def request(self, proxy, req, msg):
        self._read()
        return msg

    def notification(self, proxy, msg):
        self._read()
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and set(proxy.requests) <= {req.id}:
            with self.lock:
                seen = self.inputs
                if self.timer is not None:
                    self.timer.cancel()
                self.timer = proxy.later(self.IDLE_S, lambda: self._idle(proxy, seen))
        return msg

    def _idle(self, proxy, seen: int) -> None:
        with self.lock:
            if self.inputs != seen or proxy.requests:
                return
            proxy.log(f"idle for {self.IDLE_S:g} s after a reply: exiting")
            proxy._shutdown(0)
