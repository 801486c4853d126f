"""hypothesis stateful tests of the sans-IO core (wire.session) against PROTOCOL §8.

``SessionMachine`` drives a Session with random interleavings: requests
(streaming or not), replies and partials for issued, retired, never-issued and
invalid ids from the current or an old generation (as raw lines through the
real classifier, junk and invalid UTF-8 included), cancels, clock advances and
expiry, deaths, failed writes,
and rebuild steps (lazy rebuilds step by step or at once, explicit respawns,
failed handshakes). After every step it checks CorrelationSafety,
UniqueTerminal, PartialOrder, PartialOptIn, NoIdReuse, RestartFailClosed,
CancelAdvisory, StaleReaderIsolation, DeadlineBounded, ValidatedAdmission and
TypeOK.

The kept mutants at the bottom are broken cores (as in §8's model: a stray
reply misrouted to another live slot, an old generation's EOF killing the new
one, a terminal cancel, partials delivered without opt-in); each test shows the
machine catches its mutant with the property it breaks.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (RuleBasedStateMachine, invariant, precondition, rule,
                                 run_state_machine_as_test)

from wire import session as S
from wire.framing import IGNORED, PARTIAL, REPLY, VIOLATION, classify

LADDER = (1.0, 2.0, 5.0)
WINDOWS = (1.0, 2.0)
INVALID_IDS = ('"2"', "0", "-1", "1.5", "null", "true", "18446744073709551616", "[]")


class PropertyViolation(AssertionError):
    pass


def check(ok: bool, prop: str, detail: str = "") -> None:
    if not ok:
        raise PropertyViolation(f"{prop}: {detail}")


def line(obj) -> bytes:
    return json.dumps(obj).encode()


class SessionMachine(RuleBasedStateMachine):
    session_cls = S.Session

    def __init__(self):
        super().__init__()
        self.s = self.session_cls(LADDER)
        self.now = 0.0
        self.issued: list[int] = []          # every id the core handed out, in order
        self.slots: dict[int, S.Slot] = {}   # every slot ever
        self.terminal: dict[int, str] = {}   # id -> the state it ended in
        self.attempt: S.Attempt | None = None
        self.handshake: S.Slot | None = None
        self.gen_of_first_init: int | None = None
        self._bring_up(initial=True)

    # ------------------------------------------------------------ helpers

    def _open(self, method, params, window, handshake=False) -> S.Slot:
        before = self.s.highest_id
        slot = self.s.open(method, params, self.now, window, handshake=handshake)
        check(slot.id == before + 1, "NoIdReuse", f"issued {slot.id} after {before}")
        self.issued.append(slot.id)
        self.slots[slot.id] = slot
        return slot

    def _bring_up(self, *, initial=False, ok=True, backoff_s=None) -> None:
        """A whole (re)build: begin, spawn, handshake, publish."""
        self.attempt = self.s.begin_attempt(initial=initial, backoff_s=backoff_s)
        self._after_begin()
        self.s.child_started(self.attempt.generation)
        hs = self._open("initialize", {"protocol": 1}, WINDOWS[0], handshake=True)
        if initial:
            check(hs.id == 1, "NoIdReuse", "the first initialize must take id 1")
        else:
            check(hs.id != 1, "NoIdReuse", "a re-initialize reused id 1")
        body = {"result": {"protocol": 1}} if ok else {"error": {"code": 1, "message": "no"}}
        self._frame(self.s.generation, line({"jsonrpc": "2.0", "id": hs.id, **body}))
        self.s.finish_attempt(self.attempt, ok, None if ok else "handshake failed")
        self.attempt = None
        self.handshake = None

    def _after_begin(self) -> None:
        a = self.attempt
        check(a.generation == self.s.generation, "TypeOK", "attempt builds the current generation")
        if not a.initial and a.backoff_s and self.s.backoff_s == LADDER:
            want = LADDER[min(a.rung, len(LADDER)) - 1]
            check(a.backoff_s == want, "Backoff", f"rung {a.rung} slept {a.backoff_s}")
            check(a.rung == self.s.successful_rebuilds + 1, "Backoff", "rung = successes + 1")

    def _live(self) -> dict[int, S.Slot]:
        return {i: s for i, s in self.slots.items() if s.state == S.LIVE}

    def _states(self) -> dict[int, tuple]:
        return {i: (s.state, s.deadline, s.partials) for i, s in self.slots.items()}

    def _frame(self, gen: int, raw: bytes):
        """Classify a raw line and route it like the transport's reader does."""
        before_states = self._states()
        before = self.s.snapshot()
        live = self._live()
        frame = classify(raw)
        routed = self.s.receive(gen, frame, self.now)
        if frame.fatal and gen == self.s.generation:   # invalid UTF-8: the generation is over
            check(all(live[i].state == S.CLOSED_STATE for i in live) and not self.s.slots
                  and self.s.output == S.CLOSED, "RestartFailClosed", "invalid UTF-8 is EOF")
            return frame, None
        if frame.kind in (IGNORED, VIOLATION):
            check(routed.slot is None and routed.outcome == frame.outcome, "CorrelationSafety",
                  f"an unroutable frame was routed: {raw!r}")
            check(self.s.snapshot() == before and self._states() == before_states,
                  "CorrelationSafety", f"an unroutable frame changed state: {raw!r}")
            return frame, None
        if gen != self.s.generation:
            check(routed.outcome == S.STALE_SESSION, "StaleReaderIsolation",
                  f"old generation {gen} frame routed as {routed.outcome}")
        if gen != self.s.generation or routed.outcome != S.DELIVERED:
            check(self.s.snapshot() == before and self._states() == before_states,
                  "StaleReaderIsolation" if gen != self.s.generation else "CorrelationSafety",
                  f"a dropped frame ({routed.outcome}) changed state: {raw!r}")
            return frame, routed
        slot = routed.slot
        check(slot is not None and slot.id == frame.id, "CorrelationSafety",
              f"frame for {frame.id} delivered to {slot and slot.id}")
        check(frame.id in live, "CorrelationSafety" if frame.kind == REPLY else "PartialOrder",
              f"delivered to #{frame.id}, which was not live")
        check(slot.generation == gen, "CorrelationSafety", "delivered across generations")
        if frame.kind == PARTIAL:
            check(slot.streaming, "PartialOptIn", f"partial delivered to non-streaming #{slot.id}")
            check(slot.deadline == self.now + slot.window, "DeadlineBounded",
                  "a partial must re-arm exactly one window")
        others = {i: v for i, v in self._states().items() if i != slot.id}
        check(others == {i: v for i, v in before_states.items() if i != slot.id},
              "CorrelationSafety", "a delivery changed another slot")
        return frame, routed

    def _pick_id(self, data, *, streams=False) -> int:
        """A live id (most often; a streaming one for a partial), a retired one,
        or one never issued."""
        live = sorted(self.s.slots)
        streaming = [i for i in live if self.s.slots[i].streaming] if streams else []
        choices = (streaming * 3 + live + self.issued[-4:]
                   + [self.s.highest_id + 1, self.s.highest_id + 7])
        return data.draw(st.sampled_from(choices))

    def _pick_gen(self, data) -> int:
        g = self.s.generation
        return data.draw(st.sampled_from([g, g, g] + ([g - 1, 1] if g > 1 else [])))

    # ------------------------------------------------------------ requests

    @rule(flags=st.lists(st.booleans(), min_size=1, max_size=3), window=st.sampled_from(WINDOWS))
    def send(self, flags, window):
        for streaming in flags:
            self._send(streaming, window)

    def _send(self, streaming, window):
        params = {"q": "x", "limit": 500}
        if streaming:
            params["partial"] = True
        if not self.s.admitting():
            before = self.s.highest_id
            with pytest.raises(S.NotAdmitted):
                self.s.open("search/code", params, self.now, window)
            check(self.s.highest_id == before, "NoIdReuse", "a refused request spent an id")
            return
        slot = self._open("search/code", params, window)
        check(slot.streaming == streaming, "PartialOptIn", "opt-in is params.partial is True")
        check(self.s.lifecycle == S.ALIVE, "ValidatedAdmission", "sent before the handshake")

    @rule(data=st.data(), body=st.sampled_from(["result", "error", "neither", "error-null"]))
    def reply(self, data, body):
        rid, gen = self._pick_id(data), self._pick_gen(data)
        msg = {"jsonrpc": "2.0", "id": rid}
        if body == "result":
            msg["result"] = {"for": rid}
        elif body == "error":
            msg["error"] = {"code": 1, "message": "m", "data": {"kind": "auth"}}
        elif body == "error-null":
            msg.update(result={}, error=None)
        frame, routed = self._frame(gen, line(msg))
        if routed is not None and routed.outcome == S.DELIVERED:
            slot = routed.slot
            want = {"result": S.RESULT}.get(body, S.ERROR)
            check(slot.state == want, "ReplyMapping", f"{body} reply gave {slot.state}")
            if body == "neither":
                check(slot.error.message == S.REPLY_WITHOUT_RESULT, "ReplyMapping", "")

    @rule(data=st.data(), count=st.integers(1, 3))
    def partial(self, data, count):
        for _ in range(count):
            rid, gen = self._pick_id(data, streams=True), self._pick_gen(data)
            self._frame(gen, line({"jsonrpc": "2.0", "method": "$/partial",
                                   "params": {"id": rid, "items": [{"repo": "o/r", "path": "p"}]}}))

    @rule(data=st.data(), bad=st.sampled_from(INVALID_IDS), where=st.sampled_from(["top", "params"]))
    def unusable_frame(self, data, bad, where):
        gen = self._pick_gen(data)
        if where == "top":
            raw = b'{"jsonrpc":"2.0","id":' + bad.encode() + b',"result":{}}'
        else:
            raw = b'{"jsonrpc":"2.0","method":"$/partial","params":{"id":' + bad.encode() + b'}}'
        frame, routed = self._frame(gen, raw)
        check(routed is None, "CorrelationSafety", f"an unusable id was routed: {raw!r}")

    @rule(data=st.data(), raw=st.sampled_from([b"hello", b'{"a":1}{"b":2}', b"[1,2]", b"42",
                                              b'{"jsonrpc":"2.0","method":"$/progress"}',
                                              b'{"id":1,"result":NaN}', b"\xff\xfe{}"]))
    def junk(self, data, raw):
        if raw.startswith(b"\xff") and data.draw(st.integers(0, 2)):
            return   # invalid UTF-8 kills the generation: keep it rarer
        self._frame(self._pick_gen(data), raw)

    @rule(data=st.data())
    def cancel(self, data):
        rid = data.draw(st.one_of(st.sampled_from(self.issued[-4:] + [self.s.highest_id + 3]),
                                  st.sampled_from([0, -1, "2", None])))
        before, states = self.s.snapshot(), self._states()
        self.s.cancel(rid)
        check(self.s.snapshot() == before and self._states() == states, "CancelAdvisory",
              f"cancel({rid!r}) changed state")

    # ------------------------------------------------------------ time

    @rule(dt=st.sampled_from([0.25, 0.5, 1.0, 2.5]))
    def tick(self, dt):
        self.now += dt
        for slot in self.s.expire(self.now):
            check(slot.state == S.TIMEOUT and slot.deadline <= self.now, "DeadlineBounded",
                  f"#{slot.id} expired early")

    # ------------------------------------------------------------ deaths

    @rule(data=st.data(), roll=st.integers(0, 2))
    def output_closed(self, data, roll):
        if roll and self.s.generation > 1:
            return   # deaths are rarer than the rest, so that streams get to run
        gen = self._pick_gen(data)
        before, states = self.s.snapshot(), self._states()
        live = self._live()
        failed = self.s.output_closed(gen, "exited with code 0")
        if gen != self.s.generation:
            check(failed is None and self.s.snapshot() == before and self._states() == states,
                  "StaleReaderIsolation", f"EOF of old generation {gen} changed state")
            return
        check(all(live[i].state == S.CLOSED_STATE for i in live), "RestartFailClosed",
              "a death must fail every live request")
        check(not self.s.slots and self.s.output == S.CLOSED, "RestartFailClosed", "")

    @rule(data=st.data())
    def write_failed(self, data):
        live = sorted(self.s.slots)
        if not live:
            return
        rid = data.draw(st.sampled_from(live))
        self.s.write_failed(self.s.generation, rid, "[Errno 32] Broken pipe")
        check(self.slots[rid].state == S.ERROR, "WriteFailure", "the writer's own call fails")

    # ------------------------------------------------------------ rebuilds

    @precondition(lambda self: self.s.lifecycle == S.DEAD)
    @rule(ok=st.booleans())
    def lazy_rebuild_at_once(self, ok):
        self._bring_up(ok=ok)

    @rule(roll=st.integers(0, 2))
    def explicit_respawn(self, roll):
        if roll:
            return
        live = self._live()
        self._bring_up(backoff_s=0.0)
        check(all(s.state != S.LIVE for s in live.values()), "RestartFailClosed",
              "a respawn must fail what was in flight")

    @precondition(lambda self: self.s.lifecycle == S.DEAD and self.attempt is None)
    @rule()
    def begin_rebuild(self):
        self.attempt = self.s.begin_attempt()
        self._after_begin()
        check(self.s.output == S.AWAITING and not self.s.slots, "RestartFailClosed", "")

    @precondition(lambda self: self.attempt is not None and self.s.output == S.AWAITING
                  and self.attempt.generation == self.s.generation)
    @rule()
    def child_up(self):
        self.s.child_started(self.attempt.generation)

    @precondition(lambda self: self.attempt is not None and self.handshake is None
                  and self.s.admitting(handshake=True))
    @rule()
    def send_handshake(self):
        self.handshake = self._open("initialize", {"protocol": 1}, WINDOWS[0], handshake=True)

    @precondition(lambda self: self.handshake is not None)
    @rule(ok=st.booleans())
    def answer_handshake(self, ok):
        hs = self.handshake
        body = {"result": {"protocol": 1}} if ok else {"error": {"code": 1, "message": "no"}}
        self._frame(self.s.generation, line({"jsonrpc": "2.0", "id": hs.id, **body}))

    @precondition(lambda self: self.attempt is not None)
    @rule(data=st.data())
    def publish(self, data):
        hs = self.handshake
        ok = hs is not None and hs.state == S.RESULT
        if hs is None or hs.state == S.LIVE:
            ok = False            # e.g. the spawn failed, or the handshake hung
        successes = self.s.successful_rebuilds
        published = self.s.finish_attempt(self.attempt, ok, None if ok else "handshake failed")
        if published and not self.attempt.initial and ok and self.s.lifecycle == S.ALIVE:
            check(self.s.successful_rebuilds == self.attempt.rung, "Backoff", "")
        if published and not ok:
            check(self.s.successful_rebuilds == successes, "Backoff", "a failure climbed")
        self.attempt = None
        self.handshake = None

    # ------------------------------------------------------------ invariants

    @invariant()
    def properties(self):
        s = self.s
        # TypeOK
        check(s.lifecycle in (S.ALIVE, S.RESPAWNING, S.DEAD), "TypeOK", s.lifecycle)
        check(s.output in (S.OPEN, S.AWAITING, S.CLOSED), "TypeOK", s.output)
        # NoIdReuse: strictly increasing, contiguous from 1, never 0
        check(self.issued == list(range(1, len(self.issued) + 1)), "NoIdReuse", str(self.issued))
        check(s.highest_id == len(self.issued), "NoIdReuse", "counter out of step")
        # UniqueTerminal: a slot ends once and never changes afterwards
        for slot in s.take_completions():
            check(slot.id not in self.terminal, "UniqueTerminal", f"#{slot.id} ended twice")
            check(slot.state != S.LIVE, "UniqueTerminal", f"#{slot.id} completed but live")
            self.terminal[slot.id] = slot.state
        for i, state in self.terminal.items():
            check(self.slots[i].state == state, "UniqueTerminal", f"#{i} changed after ending")
        for i, slot in self.slots.items():
            check((slot.state == S.LIVE) == (i in s.slots), "UniqueTerminal",
                  f"#{i} {slot.state} but {'in' if i in s.slots else 'not in'} the table")
            check(slot.state == S.LIVE or i in self.terminal, "UniqueTerminal",
                  f"#{i} ended without a completion")
            check(slot.partials == 0 or slot.streaming, "PartialOptIn", f"#{i}")
        # RestartFailClosed: output not open -> nothing live
        if s.output != S.OPEN:
            check(not s.slots, "RestartFailClosed", f"{s.output} with live {sorted(s.slots)}")
        # ValidatedAdmission: ordinary requests live only while alive
        if s.lifecycle != S.ALIVE:
            check(all(sl.handshake for sl in s.slots.values()), "ValidatedAdmission",
                  "an ordinary request is live while not alive")
        # CorrelationSafety of the table; DeadlineBounded
        for i, slot in s.slots.items():
            check(slot.id == i and slot.generation == s.generation, "CorrelationSafety",
                  f"#{i} of generation {slot.generation} live in {s.generation}")
            check(0 < slot.deadline - self.now <= slot.window, "DeadlineBounded",
                  f"#{i} has {slot.deadline - self.now} left of {slot.window}")


