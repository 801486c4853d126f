"""Negative controls of the v1.6 cases: legal variations the suite must pass.

They register into the same ``CONTROLS`` table as tests/adapters/controls.py
(which imports this module last): a strictly sequential adapter (FC-120's
"any order" includes one at a time), repo/commit replies without their
optional members, a binary change with counts beside binary: true (a
SHOULD, so FC-106 warns), capitalised statuses (the host reads them as
modified: FC-104 warns), org/repos as strings and v1.4 objects mixed.
"""

from __future__ import annotations

import collections
import threading

from tests.adapters.controls import CONTROLS, control
from tests.adapters.proxy import Hooks, result_of

__all__ = ["CONTROLS"]


@control("sequential")
class Sequential(Hooks):
    """One request at a time: the next request reaches the adapter only after the previous reply."""

    def __init__(self):
        self.queue: collections.deque = collections.deque()
        self.busy = None
        self.lock = threading.Lock()

    def request(self, proxy, req, msg):
        with self.lock:
            if self.busy is not None:
                self.queue.append(msg)
                return None
            self.busy = req.id
        return msg

    def reply(self, proxy, req, msg):
        if req is None or req.id != self.busy:
            return msg
        with self.lock:
            nxt = self.queue.popleft() if self.queue else None
            self.busy = nxt.get("id") if nxt is not None else None
        proxy.send_host(msg)
        if nxt is not None:
            proxy.send_child(nxt)
        return None


class CommitFiles(Hooks):
    """Rewrite every file object of repo/commit results with ``edit(f)``."""

    def edit(self, result: dict, f: dict) -> None:
        pass

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/commit" and result is not None:
            for f in result.get("files") or []:
                if isinstance(f, dict):
                    self.edit(result, f)
        return msg


@control("commit-minimal")
class CommitMinimal(CommitFiles):
    """repo/commit replies leave out every optional member but patch and binary (parents, truncated, counts)."""

    def edit(self, result, f):
        result.pop("parents", None)
        result.pop("truncated", None)
        f.pop("additions", None)
        f.pop("deletions", None)


@control("binary-with-counts", warns=("FC-106",))
class BinaryWithCounts(CommitFiles):
    """Binary files carry additions 1 and deletions 1 beside binary: true (FC-106 warns: should be omitted)."""

    def edit(self, result, f):
        if f.get("binary") is True:
            f["additions"] = f["deletions"] = 1


@control("status-capitalised", warns=("FC-104",))
class StatusCapitalised(CommitFiles):
    """Commit file statuses are capitalised ("Added", "Modified"...): the host reads them as modified (FC-104 warns)."""

    def edit(self, result, f):
        if isinstance(f.get("status"), str):
            f["status"] = f["status"].capitalize()


@control("org-repos-mixed")
class OrgReposMixed(Hooks):
    """org/repos answers strings and v1.4 objects mixed (every member on the objects)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "org/repos" and result is not None:
            result["repos"] = [n if not isinstance(n, str) or i % 2 == 0 else
                               {"name": n, "description": f"the {n} repository", "private": True,
                                "archived": i % 4 == 1, "pushed_at": "2026-08-20T10:11:12Z"}
                               for i, n in enumerate(result.get("repos") or [])]
        return msg
