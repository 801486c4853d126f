"""The sans-IO core of the host client (PROTOCOL §5, §7.3-§7.10, §8).

No threads, no pipes, no clock: the caller passes ``now`` (monotonic seconds)
and the generation a frame came from, and reads back what happened. This is
the one place that owns

* the id counter (initialize takes the first id; ids are never reused, not
  after a timeout, not across generations; 0 is never issued),
* the slot table of in-flight requests, streaming opt-in (``params.partial is
  True``), per-request deadlines and per-gap inactivity windows,
* routing of every inbound frame (``receive``) with the host's outcome labels:
  delivered, retired_id, unknown_id, not_streaming, stale_session for replies
  and partials; ignored, malformed, invalid_id, oversize, invalid_utf8 (which
  ends the generation like EOF) for the rest,
* the mapping of a reply to a result or a ``ProviderError``,
* death of the current generation (every live slot fails at once),
* generations, the lifecycle (alive / respawning / dead), the output state
  (open / awaiting / closed), admission, and the backoff ladder of §7.10 as
  pure state,
* cancel, which is advisory and never changes a slot.

Every terminal transition is appended to ``completions`` so the I/O shell can
wake the waiting caller; ``take_completions()`` drains it.
"""

from __future__ import annotations

from typing import Any

from wire.errors import ProviderClosed, ProviderError, ProviderTimeout, WriteFailed
from wire.framing import PARTIAL, REPLY, Frame, usable_id

# Lifecycle and output states (§7.10)
ALIVE, RESPAWNING, DEAD = "alive", "respawning", "dead"
OPEN, AWAITING, CLOSED = "open", "awaiting", "closed"

# Slot states
LIVE = "live"
RESULT, ERROR, TIMEOUT, CLOSED_STATE = "result", "error", "timeout", "closed"

# Routing outcomes (§7.6)
DELIVERED = "delivered"
RETIRED_ID = "retired_id"
UNKNOWN_ID = "unknown_id"
NOT_STREAMING = "not_streaming"
STALE_SESSION = "stale_session"

HOST_BACKOFF_S = (1.0, 2.0, 5.0, 30.0)   # rung 1, 2, 3, 4+ (§7.10)
NO_BACKOFF_S = (0.0,)

RESTARTING = "provider restarting — try again"
REPLY_WITHOUT_RESULT = "provider reply without result"


class Slot:
    """One in-flight request (the host's slot), and after it ends, its outcome.

    ``owner`` is free for the I/O shell (the transport's Call); the core never
    looks at it.
    """

    __slots__ = ("id", "method", "generation", "streaming", "window", "deadline", "handshake",
                 "state", "value", "error", "partials", "owner")

    def __init__(self, id: int, method: str, generation: int, streaming: bool, window: float,
                 deadline: float, handshake: bool = False, owner: Any = None):
        self.id = id
        self.method = method
        self.generation = generation
        self.streaming = streaming
        self.window = window
        self.deadline = deadline
        self.handshake = handshake
        self.state = LIVE
        self.value: Any = None
        self.error: ProviderError | None = None
        self.partials = 0
        self.owner = owner

    @property
    def live(self) -> bool:
        return self.state == LIVE

    def __repr__(self) -> str:
        return (f"Slot(id={self.id}, {self.method}, gen={self.generation}, "
                f"streaming={self.streaming}, state={self.state})")


class Routed:
    """What became of one inbound reply or partial."""

    __slots__ = ("outcome", "kind", "id", "slot")

    def __init__(self, outcome: str, kind: str, id: int, slot: Slot | None = None):
        self.outcome = outcome   # delivered | retired_id | unknown_id | not_streaming | stale_session
        #                          (or, for other frames, ignored | malformed | invalid_id | ...)
        self.kind = kind         # "reply" | "partial" (or the frame's kind)
        self.id = id
        self.slot = slot         # the slot it was delivered to (delivered only)

    def __repr__(self) -> str:
        return f"Routed({self.outcome}, {self.kind}, id={self.id})"


