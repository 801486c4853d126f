"""FC-052's proxy: a loopback HTTP(S) forward proxy with a gate.

FC-052 advertises this proxy through the proxy variables (HTTP_PROXY,
HTTPS_PROXY, ALL_PROXY and their lower-case forms). While the gate is
closed (the adapter is starting and answering ``initialize``) every
connection that arrives is counted, answered ``503`` and closed: that is
network I/O during initialize. Once the case opens the gate the proxy
relays, so an HTTP client that honours the proxy variables keeps working
for the rest of the case (RULINGS "Process behaviour": such a client must
still work after initialize).

It relays only to loopback targets (127.0.0.0/8, ::1, ``localhost``): the
suite never talks to any other address. A request for another host gets
``502`` with a body saying so. Both forms a client uses are handled:
``CONNECT host:port`` (HTTPS; a byte tunnel) and an absolute-form request
(``GET http://host:port/path``; forwarded in origin-form, then the bytes are
relayed both ways).
"""

from __future__ import annotations

import ipaddress
import select
import socket
from urllib.parse import urlsplit

from cases.netwatch import LoopbackListener, close_quietly

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_HEAD_LIMIT = 64 * 1024
_IO_TIMEOUT_S = 30.0   # a relayed connection idle this long is dropped (no case waits on it)


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _target(head: bytes) -> tuple[str, str, int] | None:
    """(method, host, port) of a proxy request's first line, or None."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1", "replace")
    parts = line.split()
    if len(parts) != 3:
        return None
    method, where = parts[0].upper(), parts[1]
    try:
        if method == "CONNECT":
            url, default = urlsplit("//" + where), 443
        else:
            url = urlsplit(where)
            if not url.scheme:
                return None
            default = 443 if url.scheme.lower() == "https" else 80
        host, port = url.hostname, url.port or default
    except ValueError:
        return None
    return (method, host, port) if host else None


def _origin_form(head: bytes) -> bytes:
    """The request with its absolute-form target rewritten to origin-form
    (``GET /path?q HTTP/1.1``), as a test double that is no proxy expects."""
    first, sep, rest = head.partition(b"\r\n")
    method, where, version = first.split(b" ")
    url = urlsplit(where.decode("latin-1"))
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    return b" ".join((method, path.encode("latin-1"), version)) + sep + rest


class GatedProxy(LoopbackListener):
    """The proxy (see module doc). Use as a context manager; ``open_gate()``
    once initialize has been answered; ``early()`` counts what came before."""

    def __init__(self) -> None:
        super().__init__(backlog=32, name="fc052-proxy", handler_name="fc052-relay")
        self.url = f"http://127.0.0.1:{self.port}"
        self._gate_open = False
        self._early: list[str] = []       # what arrived while the gate was closed
        self._relayed = 0
        self._refused: list[str] = []     # non-loopback targets asked for after the gate
        self._open_socks: set[socket.socket] = set()
        self._start()

    def env(self) -> dict[str, str]:
        env = {}
        for name in PROXY_VARIABLES:
            env[name] = env[name.lower()] = self.url
        return env

    # ------------------------------------------------------------ the gate

    def open_gate(self) -> int:
        """Open the gate; returns the early count, queued connections included
        (a connect() that completed before the gate opened is never missed)."""
        with self._lock:
            if self._queued() and not self._closed:
                try:
                    conn, peer = self._sock.accept()
                except OSError:
                    conn = None
                if conn is not None:
                    self._early.append(f"{peer[0]}:{peer[1]} (queued)")
                    self._refuse_early(conn)
            self._gate_open = True
            return len(self._early)

    def early(self) -> list[str]:
        with self._lock:
            return list(self._early)

    def relayed(self) -> int:
        with self._lock:
            return self._relayed

    def refused_targets(self) -> list[str]:
        with self._lock:
            return list(self._refused)

    # ------------------------------------------------------------ serving

    def _accepted(self, conn: socket.socket, peer: tuple) -> bool:
        if not self._gate_open:
            self._early.append(f"{peer[0]}:{peer[1]}")
            self._refuse_early(conn)
            return False
        self._open_socks.add(conn)
        return True

    @staticmethod
    def _refuse_early(conn: socket.socket) -> None:
        try:
            conn.setblocking(True)
            conn.settimeout(0.5)
            conn.sendall(b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\n"
                         b"Connection: close\r\n\r\n")
        except OSError:
            pass
        finally:
            close_quietly(conn)

    def _handle(self, conn: socket.socket) -> None:
        upstream = None
        try:
            conn.setblocking(True)
            conn.settimeout(_IO_TIMEOUT_S)
            head = b""
            while b"\r\n\r\n" not in head and len(head) < _HEAD_LIMIT:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            target = _target(head)
            if target is None:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                return
            method, host, port = target
            if not is_loopback(host):
                with self._lock:
                    self._refused.append(f"{host}:{port}")
                body = (b"forge-conformance's FC-052 proxy relays to loopback addresses only\n")
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
                             b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                             b"Connection: close\r\n\r\n" + body)
                return
            upstream = socket.create_connection((host.strip("[]"), port), timeout=_IO_TIMEOUT_S)
            with self._lock:
                self._relayed += 1
                self._open_socks.add(upstream)
            if method == "CONNECT":
                end = head.index(b"\r\n\r\n") + 4
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if head[end:]:
                    upstream.sendall(head[end:])
            else:
                upstream.sendall(_origin_form(head))
            self._pump(conn, upstream)
        except (OSError, ValueError):
            pass    # (ValueError: close() closed a socket of ours while select waited on it)
        finally:
            for s in (conn, upstream):
                if s is not None:
                    with self._lock:
                        self._open_socks.discard(s)
                    close_quietly(s)

    @staticmethod
    def _pump(a: socket.socket, b: socket.socket) -> None:
        peers = {a: b, b: a}
        while True:
            ready, _, _ = select.select(list(peers), [], [], _IO_TIMEOUT_S)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                peers[s].sendall(data)

    def _held_sockets(self) -> list[socket.socket]:
        return list(self._open_socks)
