"""The I/O shell around wire.session: the host's client side of a stdio provider.

``Provider`` spawns the adapter through wire.process, runs one reader thread per
generation (only it reads that child's stdout), writes every line under one
writer lock (the id is allocated and its line written under the same lock, so
ids appear on the wire in increasing order), and lets callers block on their
own ``Call`` with deadlines. Every rule about ids, slots, routing, deadlines,
deaths and rebuilds lives in wire.session; this module only feeds it frames
and the clock and wakes the callers it names.

Waits are events with deadlines, never polling sleeps: a caller waits on its
call's latch until the slot's (possibly re-armed) deadline, and one small
timer thread per provider expires the slots nobody is waiting on. The backoff
sleep of a rebuild is an Event wait that ``close()`` interrupts.

Respawn modes: "host" mirrors the host's lazy rebuild with the backoff ladder
(1/2/5/30 s, a single rebuilder, waiters reuse its outcome); "immediate" is
the same machine without the sleeps (for cases). ``respawn()`` rebuilds now.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, NamedTuple

from wire import session as S
from wire.errors import ProviderClosed, ProviderError, SpawnError, WriteFailed
from wire.framing import (DEFAULT_MAX_LINE_BYTES, IGNORED, PARTIAL, FrameReader, encode_notification,
                          encode_request)
from wire.monitor import Finding, Monitor
from wire.messages import InitializeResult, ShapeError, structure
from wire.process import Child
from wire.transcript import Transcript

READ_CHUNK = 64 * 1024
EXIT_STATUS_WAIT_S = 0.25   # at EOF, how long to wait for the exit status (for the message)
READER_JOIN_S = 2.0         # after a kill, how long a reader may take to see EOF
STDERR_TAIL_BYTES = 2000
RESPAWN_MODES = ("immediate", "host")

_ENTRY_KIND = {IGNORED: "notification"}   # transcript kind of a frame kind (else the same)
_OUTCOMES = {S.RESULT: "result", S.ERROR: "error", S.TIMEOUT: "timeout",
             S.CLOSED_STATE: "closed"}
class _Latch:
    """A one-shot gate (cheaper than threading.Event): open() once, wait(t) many."""

    __slots__ = ("_lock",)

    def __init__(self):
        self._lock = threading.Lock()
        self._lock.acquire()

    def open(self) -> None:
        self._lock.release()

    def wait(self, timeout: float | None) -> bool:
        """Wait until open, at most ``timeout`` seconds (None: until it opens)."""
        if self._lock.acquire(True, -1 if timeout is None else max(timeout, 0.0)):
            self._lock.release()
            return True
        return False


class Call:
    """One request in flight, then its outcome.

    ``outcome`` is None while live, then "result" | "error" | "timeout" | "closed";
    ``value`` holds the result, ``error`` the ProviderError. ``partials`` holds
    each delivered ``$/partial``'s ``params.items`` as sent, in arrival order
    (unless the call was made with ``keep_partials=False``; ``partial_count``
    counts them either way).
    """

    __slots__ = ("id", "method", "params", "streaming", "generation", "partials",
                 "partial_count", "outcome", "error", "value", "sent_at", "finished_at",
                 "callback_error", "_slot", "_latch", "_provider", "_on_partial", "_keep")

    def __init__(self, provider: "Provider", slot: S.Slot, params: dict, on_partial, keep: bool):
        self.id = slot.id
        self.method = slot.method
        self.params = params
        self.streaming = slot.streaming
        self.generation = slot.generation
        self.partials: list = []
        self.partial_count = 0
        self.outcome: str | None = None
        self.error: ProviderError | None = None
        self.value: Any = None
        self.sent_at = time.monotonic()
        self.finished_at: float | None = None
        self.callback_error: Exception | None = None   # first exception of on_partial
        self._slot = slot
        self._latch = _Latch()
        self._provider = provider
        self._on_partial = on_partial
        self._keep = keep

    @property
    def done(self) -> bool:
        return self.outcome is not None

    def _finish(self, slot: S.Slot) -> None:   # under the provider lock; then _wake()
        self.value = slot.value
        self.error = slot.error
        self.finished_at = time.monotonic()
        self.outcome = _OUTCOMES[slot.state]

    def wait(self, timeout: float | None = None) -> bool:
        """Block until terminal (bounded by the call's deadline); never raises.
        With ``timeout``, give up after that long; returns whether it is done."""
        end = None if timeout is None else time.monotonic() + timeout
        slot = self._slot
        while self.outcome is None:
            now = time.monotonic()
            remaining: float | None = slot.deadline - now
            if remaining <= 0:
                self._provider._expire_due()
                if self.outcome is not None:
                    break
                if slot.deadline > time.monotonic():
                    continue          # a $/partial re-armed the deadline meanwhile
                remaining = None      # settled by another thread: its latch opens then
            if end is not None:
                if now >= end:
                    return False
                remaining = end - now if remaining is None else min(remaining, end - now)
            self._latch.wait(remaining)
        return True

    def result(self, timeout: float | None = None) -> Any:
        """The result, or raise the call's ProviderError (or what its on_partial
        raised). ``timeout`` (optional) bounds this wait only: TimeoutError
        leaves the call in flight."""
        if not self.wait(timeout):
            raise TimeoutError(f"{self.method} #{self.id} still pending after {timeout:g}s")
        if self.callback_error is not None:
            raise self.callback_error
        if self.error is not None:
            raise self.error
        return self.value

    def __repr__(self) -> str:
        return f"<Call {self.method} #{self.id} {self.outcome or 'live'}>"


class FailedStart(NamedTuple):
    """A (re)start of ``generation`` that failed (spawn, initialize or its
    reply), ``reason`` as the caller was told, ``seq`` its transcript event."""
    generation: int
    reason: str
    seq: int
    initial: bool   # the provider's first start (not a respawn)


class _Generation:
    """One spawned child and its reader."""

    __slots__ = ("number", "child", "reader", "ended", "retired", "orphaned", "asked")

    def __init__(self, number: int, child: Child):
        self.number = number
        self.child = child
        self.reader: threading.Thread | None = None
        self.ended = threading.Event()   # the reader has finished
        self.retired = False
        self.orphaned = False            # retired while its reader was still blocked
        self.asked = False               # the host ended it (kill, respawn, close, watchdog)


class Provider:
    """A stdio provider driven like the host drives it (see module doc)."""

    def __init__(self, argv: list[str], *, env: dict[str, str] | None = None, cwd=None,
                 deadline_s: float = 30.0, init_params: dict | None = None,
                 transcript: Transcript | None = None, stderr_dir: Path | None = None,
                 max_line_bytes: int = DEFAULT_MAX_LINE_BYTES, respawn: str = "immediate",
                 backoff_s: tuple[float, ...] | None = None, monitor: Monitor | None = None):
        if respawn not in RESPAWN_MODES:
            raise ValueError(f"respawn must be one of {RESPAWN_MODES}, got {respawn!r}")
        if not deadline_s > 0:
            raise ValueError("deadline_s must be positive")
        self.argv = list(argv)
        self.env = env
        self.cwd = cwd
        self.deadline_s = deadline_s
        self.init_params = dict(init_params) if init_params is not None else {"protocol": 1}
        self.transcript = transcript if transcript is not None else Transcript()
        self.max_line_bytes = max_line_bytes
        self.respawn_mode = respawn
        if backoff_s is None:
            backoff_s = S.HOST_BACKOFF_S if respawn == "host" else S.NO_BACKOFF_S
        self.init_results: list = []
        # every (re)start that failed: what the generations a caller needed died of
        self.failed_starts: list[FailedStart] = []
        self.child: Child | None = None
        self._session = S.Session(backoff_s)
        self._lock = threading.Lock()                     # guards the session and the fields below
        self._state_changed = threading.Condition(self._lock)   # lifecycle changes (rebuild waiters)
        self._timer_wake = threading.Condition(self._lock)      # an earlier deadline was armed
        self._timer_at = float("inf")                     # when the timer thread will next look
        self._wlock = threading.Lock()                    # the writer lock
        self._write_since: float | None = None            # a write in progress since (watchdog)
        self._write_child: Child | None = None
        self._closing = threading.Event()
        self._closed = False
        self._gens: dict[int, _Generation] = {}
        self._timer: threading.Thread | None = None
        self._start_error: str | None = None
        self._stderr_dir = Path(stderr_dir) if stderr_dir is not None else None
        self._own_stderr_dir = False
        self._final_tail = ""
        # the frame rules judged on every frame both ways (wire.monitor), when asked
        self.monitor = monitor
        self.findings: list[Finding] = []

    # ================================================================ lifecycle API

    def start(self) -> dict:
        """Spawn generation 1 and initialize it. Raises SpawnError or ProviderError."""
        with self._lock:
            if self._closed:
                raise ProviderError("provider is closed", kind="other")
            if self._session.generation:
                raise RuntimeError("Provider.start() called twice")
            attempt = self._session.begin_attempt(initial=True)
        if self._stderr_dir is None:
            self._stderr_dir = Path(tempfile.mkdtemp(prefix="forge-stderr-"))
            self._own_stderr_dir = True
        timer = threading.Thread(target=self._timer_loop, name="provider-timer", daemon=True)
        timer.start()
        # Known to close() only once started: a stop signal can land inside
        # start() (it waits for the thread to run), and a thread start()
        # never returned for cannot be joined (it ends on close()'s _closing).
        self._timer = timer
        try:
            return self._run_attempt(attempt, raw_errors=True)
        except (SpawnError, ProviderError) as exc:
            self._start_error = getattr(exc, "message", None) or str(exc)
            raise

    def respawn(self) -> dict:
        """Kill and reap the current child now, spawn the same argv/env, initialize
        with the same params (ids continue). Returns the init result."""
        with self._lock:
            self._check_usable()
            attempt = self._session.begin_attempt(backoff_s=0.0)
            self._state_changed.notify_all()
        self._settle_and_note()
        return self._run_attempt(attempt, raw_errors=True)

    def kill(self) -> None:
        """SIGKILL the current child's whole tree now (a simulated crash; no respawn).
        Returns once the reader has seen the EOF and failed what was in flight."""
        with self._lock:
            gen = self._gens.get(self._session.generation)
        if gen is None:
            return
        self.transcript.event(f"harness kills generation {gen.number}", generation=gen.number)
        gen.asked = True
        gen.child.kill()
        self._join_reader(gen)

    def close(self) -> None:
        """Stop the child and its whole tree; idempotent. Calls in flight fail closed."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._closing.set()
            self._state_changed.notify_all()
            self._timer_wake.notify_all()
            gens = list(self._gens.values())
        for gen in gens:
            self._retire(gen, stop=True)
        with self._lock:
            # Whatever a reader could not settle (it was cut off) fails now.
            self._session.shut_down("harness closed the provider")
            done = self._settle()
        self._note_done(done)
        if self._timer is not None and self._timer is not threading.current_thread():
            self._timer.join(READER_JOIN_S)
        if self.child is not None:
            self._final_tail = self.child.stderr_tail(64 * 1024)
        if self._own_stderr_dir and self._stderr_dir is not None:
            shutil.rmtree(self._stderr_dir, ignore_errors=True)

    def __enter__(self) -> "Provider":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ================================================================ requests

    def call(self, method: str, params: dict, *, deadline_s: float | None = None,
             inactivity_s: float | None = None, on_partial: Callable[[Any], None] | None = None,
             keep_partials: bool = True, envelope: dict | None = None,
             cancel_at_once: bool = False) -> Call:
        """Write the request now and return its Call. Params with ``"partial": true``
        opt into streaming: the deadline is then an inactivity window
        (``inactivity_s`` or ``deadline_s``) that each delivered ``$/partial``
        re-arms. ``envelope``: extra top-level members of the request (a case
        probing reader tolerance); the id is the session counter's as always.
        ``cancel_at_once``: its ``$/cancelRequest`` goes in the same write, so
        the adapter reads the cancel while the request is surely in flight
        (a user typing ahead), however fast it answers.
        If the child is dead this first rebuilds it (respawn mode)."""
        deadline_s = self.deadline_s if deadline_s is None else deadline_s
        s = self._session
        if s.lifecycle is not S.ALIVE or s.output is not S.OPEN or self._closed:
            self._ensure_ready()   # (the fast path above is rechecked under the lock in _send)
        return self._send(method, params, deadline_s, inactivity_s, on_partial, keep_partials,
                          envelope=envelope, cancel_at_once=cancel_at_once)

    def request(self, method: str, params: dict, **kw) -> Any:
        """call(...).result()"""
        return self.call(method, params, **kw).result()

    def notify(self, method: str, params: Any) -> None:
        """Send any notification (no id; params need not be an object). Best-effort,
        like the host's cancel: not sent when no initialized child is running; a
        failed write is ignored."""
        text, msg = encode_notification(method, params)
        self._write_other((text + "\n").encode("utf-8"), "notification", msg, best_effort=True)

    def cancel(self, call_or_id: "Call | int") -> None:
        """``$/cancelRequest {"id": n}``: advisory, never changes the call."""
        rid = call_or_id.id if isinstance(call_or_id, Call) else call_or_id
        with self._lock:
            self._session.cancel(rid)
        self.notify("$/cancelRequest", {"id": rid})

    def send_raw(self, line: bytes) -> None:
        """Write exactly these bytes (a case needing odd input). Raises ProviderError
        if no initialized child is running or the write fails."""
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            msg = None
        kind = "request" if isinstance(msg, dict) and "id" in msg else "notification"
        self._write_other(bytes(line), kind, msg, best_effort=False)

    # ================================================================ views

    @property
    def generation(self) -> int:
        return self._session.generation

    @property
    def alive(self) -> bool:
        s = self._session
        child = self.child
        return (not self._closed and s.lifecycle == S.ALIVE and s.output == S.OPEN
                and child is not None and child.poll() is None)

    @property
    def in_flight(self) -> int:
        return self._session.in_flight

    @property
    def lifecycle(self) -> str:
        """"alive" | "respawning" | "dead" (PROTOCOL §7.10)."""
        return self._session.lifecycle

    @property
    def session(self) -> S.Session:
        """The sans-IO core (read it; do not drive it from outside)."""
        return self._session

    def take_notice(self) -> str:
        """The host's one-shot status notice ("provider restarted ...", "provider
        keeps failing to restart ..."); empty on a second read."""
        with self._lock:
            return self._session.take_notice()

    def stderr_tail(self, n_bytes: int = STDERR_TAIL_BYTES) -> str:
        child = self.child
        if child is None:
            return ""
        if self._closed and self._own_stderr_dir:
            return self._final_tail[-n_bytes:] if n_bytes else ""
        return child.stderr_tail(n_bytes)

    def exit_description(self) -> str | None:
        child = self.child
        return child.exit_description() if child is not None else None

    def __repr__(self) -> str:
        return (f"<Provider {self.argv[0]!r} gen={self.generation} {self.lifecycle} "
                f"in_flight={self.in_flight}>")

    # ================================================================ internals: admission

    def _check_usable(self) -> None:   # under the lock
        if self._closed:
            raise ProviderError("provider is closed", kind="other")
        if not self._session.started:
            why = f": {self._start_error}" if self._start_error else ""
            raise ProviderError(f"provider is not started{why}", kind="provider")

    def _ensure_ready(self) -> None:
        """The host's admission + lazy rebuild (§7.10): proceed when alive; become
        the rebuilder when dead; wait for the attempt in progress otherwise."""
        with self._lock:
            self._check_usable()
            s = self._session
            if s.lifecycle == S.ALIVE and s.output == S.OPEN:
                return
            if s.lifecycle == S.DEAD:
                attempt = s.begin_attempt()
                self._state_changed.notify_all()
            else:
                self._wait_for_attempt()
                return
        self._settle_and_note()
        self._run_attempt(attempt, raw_errors=False)

    def _wait_for_attempt(self) -> None:   # under the lock, lifecycle respawning
        s = self._session
        gen = s.generation
        attempt = s.attempt
        backoff = attempt.backoff_s if attempt is not None else 0.0
        end = time.monotonic() + backoff + self.deadline_s + READER_JOIN_S + 5.0
        while s.generation == gen and s.lifecycle == S.RESPAWNING and not self._closed:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise ProviderError(S.RESTARTING, kind="provider")
            self._state_changed.wait(remaining)
        if self._closed:
            raise ProviderError("provider is closed", kind="other")
        if s.generation != gen:
            raise ProviderError("provider restart was superseded — try again", kind="provider")
        if s.lifecycle == S.DEAD:
            raise ProviderError(f"provider restart failed: {s.failure_reason}", kind="provider")

    def _run_attempt(self, attempt: S.Attempt, *, raw_errors: bool) -> dict:
        """One (re)build (§7.10 steps 2-8). ``raw_errors``: raise SpawnError as is
        (start/respawn) instead of as a ProviderError (a lazy rebuild in call())."""
        n = attempt.generation
        if not attempt.initial:
            self.transcript.event(f"respawn attempt {attempt.number} (rung {attempt.rung}): "
                                  f"backoff {attempt.backoff_s:g}s", generation=n)
        try:
            if attempt.backoff_s > 0 and self._closing.wait(attempt.backoff_s):
                raise ProviderError("provider dropped during restart", kind="other")
            result = self._bring_up(attempt)
        except (SpawnError, ProviderError) as exc:
            reason = exc.message if isinstance(exc, ProviderError) else str(exc)
            with self._lock:
                self._session.finish_attempt(attempt, False, reason)
                self._state_changed.notify_all()
                done = self._settle()
            self._note_done(done)
            gen = self._gens.get(n)
            if gen is not None:
                self._retire(gen)
            self._note_notice(n)
            seq = self.transcript.event(f"generation {n} failed to start: {reason}", generation=n)
            self.failed_starts.append(FailedStart(n, reason, seq, attempt.initial))
            if isinstance(exc, SpawnError) and not raw_errors:
                raise ProviderError(str(exc), kind="other") from exc
            raise
        with self._lock:
            ok = self._session.finish_attempt(attempt, True)
            reason = self._session.failure_reason
            self._state_changed.notify_all()
            done = self._settle()
        self._note_done(done)
        self._note_notice(n)
        if not ok:
            if self._closed:
                raise ProviderError("provider dropped during restart", kind="other")
            raise ProviderError("provider restart was superseded — try again", kind="provider")
        if self._session.generation == n and self._session.lifecycle == S.DEAD:
            gen = self._gens.get(n)
            if gen is not None:
                self._retire(gen)   # its output closed right after the handshake
            raise ProviderError(reason or "provider closed after initialize", kind="other")
        return result

    def _bring_up(self, attempt: S.Attempt) -> dict:
        n = attempt.generation
        for old in [g for g in list(self._gens.values()) if g.number < n]:
            self._retire(old)
            if not old.orphaned:
                self._gens.pop(old.number, None)
        child = Child.spawn(self.argv, env=self.env, cwd=self.cwd,
                            stderr_path=self._stderr_dir / f"gen-{n}.stderr")
        gen = _Generation(n, child)
        with self._lock:
            if self._closed:
                closed = True
            else:
                closed = False
                self._gens[n] = gen
                self.child = child
                self._session.child_started(n)
        if closed:
            child.close()
            raise ProviderError("provider dropped during restart", kind="other")
        self.transcript.event(f"generation {n} spawned: pid {child.pid}", generation=n)
        gen.reader = threading.Thread(target=self._reader, args=(gen,),
                                      name=f"provider-reader-{n}", daemon=True)
        gen.reader.start()
        try:
            call = self._send("initialize", self.init_params, self.deadline_s, None, None, True,
                              handshake=True)
        except S.NotAdmitted:   # the child's output closed before the handshake was sent
            raise ProviderClosed(child.exit_description(), method="initialize") from None
        try:
            result = call.result()
        except WriteFailed:
            # A broken pipe on the very first write almost always means the child
            # exited before it read anything; its exit (code, signal) is what its
            # author needs, so wait briefly for it and name that. A child that
            # closed its input and lives on keeps the write's reason.
            if child.wait(EXIT_STATUS_WAIT_S) is not None:
                raise ProviderClosed(child.exit_description(),
                                     request_id=call.id, method="initialize") from None
            raise
        self.init_results.append(result)
        try:   # read like the host (§2.3): only a different unsigned protocol is refused
            init = structure(result, InitializeResult)
        except ShapeError:
            raise ProviderError("provider reply shape: initialize result is not an object",
                                kind="other", request_id=call.id, method="initialize") from None
        if init.protocol != 1:
            raise ProviderError(f"unsupported provider protocol {init.protocol}", kind="provider",
                                request_id=call.id, method="initialize")
        return result

    # ================================================================ internals: writing

    def _send(self, method: str, params: dict, deadline_s: float, inactivity_s: float | None,
              on_partial, keep: bool, *, handshake: bool = False,
              envelope: dict | None = None, cancel_at_once: bool = False) -> Call:
        if not self._wlock.acquire(True, self._write_lock_timeout()):
            raise WriteFailed("an earlier write is still blocked", method=method)
        try:
            with self._lock:
                if self._closed:
                    raise ProviderError("provider is closed", kind="other", method=method)
                s = self._session
                # encoded before the slot opens, so params that are not JSON
                # spend no id; under both locks the next id is the counter's next
                text, msg = encode_request(s.highest_id + 1, method, params, envelope)
                slot = s.open(method, params, time.monotonic(), deadline_s, inactivity_s,
                              handshake=handshake)
                call = Call(self, slot, params, on_partial, keep)
                slot.owner = call
                gen = slot.generation
                child = self.child
                if slot.deadline < self._timer_at:
                    self._timer_wake.notify()
            self.transcript.record("out", "request", text, generation=gen, msg=msg, id=slot.id)
            if self.monitor is not None:   # before the write: the reply may come at once
                self.monitor.outbound(gen, msg)
            data = (text + "\n").encode("utf-8")
            if cancel_at_once:
                cancel_text, cancel_msg = encode_notification("$/cancelRequest", {"id": slot.id})
                self.transcript.record("out", "notification", cancel_text, generation=gen,
                                       msg=cancel_msg)
                if self.monitor is not None:
                    self.monitor.outbound(gen, cancel_msg)
                data += (cancel_text + "\n").encode("utf-8")
            try:
                self._write(child, data)
            except OSError as exc:
                self.transcript.event(f"write of #{slot.id} failed: {exc}", generation=gen)
                with self._lock:
                    self._session.write_failed(gen, slot.id, str(exc))
                    self._state_changed.notify_all()
                    done = self._settle()
                self._note_done(done)
            return call
        finally:
            self._wlock.release()

    def _write(self, child: Child, data: bytes) -> None:
        """One line to the child; the timer's watchdog kills a child that blocks it."""
        self._write_child = child
        self._write_since = time.monotonic()
        try:
            child.write(data)
        finally:
            self._write_since = None

    def _write_lock_timeout(self) -> float:
        return 2 * self.deadline_s + READER_JOIN_S

    def _write_other(self, line: bytes, kind: str, msg: Any, *, best_effort: bool) -> None:
        if not self._wlock.acquire(True, self._write_lock_timeout()):
            if best_effort:
                return
            raise WriteFailed("an earlier write is still blocked")
        try:
            with self._lock:
                s = self._session
                usable = not self._closed and s.admitting() and self.child is not None
                gen, child = s.generation, self.child
            text = line[:-1] if line.endswith(b"\n") else line
            if not usable:
                self.transcript.event(f"not sent (no initialized child): {text[:200]!r}",
                                      generation=gen)
                if best_effort:
                    return
                raise ProviderError(S.RESTARTING, kind="provider")
            self.transcript.record("out", kind, text, generation=gen, msg=msg,
                                   id=msg.get("id") if isinstance(msg, dict) and kind == "request"
                                   and type(msg.get("id")) is int else None)
            if self.monitor is not None:
                self.monitor.outbound(gen, msg)
            try:
                self._write(child, line)
            except OSError as exc:
                self.transcript.event(f"write failed: {exc}", generation=gen)
                if not best_effort:
                    raise WriteFailed(str(exc)) from exc
        finally:
            self._wlock.release()

    # ================================================================ internals: reading

    def _reader(self, gen: _Generation) -> None:
        """The only reader of this generation's stdout (§7.1, §7.6).

        A plain blocking read (no poll: one GIL hand-off per chunk, not two).
        It ends at EOF, which killing the tree guarantees; a reader whose pipe
        is held open by a process that escaped the kill is left behind as
        stale (its input is ignored) and releases the child's fds itself.
        """
        n = gen.number
        fd = gen.child.stdout_fd
        frames_of = FrameReader(self.max_line_bytes)
        read, dispatch = os.read, self._dispatch
        why = None
        try:
            while True:
                chunk = read(fd, READ_CHUNK)
                if not chunk:
                    dispatch(n, frames_of.flush())
                    break
                dispatch(n, frames_of.feed(chunk))
                if frames_of.ended:
                    why = "invalid UTF-8 on its output"
                    break
        except OSError as exc:
            why = f"read error: {exc}"
        finally:
            try:
                self._output_ended(gen, why)
            finally:
                with self._lock:
                    gen.ended.set()
                    orphaned = gen.orphaned
                if orphaned:
                    gen.child.close()

    def _dispatch(self, n: int, frames: list) -> None:
        """Route and record one chunk's frames. Waiters are woken at the very end,
        so a woken caller does not contend with this thread for the GIL."""
        s = self._session
        record = self.transcript.record
        finished: list = []
        for frame in frames:
            kind = frame.kind
            call = None
            with self._lock:
                routed = s.receive(n, frame, time.monotonic())
                if routed.slot is not None and kind is PARTIAL:
                    call = routed.slot.owner
                    items = frame.msg["params"].get("items")
                    call.partial_count += 1
                    if call._keep:
                        call.partials.append(items)
                if s.completions:
                    finished += self._settle()
            seq = record("in", _ENTRY_KIND.get(kind, kind),
                         frame.line if frame.text is None else frame.text, generation=n,
                         msg=frame.msg, outcome=routed.outcome, id=frame.id, size=frame.size)
            if self.monitor is not None:
                self.findings.extend(self.monitor.inbound(n, frame, seq))
            if call is not None and call._on_partial is not None:
                try:
                    call._on_partial(items)
                except Exception as exc:   # a caller's bug must not kill the reader
                    if call.callback_error is None:
                        call.callback_error = exc
                    self.transcript.event(f"on_partial of #{call.id} raised {exc!r}",
                                          generation=n)
        if finished:
            self._note_done(finished)

    def _output_ended(self, gen: _Generation, why: str | None) -> None:
        """EOF (or read error / invalid UTF-8) on a generation's output (§7.9)."""
        child = gen.child
        if child.poll() is None:
            child.wait(EXIT_STATUS_WAIT_S)
        detail = child.exit_description()
        if why:
            detail = f"{why}; {detail}" if detail else why
        with self._lock:
            failed = self._session.output_closed(gen.number, detail)
            self._state_changed.notify_all()
            done = self._settle()
        self._note_done(done)
        stale = " (an old generation: ignored)" if failed is None else ""
        seq = self.transcript.event(f"generation {gen.number} output closed"
                                    f"{' (' + detail + ')' if detail else ''}{stale}",
                                    generation=gen.number)
        with self._lock:
            unasked = not gen.asked and why is None and not self._closed
        if unasked and self.monitor is not None:   # an end the host did not ask for
            self.findings.extend(self.monitor.exited(gen.number, child.exit_description(), seq))
        tail = child.stderr_tail(STDERR_TAIL_BYTES)
        if tail:
            self.transcript.record("stderr", "note", tail, generation=gen.number)

    # ================================================================ internals: timing

    def _timer_loop(self) -> None:
        """Expire slots nobody waits on, and unblock a write stuck past its deadline."""
        while True:
            stuck = None
            with self._lock:
                if self._closed:
                    return
                now = time.monotonic()
                self._session.expire(now)
                done = self._settle()
                since = self._write_since
                if since is not None and now - since > self.deadline_s:
                    stuck = self._write_child
                    self._write_since = None
                if not done and stuck is None:
                    nxt = self._session.next_deadline()
                    wait = self.deadline_s if nxt is None else min(nxt - now, self.deadline_s)
                    self._timer_at = now + wait
                    self._timer_wake.wait(max(wait, 0.0))
                    self._timer_at = float("inf")
                    continue
            self._note_done(done)
            if stuck is not None:
                self.transcript.event("a write has been blocked longer than the deadline "
                                      "(the adapter does not read its stdin): killing it")
                with self._lock:
                    for gen in self._gens.values():
                        if gen.child is stuck:
                            gen.asked = True
                stuck.kill()

    def _expire_due(self) -> None:
        with self._lock:
            self._session.expire(time.monotonic())
            done = self._settle()
        self._note_done(done)

    # ================================================================ internals: bookkeeping

    def _settle(self) -> list[S.Slot]:   # under the lock; the caller then calls _wake
        done = self._session.take_completions()
        for slot in done:
            call = slot.owner
            if call is not None:
                call._finish(slot)
        return done

    @staticmethod
    def _wake(done: list[S.Slot]) -> None:
        for slot in done:
            if slot.owner is not None:
                slot.owner._latch.open()

    def _settle_and_note(self) -> None:
        with self._lock:
            done = self._settle()
        self._note_done(done)

    def _note_done(self, done: list[S.Slot] | None) -> None:
        """Transcript events for host-side terminal outcomes (replies are frames
        already), then wake the callers."""
        if not done:
            return
        for slot in done:
            if slot.state in (S.TIMEOUT, S.CLOSED_STATE) or isinstance(slot.error, WriteFailed):
                self.transcript.event(f"{slot.method} #{slot.id} failed: {slot.error.message}",
                                      generation=slot.generation)
        self._wake(done)

    def _note_notice(self, n: int) -> None:
        notice = self._session.notice
        if notice:
            self.transcript.event(f"notice: {notice}", generation=n)

    def _join_reader(self, gen: _Generation) -> bool:
        """Wait (bounded) for a generation's reader to finish; True if it did."""
        if gen.reader is None:
            return True
        if gen.reader is threading.current_thread():
            return False
        if gen.ended.wait(READER_JOIN_S):
            gen.reader.join(READER_JOIN_S)
            return True
        return False

    def _retire(self, gen: _Generation, *, stop: bool = False) -> None:
        """Kill (or stop) a generation's tree, join its reader, release its fds."""
        with self._lock:
            if gen.retired:
                return
            gen.retired = gen.asked = True
        if stop:
            gen.child.stop()
        else:
            gen.child.kill()
        if not self._join_reader(gen):
            with self._lock:
                # Output held open by something the kill could not reach (or we
                # are that reader): never close an fd under a blocked read.
                gen.orphaned = not gen.ended.is_set()
            if gen.orphaned:
                if gen.reader is not threading.current_thread():
                    self.transcript.event(f"generation {gen.number}: output still open after "
                                          "the kill; its reader is left stale",
                                          generation=gen.number)
                return
        gen.child.close()
