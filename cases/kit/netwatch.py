"""The FC-052 network watch: a canary TCP listener on 127.0.0.1 and a psutil
sampler of the connections (inet sockets with a remote address) the adapter
tree being spawned opens; and the loopback listener the canary and FC-052's
proxy (cases.kit.loopback_proxy) are built on."""

from __future__ import annotations

import select
import socket
import threading
from typing import Any

import psutil


def close_quietly(s: socket.socket) -> None:
    try:
        s.close()
    except OSError:
        pass


class LoopbackListener:
    """A TCP listener on a free 127.0.0.1 port whose accept loop runs in a
    daemon thread: what the canary and FC-052's proxy share.

    A subclass sets up its own state, then calls ``_start()``. Each accepted
    connection goes to ``_accepted(conn, peer)``, called under ``_lock``;
    when that returns True the connection is served by ``_handle(conn)`` in a
    thread of its own. ``close()`` also closes what ``_held_sockets()``
    names. Use as a context manager."""

    def __init__(self, backlog: int, name: str, handler_name: str | None = None) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(backlog)
        self._sock.setblocking(False)
        self.port = self._sock.getsockname()[1]
        self._wake_r, self._wake_w = socket.socketpair()
        self._lock = threading.Lock()
        self._closed = False
        self._handler_name = handler_name
        self._thread = threading.Thread(target=self._serve, name=name, daemon=True)

    def _start(self) -> None:
        self._thread.start()

    def _accepted(self, conn: socket.socket, peer: tuple) -> bool:
        raise NotImplementedError

    def _handle(self, conn: socket.socket) -> None:
        raise NotImplementedError

    def _held_sockets(self) -> list[socket.socket]:
        return []

    def _queued(self) -> bool:
        """Whether a connection waits in the accept queue (a connect() that
        completed is never missed by asking this)."""
        ready, _, _ = select.select([self._sock], [], [], 0)
        return bool(ready)

    def _serve(self) -> None:
        while True:
            ready, _, _ = select.select([self._sock, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            with self._lock:
                try:
                    conn, peer = self._sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    return
                if not self._accepted(conn, peer):
                    continue
            threading.Thread(target=self._handle, args=(conn,), name=self._handler_name,
                             daemon=True).start()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        if self._thread.ident is not None:   # a stop landing inside start() left none to join
            self._thread.join(5)
        with self._lock:
            socks = self._held_sockets()
        for s in socks:
            # a thread waiting in select on it is not woken by close(): a
            # shutdown makes it readable (EOF), and the thread ends
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for s in [self._sock, self._wake_r, self._wake_w, *socks]:
            close_quietly(s)

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Canary(LoopbackListener):
    """A 127.0.0.1 TCP listener that counts every connection it is offered.

    Each connection is answered with an empty HTTP 200 so a client that does
    reach out is not left hanging. ``connections()`` also counts a connection
    still waiting in the accept queue, so a connect() that completed before
    the question is asked is never missed. Use as a context manager."""

    def __init__(self) -> None:
        super().__init__(backlog=16, name="fc052-canary")
        self.url = f"http://127.0.0.1:{self.port}/"
        self._count = 0
        self._peers: list[str] = []
        self._conns: list[socket.socket] = []
        self._start()

    def env(self) -> dict[str, str]:
        """The variable that advertises the canary to an adapter (the proxy
        variables name FC-052's gated proxy, which keeps working afterwards)."""
        return {"FORGE_CANARY_URL": self.url}

    def _accepted(self, conn: socket.socket, peer: tuple) -> bool:
        self._count += 1
        self._peers.append(f"{peer[0]}:{peer[1]}")
        self._conns.append(conn)
        return True

    def _handle(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(2.0)
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
        finally:
            close_quietly(conn)

    def _held_sockets(self) -> list[socket.socket]:
        return list(self._conns)

    def connections(self) -> int:
        """Connections accepted so far plus any still queued."""
        with self._lock:
            if self._closed:
                return self._count
            return self._count + (1 if self._queued() else 0)

    def peers(self) -> list[str]:
        with self._lock:
            return list(self._peers)


def _socket_key(conn: Any) -> tuple:
    return (tuple(conn.laddr or ()), tuple(conn.raddr or ()), conn.status)


class SocketSampler:
    """Samples, in a thread, the connections (inet sockets with a remote
    address: a listening socket, e.g. a loopback test double's, is not
    network I/O; RULINGS "Process behaviour") of every process that descends from
    this one and did not exist when the sampler started (the adapter tree being
    spawned). Use as a context manager around the spawn and its initialize.

    A freshly forked child holds copies of this process's sockets until it
    execs (the canary's listener among them), so sockets this process itself
    had when the sampler started are not counted against the child."""

    def __init__(self, period_s: float = 0.002) -> None:
        self.period_s = period_s
        self.seen: list[str] = []
        self.samples = 0
        self._me = psutil.Process()
        self._baseline = {p.pid for p in self._me.children(recursive=True)}
        self._inherited = {_socket_key(c) for c in self._me.net_connections(kind="inet")}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fc052-sampler", daemon=True)

    def _sample(self) -> None:
        try:
            procs = self._me.children(recursive=True)
        except psutil.Error:
            return
        for proc in procs:
            if proc.pid in self._baseline:
                continue
            try:
                conns = proc.net_connections(kind="inet")
                name = proc.name()
            except psutil.Error:
                continue
            for c in conns:
                if not c.raddr or _socket_key(c) in self._inherited:
                    continue
                text = (f"pid {proc.pid} ({name}) {c.laddr.ip}:{c.laddr.port} -> "
                        f"{c.raddr.ip}:{c.raddr.port} {c.status}")
                if text not in self.seen:
                    self.seen.append(text)
        self.samples += 1

    def _run(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.period_s):
                return

    def __enter__(self) -> "SocketSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sample()   # one last look, after initialize returned
