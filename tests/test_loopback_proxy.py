"""FC-052's gated proxy: counts connections before the gate opens, relays
loopback targets after it, refuses every other address (never contacted)."""

from __future__ import annotations

import http.client
import socket
import threading
import urllib.request

import pytest

from cases.kit.loopback_proxy import GatedProxy, _target, is_loopback
from tests.adapters.http_double import HttpDouble


@pytest.fixture
def double():
    """A backend test double on 127.0.0.1 that routes by path (absent a
    route, an absolute-form target among them: 404)."""
    with HttpDouble(lambda path: b"hello " + path.encode()) as server:
        yield server


def _via(proxy, url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": proxy.url}))
    with opener.open(url, timeout=5) as reply:
        return reply.status, reply.read()


def test_before_the_gate_connections_are_counted_and_refused(double):
    with GatedProxy() as proxy:
        with pytest.raises(OSError):
            _via(proxy, f"http://127.0.0.1:{double.port}/early")
        assert len(proxy.early()) == 1
        assert proxy.open_gate() == 1
        assert _via(proxy, f"http://127.0.0.1:{double.port}/later") == (200, b"hello /later")
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
        conn.set_tunnel("127.0.0.1", double.port)
        for path in ("/tunnel", "/tunnel/again"):   # one tunnel, a kept-alive connection
            conn.request("GET", path)
            reply = conn.getresponse()
            assert (reply.status, reply.read()) == (200, b"hello " + path.encode())
        conn.close()
        assert proxy.relayed() == 1
        assert len({port for port, _m, _t in double.requests}) == 1


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
        client.sendall(f"CONNECT 127.0.0.1:{double.port} HTTP/1.1\r\n\r\n".encode())
        assert client.recv(4096).startswith(b"HTTP/1.1 200")   # the relay is pumping now
        relays = [t for t in threading.enumerate() if t.name == proxy._handler_name]
        assert relays
    for relay in relays:
        relay.join(10)
        assert not relay.is_alive()
    client.close()
    assert not raised, [str(args.exc_value) for args in raised]


def test_every_request_of_a_kept_alive_connection_goes_in_origin_form(double):
    """RFC 9112 §3.2.1: a proxy sends each request to the origin in
    origin-form, the second of a kept-alive connection as the first (an
    origin that routes by path answers an absolute-form target 404)."""
    with GatedProxy() as proxy:
        proxy.open_gate()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        base = f"http://127.0.0.1:{double.port}"
        got = []
        for method, path, body in (("GET", "/api/v4/projects", None),
                                   ("POST", "/api/v4/search?q=x", b"payload"),
                                   ("HEAD", "/api/v4/head", None),
                                   ("GET", "/api/v4/projects/1", None)):
            conn.request(method, base + path, body=body)
            reply = conn.getresponse()
            got.append((reply.status, reply.read()))
        conn.close()
        assert got == [(200, b"hello /api/v4/projects"),
                       (200, b"hello /api/v4/search?q=xpayload"),
                       (200, b""), (200, b"hello /api/v4/projects/1")]
        assert [target for _port, _m, target in double.requests] == [
            "/api/v4/projects", "/api/v4/search?q=x", "/api/v4/head", "/api/v4/projects/1"]
        assert len({port for port, _m, _t in double.requests}) == 1   # one origin connection
        assert proxy.relayed() == 4


def test_a_kept_alive_connection_may_change_origin(double):
    with GatedProxy() as proxy, HttpDouble(lambda path: b"other " + path.encode()) as other:
        proxy.open_gate()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        got = []
        for port in (double.port, other.port, double.port):
            conn.request("GET", f"http://localhost:{port}/x")
            reply = conn.getresponse()
            got.append(reply.read())
        conn.close()
        assert got == [b"hello /x", b"other /x", b"hello /x"]
        assert [t for _p, _m, t in double.requests + other.requests] == ["/x"] * 3


def _raw_origin(answers):
    """A one-connection origin on 127.0.0.1 that reads each request head and
    writes the next of ``answers`` as given; (port, the heads it read, thread)."""
    listener = socket.create_server(("127.0.0.1", 0))
    heads = []

    def serve():
        conn, _ = listener.accept()
        with conn, listener:
            buf = b""
            for answer in answers:
                while b"\r\n\r\n" not in buf:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    buf += chunk
                head, _, buf = buf.partition(b"\r\n\r\n")
                heads.append(head)
                conn.sendall(answer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return listener.getsockname()[1], heads, t


def test_response_bodies_are_framed_as_the_origin_frames_them():
    """A chunked body (with a trailer), an interim 100 and a 304 without a
    body each end where their framing says, so the next response on the
    connection is read whole."""
    port, heads, origin = _raw_origin([
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"5;x=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: \"a\"\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlast",
    ])
    with GatedProxy() as proxy:
        proxy.open_gate()
        conn = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
        got = []
        for path in ("/chunked", "/cached", "/last"):
            conn.request("GET", f"http://127.0.0.1:{port}{path}",
                          headers={"Proxy-Connection": "keep-alive"})
            reply = conn.getresponse()
            got.append((reply.status, reply.read()))
        conn.close()
    origin.join(5)
    assert got == [(200, b"hello world"), (304, b""), (200, b"last")]
    assert [h.split(b"\r\n")[0] for h in heads] == [
        b"GET /chunked HTTP/1.1", b"GET /cached HTTP/1.1", b"GET /last HTTP/1.1"]
    assert not any(b"proxy-connection" in h.lower() for h in heads)   # the proxy's own header


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
