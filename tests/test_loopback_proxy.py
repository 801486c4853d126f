"""FC-052's gated proxy: counts connections before the gate opens, relays
loopback targets after it, refuses every other address (never contacted)."""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.request

import pytest

from cases.loopback_proxy import GatedProxy, _target, is_loopback
from tests.adapters.http_double import HttpDouble


@pytest.fixture
def double():
    """A backend test double on 127.0.0.1 (its port)."""
    with HttpDouble(lambda path: b"hello " + path.encode()) as server:
        yield server.port


def _via(proxy, url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url}))
    with opener.open(url, timeout=5) as reply:
        return reply.status, reply.read()


def test_before_the_gate_connections_are_counted_and_refused(double):
    with GatedProxy() as proxy:
        with pytest.raises(OSError):
            _via(proxy, f"http://127.0.0.1:{double}/early")
        assert len(proxy.early()) == 1
        assert proxy.open_gate() == 1
        assert _via(proxy, f"http://127.0.0.1:{double}/later") == (200, b"hello /later")
        assert proxy.relayed() == 1 and len(proxy.early()) == 1


def test_a_queued_connection_counts_as_early():
    with GatedProxy() as proxy:
        with proxy._lock:   # hold the acceptor so the connect stays queued
            client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        # the gate opening looks at the queue itself
        count = proxy.open_gate()
        client.close()
        assert count >= 1


def test_connect_tunnels_to_loopback(double):
    with GatedProxy() as proxy:
        proxy.open_gate()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        conn.set_tunnel("127.0.0.1", double)
        conn.request("GET", "/tunnel")
        reply = conn.getresponse()
        assert (reply.status, reply.read()) == (200, b"hello /tunnel")
        conn.close()


def test_closing_the_proxy_ends_an_open_tunnel_quietly(double, monkeypatch):
    """close() ends a tunnel whose relay waits in select: the relay thread
    ends at once and without an exception (it used to wait out its 30 s idle
    timeout on sockets already closed, and could die in select on a closed
    socket's file descriptor, -1)."""
    raised = []
    monkeypatch.setattr(threading, "excepthook", raised.append)
    proxy = GatedProxy()
    with proxy:
        proxy.open_gate()
        client = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        client.sendall(f"CONNECT 127.0.0.1:{double} HTTP/1.1\r\n\r\n".encode())
        assert client.recv(4096).startswith(b"HTTP/1.1 200")   # the relay is pumping now
        relays = [t for t in threading.enumerate() if t.name == proxy._handler_name]
        assert relays
    for relay in relays:
        relay.join(10)
        assert not relay.is_alive()
    client.close()
    assert not raised, [str(args.exc_value) for args in raised]


def test_other_addresses_are_refused_without_contact():
    with GatedProxy() as proxy:
        proxy.open_gate()
        with pytest.raises(urllib.error.HTTPError) as err:
            _via(proxy, "http://192.0.2.1:8080/never")   # TEST-NET-1, never connected
        assert err.value.code == 502
        assert proxy.refused_targets() == ["192.0.2.1:8080"] and proxy.relayed() == 0


@pytest.mark.parametrize("head, want", [
    (b"CONNECT 127.0.0.1:8443 HTTP/1.1\r\n\r\n", ("CONNECT", "127.0.0.1", 8443)),
    (b"GET http://localhost/x HTTP/1.1\r\n\r\n", ("GET", "localhost", 80)),
    (b"GET https://[::1]:9/x HTTP/1.1\r\n\r\n", ("GET", "::1", 9)),
    (b"GET /relative HTTP/1.1\r\n\r\n", None),
    (b"garbage\r\n\r\n", None),
])
def test_request_targets(head, want):
    assert _target(head) == want


def test_loopback_names():
    assert is_loopback("127.0.0.1") and is_loopback("127.9.9.9") and is_loopback("::1")
    assert is_loopback("localhost") and not is_loopback("10.0.0.1")
    assert not is_loopback("example.com")
