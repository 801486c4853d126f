"""The generic subprocess driver: start a command, keep secrets out of its
environment, keep a bounded record of its stderr, find and stop its whole
process tree, and probe that tree with psutil. Knows nothing of the protocol;
wire/transport.py builds the provider connection on top of it.

Spawning
    ``Child.spawn(argv, env=..., cwd=..., stderr_path=...)`` starts ``argv``
    (no shell) with stdin and stdout as pipes. The child leads its own session
    and process group. A command that cannot be started (missing, a
    directory, not executable, bad working directory) raises SpawnError with
    one line naming it.

stderr: drained continuously, kept bounded
    Without ``stderr_path`` stderr goes to /dev/null. With one, stderr is a
    pipe that a daemon thread drains continuously (reads of up to
    STDERR_CHUNK bytes), so a chatty child never blocks on it, however much
    it writes. What is kept is bounded whatever the child writes (the stderr
    directory may well be on tmpfs, i.e. RAM):

    - the first STDERR_KEEP_HEAD bytes are appended to ``stderr_path`` (a
      file earlier spawns may share: each spawn only reads back its own part);
    - past that, only a rolling in-memory tail of the last STDERR_KEEP_TAIL
      bytes is kept, plus a count of the bytes that never reached the file
      (``stderr_dropped``; ``stderr_bytes`` is the total written);
    - when bytes were dropped, the file gets one line at its end once the
      drain is over (EOF, or stop()/kill()/close()), e.g.
      ``[forge-conformance: 199.0 MiB of stderr not kept (208666624 bytes
      after the first 1.0 MiB)]``. The note is written once; so the file
      never exceeds STDERR_KEEP_HEAD plus that line.

    ``stderr_tail(n)`` is the true tail of what the child wrote: it first
    takes in whatever is still waiting in the pipe at the moment of the call
    (so nothing written before the call is missed, without any waiting), then
    serves from the in-memory tail and, while nothing was dropped, from the
    file's head part.

    The drain thread ends at EOF, i.e. once every process holding the write
    end (the whole tree: kill()/stop() kill it) is gone; kill() waits for
    that, bounded by STDERR_JOIN_S. close() also tells the thread to stop
    (a descendant nothing could find may still hold stderr open) and joins
    it, bounded by STDERR_JOIN_S; the thread closes the pipe and the file
    itself, so no fd is ever closed under it.

Credential scrub
    Every spawn gets ``scrub_env(env)``. A variable is dropped when its name,
    compared upper-cased, is listed in CREDENTIAL_VARS or ends in one of
    CREDENTIAL_SUFFIXES (``_TOKEN``, ``_PASSWORD``, ``_SECRET``,
    ``_API_KEY``). Everything else passes through unchanged. The suite must be
    servable with no credentials at all (PROTOCOL.md 7.11, 7.12, B.2).

Finding the tree
    Each spawn carries a unique marker in its environment
    (``FORGE_SPAWN_TAG=<uuid4>``), which descendants inherit. ``tree()`` is the
    child, its descendants by parentage (and theirs), every process whose
    environment carries the marker -- this finds a grandchild that called
    setsid() and was reparented when its parent died -- and every process an
    earlier scan saw that is still the same process (psutil guards against pid
    reuse). A descendant that wipes its environment *and* escapes parentage
    before any scan sees it cannot be found; nothing portable can.

    ``descendants(root, through=...)`` is the same reading of parents for any
    process (the self-tests' leak checks): the live processes below ``root``,
    less those below a pid of ``through``.

Stopping
    ``stop()`` closes stdin, waits a short grace for the child to exit, sends
    SIGTERM to the group and to every process of the tree, waits briefly, then
    ``kill()``. ``kill()`` sends SIGKILL to the group and to every process of
    the tree at once, rescans until nothing is left (bounded by
    KILL_DEADLINE_S), then reaps the child. Both are idempotent, never raise
    for processes already gone, and are bounded in time. Waiting for exits
    uses pidfds (poll wakes when a process exits) where the kernel has them.

The parent's pipe fds: stdin is closed by close_stdin()/stop()/kill(); stdout
stays open after stop()/kill() so a reader still sees the remaining output and
EOF, and is closed by close(), which the owner calls once its reader is done.
The stderr pipe and file belong to the drain thread, which closes them when it
ends (at EOF, or when close() tells it to).
"""