class Attempt:
    """One (re)build of the child: the initial start, or a respawn (§7.10)."""

    __slots__ = ("number", "generation", "rung", "backoff_s", "initial")

    def __init__(self, number: int, generation: int, rung: int, backoff_s: float, initial: bool):
        self.number = number          # 1-based count of rebuild attempts (0 for the initial start)
        self.generation = generation  # the generation this attempt builds
        self.rung = rung              # ladder rung (0 for the initial start)
        self.backoff_s = backoff_s
        self.initial = initial

    def __repr__(self) -> str:
        return (f"Attempt(#{self.number}, gen={self.generation}, rung={self.rung}, "
                f"backoff={self.backoff_s:g}s)")


class NotAdmitted(ProviderError):
    """A request raced a death or a rebuild: the transport is not admitting."""

    def __init__(self, method: str | None = None):
        super().__init__(RESTARTING, kind="provider", origin="host", method=method)


def reply_outcome(slot: Slot, msg: dict) -> None:
    """Fill the slot's outcome from a reply object, as the host reads it (§6.1)."""
    if "error" in msg:   # even "error": null makes it an error (HOST-QUIRK §11 #11)
        slot.state = ERROR
        slot.error = ProviderError.from_reply(msg["error"], request_id=slot.id, method=slot.method)
    elif "result" in msg:
        slot.state = RESULT
        slot.value = msg["result"]
    else:
        slot.state = ERROR
        slot.error = ProviderError(REPLY_WITHOUT_RESULT, kind="other", origin="host",
                                   request_id=slot.id, method=slot.method)


