"""Controls of paced streams: a backend that sends one search hit at a time, slowly but legally.

``TABLE`` maps each switch to its Variant (tests/adapters/controls/__init__.py
gathers the tables into CONTROLS).
"""

from __future__ import annotations

from tests.adapters.common import PacedStream
from tests.adapters.hooks import Variant, registrar

TABLE: dict[str, Variant] = {}
control = registrar(TABLE)


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
