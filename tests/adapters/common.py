"""Helpers that mutants and controls of several tables share (hook bases,
predicates, constants); the general hook machinery is in hooks.py and proxy.py.
"""

from __future__ import annotations

import base64
import os
import re
import time

from fixture.catalog import VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
from tests.adapters.hooks import InitResult, ResultEdit, is_git, repo_name
from tests.adapters.proxy import Hooks, dumps, hits_of, result_of


class CommitterDates(Hooks):
    """Base: each date of ``items(result)`` of ``methods``' results on a git
    repository becomes git's committer date of the commit it names, in the
    committer's own offset (most commits' two dates are one)."""

    methods: tuple[str, ...] = ()

    def __init__(self):
        self.dates: dict[str, dict[str, str]] = {}

    def committed(self, proxy, repo) -> dict[str, str]:
        """sha -> the committer date (strict ISO-8601) of every commit of ``repo``."""
        name = repo_name(repo)
        if name not in self.dates:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / name), "log", "--all",
                                  "--format=%H %cI"], capture_output=True, text=True)
            self.dates[name] = dict(line.split() for line in run.stdout.splitlines()
                                    if len(line.split()) == 2)
        return self.dates[name]

    def items(self, result: dict) -> list:
        return []

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is None or req.method not in self.methods or result is None
                or not is_git(proxy, req.params.get("repo"))):
            return msg
        dates = self.committed(proxy, req.params.get("repo"))
        for item in self.items(result):
            if isinstance(item, dict) and item.get("sha") in dates:
                item["date"] = dates[item["sha"]]
        return msg


HEX40 = re.compile(r"[0-9a-f]{40}")


def shorten(value):
    return value[:12] if isinstance(value, str) and HEX40.fullmatch(value) else value


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


def no_cache(proxy) -> bool:
    """This process was initialized without cache params (FC-005's spawn)."""
    return not isinstance(proxy.init_params.get("cache_dir"), str)


def ref_of(req) -> object:
    return req.params.get("ref") if req is not None else None


def git_lines(proxy, repo, *args: str) -> list[str]:
    import subprocess
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), *args],
                         capture_output=True, text=True)
    return run.stdout.splitlines() if run.returncode == 0 else []


class NoCacheInit(InitResult):
    """Edit the initialize result only when the process got no cache params."""

    def change(self, result: dict) -> None:
        pass

    def edit(self, proxy, req, result):
        if no_cache(proxy):
            self.change(result)


class TreeEdit(ResultEdit):
    """Edit repo/tree results for which ``applies(req)`` holds."""

    method = "repo/tree"


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


def git(proxy, repo, *args: str) -> subprocess.CompletedProcess:
    import subprocess
    return subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), *args],
                          capture_output=True, text=True)


class OffMainIdDefault(Hooks):
    """``method`` at a 40-hex commit id that is not on the default branch's history serves the default branch."""

    method = ""

    def request(self, proxy, req, msg):
        params = msg.get("params")
        ref = params.get("ref") if isinstance(params, dict) and req.method == self.method else None
        if isinstance(ref, str) and re.fullmatch(r"[0-9a-f]{40}", ref) \
                and is_git(proxy, params.get("repo")) \
                and git(proxy, params.get("repo"), "merge-base", "--is-ancestor", ref,
                        VCS_DEFAULT_BRANCH).returncode == 1:
            params["ref"] = None
        return msg


class TagObjectRefused(Hooks):
    """repo/refs reports an annotated tag's object id (legal); ``method`` refuses that id as a ref (not_found)."""

    method = ""

    def __init__(self):
        self.objects: set[str] = set()

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/refs" or result is None:
            return msg
        run = git(proxy, req.params.get("repo"), "for-each-ref",
                  "--format=%(refname:short)%00%(objectname)%00%(objecttype)", "refs/tags")
        for line in run.stdout.splitlines():
            name, obj, kind = (line.split("\0") + ["", "", ""])[:3]
            for tag in result.get("tags") or []:
                if kind == "tag" and isinstance(tag, dict) and tag.get("name") == name:
                    tag["sha"] = obj
                    self.objects.add(obj)
        return msg

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if req.method == self.method and isinstance(params, dict) \
                and params.get("ref") in self.objects:
            proxy.error(req, f"unknown revision {params['ref']}", kind="not_found")
            return None
        return msg


HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")


def header(old: int, old_count: int, new: int, new_count: int, tail: str = "") -> str:
    """A hunk header from 0-based side starts (an empty side names the line before)."""
    def side(start: int, count: int) -> str:
        return f"{start + 1 if count else start},{count}"
    return f"@@ -{side(old, old_count)} +{side(new, new_count)} @@{tail}"


