"""Mutants of a real backend's defects, each breaking one MUST and failing
exactly the case that owns it (a hook class per switch, its docstring's
first line what it changes, then "Hides on:"):

- dates that are no instant of their commit (a backend client dropping
  the UTC offset): neither the author nor the committer date, which are
  both legal (tests/adapters/controls_backend.py);
- a file whose name holds `#` that cannot be fetched by the id the
  adapter listed for it (a backend URL built without escaping the path);
- requests the adapter never answers (a wedge on an unknown ref or
  commit).

They register into ``MUTANTS`` (mutants.py imports this module at its end).
"""

from __future__ import annotations

import re

from tests.adapters.hooks import is_git, repo_name
from tests.adapters.mutants_deep import promoted
from tests.adapters.proxy import Hooks, result_of, tree_blobs

# "2024-01-20T09:00:00+05:30" -> "2024-01-20T09:00:00Z": the wall clock kept, its offset lost
OFFSET = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?)(?:[+-]\d{2}:\d{2})$")
DATE_OF_COMMIT = ('RULINGS "Content and revisions": a log or commit date is an ISO-8601 instant '
                  'of that commit (its author or committer date); a wall clock read in another '
                  'offset names neither')


class OffsetDropped(Hooks):
    """Base: each date of ``items(result)`` of ``methods``' results keeps its
    wall clock and loses its offset (read as UTC)."""

    methods: tuple[str, ...] = ()

    def items(self, result: dict) -> list:
        return []

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method not in self.methods or result is None:
            return msg
        for item in self.items(result):
            date = item.get("date") if isinstance(item, dict) else None
            found = OFFSET.match(date) if isinstance(date, str) else None
            if found:
                item["date"] = found.group(1) + "Z"
        return msg


@promoted("log-dates-offset-dropped", "FC-094", DATE_OF_COMMIT)
class LogDatesOffsetDropped(OffsetDropped):
    """repo/log dates keep their wall clock and lose their UTC offset (read as UTC).

    Hides on: commits written in UTC (the fixture's `*` commits are not).
    """

    methods = ("repo/log",)

    def items(self, result):
        items = result.get("items")
        return items if isinstance(items, list) else []


@promoted("commit-date-offset-dropped", "FC-101", DATE_OF_COMMIT)
class CommitDateOffsetDropped(OffsetDropped):
    """repo/commit dates keep their wall clock and lose their UTC offset (read as UTC).

    Hides on: commits written in UTC (the fixture's `*` commits are not).
    """

    methods = ("repo/commit",)

    def items(self, result):
        return [result]


@promoted("hash-name-unfetchable", "FC-012",
          '§3.4: "MUST Any blob id the adapter has emitted for this repository ... resolves '
          'through repo/blob"')
class HashNameUnfetchable(Hooks):
    """repo/blob of the id listed for a text file whose name holds "#" answers not_found (the backend URL was cut at the "#").

    Hides on: alpha's docs/url/ names at ref null (a text file, so the
    bytes and base64 cases see nothing wrong with what is served).
    """

    def __init__(self):
        self.cut: set[str] = set()

    def request(self, proxy, req, msg):
        if req.method == "repo/blob" and req.params.get("sha") in self.cut:
            proxy.error(req, "404 Not Found: GET /raw/" + str(req.params["sha"])[:12],
                        kind="not_found")
            return None
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/tree" and result is not None
                and not is_git(proxy, req.params.get("repo"))
                and repo_name(req.params.get("repo")) == "alpha"):
            for entry in tree_blobs(result):
                path = entry.get("path")
                if isinstance(path, str) and "#" in path and isinstance(entry.get("sha"), str):
                    self.cut.add(entry["sha"])
        return msg


# ---------------------------------------------------------------- wedges

class Wedge(Hooks):
    """Base: a request ``wedged(proxy, req)`` names is never answered (the
    adapter waits on a backend call that never returns); every other is."""

    def wedged(self, proxy, req) -> bool:
        return False

    def request(self, proxy, req, msg):
        return None if self.wedged(proxy, req) else msg


def resolves(proxy, repo, spelled: object, kind: str = "commit") -> bool:
    """Whether git resolves ``spelled`` to a ``kind`` object in the served git repository ``repo``."""
    import subprocess
    if not isinstance(spelled, str):
        return True
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "rev-parse", "--verify",
                          "--quiet", "--end-of-options", f"{spelled}^{{{kind}}}"],
                         capture_output=True)
    return run.returncode == 0


@promoted("unknown-ref-tree-wedge", "FC-092",
          '§3.3: "MUST Unknown ref -> error"; §7.5: the host fails a request at its deadline')
class UnknownRefTreeWedge(Wedge):
    """repo/tree of vcs at a ref git cannot resolve is never answered.

    Hides on: a tree at an unknown ref (the revision flows only ask refs
    the adapter listed).
    """

    def wedged(self, proxy, req):
        repo = req.params.get("repo")
        return (req.method == "repo/tree" and req.params.get("ref") is not None
                and is_git(proxy, repo) and not resolves(proxy, repo, req.params["ref"]))


@promoted("unknown-commit-wedge", "FC-108",
          '§3.12 with §7.5: repo/commit of an id that names no commit is answered (an error '
          'advised); the host fails a request at its deadline')
class UnknownCommitWedge(Wedge):
    """repo/commit of an id that names no commit of vcs is never answered.

    Hides on: ids that name no commit (every id the adapter listed resolves).
    """

    def wedged(self, proxy, req):
        repo = req.params.get("repo")
        return (req.method == "repo/commit" and is_git(proxy, repo)
                and not resolves(proxy, repo, req.params.get("sha")))
