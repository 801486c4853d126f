"""A line proxy in front of the reference adapter, with hooks.

Every test adapter of this package is ``vendor/fs_provider.py`` running as a
child of this proxy. The proxy pumps host->child lines through the request
and notification hooks and child->host lines through the reply and partial
hooks; a hook may rewrite a message, drop it (return None), delay it (sleep:
the pump is ordered, so everything behind it waits too, which is what a slow
adapter looks like on the wire), duplicate it, inject lines, answer the host
itself, or ask the child a private question (``call_child``).

The proxy remembers every host request (id, method, params, whether it
streams, whether the host cancelled it) until its reply has gone out, so a
reply or partial hook knows what it answers.

Process rules: the child's stderr is the proxy's stderr; stdin EOF is passed
on; the proxy exits with the child's status when the child's output ends; the
child gets SIGKILL if the proxy dies (PR_SET_PDEATHSIG); and nothing but
protocol lines reaches stdout (fd 1 is pointed at stderr at start, the
protocol goes through a private duplicate). On Linux the child is forked
from the proxy after importing the reference, not exec'd (``_Forked``).

Stdlib only, and kept small: an adapter process is started for every case
group of every run of the mutant matrix.
"""

from __future__ import annotations

import ctypes
import itertools
import json
import os
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
PRIVATE_ID_BASE = 1 << 40        # ids of the proxy's own questions to the child
EOF_GRACE_S = 5.0                # after stdin EOF, the child's time to exit by itself


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

    Each hook gets the proxy, the remembered Request (None when the child
    answers an id the proxy never saw) and the parsed message, and returns the
    message to forward (possibly rewritten) or None to drop it.
    """

    def start(self, proxy: "Proxy") -> None:
        """Called once, after the child is spawned and before any line."""

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


def _die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the proxy dies (Linux)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)          # PR_SET_PDEATHSIG
    except Exception:
        pass


def _close_fds_above_2() -> None:
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        fds = list(range(3, 1024))
    for fd in fds:
        if fd > 2:
            try:
                os.close(fd)
            except OSError:
                pass                          # the listing's own fd, already closed


class _Forked:
    """The reference as a forked child of the proxy: the part of Popen the proxy uses.

    An exec'd child pays again for the interpreter, for compiling the
    1,300-line script and for the stdlib modules the proxy has already
    imported: about a third of every adapter spawn of the mutant matrix. So
    the proxy imports the reference once and forks before any thread exists;
    the child gets the pipes as fds 0 and 1, fd 2 (the proxy's stderr), no
    other fd, SIGKILL when the proxy dies, and exits with main()'s status
    after flushing, as ``python fs_provider.py`` would. Linux only (pidfd for
    waits with a deadline); elsewhere start() returns None and the proxy
    execs the reference as before.
    """

    def __init__(self, pid: int, stdin, stdout):
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None
        self._lock = threading.Lock()
        self._pidfd = os.pidfd_open(pid)

    @classmethod
    def start(cls, args: list[str]) -> "_Forked | None":
        if not (hasattr(os, "fork") and hasattr(os, "pidfd_open")) or threading.active_count() > 1:
            return None
        import importlib.util

        spec = importlib.util.spec_from_file_location("fs_provider", REFERENCE)
        reference = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = reference    # dataclasses look their module up
        spec.loader.exec_module(reference)    # byte-compiled once, then cached
        to_child, from_host = os.pipe()
        from_child, to_host = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        import gc

        gc.freeze()    # the collector then never touches (and copies) the pages both share
        pid = os.fork()
        if pid == 0:
            cls._run_child(reference, args, to_child, to_host)
        os.close(to_child)
        os.close(to_host)
        try:
            return cls(pid, os.fdopen(from_host, "wb"), os.fdopen(from_child, "rb"))
        except OSError:                       # no pidfd on this kernel: undo, exec instead
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(from_host)
            os.close(from_child)
            return None

    @staticmethod
    def _run_child(reference, args: list[str], stdin_fd: int, stdout_fd: int) -> None:
        code = 1
        try:
            _die_with_parent()
            os.dup2(stdin_fd, 0)
            os.dup2(stdout_fd, 1)
            _close_fds_above_2()              # as close_fds: nothing of the proxy's leaks in
            code = reference.main(list(args))
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:
                    pass
            os._exit(code if isinstance(code, int) else 1)

    def _reap(self) -> None:
        with self._lock:
            if self.returncode is None:
                _pid, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
                os.close(self._pidfd)

    def poll(self) -> int | None:
        if self.returncode is None:
            import select

            if select.select([self._pidfd], [], [], 0)[0]:
                self._reap()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        import select

        if self.returncode is None:
            try:
                ready = select.select([self._pidfd], [], [], timeout)[0]
            except (OSError, ValueError):     # the other pump reaped it meanwhile
                ready = [True]
            if not ready:
                raise TimeoutError(f"{REFERENCE} still running after {timeout} s")
            self._reap()
        return self.returncode

    def kill(self) -> None:
        with self._lock:
            if self.returncode is None:       # not reaped, so the pid is still ours
                try:
                    os.kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


class Proxy:
    """Runs the reference adapter as a child and pumps lines through hooks."""

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
        self.child: subprocess.Popen | None = None

    # ------------------------------------------------------------------ output

    @property
    def fixture(self):
        """The fixture directory as a pathlib.Path (imported at the first hook that asks)."""
        if self._fixture is None:
            from pathlib import Path
            self._fixture = Path(self.fixture_dir)
        return self._fixture

    def send_host(self, msg: Any) -> None:
        """Write one protocol line to the host; a reply retires its request."""
        data = msg if isinstance(msg, bytes) else dumps(msg)
        with self._host_lock:
            try:
                self._out.write(data)
                self._out.flush()
            except (BrokenPipeError, ValueError, OSError):
                self._shutdown(1)
        if isinstance(msg, dict) and "method" not in msg and ("result" in msg or "error" in msg):
            self.requests.pop(msg.get("id"), None)

    def send_child(self, msg: Any) -> None:
        data = msg if isinstance(msg, bytes) else dumps(msg)
        with self._child_lock:
            try:
                self.child.stdin.write(data)
                self.child.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass      # the child is gone; its EOF ends the proxy

    def reply(self, req: Request, result: Any) -> None:
        self.send_host({"jsonrpc": "2.0", "id": req.id, "result": result})

    def error(self, req: Request, message: str, kind: str | None = None, code: int = 1,
              **data: Any) -> None:
        err: dict = {"code": code, "message": message}
        if kind is not None:
            data = {"kind": kind, **data}
        if data:
            err["data"] = data
        self.send_host({"jsonrpc": "2.0", "id": req.id, "error": err})

    def call_child(self, method: str, params: dict, on_reply: Callable[[dict], None]) -> None:
        """Ask the child a question of the proxy's own; ``on_reply(msg)`` runs in
        the pump thread when the answer arrives (it must not block on the child)."""
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
    def _lines(stream, forward: Callable[[bytes], None]):
        """The JSON objects read from ``stream``; any other line (junk, invalid
        UTF-8, arrays...) is forwarded as it came, untouched by hooks."""
        for line in iter(stream.readline, b""):
            try:
                msg = json.loads(line)
            except ValueError:
                msg = None
            if isinstance(msg, dict):
                yield msg
            else:
                forward(line if line.endswith(b"\n") else line + b"\n")

    def _host_to_child(self) -> None:
        for msg in self._lines(sys.stdin.buffer, self.send_child):
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
        # stdin EOF: pass it on; the child's exit ends the proxy. The reference
        # need not exit on EOF, so it gets a grace period and then SIGKILL.
        with self._child_lock:
            try:
                self.child.stdin.close()
            except OSError:
                pass
        # _Forked says TimeoutError, a Popen (which imported subprocess) its own
        popen = sys.modules.get("subprocess")
        try:
            self.child.wait(timeout=EOF_GRACE_S)
        except (TimeoutError, *((popen.TimeoutExpired,) if popen else ())):
            self.child.kill()

    def _child_to_host(self) -> None:
        for msg in self._lines(self.child.stdout, self.send_host):
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
        code = self.child.wait()
        self._shutdown(code if code >= 0 else 128 - code)

    def _exec_child(self) -> subprocess.Popen:
        # the child gets the proxy's -S (the reference is stdlib-only; skipping
        # site's .pth processing halves the start of every adapter spawn)
        import subprocess
        flags = ["-S"] if sys.flags.no_site else []
        return subprocess.Popen(
            [sys.executable, *flags, str(REFERENCE), *self.args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=None,
            preexec_fn=_die_with_parent)

    def _shutdown(self, code: int) -> None:
        try:
            if self.child is not None and self.child.poll() is None:
                self.child.kill()
        except OSError:
            pass
        try:
            sys.stderr.flush()
        except Exception:
            pass
        os._exit(code)

    def _pump(self, body: Callable[[], None]) -> None:
        """Run a pump; a hook that raises ends the proxy loudly (traceback on
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
        self.child = _Forked.start(self.args) or self._exec_child()
        signal.signal(signal.SIGTERM, lambda *_: self._shutdown(143))
        self.hooks.start(self)
        pump = threading.Thread(target=self._pump, args=(self._child_to_host,),
                                name="child-to-host", daemon=True)
        pump.start()
        try:
            self._pump(self._host_to_child)
        except KeyboardInterrupt:
            self._shutdown(130)
        pump.join()


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