class Session:
    """The host's transport state machine, without I/O."""

    def __init__(self, backoff_s: tuple[float, ...] = HOST_BACKOFF_S):
        if not backoff_s:
            raise ValueError("backoff_s needs at least one rung")
        self.backoff_s = tuple(backoff_s)
        self.highest_id = 0                  # the counter: last id issued
        self.generation = 0                  # no child yet
        self.lifecycle = DEAD
        self.output = CLOSED
        self.slots: dict[int, Slot] = {}     # live slots only
        self.completions: list[Slot] = []    # terminal transitions not yet taken
        self.successful_rebuilds = 0         # rung of the last successful rebuild (§7.10)
        self.attempts = 0                    # rebuild attempts started
        self.attempt: Attempt | None = None  # the attempt in progress (lifecycle respawning)
        self.failure_reason: str | None = None
        self.failing_streak = False
        self.notice = ""                     # one-shot status notice (take_notice)
        self.started = False                 # the initial start succeeded once

    # ------------------------------------------------------------------ ids and admission

    def admitting(self, handshake: bool = False) -> bool:
        """The admission rule: alive and open; a handshake while respawning and open."""
        if self.output != OPEN:
            return False
        if handshake:
            return self.lifecycle == RESPAWNING
        return self.lifecycle == ALIVE

    def open(self, method: str, params: Any, now: float, deadline_s: float,
             inactivity_s: float | None = None, *, handshake: bool = False,
             owner: Any = None) -> Slot:
        """Register a request: allocates the next id. Raises NotAdmitted (no id spent)."""
        if not self.admitting(handshake):
            raise NotAdmitted(method)
        streaming = type(params) is dict and params.get("partial") is True
        window = (inactivity_s if inactivity_s is not None else deadline_s) if streaming else deadline_s
        if not window > 0:
            raise ValueError(f"deadline must be positive, got {window!r}")
        self.highest_id += 1
        slot = Slot(self.highest_id, method, self.generation, streaming, window, now + window,
                    handshake, owner)
        self.slots[slot.id] = slot
        return slot

    # ------------------------------------------------------------------ inbound routing

    def receive(self, generation: int, frame: Frame, now: float) -> Routed:
        """Any classified inbound frame read by ``generation``'s reader.

        Replies and partials are routed (see receive_reply / receive_partial);
        other frames change nothing and come back labelled ("ignored",
        "malformed", "invalid_id", "oversize"), except invalid UTF-8, which
        ends the generation like EOF (§7.2, §7.6 rule 1)."""
        kind = frame.kind
        if kind is REPLY:
            return self.receive_reply(generation, frame.id, frame.msg, now)
        if kind is PARTIAL:
            return self.receive_partial(generation, frame.id, now)
        if frame.fatal:
            self.output_closed(generation, "invalid UTF-8 on its output")
        return Routed(frame.outcome, kind, frame.id)

    def _route(self, generation: int, rid: int, kind: str) -> Routed | Slot:
        if generation != self.generation:
            return Routed(STALE_SESSION, kind, rid)
        slot = self.slots.get(rid)
        if slot is None:
            return Routed(RETIRED_ID if rid <= self.highest_id else UNKNOWN_ID, kind, rid)
        return slot

    def receive_reply(self, generation: int, rid: int, msg: dict, now: float) -> Routed:
        """A reply with usable id ``rid`` read by the reader of ``generation``."""
        got = self._route(generation, rid, "reply")
        if type(got) is Routed:
            return got
        slot = got
        if now >= slot.deadline:         # it came too late: the slot expired first
            self._expire(slot)
            return Routed(RETIRED_ID, "reply", rid)
        del self.slots[rid]
        reply_outcome(slot, msg)
        self.completions.append(slot)
        return Routed(DELIVERED, "reply", rid, slot)

    def receive_partial(self, generation: int, rid: int, now: float) -> Routed:
        """A ``$/partial`` naming ``rid``; a delivery re-arms a streaming slot's window."""
        got = self._route(generation, rid, "partial")
        if type(got) is Routed:
            return got
        slot = got
        if not slot.streaming:
            return Routed(NOT_STREAMING, "partial", rid)   # dropped, deadline unchanged
        if now >= slot.deadline:
            self._expire(slot)
            return Routed(RETIRED_ID, "partial", rid)
        slot.deadline = now + slot.window
        slot.partials += 1
        return Routed(DELIVERED, "partial", rid, slot)

    # ------------------------------------------------------------------ time

    def next_deadline(self) -> float | None:
        if not self.slots:
            return None
        return min(slot.deadline for slot in self.slots.values())

    def expire(self, now: float) -> list[Slot]:
        """Fail every live slot whose deadline has passed (kind timeout; id retired)."""
        due = [slot for slot in self.slots.values() if now >= slot.deadline]
        for slot in due:
            self._expire(slot)
        return due

    def _expire(self, slot: Slot) -> None:
        del self.slots[slot.id]
        slot.state = TIMEOUT
        slot.error = ProviderTimeout(slot.window, request_id=slot.id, method=slot.method)
        self.completions.append(slot)

    # ------------------------------------------------------------------ cancel

    def cancel(self, rid: Any) -> bool:
        """Advisory: says whether ``rid`` names a live slot; never changes anything."""
        return usable_id(rid) and rid in self.slots

    # ------------------------------------------------------------------ death

    def _fail_all(self, detail: str | None) -> list[Slot]:
        failed = list(self.slots.values())
        self.slots.clear()
        for slot in failed:
            slot.state = CLOSED_STATE
            slot.error = ProviderClosed(detail, request_id=slot.id, method=slot.method)
            self.completions.append(slot)
        return failed

    def output_closed(self, generation: int, detail: str | None = None) -> list[Slot] | None:
        """EOF / read error / invalid UTF-8 on ``generation``'s output (§7.9).

        Returns the slots failed, or None when the news is stale (an older
        generation's reader): then nothing changes at all.
        """
        if generation != self.generation or self.output == CLOSED:
            return None if generation != self.generation else []
        failed = self._fail_all(detail)
        self.output = CLOSED
        if self.lifecycle != RESPAWNING:   # a rebuild in progress records the failure itself
            self.lifecycle = DEAD
        return failed

    def write_failed(self, generation: int, rid: int, reason: str) -> list[Slot] | None:
        """Writing request ``rid`` failed: it fails with the write error, then the
        generation is dead like on EOF."""
        if generation != self.generation:
            return None
        slot = self.slots.pop(rid, None)
        if slot is not None:
            slot.state = ERROR
            slot.error = WriteFailed(reason, request_id=rid, method=slot.method)
            self.completions.append(slot)
        return self.output_closed(generation)

    # ------------------------------------------------------------------ generations, rebuilds

    def begin_attempt(self, *, initial: bool = False, backoff_s: float | None = None) -> Attempt:
        """Start a new generation (§7.10 step 1): bump it, fail what is left,
        respawning + awaiting. The caller then sleeps ``attempt.backoff_s``
        (the ladder's rung, unless ``backoff_s`` overrides it: an explicit respawn)."""
        self.generation += 1
        self._fail_all(None)
        self.lifecycle = RESPAWNING
        self.output = AWAITING
        self.failure_reason = None
        if initial:
            attempt = Attempt(0, self.generation, 0, 0.0, True)
        else:
            self.attempts += 1
            rung = self.successful_rebuilds + 1
            backoff = self.backoff_s[min(rung, len(self.backoff_s)) - 1]
            if backoff_s is not None:
                backoff = backoff_s
            attempt = Attempt(self.attempts, self.generation, rung, backoff, False)
        self.attempt = attempt
        return attempt

    def child_started(self, generation: int) -> bool:
        """The attempt's child is running: its output is open (handshake admitted)."""
        if generation != self.generation or self.lifecycle != RESPAWNING:
            return False
        self.output = OPEN
        return True

    def finish_attempt(self, attempt: Attempt, ok: bool, reason: str | None = None) -> bool:
        """Publish an attempt's outcome (§7.10 step 8). False when it was superseded."""
        if attempt.generation != self.generation or self.lifecycle != RESPAWNING:
            return False
        self.attempt = None
        if ok and self.output != OPEN:
            ok, reason = False, "provider closed after initialize"
        if ok:
            self.lifecycle = ALIVE
            if attempt.initial:
                self.started = True
            else:
                self.successful_rebuilds = max(self.successful_rebuilds, attempt.rung)
                self.notice = (f"provider restarted (attempt {attempt.number}, "
                               f"backoff {attempt.backoff_s:g}s)")
            self.failing_streak = False
            return True
        self._fail_all(reason)
        self.lifecycle = DEAD
        self.output = CLOSED
        self.failure_reason = reason or "unknown failure"
        if not attempt.initial and not self.failing_streak:
            self.notice = (f"provider keeps failing to restart ({self.failure_reason})"
                           " — running without it")
        if not attempt.initial:
            self.failing_streak = True
        return True

    def shut_down(self, detail: str | None = None) -> list[Slot]:
        """The harness closed the provider: everything live fails, nothing is admitted."""
        failed = self._fail_all(detail)
        self.lifecycle = DEAD
        self.output = CLOSED
        self.attempt = None
        return failed

    def take_notice(self) -> str:
        """The one-shot status notice (empty on a second read)."""
        notice, self.notice = self.notice, ""
        return notice

    def take_completions(self) -> list[Slot]:
        done, self.completions = self.completions, []
        return done

    # ------------------------------------------------------------------ views

    @property
    def in_flight(self) -> int:
        return len(self.slots)

    def snapshot(self) -> tuple:
        """Everything an input may change: live slots (with deadlines), lifecycle, output."""
        return (tuple(sorted((s.id, s.deadline, s.partials) for s in self.slots.values())),
                self.lifecycle, self.output, self.generation, self.highest_id)
