"""The two gate adapters: nonconforming (fails exactly FC-013 and FC-043) and
incapable (declares no revision capability and fails loudly if asked one).

Entry points: tests/nonconforming.py and tests/incapable.py.
"""

from __future__ import annotations

from tests.adapters.hooks import InitResult, Refuse, SaltedIds, StreamPause
from tests.adapters.proxy import Chain, Hooks, Request

STALL_S = 4.0   # twice the suite's 2 s inactivity window (FC-043)


class Stall(StreamPause):
    """A 4 s silence after the first batch of every streamed search.

    Whatever follows the first $/partial (the next batch, or the final reply
    of a one-batch stream) is held for STALL_S. A stream with no batch at all
    is left alone.
    """

    def before(self, req, n):
        return self._once(req) if n == 1 else 0.0

    def before_reply(self, req):
        return self._once(req) if req.partials >= 1 else 0.0

    @staticmethod
    def _once(req) -> float:
        if req.state.get("stalled"):
            return 0.0
        req.state["stalled"] = True
        return STALL_S


def nonconforming() -> Hooks:
    """Per-process salted blob ids (FC-013) and a 4 s silence mid-stream (FC-043)."""
    return Chain(SaltedIds(), Stall())


# ---------------------------------------------------------------- incapable

REVISION_CAPABILITIES = ("refs", "log", "blame", "commit")
REVISION_METHODS = ("repo/refs", "repo/log", "repo/blame", "repo/blob_at", "repo/commit")
MARKER = "INCAPABLE-ADAPTER-ASKED"


def is_revision_request(method: str, params: dict) -> bool:
    """A revision method, or repo/tree at a non-null ref."""
    return method in REVISION_METHODS or (method == "repo/tree" and params.get("ref") is not None)


class RefuseRevisions(Refuse):
    """Every revision request answers an error and leaves a marker on stderr."""

    def __init__(self):
        super().__init__(REVISION_METHODS, kind="provider", marker=MARKER,
                         message="incapable adapter: {method} was asked although its capability is false")

    def applies(self, req: Request) -> bool:
        return is_revision_request(req.method, req.params)


class DeclareNoRevisions(InitResult):
    """refs, log, blame and commit declared false."""

    def edit(self, proxy, req, result):
        caps = result.setdefault("capabilities", {})
        for key in REVISION_CAPABILITIES:
            caps[key] = False


def incapable() -> Hooks:
    """Declares refs/log/blame/commit false and fails loudly if asked any revision method."""
    return Chain(DeclareNoRevisions(), RefuseRevisions())