from __future__ import annotations

import errno
import fcntl
import os
import select
import signal
import struct
import subprocess
import termios
import threading
import time
import uuid
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Mapping, Sequence

import psutil

from wire.errors import SpawnError

MARKER_VAR = "FORGE_SPAWN_TAG"

# Named explicitly because they do not all match the suffix rule, and so the
# list reads as documentation of what the suite considers a credential.
CREDENTIAL_VARS = frozenset(
    {
        "FORGE_TOKEN",
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "GH_ENTERPRISE_TOKEN",
        "GITHUB_ENTERPRISE_TOKEN",
        "GITHUB_PAT",
        "GITLAB_TOKEN",
        "GITLAB_PRIVATE_TOKEN",
        "GL_TOKEN",
        "CI_JOB_TOKEN",
        "GITEA_TOKEN",
        "FORGEJO_TOKEN",
        "CODEBERG_TOKEN",
        "BITBUCKET_TOKEN",
        "BITBUCKET_APP_PASSWORD",
        "BITBUCKET_ACCESS_TOKEN",
        # Channels through which a child could still reach credentials.
        "GIT_ASKPASS",
        "SSH_ASKPASS",
        "SSH_AUTH_SOCK",
    }
)
CREDENTIAL_SUFFIXES = ("_TOKEN", "_PASSWORD", "_SECRET", "_API_KEY")

STOP_GRACE_S = 0.5  # stdin closed -> time to exit on its own
TERM_GRACE_S = 0.5  # SIGTERM -> time to exit before SIGKILL
KILL_DEADLINE_S = 2.0  # SIGKILL rounds + reaping; normally over at once
_FALLBACK_POLL_S = 0.01  # exit polling step, only where pidfds are missing

STDERR_CHUNK = 64 * 1024  # one read of the stderr pipe
STDERR_KEEP_HEAD = 2**20  # the first bytes of a spawn's stderr, kept in its file
STDERR_KEEP_TAIL = 64 * 1024  # past the head: the rolling in-memory tail
STDERR_JOIN_S = 1.0  # bound on waiting for the stderr drain thread to end


def is_credential_var(name: str) -> bool:
    upper = name.upper()
    return upper in CREDENTIAL_VARS or upper.endswith(CREDENTIAL_SUFFIXES)


def scrub_env(env: Mapping[str, str]) -> dict[str, str]:
    """A copy of ``env`` without credential variables (see module docstring)."""
    return {k: v for k, v in env.items() if not is_credential_var(k)}


def describe_returncode(returncode: int | None) -> str | None:
    """``"exited with code 3"``, ``"killed by signal SIGKILL"``; None while running."""
    if returncode is None:
        return None
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = str(-returncode)
        return f"killed by signal {name}"
    return f"exited with code {returncode}"


@dataclass(frozen=True)
class InetSocket:
    """One AF_INET/AF_INET6 socket of a process of the tree."""

    pid: int
    family: int
    type: int
    laddr: tuple  # (ip, port) or ()
    raddr: tuple  # (ip, port) or () when unconnected
    status: str


