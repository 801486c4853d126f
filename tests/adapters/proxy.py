"""A line proxy around the reference adapter, with hooks.

Every test adapter of this package is ``vendor/fs_provider.py`` behind this
proxy, in one process: the reference's own loop (its ``main``) reads and
writes two in-memory streams, and the proxy pumps host->reference lines
through the request and notification hooks and reference->host lines
through the reply and partial hooks; a hook may rewrite a message, drop it
(return None), delay it (sleep: each pump is ordered, so everything behind
it waits too, which is what a slow adapter looks like on the wire),
duplicate it, inject lines, answer the host itself, or ask the reference a
private question (``call_child``).

The proxy remembers every host request (id, method, params, whether it
streams, whether the host cancelled it) until its reply has gone out, so a
reply or partial hook knows what it answers.

Process rules: the reference's notes go to stderr; stdin EOF ends the
reference's input, and the process exits with the reference's status once
its loop has returned and its last line has been through the hooks (or with
137, as a killed process, when that takes over EOF_GRACE_S); SIGTERM and
SIGINT end it at once (143, 130); and nothing but protocol lines reaches
stdout (fd 1 is pointed at stderr at start, the protocol goes through a
private duplicate). One process a spawn, not a proxy and a child: about 30
adapter processes start per run of the mutant matrix.

Stdlib only, and kept small for the same reason.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import signal
import sys
import threading

# No pathlib or typing here, nor in what a test adapter imports at its start
# (hooks.py, the switch's module): about 30 adapter processes start per run
# of the matrix, and those imports were 6 ms of each one's ~36 ms of CPU.
# Annotations are never evaluated (postponed, PEP 563): `Any` and `Callable`
# below are names for the reader only.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
REFERENCE = os.path.join(REPO, "vendor", "fs_provider.py")
PRIVATE_ID_BASE = 1 << 40        # ids of the proxy's own questions to the reference
EOF_GRACE_S = 5.0                # after stdin EOF, the reference's time to end its loop


def dumps(msg: Any) -> bytes:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


class Request:
    """One host request the proxy saw and has not yet answered."""

    __slots__ = ("id", "method", "params", "streaming", "cancelled", "partials", "state")

    def __init__(self, id: int, method: str, params: dict):
        self.id = id
        self.method = method
        self.params = params if isinstance(params, dict) else {}
        self.streaming = self.params.get("partial") is True
        self.cancelled = False       # the host sent $/cancelRequest for it
        self.partials = 0            # $/partial frames forwarded to the host so far
        self.state: dict = {}        # scratch space for hooks

    def __repr__(self) -> str:
        return f"<Request {self.id} {self.method}>"


class Hooks:
    """The do-nothing hook set; subclasses override what they change.

    Each hook gets the proxy, the remembered Request (None when the reference
    answers an id the proxy never saw) and the parsed message, and returns the
    message to forward (possibly rewritten) or None to drop it.
    """

    def start(self, proxy: "Proxy") -> None:
        """Called once, before any line (and before the reference loads)."""

    def request(self, proxy: "Proxy", req: Request, msg: dict) -> dict | None:
        return msg

    def notification(self, proxy: "Proxy", msg: dict) -> dict | None:
        return msg

    def reply(self, proxy: "Proxy", req: Request | None, msg: dict) -> dict | None:
        return msg

    def partial(self, proxy: "Proxy", req: Request | None, msg: dict) -> dict | None:
        return msg


class Chain(Hooks):
    """Several hook sets applied in order (the first sees a message first)."""

    def __init__(self, *parts: Hooks):
        self.parts = parts

    def start(self, proxy):
        for part in self.parts:
            part.start(proxy)

    def _pipe(self, name, proxy, *args):
        msg = args[-1]
        for part in self.parts:
            if msg is None:
                return None
            msg = getattr(part, name)(proxy, *args[:-1], msg)
        return msg

    def request(self, proxy, req, msg):
        return self._pipe("request", proxy, req, msg)

    def notification(self, proxy, msg):
        return self._pipe("notification", proxy, msg)

    def reply(self, proxy, req, msg):
        return self._pipe("reply", proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._pipe("partial", proxy, req, msg)


def _load_reference():
    """The reference as a module of this process (byte-compiled once, then cached)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fs_provider", REFERENCE)
    reference = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = reference    # its classes look their module up
    spec.loader.exec_module(reference)
    return reference