SETTINGS = settings(max_examples=150, stateful_step_count=30, deadline=None, database=None,
                    report_multiple_bugs=False, suppress_health_check=list(HealthCheck))
# Finding is what matters for a mutant; shrinking its counterexample is skipped for speed.
MUTANT_SETTINGS = settings(SETTINGS, max_examples=400, derandomize=True, print_blob=False,
                           phases=(Phase.explicit, Phase.generate))


def test_session_core_keeps_the_model_properties():
    run_state_machine_as_test(SessionMachine, settings=SETTINGS)


# ================================================================= kept mutants


class MisroutingSession(S.Session):
    """Delivers a reply for a retired or unknown id to another live slot."""

    def receive_reply(self, generation, rid, msg, now):
        if generation == self.generation and rid not in self.slots and self.slots:
            rid = next(iter(self.slots))
        return super().receive_reply(generation, rid, msg, now)


class StaleEofSession(S.Session):
    """Lets an old generation's EOF close the current generation."""

    def output_closed(self, generation, detail=None):
        return super().output_closed(self.generation, detail)


class TerminalCancelSession(S.Session):
    """Makes cancel terminal (the pre-v1.6 model)."""

    def cancel(self, rid):
        slot = self.slots.pop(rid, None) if S.usable_id(rid) else None
        if slot is not None:
            slot.state = S.CLOSED_STATE
            self.completions.append(slot)
        return slot is not None


class PartialToAnySession(S.Session):
    """Delivers partials to requests that did not opt in."""

    def receive_partial(self, generation, rid, now):
        slot = self.slots.get(rid) if generation == self.generation else None
        if slot is not None and not slot.streaming:
            slot.partials += 1
            return S.Routed(S.DELIVERED, "partial", rid, slot)
        return super().receive_partial(generation, rid, now)


def _machine(cls: type[S.Session]) -> type[SessionMachine]:
    return type(f"{cls.__name__}Machine", (SessionMachine,), {"session_cls": cls})


@pytest.mark.parametrize("mutant, prop", [
    (MisroutingSession, "CorrelationSafety"),
    (StaleEofSession, "StaleReaderIsolation"),
    (TerminalCancelSession, "CancelAdvisory"),
    (PartialToAnySession, "PartialOptIn"),
])
def test_the_properties_catch_each_kept_mutant(mutant, prop):
    with pytest.raises(PropertyViolation, match=prop):
        run_state_machine_as_test(_machine(mutant), settings=MUTANT_SETTINGS)