class Child:
    """A spawned command and everything it started. Build with ``Child.spawn``."""

    def __init__(
        self,
        proc: subprocess.Popen,
        argv: list[str],
        env: dict[str, str],
        cwd,
        tag: str,
        stderr_path: Path | None,
        stderr_drain: "_StderrDrain | None",
    ):
        self._proc = proc
        self.pid: int = proc.pid
        self.argv = argv
        self.env = env  # exactly what the child got, marker included
        self.cwd = cwd
        self.tag = tag
        self.stderr_path = stderr_path
        self._stderr = stderr_drain  # None: stderr went to /dev/null
        self._stderr_waited = False  # kill() waited for the drain once already
        # kill()/stop() found the child running: its exit is the host's doing,
        # so a failure report must not blame the adapter for it
        self.stopped_by_host = False
        # Closing the stop pipe's write end ends the drain thread (it then
        # frees its fds): at close(), or when a Child nobody closed is
        # collected. A finalizer runs at most once and takes no lock.
        self._stderr_stop = (
            weakref.finalize(self, os.close, stderr_drain.stop_w)
            if stderr_drain is not None else None
        )
        self.stdout_fd: int = proc.stdout.fileno()
        # Not reaped yet, so the pid is still ours: both handles are safe.
        self._ps = psutil.Process(proc.pid)
        self._pidfd = _pidfd_open(proc.pid)
        self._pidfd_finalizer = (
            weakref.finalize(self, os.close, self._pidfd) if self._pidfd is not None else None
        )
        self._seen: dict[int, psutil.Process] = {proc.pid: self._ps}
        self._lock = threading.RLock()  # tree bookkeeping, stop/kill/close
        self._stdin_lock = threading.Lock()
        self._writers = 0
        self._stdin_closing = False
        self._closed = False
        _LIVE.add(self)

    # ----------------------------------------------------------------- spawn

    @classmethod
    def spawn(
        cls,
        argv: Sequence[str | os.PathLike],
        *,
        env: Mapping[str, str] | None,
        cwd: str | os.PathLike | None = None,
        stderr_path: str | os.PathLike | None = None,
    ) -> "Child":
        """Start ``argv``; ``env=None`` means this process's environment.
        Either way it is scrubbed and marked. Raises SpawnError."""
        argv = [os.fspath(a) for a in argv]
        if not argv or not argv[0]:
            raise SpawnError("cannot start adapter: the command is empty")
        command = argv[0]
        child_env = scrub_env(os.environ if env is None else env)
        tag = uuid.uuid4().hex
        child_env[MARKER_VAR] = tag

        file_fd = pipe_r = pipe_w = None
        path = Path(stderr_path) if stderr_path is not None else None
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                # Non-inheritable, like every fd Python opens.
                file_fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            except OSError as exc:
                raise SpawnError(
                    f"cannot start adapter {command!r}: cannot open its stderr file "
                    f"{os.fspath(path)!r}: {_reason(exc)}"
                ) from None
            pipe_r, pipe_w = os.pipe()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=pipe_w if pipe_w is not None else subprocess.DEVNULL,
                env=child_env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
                bufsize=0,
            )
        except OSError as exc:
            for fd in (file_fd, pipe_r):
                if fd is not None:
                    os.close(fd)
            raise SpawnError(_spawn_message(command, cwd, child_env, exc)) from None
        finally:
            if pipe_w is not None:
                os.close(pipe_w)  # the child has its own copy: EOF once the tree is gone
        drain = None
        if path is not None:
            drain = _StderrDrain(pipe_r, file_fd, path, f"forge-stderr-{proc.pid}")
        return cls(proc, argv, child_env, cwd, tag, path, drain)

    # ----------------------------------------------------------------- stdin

    def write(self, data: bytes) -> None:
        """Write all of ``data`` to the child's stdin (unbuffered, so nothing
        to flush). Raises BrokenPipeError/OSError to the caller. Not for
        concurrent callers: the owner serialises writes."""
        with self._stdin_lock:
            if self._stdin_closing or self._proc.stdin is None or self._proc.stdin.closed:
                raise BrokenPipeError(errno.EPIPE, "stdin of the child is closed")
            self._writers += 1
            fd = self._proc.stdin.fileno()
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            with self._stdin_lock:
                self._writers -= 1
                if self._stdin_closing and self._writers == 0:
                    self._proc.stdin.close()

    def close_stdin(self) -> None:
        """Close the parent's end of stdin. A write blocked on a full pipe at
        this moment keeps the fd until it returns (closing under it could hand
        its fd number to someone else); it is closed right after."""
        with self._stdin_lock:
            self._stdin_closing = True
            if self._writers == 0 and self._proc.stdin is not None:
                try:
                    self._proc.stdin.close()
                except OSError:
                    pass

    # ------------------------------------------------------------ exit state

    def poll(self) -> int | None:
        return self._proc.poll()

    @property
    def returncode(self) -> int | None:
        return self._proc.poll()

    def wait(self, timeout: float | None = None) -> int | None:
        """The return code once the child has exited (and is reaped), or None
        if it is still running after ``timeout`` seconds."""
        rc = self._proc.poll()
        if rc is not None:
            return rc
        if self._pidfd is not None:
            poller = select.poll()
            poller.register(self._pidfd, select.POLLIN)
            if not poller.poll(None if timeout is None else max(0.0, timeout) * 1000):
                return self._proc.poll()
            timeout = KILL_DEADLINE_S  # it has exited: only the reap is left
        try:
            return self._proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def exit_description(self) -> str | None:
        return describe_returncode(self.poll())

    # --------------------------------------------------------------- the tree

    def tree(self) -> list[psutil.Process]:
        """The child (while not reaped), its descendants, every process
        carrying this spawn's marker and their descendants, and every process
        an earlier scan found that still exists. The child comes first."""
        with self._lock:
            found: dict[int, psutil.Process] = {}

            table = _proc_table()
            if table is None:
                self._scan_with_psutil(found)
            else:
                self._scan_table(table, found)
            for pid, proc in list(self._seen.items()):
                if pid not in found and proc.is_running():
                    found[pid] = proc
            # Remember them all: one that later wipes its marker and gets
            # reparented stays findable. Processes gone for good are dropped.
            self._seen = {pid: proc for pid, proc in found.items()}
            self._seen.setdefault(self.pid, self._ps)
            return sorted(found.values(), key=lambda p: (p.pid != self.pid, p.pid))

    def _scan_with_psutil(self, found: dict) -> None:
        def add_with_descendants(proc: psutil.Process) -> None:
            found.setdefault(proc.pid, proc)
            try:
                for kid in proc.children(recursive=True):
                    found.setdefault(kid.pid, kid)
            except psutil.Error:
                pass

        if self._ps.is_running():
            add_with_descendants(self._ps)
        me = os.getpid()
        for proc in psutil.process_iter(["create_time"], ad_value=None):
            if proc.pid == me or proc.pid in found:
                continue
            if _marker_of(proc) == self.tag:
                add_with_descendants(proc)

    def _scan_table(self, table: dict[int, tuple[int, int]], found: dict) -> None:
        """tree()'s scan from one reading of /proc (Linux): the same processes
        as the psutil scan, at a quarter of its cost (one read of each
        process's stat, none of the environment of a process already read)."""
        kids: dict[int, list[int]] = {}
        for pid, (ppid, _start) in table.items():
            kids.setdefault(ppid, []).append(pid)

        def add_with_descendants(pid: int, proc: psutil.Process | None = None) -> None:
            todo = [pid]
            while todo:
                at = todo.pop()
                if at in found:
                    continue
                if proc is not None and at == pid:
                    found[at] = proc
                else:
                    try:
                        found[at] = psutil.Process(at)
                    except psutil.Error:   # gone since the reading
                        continue
                # like psutil's children(): a kid started before its parent
                # is a reused pid, not a kid
                todo += [k for k in kids.get(at, ()) if table[k][1] >= table[at][1]]

        if self.pid in table and self._ps.is_running():
            add_with_descendants(self.pid, self._ps)
        me = os.getpid()
        for pid, (ppid, start) in table.items():
            if pid == me or pid in found:
                continue
            if _marker_in_proc(pid, ppid, start) == self.tag:
                add_with_descendants(pid)

    def survivors(self) -> list[psutil.Process]:
        """Processes of the tree still alive (zombies count as dead): after
        stop()/kill() these are leaks."""
        return [p for p in self.tree() if _alive(p)]

    def inet_sockets(self) -> list[InetSocket]:
        """A snapshot of the AF_INET/AF_INET6 sockets of every process of the tree."""
        sockets: list[InetSocket] = []
        for proc in self.tree():
            getter = getattr(proc, "net_connections", None) or proc.connections
            try:
                conns = getter(kind="inet")
            except psutil.Error:  # vanished, zombie, or not ours to see
                continue
            for conn in conns:
                sockets.append(
                    InetSocket(
                        pid=proc.pid,
                        family=conn.family,
                        type=conn.type,
                        laddr=tuple(conn.laddr) if conn.laddr else (),
                        raddr=tuple(conn.raddr) if conn.raddr else (),
                        status=conn.status,
                    )
                )
        return sockets

    # --------------------------------------------------------------- stopping

    def kill(self) -> None:
        """Like the host on exit: SIGKILL the group and the whole tree at once,
        rescan until nothing is left, reap the child. Idempotent."""
        with self._lock:
            if self._proc.poll() is None:
                self.stopped_by_host = True
            deadline = time.monotonic() + KILL_DEADLINE_S
            while True:
                procs = self.tree()
                live = [p for p in procs if _alive(p)]
                if not live:
                    break
                self._signal_group(signal.SIGKILL, procs)
                _signal_each(live, signal.SIGKILL)
                if _wait_gone(live, deadline) or time.monotonic() >= deadline:
                    break
            self._reap(deadline)
            self.close_stdin()
            if self._stderr is not None:
                # The tree is gone, so EOF is due at once; wait for it (the
                # note goes in at EOF) but only once: a holder that escaped
                # the kill would cost the full bound at every call.
                self._stderr.join(0.0 if self._stderr_waited else STDERR_JOIN_S)
                self._stderr_waited = True

    def stop(self, grace_s: float = STOP_GRACE_S, term_grace_s: float = TERM_GRACE_S) -> None:
        """Close stdin, allow ``grace_s`` to exit, SIGTERM the group and the
        tree, allow ``term_grace_s``, then kill(). Idempotent; bounded by
        about grace_s + term_grace_s + KILL_DEADLINE_S."""
        with self._lock:
            if self._proc.poll() is None:
                self.stopped_by_host = True
            self.close_stdin()
            self.wait(grace_s)
            procs = self.tree()
            live = [p for p in procs if _alive(p)]
            if live:
                self._signal_group(signal.SIGTERM, procs)
                _signal_each(live, signal.SIGTERM)
                _wait_gone(live, time.monotonic() + term_grace_s)
            self.kill()

    def close(self) -> None:
        """kill() if needed, then release the parent's fds. Call once the
        reader of stdout_fd is done with it. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self.kill()
            self._closed = True
            _LIVE.discard(self)
            if self._proc.stdout is not None:
                self._proc.stdout.close()
            if self._pidfd_finalizer is not None:
                self._pidfd_finalizer()
            if self._stderr is not None:
                self._stderr_stop()
                self._stderr.join(STDERR_JOIN_S)

    def __enter__(self) -> "Child":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        state = self.exit_description() or "running"
        return f"<Child pid={self.pid} {self.argv[0]!r} {state}>"

    # ---------------------------------------------------------------- stderr

    def stderr_tail(self, n_bytes: int = 2000) -> str:
        """The last ``n_bytes`` (at most) this spawn wrote to its stderr,
        including anything still waiting in the pipe; nothing from earlier
        spawns appending to the same file; "" without a stderr file. Once
        more than STDERR_KEEP_HEAD + STDERR_KEEP_TAIL bytes were written, at
        most the last STDERR_KEEP_TAIL bytes are available."""
        if self._stderr is None:
            return ""
        return self._stderr.tail(n_bytes)

    @property
    def stderr_bytes(self) -> int:
        """How many bytes this spawn wrote to stderr so far (as drained)."""
        return self._stderr.total if self._stderr is not None else 0

    @property
    def stderr_dropped(self) -> int:
        """How many of them are not in the stderr file (past STDERR_KEEP_HEAD)."""
        return self._stderr.dropped if self._stderr is not None else 0

    # --------------------------------------------------------------- helpers

    def _signal_group(self, sig: int, procs: list[psutil.Process]) -> None:
        # While the child is unreaped its pid (the group id) cannot be reused.
        # Once reaped, the id stays reserved only while a member lives, so
        # signal the group only if a process we know is still in it.
        if self._proc.returncode is not None and not any(
            _pgid(p.pid) == self.pid for p in procs
        ):
            return
        try:
            os.killpg(self.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap(self, deadline: float) -> None:
        self.wait(max(0.0, deadline - time.monotonic()))


# ------------------------------------------------------------- stderr drain


class _StderrDrain:
    """Drains one spawn's stderr pipe on a daemon thread into a bounded record
    (see the module docstring). It owns the pipe's read end, the file fd and
    its stop pipe's read end, and closes them itself when it ends; the Child
    owns ``stop_w``. Holds no reference to the Child."""

    def __init__(self, pipe_r: int, file_fd: int, path: Path, name: str):
        self.path = path
        self._pipe_r = pipe_r
        self._file_fd = file_fd
        os.set_blocking(pipe_r, False)  # only our end: the child's stays blocking
        # Closing stop_w (the owner does: see Child) wakes the thread with
        # POLLHUP on stop_r: it takes what is in the pipe then and ends.
        self._stop_r, self.stop_w = os.pipe()
        self._lock = threading.Lock()  # one reader of the pipe at a time
        self._start = os.fstat(file_fd).st_size  # this spawn's part of the file
        self._head = 0  # bytes written to the file
        self._head_open = True  # still appending to the file
        self._tail = bytearray()  # the last bytes past the head
        self.total = 0
        self._eof = False
        self._ended = False  # fds closed; nothing more comes
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    @property
    def dropped(self) -> int:
        return self.total - self._head

    # ------------------------------------------------------------ the thread

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._pipe_r, select.POLLIN)
        poller.register(self._stop_r, select.POLLIN)
        try:
            while True:
                events = dict(poller.poll())
                with self._lock:
                    if events.get(self._pipe_r):
                        self._read_locked(STDERR_CHUNK)  # one chunk: tail() never starves
                        if self._eof:
                            return
                    if events.get(self._stop_r):
                        # close(): take what is there now, then stop.
                        self._read_locked(_pipe_pending(self._pipe_r))
                        return
        finally:
            with self._lock:
                self._end_locked()

    def _read_locked(self, budget: int) -> None:
        """Read up to ``budget`` bytes without blocking (EOF sets _eof)."""
        while budget > 0 and not self._eof:
            try:
                chunk = os.read(self._pipe_r, min(budget, STDERR_CHUNK))
            except BlockingIOError:  # tail() took it first
                return
            except OSError:
                self._eof = True
                return
            if not chunk:
                self._eof = True
                return
            budget -= len(chunk)
            self._take(chunk)

    def _take(self, chunk: bytes) -> None:
        self.total += len(chunk)
        if self._head_open:
            part = chunk[: STDERR_KEEP_HEAD - self._head]
            try:
                _write_all(self._file_fd, part)
                self._head += len(part)
            except OSError:  # the file became unwritable: keep only the tail
                part = b""
            chunk = chunk[len(part):]
            if self._head >= STDERR_KEEP_HEAD or chunk:
                self._head_open = False
        if chunk:
            tail = self._tail
            tail += chunk
            if len(tail) > STDERR_KEEP_TAIL:
                del tail[: len(tail) - STDERR_KEEP_TAIL]

    def _end_locked(self) -> None:
        if self._ended:
            return
        self._ended = True
        dropped = self.dropped
        if dropped:
            note = (f"[forge-conformance: {_human_size(dropped)} of stderr not kept "
                    f"({dropped} bytes after the first {_human_size(self._head)})]\n")
            try:
                _write_all(self._file_fd, note.encode())
            except OSError:
                pass
        for fd in (self._pipe_r, self._file_fd, self._stop_r):
            os.close(fd)

    # ------------------------------------------------------------ the owner

    def tail(self, n_bytes: int) -> str:
        n_bytes = max(0, n_bytes)
        with self._lock:
            if not self._ended:
                # Everything written before this call is now either taken in
                # or still in the pipe: take that in too (no waiting).
                self._read_locked(_pipe_pending(self._pipe_r))
            data = bytes(self._tail[max(0, len(self._tail) - n_bytes):])
            head = self._head
            # The file's head part joins on only if nothing was lost between.
            contiguous = self.total - head == len(self._tail)
        need = n_bytes - len(data)
        whole = contiguous and need >= head  # from the very first byte
        if need > 0 and contiguous and head:
            # The head part of the file is written once and never changes.
            take = min(need, head)
            try:
                with open(self.path, "rb") as f:
                    f.seek(self._start + head - take)
                    data = f.read(take) + data
            except OSError:
                whole = False
        if not whole:
            # Cut mid-character: drop the orphaned UTF-8 continuation bytes.
            skip = 0
            while skip < 3 and skip < len(data) and 0x80 <= data[skip] <= 0xBF:
                skip += 1
            data = data[skip:]
        return data.decode("utf-8", errors="backslashreplace")

    def join(self, timeout: float) -> bool:
        """Wait up to ``timeout`` for the thread to end; True if it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()


