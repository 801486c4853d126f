"""A loopback HTTP(S) forward proxy with a gate: how network I/O during initialize is seen.

The case that owns that rule (in ``cases.registry.OWNERS``) advertises
this proxy through the proxy variables (HTTP_PROXY,
HTTPS_PROXY, ALL_PROXY and their lower-case forms). While the gate is
closed (the adapter is starting and answering ``initialize``) every
connection that arrives is counted, answered ``503`` and closed: that is
network I/O during initialize. Once the case opens the gate the proxy
relays, so an HTTP client that honours the proxy variables keeps working
for the rest of the case (RULINGS "Process behaviour": such a client must
still work after initialize).

It relays only to loopback targets (127.0.0.0/8, ::1, ``localhost``): the
suite never talks to any other address. A request for another host gets
``502`` with a body saying so. It speaks HTTP/1.1 as a forward proxy must
(RFC 9112 §3.2): ``CONNECT host:port`` (HTTPS) becomes a byte tunnel, and
every absolute-form request of a kept-alive connection (``GET
http://host:port/path``) goes to the origin in origin-form (``GET /path``),
one message at a time, each request's and response's body framed by its
own ``Content-Length`` or chunked coding, so an origin that routes by path
(a test double that is no proxy) answers every request, not only the first.
"""

from __future__ import annotations

import ipaddress
import select
import socket
from urllib.parse import urlsplit

from cases import registry
from cases.kit.netwatch import LoopbackListener, close_quietly

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
_HEAD_LIMIT = 64 * 1024
_IO_TIMEOUT_S = 30.0   # a relayed connection idle this long is dropped (no case waits on it)
# a proxy's own headers, never sent on to the origin (RFC 9110 §7.6.1, §11.7.2)
_HOP_HEADERS = (b"proxy-connection", b"proxy-authorization", b"expect")


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


def _headers(head: bytes) -> dict[bytes, bytes]:
    """A message head's header fields, lower-cased names; repeated ones joined."""
    out: dict[bytes, bytes] = {}
    for line in head.split(b"\r\n")[1:]:
        name, sep, value = line.partition(b":")
        if sep:
            key = name.strip().lower()
            out[key] = (out[key] + b", " if key in out else b"") + value.strip()
    return out


def _tokens(value: bytes) -> set[bytes]:
    return {t.strip().lower() for t in value.split(b",") if t.strip()}


def _origin_form(head: bytes) -> bytes:
    """The request with its absolute-form target rewritten to origin-form
    (``GET /path?q HTTP/1.1``), as an origin that is no proxy expects, and
    the proxy's own headers left out."""
    first, _sep, rest = head.partition(b"\r\n")
    method, where, version = first.split(b" ")
    url = urlsplit(where.decode("latin-1"))
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    fields = [line for line in rest.split(b"\r\n")
              if line.partition(b":")[0].strip().lower() not in _HOP_HEADERS]
    return b"\r\n".join([b" ".join((method, path.encode("latin-1"), version)), *fields])


def _body(head: bytes, fields: dict[bytes, bytes], *, response_to: bytes | None = None):
    """How a message's body is framed (RFC 9112 §6.3): ("chunked",),
    ("length", n), or ("close",) for a response read until the origin
    closes; ("length", 0) when it has none."""
    if response_to is not None:
        status = head.split(b" ", 2)[1] if head.count(b" ") else b""
        if response_to == b"HEAD" or status[:1] == b"1" or status in (b"204", b"304"):
            return ("length", 0)
    if b"chunked" in _tokens(fields.get(b"transfer-encoding", b"")):
        return ("chunked",)
    if b"content-length" in fields:
        try:
            return ("length", int(fields[b"content-length"].split(b",")[0]))
        except ValueError:
            raise OSError("unreadable Content-Length") from None
    return ("close",) if response_to is not None else ("length", 0)


def _keeps_alive(head: bytes, fields: dict[bytes, bytes]) -> bool:
    """Whether a message lets its connection carry another (RFC 9112 §9.3)."""
    options = _tokens(fields.get(b"connection", b""))
    if b"close" in options:
        return False
    return b"HTTP/1.0" not in head.split(b"\r\n", 1)[0] or b"keep-alive" in options