class _Output:
    """The reference's stdout: each write goes, as it came, to the reply pump."""

    def __init__(self, lines: queue.SimpleQueue):
        self._lines = lines

    def write(self, data: bytes) -> int:
        self._lines.put(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass


class _Input:
    """The reference's stdin: the lines the request pump (and send_child) hand it."""

    def __init__(self, lines: queue.SimpleQueue):
        self._lines = lines

    def readline(self) -> bytes:
        return self._lines.get()


class Proxy:
    """Runs the reference adapter in this process and pumps its lines through hooks.

    Three threads: the main thread runs the reference's own loop (its
    ``main``, reading and writing the in-memory streams above); the request
    pump reads the host's lines from stdin, applies the request and
    notification hooks and hands what they return to the reference; the reply
    pump takes the reference's output lines in order, applies the reply and
    partial hooks and writes what they return to the host. Each pump is
    ordered, so a hook that sleeps holds everything behind it, as a pipe
    between two processes did.
    """

    def __init__(self, hooks: Hooks, args: list[str]):
        self.hooks = hooks
        self.args = list(args)
        self.fixture_dir = args[-1] if args else os.environ.get("FORGE_FIXTURE_DIR", ".")
        self._fixture = None
        self.requests: dict[int, Request] = {}
        self.init_params: dict = {}
        self._host_lock = threading.Lock()
        self._child_lock = threading.Lock()
        self._private: dict[int, Callable[[dict], None]] = {}
        self._private_ids = itertools.count(PRIVATE_ID_BASE)
        self._out = None
        self._to_reference = queue.SimpleQueue()     # lines for the reference's loop
        self._from_reference = queue.SimpleQueue()   # the reference's writes; None: it ended
        self._input_open = True
        self._served = threading.Event()              # the reference's loop has returned

    # ------------------------------------------------------------------ output

    @property
    def fixture(self):
        """The fixture directory as a pathlib.Path (imported at the first hook that asks)."""
        if self._fixture is None:
            from pathlib import Path
            self._fixture = Path(self.fixture_dir)
        return self._fixture

    def send_host(self, msg: Any) -> None:
        """Write one protocol line to the host; a reply retires its request
        before it is written, so a hook never finds a request in flight that
        the host may already have seen answered (a cancel sent on its reply)."""
        data = msg if isinstance(msg, bytes) else dumps(msg)
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            self.requests.pop(msg.get("id"), None)
        with self._host_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._shutdown(1)

    def send_child(self, msg: Any) -> None:
        """Hand one line to the reference (dropped once the host's input has ended)."""
        data = msg if isinstance(msg, bytes) else dumps(msg)
        with self._child_lock:
            if self._input_open:
                self._to_reference.put(data)

    def reply(self, req: Request, result: Any) -> None:
        self.send_host({"jsonrpc": "2.0", "id": req.id, "result": result})

    def error(self, req: Request, message: str, kind: str | None = None, code: int = 1,
              **data: Any) -> None:
        self.send_host(error_reply(req.id, message, kind, code, **data))

    def call_child(self, method: str, params: dict, on_reply: Callable[[dict], None]) -> None:
        """Ask the reference a question of the proxy's own; ``on_reply(msg)`` runs
        in the reply pump when the answer arrives (it must not wait on the reference)."""
        pid = next(self._private_ids)
        self._private[pid] = on_reply
        self.send_child({"jsonrpc": "2.0", "id": pid, "method": method, "params": params})

    def later(self, seconds: float, fn: Callable[[], None]) -> threading.Timer:
        timer = threading.Timer(seconds, fn)
        timer.daemon = True
        timer.start()
        return timer

    @staticmethod
    def log(text: str) -> None:
        try:
            sys.stderr.write(f"[proxy] {text}\n")
            sys.stderr.flush()
        except Exception:
            pass

    # ------------------------------------------------------------------ pumps

    @staticmethod
    def _lines(chunks, forward: Callable[[bytes], None]):
        """The JSON objects among the lines of ``chunks`` (bytes, each one or more
        whole lines, or a piece of one); any other line (junk, invalid UTF-8,
        arrays...) is forwarded as it came, untouched by hooks."""
        pending = b""
        for chunk in chunks:
            if pending:
                chunk, pending = pending + chunk, b""
            if chunk.count(b"\n") > 1 or not chunk.endswith(b"\n"):
                lines = chunk.split(b"\n")
                pending = lines.pop()
                lines = [line + b"\n" for line in lines]
            else:
                lines = (chunk,)
            for line in lines:
                try:
                    msg = json.loads(line)
                except ValueError:
                    msg = None
                if isinstance(msg, dict):
                    yield msg
                else:
                    forward(line)
        if pending:
            yield from Proxy._lines((pending + b"\n",), forward)

    def _host_to_child(self) -> None:
        for msg in self._lines(iter(sys.stdin.buffer.readline, b""), self.send_child):
            if "id" in msg and "method" in msg and _usable(msg["id"]):
                req = Request(msg["id"], msg["method"], msg.get("params"))
                if req.method == "initialize":
                    self.init_params = req.params
                self.requests[req.id] = req
                out = self.hooks.request(self, req, msg)
            else:
                if msg.get("method") == "$/cancelRequest":
                    target = self.requests.get(params_id(msg))
                    if target is not None:
                        target.cancelled = True
                out = self.hooks.notification(self, msg)
            if out is not None:
                self.send_child(out)
        # stdin EOF: the reference's input ends; it finishes the work in hand
        # and its loop returns. It need not end on EOF, so past a grace
        # period the process ends as a killed one would (128 + SIGKILL).
        with self._child_lock:
            self._input_open = False
            self._to_reference.put(b"")
        if not self._served.wait(EOF_GRACE_S):
            self.log(f"the reference still runs {EOF_GRACE_S:g} s after stdin EOF: killed")
            self._shutdown(128 + signal.SIGKILL)

    def _child_to_host(self) -> None:
        for msg in self._lines(iter(self._from_reference.get, None), self.send_host):
            if "id" in msg:
                rid = msg["id"] if _usable(msg["id"]) else None
                callback = self._private.pop(rid, None)
                if callback is not None:
                    callback(msg)
                    continue
                out = self.hooks.reply(self, self.requests.get(rid), msg)
            elif msg.get("method") == "$/partial":
                req = self.requests.get(params_id(msg))
                out = self.hooks.partial(self, req, msg)
                if out is not None and req is not None:
                    req.partials += 1
            else:
                out = msg
            if out is not None:
                self.send_host(out)

    def _serve(self) -> int:
        """The reference's loop, as its own ``main`` runs it; its exit status."""
        try:
            code = _load_reference().main(list(self.args), _Input(self._to_reference),
                                          _Output(self._from_reference))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        return code if isinstance(code, int) else 1

    def _shutdown(self, code: int) -> None:
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(code)

    def _pump(self, body: Callable[[], None]) -> None:
        """Run a pump; a hook that raises ends the process loudly (traceback on
        stderr, exit 70) rather than leaving the host waiting on a dead pump."""
        try:
            body()
        except Exception:
            import traceback

            self.log("hook failure:\n" + traceback.format_exc())
            self._shutdown(70)

    def run(self) -> None:
        # fd 1 now goes to stderr: a stray print can never corrupt the protocol.
        self._out = os.fdopen(os.dup(1), "wb", buffering=0)
        os.dup2(2, 1)
        signal.signal(signal.SIGTERM, lambda *_: self._shutdown(143))
        signal.signal(signal.SIGINT, lambda *_: self._shutdown(130))
        self.hooks.start(self)
        replies = threading.Thread(target=self._pump, args=(self._child_to_host,),
                                   name="reference-to-host", daemon=True)
        replies.start()
        threading.Thread(target=self._pump, args=(self._host_to_child,),
                         name="host-to-reference", daemon=True).start()
        code = self._serve()
        self._served.set()
        self._from_reference.put(None)     # its output ends: the reply pump drains it
        replies.join()
        self._shutdown(code)


def main(hooks: Hooks, argv: list[str] | None = None) -> None:
    """Entry point of a proxy script: ``<script> [args...] <fixture-dir>``."""
    Proxy(hooks, list(sys.argv[1:] if argv is None else argv)).run()


# ---------------------------------------------------------------- small helpers
# Shared by the hook sets: where blob ids and search hits live in results.

def _usable(rid: Any) -> bool:
    """An id the proxy can key on (hashable; the protocol's are integers)."""
    return isinstance(rid, (int, str)) and not isinstance(rid, bool)


def params_id(msg: dict) -> Any:
    """params.id of a notification ($/partial, $/cancelRequest), or None."""
    params = msg.get("params")
    rid = params.get("id") if isinstance(params, dict) else None
    return rid if _usable(rid) else None


def error_reply(rid: Any, message: str, kind: str | None = None, code: int = 1,
                **data: Any) -> dict:
    """The error reply to request ``rid``: ``code``, ``message``, and ``data``
    holding ``kind`` (when given) first, then ``data``'s other members."""
    err: dict = {"code": code, "message": message}
    if kind is not None:
        data = {"kind": kind, **data}
    if data:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": err}


def result_of(msg: dict) -> dict | None:
    result = msg.get("result")
    return result if isinstance(result, dict) else None


def tree_blobs(result: dict):
    """The blob entries of a repo/tree result."""
    for entry in result.get("entries") or []:
        if isinstance(entry, dict) and entry.get("type") == "blob":
            yield entry


def hits_of(req: Request | None, msg: dict) -> list:
    """The search hits a search/code reply or $/partial carries."""
    if msg.get("method") == "$/partial":
        items = (msg.get("params") or {}).get("items")
    else:
        items = (result_of(msg) or {}).get("items")
    return [h for h in items or [] if isinstance(h, dict)]


def error_data(msg: dict) -> dict | None:
    """error.data of an error reply, when it is an object."""
    err = msg.get("error")
    data = err.get("data") if isinstance(err, dict) else None
    return data if isinstance(data, dict) else None
