#!/usr/bin/env python3
"""A scriptable stdio mock peer: plays the host's fake-provider scenarios (PROTOCOL §9).

    python3 tests/mock_peer.py --mode MODE [--state-file F]

Common behaviour (all modes, like the host's fake): reads one line at a time
and answers strictly sequentially; answers every ``initialize`` with
``{"protocol":1,"name":"fake"}``; answers other requests with ``{}`` unless
the mode says otherwise; reads the id of *every* line, a missing id counting
as 0, so it "answers" notifications such as ``$/cancelRequest`` with
``{"id":0,"result":{}}`` (the client must drop that).

Besides the §9 modes it has framing-abuse modes (garbage, invalid-utf8,
huge-line, crlf, blank-lines, invalid-ids, partial-non-streaming,
partial-top-id), a few end-to-end ones (hang-after-init, mute, protocol-2,
orphan-holds-stdout, stop-reading)
and two benchmark modes (echo, bench-stream). Stdlib only.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

OUT = sys.stdout.buffer
ERR = sys.stderr.buffer
FAKE_INIT = {"protocol": 1, "name": "fake"}
HUGE_LINE_BYTES = 40 * 2**20      # over the client's default 16 MiB cap
BIG_REPLY_BYTES = 4 * 2**20       # under it


def dumps(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def send(obj, *, end: bytes = b"\n") -> None:
    OUT.write(dumps(obj) + end)
    OUT.flush()


def send_raw(data: bytes) -> None:
    OUT.write(data)
    OUT.flush()


def reply(rid, result, *, end: bytes = b"\n") -> None:
    send({"jsonrpc": "2.0", "id": rid, "result": result}, end=end)


def error(rid, err) -> None:
    send({"jsonrpc": "2.0", "id": rid, "error": err})


def partial(rid, items) -> None:
    send({"jsonrpc": "2.0", "method": "$/partial", "params": {"id": rid, "items": items}})


def hit(path, line):
    return {"repo": "o/r", "path": path, "sha": "", "matches": ["hit"], "line": line}


def bench_lines(rid: int, n_items: int, n_batches: int) -> list[bytes]:
    """The streaming benchmark's $/partial lines (deterministic; shared with tests/bench.py)."""
    per = n_items // n_batches
    lines = []
    for b in range(n_batches):
        items = [{"repo": "local/alpha", "path": f"src/dir{b % 50}/file{b * per + i}.rs",
                  "sha": "3b9f0a7c1e" + str(i % 10), "matches": ["retry"], "line": i + 1}
                 for i in range(per)]
        lines.append(dumps({"jsonrpc": "2.0", "method": "$/partial",
                            "params": {"id": rid, "items": items}}) + b"\n")
    return lines