def parsed(patch: str) -> list[tuple[int, int, int, int, str, list[str]]]:
    """The hunks of a well-formed patch: (0-based old start, old count,
    0-based new start, new count, header tail, raw body lines)."""
    out = []
    for line in patch.split("\n"):
        m = HEADER.match(line)
        if m:
            oc = int(m.group(2)) if m.group(2) is not None else 1
            nc = int(m.group(4)) if m.group(4) is not None else 1
            out.append((int(m.group(1)) - (1 if oc else 0), oc,
                        int(m.group(3)) - (1 if nc else 0), nc, m.group(5), []))
        elif out:
            out[-1][5].append(line)
    return out


def counted(f: dict) -> None:
    """Counts that match the file's patch (when the file carries counts)."""
    lines = f["patch"].split("\n")
    if "additions" in f:
        f["additions"] = sum(1 for ln in lines if ln.startswith("+"))
    if "deletions" in f:
        f["deletions"] = sum(1 for ln in lines if ln.startswith("-"))


# The refs the tree sweep asked before: ref null and the two branches.
OLD_SWEEP = (None, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH)


_HEX = re.compile(r"[0-9a-f]{4,64}")


def tag_name(req) -> bool:
    """A tree at a ref that is neither null, a branch nor a hex id (a tag name)."""
    ref = ref_of(req)
    return ref not in OLD_SWEEP and not _HEX.fullmatch(str(ref))


def query(req) -> str:
    q = req.params.get("q") if req is not None else None
    return q if isinstance(q, str) else ""


def is_path_query(req) -> bool:
    return query(req).startswith("path:")


class HitEdit(Hooks):
    """Edit every hit of the search/code replies and batches ``applies`` names."""

    def applies(self, req) -> bool:
        return True

    def edit(self, proxy, req, hit: dict) -> None:
        pass

    def _each(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and self.applies(req):
            for hit in hits_of(req, msg):
                self.edit(proxy, req, hit)
        return msg

    def reply(self, proxy, req, msg):
        return self._each(proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._each(proxy, req, msg)


class FirstInitialize(Hooks):
    """Knows whether this process is a respawned generation: its first
    initialize has an id other than 1 (the suite's first request of a spawn is
    its initialize, id 1; a respawn's initialize has a later id). A second
    initialize on the same process (FC-121) is not a respawn."""

    respawned: bool | None = None

    def request(self, proxy, req, msg):
        if req.method == "initialize" and self.respawned is None:
            self.respawned = req.id != 1
            self.on_first_initialize(proxy, req)
        return msg

    def on_first_initialize(self, proxy, req) -> None:
        pass


class CrlfAsLf(Hooks):
    """Base: the bytes of ``method``'s results that are text (no NUL byte) have
    every CRLF turned into LF, as a text-mode transfer would (binary bytes and
    the reported sha left as they were)."""

    method = ""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != self.method or result is None:
            return msg
        data = result.get("bytes_b64")
        if isinstance(data, str):
            try:
                raw = base64.b64decode(data, validate=True)
            except ValueError:
                return msg
            if b"\r\n" in raw and b"\0" not in raw:
                result["bytes_b64"] = base64.b64encode(raw.replace(b"\r\n", b"\n")).decode("ascii")
        return msg


class BlobAtCrlfAsLf(CrlfAsLf):
    """Base: repo/blob_at at the refs ``at_ref`` accepts."""

    method = "repo/blob_at"

    def at_ref(self, ref) -> bool:
        return True

    def reply(self, proxy, req, msg):
        if req is None or not self.at_ref(req.params.get("ref")):
            return msg
        return super().reply(proxy, req, msg)


class SearchEdit(ResultEdit):
    method = "search/code"


def path_query(req) -> bool:
    return req is not None and str(req.params.get("q")).startswith("path:")


HEX_ID = re.compile(r"[0-9a-f]{7,64}")


TRUNCATED_RULE = ('RULINGS "Bounded compute": a claim of truncation that is false fails, and '
                  'so does a cut without truncated: true')


class RespawnedEdit(FirstInitialize, ResultEdit):
    """Edit ``method``'s results in a respawned generation only."""

    def applies(self, proxy, req):
        return bool(self.respawned) and self.also(proxy, req)

    def also(self, proxy, req) -> bool:
        return True


def git_out(proxy, repo, *args: str) -> bytes:
    """``git <args>`` in a served git repository ("" when it fails)."""
    import subprocess
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), *args],
                         capture_output=True)
    return run.stdout if run.returncode == 0 else b""


class CommitReply(ResultEdit):
    """Rewrite repo/commit results with ``edit(proxy, req, result)``."""

    method = "repo/commit"


def commit_files(result: dict) -> list[dict]:
    return [f for f in result.get("files") or [] if isinstance(f, dict)]
