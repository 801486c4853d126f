"""A loopback HTTP test double: an HTTP/1.1 server on a free 127.0.0.1 port
that routes by path, as the test doubles an adapter's CI embeds do. The
deep controls start it inside an adapter (tests/adapters/controls_deep.py)
and tests/test_loopback_proxy.py relays to it through FC-052's proxy."""

from __future__ import annotations

import threading


class HttpDouble:
    """Serves in a daemon thread from construction; ``body(path)`` is the
    reply to ``GET path`` (and to a ``POST``, whose body it echoes after
    it). Connections are kept alive (HTTP/1.1). A request target that is not
    origin-form (``GET http://host/path``: what a proxy that does not
    rewrite would send) is no route here: ``404``. ``requests`` lists
    (client port, method, target) of every request, in order. ``address``
    is (host, port). Use as a context manager (or never close it: the thread
    dies with the process)."""

    def __init__(self, body: Callable[[str], bytes]) -> None:
        # imported here: every test adapter process loads this module, few serve HTTP
        import socket
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        requests = self.requests = []

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self):
                super().setup()
                # the head and the body are two writes: no Nagle wait between them
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _answer(self, extra: bytes = b"") -> None:
                requests.append((self.client_address[1], self.command, self.path))
                if not self.path.startswith("/"):
                    data, status = b"no route for " + self.path.encode() + b"\n", 404
                else:
                    data, status = body(self.path) + extra, 200
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            def do_GET(self):   # noqa: N802 (http.server's spelling)
                self._answer()

            def do_HEAD(self):   # noqa: N802
                self._answer()

            def do_POST(self):   # noqa: N802
                self._answer(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.address: tuple[str, int] = self._server.server_address[:2]
        self.port = self.address[1]
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> "HttpDouble":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
