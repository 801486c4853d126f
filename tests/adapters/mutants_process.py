"""Mutants of how an adapter process reads what the host sends it, and of
its life: an adapter that ends by itself where the protocol forbids it (the
harness respawns a dead adapter lazily, as the host does, so no case's own
requests show these; the protocol monitor's unasked exits, wire/monitor.py
``exited``, owners in cases/registry.py, fail the owner of what the exit
followed, wherever in the run it happened), and one that reads an optional
param's `null` otherwise than its absence (the cases send the host's
spelling only; cases/judges/null_params.py asks both on the run's requests).

Each mutant fails exactly its owner case (a hook class per switch, its
docstring's first line what it changes, then "Hides on:"). mutants.py
imports this module at its end.
"""

from __future__ import annotations

from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks, params_id


@mutant("exits-on-finished-cancel", "FC-122")
class ExitsOnFinishedCancel(Hooks):
    """The adapter exits (status 0) on a $/cancelRequest naming a request it answered before it read a later one.

    Hides on: FC-122's own check, which sees the lazily respawned generation
    serve the next tree and the stream asked again as before. A cancel of an
    id never issued (FC-054's) is ignored, and so is a cancel of the latest
    request: one sent with its request (FC-045's) may find a fast answer
    already out, and the host would then be writing its next request as the
    adapter dies (that request's owner would fail, as in the host).
    """

    def start(self, proxy):
        self.answered: set = set()
        self.latest = None

    def request(self, proxy, req, msg):
        self.latest = req.id
        return msg

    def reply(self, proxy, req, msg):
        if req is not None:
            self.answered.add(req.id)
        return msg

    def notification(self, proxy, msg):
        target = params_id(msg) if msg.get("method") == "$/cancelRequest" else None
        if target in self.answered and target != self.latest:
            proxy.log("a cancel for a finished request: exiting")
            proxy._shutdown(0)
        return msg


@mutant("exits-on-unknown-notification", "FC-054")
class ExitsOnUnknownNotification(Hooks):
    """The adapter exits (status 0) on any notification but $/cancelRequest ($/progress, window/logMessage, x/...).

    Hides on: FC-054's own check, which sees no reply to the notifications
    and the lazily respawned generation list the tree as before.
    """

    def notification(self, proxy, msg):
        if msg.get("method") != "$/cancelRequest":
            proxy.log(f"an unknown notification {msg.get('method')!r}: exiting")
            proxy._shutdown(0)
        return msg


@mutant("tree-ref-absent-refused", "FC-053")
class TreeRefAbsentRefused(Hooks):
    """repo/tree without a ref member is refused (not_found "unknown revision"); with ref null it serves the default branch.

    Hides on: every case, which sends the host's spelling (ref null, or a
    ref); only the run-wide null-and-absent judge leaves ref out.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/tree" and "ref" not in req.params:
            proxy.error(req, "unknown revision (no ref given)", kind="not_found")
            return None
        return msg


@mutant("search-limit-null-refused", "FC-053")
class SearchLimitNullRefused(Hooks):
    """search/code with limit null is refused as invalid params; with limit left out it searches.

    Hides on: every case, which sends a limit (the host's 500, or another);
    only the run-wide null-and-absent judge sends limit null.
    """

    def request(self, proxy, req, msg):
        if req.method == "search/code" and "limit" in req.params and req.params["limit"] is None:
            proxy.error(req, "invalid params: limit must be an integer", code=-32602)
            return None
        return msg



@mutant("exits-on-search-limit-null", "FC-053")
class ExitsOnSearchLimitNull(Hooks):
    """The adapter exits (status 3) on search/code with limit null, the search in flight; with limit left out it searches.

    Hides on: every case, which sends a limit; the run-wide null-and-absent
    judge's search with limit null is in flight when the process ends (its
    closed output is the judge's to report: no case waits on it).
    """

    def request(self, proxy, req, msg):
        if req.method == "search/code" and "limit" in req.params and req.params["limit"] is None:
            proxy.log("search/code with limit null: exiting")
            proxy._shutdown(3)
        return msg