def _pipe_pending(fd: int) -> int:
    """Bytes waiting in a pipe (FIONREAD); STDERR_KEEP_HEAD if unknown."""
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    except OSError:
        return STDERR_KEEP_HEAD


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _human_size(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 2**20:
        return f"{n / 1024:.1f} KiB"
    return f"{n / 2**20:.1f} MiB"


# ------------------------------------------------------------------ helpers


def _pidfd_open(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


# (pid, start time) -> the MARKER_VAR value its environment had when first
# read. Only an ancestor in a spawn's tree can hand a process the marker (a
# fork copies the parent's environment), so the first reading stays true for
# what tree() needs: a marked process that later execs without it stays found
# (as _seen also ensures), and no unmarked process can come to carry this
# spawn's tag. Each process is thus read once a run instead of at every scan
# of every spawn: with several suites on one machine, reading every process's
# environment at each scan was a large part of a run's CPU. A failed read,
# or a process whose start time cannot be read, is not remembered.
_MARKS: dict[tuple[int, float], str | None] = {}
# Every Child not closed yet, for the last resort below.
_LIVE: "weakref.WeakSet[Child]" = weakref.WeakSet()


def kill_every_tree() -> None:
    """Last resort of a process that must exit now (the CLI's stop bound ran
    out): SIGKILL the process group of every child not closed yet, without
    a lock, a scan or a wait. Best effort; the orderly path is Child.kill()."""
    for child in list(_LIVE):
        if child._proc.returncode is not None:
            continue   # reaped: its pid, and so the group id, may be someone else's now
        try:
            os.killpg(child.pid, signal.SIGKILL)   # spawned with its own session
        except OSError:
            pass


_MARKS_LOCK = threading.Lock()
_MARKS_MAX = 8192


def _marker_of(proc: psutil.Process) -> str | None:
    started = getattr(proc, "info", {}).get("create_time")
    key = (proc.pid, started)
    if started is not None:
        with _MARKS_LOCK:
            if key in _MARKS:
                return _MARKS[key]
    try:
        environ = proc.environ()
    except psutil.Error:   # gone, a zombie, or not ours to read: not one of ours now
        if started is not None and _kernel_thread(proc):
            with _MARKS_LOCK:   # never has an environment (ESRCH), never is ours
                _MARKS[key] = None
        return None
    value = environ.get(MARKER_VAR) if environ else None
    if started is not None:
        with _MARKS_LOCK:
            if len(_MARKS) >= _MARKS_MAX:
                _MARKS.clear()    # bounded; what is dropped is only read again
            _MARKS[key] = value
    return value


def _kernel_thread(proc: psutil.Process) -> bool:
    """Linux's kernel threads (kthreadd, pid 2, and its children): reading
    their environment fails at every scan, so their failure is remembered."""
    info = getattr(proc, "info", {})
    return psutil.LINUX and (proc.pid == 2 or info.get("ppid") == 2)


def _proc_table(*, live_only: bool = False) -> dict[int, tuple[int, int]] | None:
    """{pid: (ppid, start time in clock ticks)} of every process, read from
    /proc/<pid>/stat; None where there is no such /proc (not Linux).
    ``live_only``: zombies and dead processes left out."""
    if not psutil.LINUX:
        return None
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    table: dict[int, tuple[int, int]] = {}
    for name in names:
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
            try:
                data = os.read(fd, 4096)
            finally:
                os.close(fd)
            # "pid (comm) state ppid ..."; comm may hold spaces and parentheses
            fields = data[data.rindex(b")") + 2:].split()
            if live_only and fields[0] in (b"Z", b"X", b"x"):
                continue
            table[int(name)] = (int(fields[1]), int(fields[19]))
        except (OSError, ValueError, IndexError):   # gone, or unreadable
            continue
    return table


def descendants(root: int, *, through: Collection[int] = ()) -> set[int]:
    """The live processes (zombies count as dead) whose chain of parents
    reaches ``root`` without passing through a pid of ``through``, judged on
    one reading of every process's parent: a process whose parent exits
    between two readings is reparented to init for an instant, and walking
    parents afterwards would lose it or misplace it. A kid started before its
    parent is a reused pid, not a kid (as in tree())."""
    table = _proc_table(live_only=True)
    if table is None:
        table = {}
        for proc in psutil.process_iter(["ppid", "status", "create_time"]):
            info = proc.info
            if info["ppid"] is None or info["status"] in (None, psutil.STATUS_ZOMBIE):
                continue
            table[proc.pid] = (info["ppid"], info["create_time"] or 0)
    stops = set(through)
    out: set[int] = set()
    for pid in table:
        if pid == root or pid in stops:
            continue
        kid, up, steps = pid, table[pid][0], 0
        while up != root and up not in stops and up in table and steps < 64:
            if table[up][1] > table[kid][1]:
                break
            kid, up, steps = up, table[up][0], steps + 1
        if up == root and (root not in table or table[root][1] <= table[kid][1]):
            out.add(pid)
    return out


def _marker_in_proc(pid: int, ppid: int, start: int) -> str | None:
    """_marker_of for a process of _proc_table(), read from /proc/<pid>/environ."""
    key = (pid, -1 - start)   # apart from _marker_of's keys (start times in seconds)
    with _MARKS_LOCK:
        if key in _MARKS:
            return _MARKS[key]
    try:
        fd = os.open(f"/proc/{pid}/environ", os.O_RDONLY)
        try:
            chunks = []
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                chunks.append(chunk)
        finally:
            os.close(fd)
    except OSError:   # gone, a zombie, a kernel thread (ESRCH), or not ours to read
        if pid == 2 or ppid == 2:   # Linux's kernel threads: this fails at every scan
            with _MARKS_LOCK:
                _MARKS[key] = None
        return None
    value = None
    prefix = MARKER_VAR.encode() + b"="
    for entry in b"".join(chunks).split(b"\0"):
        if entry.startswith(prefix):   # the last one wins, as in a dict of them
            value = entry[len(prefix):].decode("utf-8", "surrogateescape")
    with _MARKS_LOCK:
        if len(_MARKS) >= _MARKS_MAX:
            _MARKS.clear()
        _MARKS[key] = value
    return value


def _alive(proc: psutil.Process) -> bool:
    try:
        return proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # includes ZombieProcess
        return False
    except psutil.AccessDenied:
        return True


def _signal_each(procs: list[psutil.Process], sig: int) -> None:
    for proc in procs:
        try:
            proc.send_signal(sig)  # psutil refuses if the pid was reused
        except psutil.Error:
            pass


def _wait_gone(procs: list[psutil.Process], deadline: float) -> list[psutil.Process]:
    """Wait until every process has exited (a zombie has) or the deadline
    passes; return those still alive. Works for non-children too."""
    pending = [p for p in procs if _alive(p)]
    fds: dict[int, psutil.Process] = {}
    poller = select.poll()
    try:
        for proc in pending:
            fd = _pidfd_open(proc.pid)
            if fd is None:
                continue
            fds[fd] = proc
            poller.register(fd, select.POLLIN)
        covered = {proc.pid for proc in fds.values()}
        while True:
            pending = [p for p in pending if _alive(p)]
            remaining = deadline - time.monotonic()
            if not pending or remaining <= 0:
                return pending
            if all(p.pid in covered for p in pending):
                for fd, _ in poller.poll(remaining * 1000):
                    poller.unregister(fd)
            else:
                time.sleep(min(_FALLBACK_POLL_S, remaining))
    finally:
        for fd in fds:
            os.close(fd)


_REASONS = {
    errno.ENOENT: "no such file or directory",
    errno.EACCES: "permission denied (not executable)",
    errno.ENOEXEC: "not an executable format (a script without a #! line?)",
    errno.ENOTDIR: "a component of the path is not a directory",
    errno.ELOOP: "too many levels of symbolic links",
    errno.ETXTBSY: "the file is busy (still being written?)",
}


def _reason(exc: OSError) -> str:
    if exc.errno in _REASONS:
        return _REASONS[exc.errno]
    text = exc.strerror or str(exc)
    return text[:1].lower() + text[1:]


def _spawn_message(command: str, cwd, env: Mapping[str, str], exc: OSError) -> str:
    head = f"cannot start adapter {command!r}"
    filename = os.fspath(exc.filename) if exc.filename is not None else None
    if cwd is not None and filename == os.fspath(cwd) and filename != command:
        return f"{head}: working directory {os.fspath(cwd)!r}: {_reason(exc)}"
    resolved = _resolve(command, cwd, env)
    if exc.errno == errno.EACCES and resolved is not None and os.path.isdir(resolved):
        return f"{head}: is a directory"
    if exc.errno == errno.ENOENT and "/" not in command:
        return f"{head}: no such file or directory (not found on PATH)"
    return f"{head}: {_reason(exc)}"


def _resolve(command: str, cwd, env: Mapping[str, str]) -> str | None:
    """Where exec would have looked for ``command`` (the first existing path)."""
    if "/" in command:
        return os.path.join(os.fspath(cwd), command) if cwd is not None else command
    for directory in os.get_exec_path(env):
        candidate = os.path.join(directory, command)
        if os.path.exists(candidate):
            return candidate
    return None
