"""A loopback HTTP test double: an HTTP server on a free 127.0.0.1 port that
answers every GET 200 with a body of its owner's choosing. The deep controls
start it inside an adapter (tests/adapters/controls_deep.py) and
tests/test_loopback_proxy.py relays to it through FC-052's proxy."""

from __future__ import annotations

import threading


class HttpDouble:
    """Serves in a daemon thread from construction; ``body(path)`` is the
    reply to ``GET path``. ``address`` is (host, port). Use as a context
    manager (or never close it: the thread dies with the process)."""

    def __init__(self, body: Callable[[str], bytes]) -> None:
        # imported here: every test adapter process loads this module, few serve HTTP
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):   # noqa: N802 (http.server's spelling)
                data = body(self.path)
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
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