class State:
    """A counter kept in a file across processes (die-on-reinit)."""

    def __init__(self, path: str | None):
        self.path = path

    def bump(self, key: str) -> int:
        data = {}
        if self.path and os.path.exists(self.path):
            with open(self.path) as f:
                data = json.load(f)
        data[key] = data.get(key, 0) + 1
        if self.path:
            with open(self.path, "w") as f:
                json.dump(data, f)
        return data[key]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mode", default="default")
    ap.add_argument("--state-file")
    ap.add_argument("--items", type=int, default=200_000, help="bench-stream: items")
    ap.add_argument("--batches", type=int, default=2_000, help="bench-stream: batches")
    args = ap.parse_args(argv)
    mode = args.mode
    state = State(args.state_file)

    if mode == "echo":          # minimal and fast: the round-trip benchmark's peer
        for line in sys.stdin.buffer:
            OUT.write(b'{"jsonrpc":"2.0","id":%d,"result":{}}\n' % json.loads(line).get("id", 0))
            OUT.flush()
        return 0

    if mode == "bench-stream":  # prepared before the handshake: the benchmark times transfer only
        prepared = b"".join(bench_lines(2, args.items, args.batches))
    held = None                 # swap-2-3 / late-then-next: an id answered later
    served_real = 0             # real (non-initialize) requests seen by this process
    stdin = sys.stdin.buffer
    while True:
        raw = stdin.readline()
        if not raw:
            return 0
        if mode == "trace-bytes":
            ERR.write(b"received " + repr(raw).encode() + b"\n")
            ERR.flush()
        try:
            msg = json.loads(raw)
        except ValueError:
            continue            # junk input lines are skipped
        if not isinstance(msg, dict):
            continue
        rid = msg.get("id", 0)
        method = msg.get("method")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}

        if mode == "mute":
            continue            # never answers anything, not even initialize
        if method == "initialize":
            if mode == "die-on-reinit" and state.bump("initialize") > 1:
                return 0
            result = dict(FAKE_INIT)
            if mode == "protocol-2":
                result["protocol"] = 2
            if mode == "echo-init" and "cache_bytes" in params:
                result["cache"] = {"bytes": 218}
            if mode == "unknown-id":
                reply(999, {"phantom": True})
            reply(rid, result)
            continue

        if rid != 0:
            served_real += 1

        # ---- modes that decide whether this request is answered at all
        if mode == "hang-on-2" and rid == 2:
            continue
        if mode == "die-on-2" and rid == 2:
            return 0
        if mode in ("die-now", "die-on-reinit") and rid != 0 and served_real == 1:
            return 0
        if mode == "hang-2-die-3":
            if rid == 2:
                continue
            if rid == 3:
                return 0
        if mode == "hang-after-init":
            continue
        if mode == "stop-reading":
            time.sleep(120)     # never reads stdin again: the client's writes fill the pipe
            return 0
        if mode == "orphan-holds-stdout" and rid == 2:
            # A grandchild in its own session that ignores SIGTERM inherits our
            # stdout and outlives us: the client sees no EOF (PROTOCOL §7.1).
            import subprocess
            subprocess.Popen([sys.executable, "-c", "import signal, time; "
                              "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"],
                             start_new_session=True)
            return 0

        # ---- mode-specific answers
        if mode == "slow":
            time.sleep(0.2)
            reply(rid, {})
        elif mode == "error-kinds" and rid >= 2:
            if rid == 2:
                error(rid, {"code": 1, "message": "auth happened", "data": {"kind": "auth"}})
            elif rid == 3:
                error(rid, {"code": 1, "message": "slow down",
                            "data": {"kind": "rate_limited", "retry_after_s": 37}})
            elif rid == 4:
                error(rid, {"code": 1, "message": "odd", "data": {"kind": "bogus-kind"}})
            else:
                error(rid, {"code": 1, "message": "plain"})
        elif mode == "stream-search" and method == "search/code":
            partial(rid, [hit("f1.rs", 1)])
            partial(rid, [hit("f2.rs", 2)])
            reply(rid, {"items": [], "truncated": True})
        elif mode == "die-mid-stream" and method == "search/code":
            partial(rid, [hit("only.rs", 1)])
            return 0
        elif mode == "stream-slow" and method == "search/code":
            for i in range(3):
                time.sleep(0.15)
                partial(rid, [hit(f"s{i}.rs", i + 1)])
            reply(rid, {"items": [], "truncated": False})
        elif mode == "swap-2-3" and rid == 2:
            held = rid
        elif mode == "swap-2-3" and rid == 3 and held is not None:
            reply(3, {"for": 3})
            time.sleep(0.3)
            reply(held, {"for": held})
            held = None
        elif mode == "double-final" and rid == 2:
            reply(rid, {"which": 1})
            reply(rid, {"which": 2})
        elif mode == "partial-after-final" and method == "search/code":
            reply(rid, {"items": [], "truncated": False})
            partial(rid, [hit("late.rs", 1)])
        elif mode == "unknown-id" and rid != 0:
            reply(999, {"phantom": True})
            reply(rid, {"real": True})
        elif mode == "late-then-next" and rid == 2:
            held = rid
        elif mode == "late-then-next" and held is not None and rid != 0:
            reply(held, {"late": True})
            held = None
            reply(rid, {"fresh": True})
        elif mode == "chatty-stderr":
            ERR.write((b"chatter " * 16 + b"\n") * 512)   # ~70 KiB: more than a pipe holds
            ERR.write(b"rootle-fake-stderr-marker id=%d\n" % rid)
            ERR.flush()
            reply(rid, {})
        elif mode == "rich-repos" and method == "org/repos":
            reply(rid, {"repos": ["plain", {"name": "meta", "description": "d", "private": True,
                                            "archived": True,
                                            "pushed_at": "2026-08-20T10:11:12Z"}]})
        elif mode == "check-limit" and method == "search/code":
            reply(rid, {"items": [], "truncated": params.get("limit") == 500})
        # ---- framing abuse
        elif mode == "garbage" and rid != 0:
            send_raw(b"hello, this is not JSON\n")
            send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":\n")                 # truncated JSON
            send_raw(b"[1,2,3]\n42\n\"str\"\nnull\n")                       # non-object JSON
            send_raw(b'{"a":1}{"b":2}\n')                                   # two values, one line
            send_raw(b'{"jsonrpc":"2.0","method":"window/logMessage","params":{"m":"x"}}\n')
            send_raw(b'{"jsonrpc":"2.0","method":"$/partial","params":{"id":"x","items":[]}}\n')
            send_raw(b'[{"jsonrpc":"2.0","id":%d,"result":{"batched":true}}]\n' % rid)
            send_raw(b'{"jsonrpc":"2.0","id":%d,"result":NaN}\n' % rid)
            reply(rid, {"ok": rid})
        elif mode == "invalid-utf8" and rid == 2:
            send_raw(b'{"jsonrpc":"2.0","id":2,"result":{"s":"\xff\xfe bad"}}\n')
            reply(rid, {"after": True})                                     # never read
        elif mode == "huge-line" and rid == 2:
            head = b'{"jsonrpc":"2.0","id":2,"result":{"blob":"'
            chunk = b"A" * 2**20
            send_raw(head)
            for _ in range(HUGE_LINE_BYTES // len(chunk)):
                OUT.write(chunk)
            send_raw(b'"}}\n')
            reply(rid, {"ok": True})
        elif mode == "huge-line" and rid == 3:
            reply(rid, {"blob": "B" * BIG_REPLY_BYTES})
        elif mode == "crlf":
            reply(rid, {"crlf": True}, end=b"\r\n")
        elif mode == "blank-lines":
            send_raw(b"\n\n   \n\t\n\r\n")
            reply(rid, {"ok": True})
            send_raw(b"\n\n")
        elif mode == "invalid-ids" and rid == 2:
            for bad in (b'"2"', b"0", b"-2", b"2.0", b"null", b"true", b"18446744073709551616",
                        b"{}", b"[2]"):
                send_raw(b'{"jsonrpc":"2.0","id":' + bad + b',"result":{"bad":true}}\n')
        elif mode == "partial-non-streaming" and rid != 0:
            partial(rid, [hit("unsolicited.rs", 1)])
            reply(rid, {"ok": True})
        elif mode == "partial-top-id" and method == "search/code":
            send({"jsonrpc": "2.0", "id": rid, "method": "$/partial",
                  "params": {"id": rid, "items": [hit("top.rs", 1)]}})
            reply(rid, {"items": [], "truncated": False})
        elif mode == "bench-stream" and method == "search/code":
            if rid != 2:   # prepared for the first real request
                prepared = b"".join(bench_lines(rid, args.items, args.batches))
            send_raw(prepared)
            reply(rid, {"items": [], "truncated": False})
        else:
            reply(rid, {})


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(0)