class _Stream:
    """A socket read message by message: a head, then a framed body."""

    def __init__(self, sock: socket.socket) -> None:
        # a message goes on in pieces (head, body, chunks): no Nagle wait between them
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        self.buf = b""

    def _fill(self) -> bool:
        chunk = self.sock.recv(65536)
        self.buf += chunk
        return bool(chunk)

    def head(self) -> bytes | None:
        """The next message's head (through its blank line), None at EOF
        before any byte of it."""
        # blank lines before a message are ignored (RFC 9112 §2.2)
        while b"\r\n\r\n" not in self.buf.lstrip(b"\r\n"):
            if len(self.buf) > _HEAD_LIMIT:
                raise OSError("message head too long")
            if not self._fill():
                if self.buf:
                    raise OSError("connection closed inside a message head")
                return None
        self.buf = self.buf.lstrip(b"\r\n")
        end = self.buf.index(b"\r\n\r\n") + 4
        head, self.buf = self.buf[:end], self.buf[end:]
        return head

    def line(self) -> bytes:
        while b"\r\n" not in self.buf:
            if len(self.buf) > _HEAD_LIMIT or not self._fill():
                raise OSError("connection closed inside a chunked body")
        end = self.buf.index(b"\r\n") + 2
        line, self.buf = self.buf[:end], self.buf[end:]
        return line

    def relay(self, to: socket.socket, n: int) -> None:
        """Send the next ``n`` bytes on to ``to``."""
        while n > 0:
            if not self.buf and not self._fill():
                raise OSError("connection closed inside a body")
            piece, self.buf = self.buf[:n], self.buf[n:]
            to.sendall(piece)
            n -= len(piece)

    def relay_body(self, to: socket.socket, framing: tuple) -> None:
        if framing[0] == "length":
            self.relay(to, framing[1])
        elif framing[0] == "chunked":
            while True:
                size_line = self.line()
                to.sendall(size_line)
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise OSError("unreadable chunk size") from None
                if size == 0:
                    while True:   # the trailer section, through its blank line
                        trailer = self.line()
                        to.sendall(trailer)
                        if trailer == b"\r\n":
                            return
                self.relay(to, size + 2)
        else:   # until the origin closes
            if self.buf:
                to.sendall(self.buf)
                self.buf = b""
            while self._fill():
                to.sendall(self.buf)
                self.buf = b""


class GatedProxy(LoopbackListener):
    """The proxy (see module doc). Use as a context manager; ``open_gate()``
    once initialize has been answered; ``early()`` counts what came before."""

    def __init__(self) -> None:
        super().__init__(backlog=32, name="fc052-proxy", handler_name="fc052-relay")
        self.url = f"http://127.0.0.1:{self.port}"
        self._gate_open = False
        self._early: list[str] = []       # what arrived while the gate was closed
        self._relayed = 0                 # requests relayed (a tunnel counts once)
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

    def _connect(self, host: str, port: int) -> socket.socket:
        upstream = socket.create_connection((host.strip("[]"), port), timeout=_IO_TIMEOUT_S)
        with self._lock:
            self._open_socks.add(upstream)
        return upstream

    def _drop(self, s: socket.socket | None) -> None:
        if s is not None:
            with self._lock:
                self._open_socks.discard(s)
            close_quietly(s)

    def _handle(self, conn: socket.socket) -> None:
        """One client connection: its requests one after another, each to its
        own origin in origin-form (a new target closes the old origin
        connection), until either side ends the connection or asks for a
        tunnel."""
        upstream: _Stream | None = None
        at: tuple[str, int] | None = None
        try:
            conn.setblocking(True)
            conn.settimeout(_IO_TIMEOUT_S)
            client = _Stream(conn)
            while True:
                head = client.head()
                if head is None:
                    return
                target = _target(head)
                if target is None:
                    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                    return
                method, host, port = target
                if not is_loopback(host):
                    self._refuse(conn, host, port)
                    return
                if method == "CONNECT":
                    self._tunnel(conn, client, host, port)
                    return
                if upstream is None or at != (host, port):
                    self._drop(upstream.sock if upstream is not None else None)
                    upstream, at = _Stream(self._connect(host, port)), (host, port)
                if not self._exchange(head, client, upstream, method.encode("latin-1")):
                    return
        except (OSError, ValueError):
            pass    # (ValueError: close() closed a socket of ours while select waited on it)
        finally:
            self._drop(conn)
            self._drop(upstream.sock if upstream is not None else None)

    def _refuse(self, conn: socket.socket, host: str, port: int) -> None:
        with self._lock:
            self._refused.append(f"{host}:{port}")
        owner = registry.owner_of("network I/O during initialize is")
        body = f"forge-conformance's {owner} proxy relays to loopback addresses only\n".encode()
        conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n"
                     b"Connection: close\r\n\r\n" + body)

    def _tunnel(self, conn: socket.socket, client: _Stream, host: str, port: int) -> None:
        upstream = self._connect(host, port)
        try:
            with self._lock:
                self._relayed += 1
            conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            if client.buf:   # bytes the client sent right behind its CONNECT
                upstream.sendall(client.buf)
                client.buf = b""
            self._pump(conn, upstream)
        finally:
            self._drop(upstream)

    def _exchange(self, head: bytes, client: _Stream, upstream: _Stream, method: bytes) -> bool:
        """Relay one request in origin-form and its response; whether the
        client connection may carry another request."""
        fields = _headers(head)
        with self._lock:
            self._relayed += 1
        if b"100-continue" in _tokens(fields.get(b"expect", b"")):
            # answered here, the expectation left out upstream: the body follows at once
            client.sock.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
        upstream.sock.sendall(_origin_form(head))
        client.relay_body(upstream.sock, _body(head, fields))
        while True:
            reply = upstream.head()
            if reply is None:
                raise OSError("the origin closed the connection without a response")
            client.sock.sendall(reply)
            status = reply.split(b" ", 2)[1] if reply.count(b" ") else b""
            if status[:1] != b"1" or status == b"101":
                break   # interim responses (1xx) precede the final one
        if status == b"101":   # the origin switched protocols: bytes both ways from now on
            if upstream.buf:
                client.sock.sendall(upstream.buf)
            self._pump(client.sock, upstream.sock)
            return False
        reply_fields = _headers(reply)
        framing = _body(reply, reply_fields, response_to=method)
        upstream.relay_body(client.sock, framing)
        return (framing[0] != "close" and _keeps_alive(head, fields)
                and _keeps_alive(reply, reply_fields))

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
