"""One defect, one red: defects whose consequences other cases see, each of
which must still fail its owner alone (RULINGS "Attribution": when a case's
evidence is another case's defect, the case skips naming that case).

- invalid UTF-8 on stdout ends the generation (PROTOCOL §1.2, §7.2): every
  request in flight on it dies, in whatever case sent it; the rule is the
  transport's (the protocol monitor's ``stdout-utf8``);
- a respawned generation that answers initialize wrongly: every case that
  needed that generation loses it; the rule is the lifecycle's;
- a revision reply that breaks its first owner's rule at every ref, which
  the round-trip case beside it reads again at a non-null ref (or ref null).

Each mutant fails exactly its owner case (a hook class per switch, its
docstring's first line what it changes, then "Hides on:"); the controls
beside them are the legal variations nearby. mutants.py and controls.py
import this module at their end.
"""

from __future__ import annotations

import base64

from tests.adapters.controls import control
from tests.adapters.mutants import mutant
from tests.adapters.hooks import repo_name
from tests.adapters.proxy import Hooks, dumps, result_of

# An unknown reply member (ignored by the host) and its text: what the
# invalid-UTF-8 mutants write in Latin-1, and the control in UTF-8.
NOTE_MEMBER, NOTE_TEXT = "x_note", "caf\u00e9"


def with_note(msg: dict, encoding: str) -> bytes:
    """``msg`` as one line whose unknown member NOTE_MEMBER holds NOTE_TEXT in
    ``encoding`` (Latin-1: one byte, 0xE9, that is not UTF-8)."""
    marker = "@@NOTE@@"
    result = result_of(msg)
    if result is None:
        return dumps(msg)
    result[NOTE_MEMBER] = marker
    return dumps(msg).replace(marker.encode("ascii"), NOTE_TEXT.encode(encoding))


class Latin1Reply(Hooks):
    """Base: the first reply of ``method`` a process sends is written with
    NOTE_TEXT in Latin-1 (invalid UTF-8: the host ends the generation)."""

    method = ""

    def start(self, proxy):
        self.done = False

    def reply(self, proxy, req, msg):
        if self.done or req is None or req.method != self.method or result_of(msg) is None:
            return msg
        self.done = True
        proxy.send_host(with_note(msg, "latin-1"))
        proxy.requests.pop(req.id, None)
        return None


# ---------------------------------------------------------------- transport

@mutant("latin1-first-tree", "FC-123")
class Latin1FirstTree(Latin1Reply):
    """Each process's first repo/tree reply carries an unknown member written in
    Latin-1 (invalid UTF-8).

    Hides on: every case whose tree died with that generation: they skip,
    naming FC-123's defect; the lazily respawned generation serves the next
    request (its own first tree dies again).
    """

    method = "repo/tree"


@mutant("latin1-first-commit", "FC-123")
class Latin1FirstCommit(Latin1Reply):
    """Each process's first repo/commit reply carries an unknown member written in
    Latin-1 (invalid UTF-8).

    Hides on: the commit cases (a late group) and every other case whose
    repo/commit died with that generation: they skip, naming FC-123's defect.
    """

    method = "repo/commit"


@control("utf8-note-every-reply")
class Utf8NoteEveryReply(Hooks):
    """Every reply carries an unknown member holding non-ASCII text, validly UTF-8 encoded."""

    def reply(self, proxy, req, msg):
        if req is None or result_of(msg) is None:
            return msg
        proxy.send_host(with_note(msg, "utf-8"))
        proxy.requests.pop(req.id, None)
        return None


# ---------------------------------------------------------------- lifecycle

class RespawnedInitialize(Hooks):
    """Base: a respawned generation's initialize (the first request of this
    process, with an id other than 1: ids go on across generations) is
    answered by ``answer(proxy, req, msg)``."""

    def start(self, proxy):
        self.first = True

    def request(self, proxy, req, msg):
        first, self.first = self.first, False
        if first and req.method == "initialize" and req.id != 1:
            req.state["respawned"] = True
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.state.get("respawned"):
            return self.answer(proxy, req, msg)
        return msg

    def answer(self, proxy, req, msg):
        return msg


@mutant("respawn-initialize-error", "FC-050")
class RespawnInitializeError(RespawnedInitialize):
    """A respawned generation answers initialize with an error (kind provider).

    Hides on: the first start of each process; every case that needed a
    respawned generation skips, naming FC-050's defect.
    """

    def answer(self, proxy, req, msg):
        return {"jsonrpc": "2.0", "id": req.id,
                "error": {"code": 1, "message": "cache is locked by a previous run",
                          "data": {"kind": "provider"}}}


