"""Paced streams: a backend that sends one search hit at a time, slowly but legally.

An HTTP adapter paging a slow search API one hit (or one small page) at a
time streams each hit in its own ``$/partial``, PACE_S apart, and its final
reply PACE_S after the last batch: every message inside the inactivity
window (PROTOCOL §5.3: "the deadline is per gap, not end-to-end"), so the
stream is legal however long it runs. A cancel is advisory (§5.4): the
adapter may go on streaming to the end, or stop and answer at once. The
suite must end such a run with the right verdict without waiting for every
hit (``python3 tests/bench.py pace`` reports how long it takes; no test
asserts a time).

PACE_S is 0.3 s, or FORGE_TEST_PACE_S when set (the bench runs the 1.5 s
shape with it). The two controls register into CONTROLS and the mutant into
MUTANTS (tests/adapters/controls.py and mutants.py import this module).

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

import os
import time

from tests.adapters.controls import control
from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks, result_of

PACE_S = float(os.environ.get("FORGE_TEST_PACE_S") or 0.3)


class PacedStream(Hooks):
    """The base: every streamed search hit in its own batch, PACE_S apart, and
    the final reply PACE_S after the last one. ``honours`` says whether a
    cancel stops the stream (the rest of the hits dropped, the reply at once
    with truncated true); otherwise the cancel never reaches the reference and
    the stream runs to its end."""

    honours = False

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest" and not self.honours:
            return None   # advisory: this backend finishes what it started
        return msg

    def _stopped(self, req) -> bool:
        return self.honours and req.cancelled

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if req is None or not req.streaming or not isinstance(items, list):
            return msg
        for item in items:
            if self._stopped(req):
                req.state["cut"] = True
                return None
            time.sleep(PACE_S)   # the behaviour under test: a slow backend, one hit a page
            if self._stopped(req):
                req.state["cut"] = True
                return None
            proxy.send_host({**msg, "params": {**params, "items": [item]}})
            req.partials += 1
        return None

    def reply(self, proxy, req, msg):
        if req is None or not req.streaming or req.method != "search/code":
            return msg
        if not self._stopped(req):
            time.sleep(PACE_S)
        result = result_of(msg)
        if req.state.get("cut") and result is not None:
            return {**msg, "result": {**result, "items": [], "truncated": True}}
        return msg


@control("paced-stream")
class PacedStreamIgnoresCancel(PacedStream):
    """Every streamed search hit in its own batch 0.3 s apart (FORGE_TEST_PACE_S), the reply 0.3 s after the last; cancels are ignored, so every stream runs to its end.

    Legal: each message comes inside the inactivity window (§5.3), and a
    cancel is advisory (§5.4: the adapter MAY disregard it; more partials
    and the final reply can still show up).
    """


@control("paced-stream-cancellable")
class PacedStreamHonoursCancel(PacedStream):
    """Every streamed search hit in its own batch 0.3 s apart (FORGE_TEST_PACE_S); a cancel stops the stream and the reply comes at once with truncated true.

    Legal: §5.4's SHOULD (stop costly work on a cancel, finish with a normal
    terminal reply; truncated true is the honest value of a cut scan).
    """

    honours = True


@mutant("paced-cancel-error", "FC-045")
class PacedCancelError(PacedStream):
    """Streams one hit per batch 0.3 s apart, ignores cancels, and ends a cancelled stream with an error reply.

    The error is the defect (RULINGS "Streaming and cancellation": after a
    cancel the adapter must still send a normal terminal reply); the pace and
    the ignored cancel are legal, so every case but FC-045 must pass, and
    quickly: the cases that cancel a stream of their own judge what they saw
    before the cancel, whatever the reply after it.
    """

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest":
            return None   # never reaches the reference: req.cancelled is the proxy's record
        return msg

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        if req is not None and req.streaming and req.cancelled:
            return {"jsonrpc": "2.0", "id": req.id,
                    "error": {"code": 1, "message": "request cancelled",
                              "data": {"kind": "provider"}}}
        return msg