@mutant("respawn-initialize-not-object", "FC-001")
class RespawnInitializeNotObject(RespawnedInitialize):
    """A respawned generation answers initialize with result true (not an object).

    Hides on: the first start of each process. A handshake result that is
    not an object carries no protocol: FC-001's on every generation (the
    protocol monitor); every case that needed a respawned generation skips,
    naming FC-001's defect.
    """

    def answer(self, proxy, req, msg):
        return {"jsonrpc": "2.0", "id": req.id, "result": True}


@mutant("respawn-protocol-2", "FC-001")
class RespawnProtocol2(RespawnedInitialize):
    """A respawned generation answers initialize with protocol 2 (the host refuses it).

    Hides on: the first start of each process (FC-001 reads every
    generation's handshake); every case that needed a respawned generation
    skips, naming FC-001's defect.
    """

    def answer(self, proxy, req, msg):
        result = result_of(msg)
        if result is not None:
            result["protocol"] = 2
        return msg


@mutant("respawn-no-capabilities", "FC-051")
class RespawnNoCapabilities(RespawnedInitialize):
    """A respawned generation answers initialize without capabilities.

    Hides on: the first start of each process; the cases read generation
    1's capabilities and the respawned generation still serves everything.
    """

    def answer(self, proxy, req, msg):
        result = result_of(msg)
        if result is not None:
            result.pop("capabilities", None)
        return msg


# ---------------------------------------------------------------- revisions

@mutant("log-tree-ids", "FC-094")
class LogTreeIds(Hooks):
    """repo/log lists each commit's tree id (git log --format=%T) where its
    commit id belongs.

    Hides on: nothing that reads a log's ids: an id that names no commit is
    FC-094's at every ref, and FC-130, FC-095 and FC-132, which read logs
    at refs again, skip naming it.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        items = result.get("items") if result is not None else None
        if req is None or req.method != "repo/log" or not isinstance(items, list):
            return msg
        shas = [i["sha"] for i in items if isinstance(i, dict) and isinstance(i.get("sha"), str)]
        if not shas:
            return msg
        import subprocess
        run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(req.params.get("repo"))),
                              "rev-parse", *(f"{sha}^{{tree}}" for sha in shas)],
                             capture_output=True, text=True)
        trees = dict(zip(shas, run.stdout.split())) if run.returncode == 0 else {}
        for item in items:
            if isinstance(item, dict) and item.get("sha") in trees:
                item["sha"] = trees[item["sha"]]
        return msg


@mutant("log-drops-root", "FC-095")
class LogDropsRoot(Hooks):
    """repo/log leaves the oldest commit it would list out of every log that
    lists more than one (truncated false).

    Hides on: a log of one commit, and logs cut by limit (they say truncated
    true). A log cut without truncated true is FC-095's (every log reply of
    the run, cases/judges/claims.py); FC-130, which walks logs at refs again,
    skips naming it.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None \
                and not result.get("truncated") and len(result.get("items") or []) > 1:
            result["items"] = result["items"][:-1]
        return msg


@mutant("blame-drops-last-line", "FC-098")
class BlameDropsLastLine(Hooks):
    """repo/blame's last range stops one line short (the file's last line is never blamed).

    Hides on: a one-line range at the end (it is dropped, and the ranges
    still number 1, 2, ... in order). FC-131 blames at refs the same way:
    FC-098's.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        ranges = result.get("ranges") if result is not None else None
        if req is None or req.method != "repo/blame" or not isinstance(ranges, list) or not ranges:
            return msg
        last = ranges[-1]
        if last.get("end_line", 0) > last.get("start_line", 0):
            last["end_line"] -= 1
        else:
            ranges.pop()
        return msg


@mutant("blob-at-crlf-as-lf-everywhere", "FC-096")
class BlobAtCrlfAsLfEverywhere(Hooks):
    """repo/blob_at serves CRLF line ends as LF at every ref, ref null included
    (its sha left as it was).

    Hides on: a text file with CRLF line ends (notes/line-endings.txt).
    FC-133 reads it with ref null: the same bytes at the default branch's
    name are FC-096's.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/blob_at" or result is None:
            return msg
        try:
            data = base64.b64decode(result.get("bytes_b64") or "", validate=True)
        except (ValueError, TypeError):
            return msg
        if b"\0" not in data and b"\r\n" in data:
            result["bytes_b64"] = base64.b64encode(data.replace(b"\r\n", b"\n")).decode("ascii")
        return msg
