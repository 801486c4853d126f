"""Hook building blocks shared by the mutants, the controls and the gates.

Small, parameterised hook sets that several adapters reuse: rewriting blob
ids everywhere they appear (with the reverse map for repo/blob), editing one
method's results (the initialize result among them), rewriting error kinds,
delaying stream frames, holding a reply for its cancel, holding a lock file
across a streaming search,
repeating a stream's batches, pairing concurrent replies, and answering a
method with an error. Each adapter in mutants*.py / controls*.py / gates.py
is one of these with its parameters, or a few lines of its own.
"""

from __future__ import annotations

import base64
import collections
import hashlib
import os
import sys
import threading
import time

from tests.adapters.proxy import (Hooks, Request, error_data, hits_of, params_id, result_of,
                                  tree_blobs)

MIB = 1 << 20


class Variant(collections.namedtuple("Variant", "switch hooks expected warns",
                                      defaults=(frozenset(), frozenset()))):
    """One adapter of a table (mutants.MUTANTS, controls.CONTROLS): its
    ``switch``; ``hooks``, the hook set (a class or factory); ``expected``, the
    case ids the suite must fail, exactly (mutants); ``warns``, the case ids
    that must carry a warning (controls). (A plain namedtuple: typing costs
    every adapter start about 3 ms, see proxy.py.)"""
    __slots__ = ()

    @property
    def description(self) -> str:
        """The first paragraph of the hook set's docstring, on one line: the
        one place a variant's behaviour is described (tests/adapters/wording.py
        copies it into MUTANTS.txt and the case docstrings)."""
        return " ".join((self.hooks.__doc__ or "").strip().split("\n\n")[0].split())


def registrar(table: dict):
    """A class decorator factory filling ``table``: @register(switch, *expected, warns=())."""
    def register(switch: str, *expected: str, warns: tuple[str, ...] = ()):
        def add(cls):
            assert switch not in table, f"switch {switch!r} registered twice"
            table[switch] = Variant(switch, cls, frozenset(expected), frozenset(warns))
            return cls
        return add
    return register


def matrix(table: dict):
    """The decorators of a mutant table: ``mutant(switch, *expected)``, and
    ``promoted(switch, owner, rule)`` for a deep mutant moved into the matrix
    (its ``rule`` and ``owner`` kept on the class)."""
    mutant = registrar(table)

    def promoted(switch: str, owner: str, rule: str):
        def add(cls):
            cls.rule, cls.owner = rule, owner
            return mutant(switch, owner)(cls)
        return add
    return mutant, promoted


def cited(table: dict):
    """A control decorator that carries ``legal`` (the PROTOCOL.md / RULINGS.md
    text that makes the variation legal): ``control(switch, legal, warns=())``."""
    register = registrar(table)

    def control(switch: str, legal: str, warns: tuple[str, ...] = ()):
        def add(cls):
            cls.legal = legal
            return register(switch, warns=warns)(cls)
        return add
    return control


kept_in = cited   # ``kept``: a deep control (tests/adapters/controls_deep.py) the suite passes


def gather(package: str, modules: tuple[str, ...]) -> dict[str, Variant]:
    """The union of the ``TABLE`` of each of ``package``'s ``modules``."""
    import importlib

    out: dict[str, Variant] = {}
    for name in modules:
        for switch, variant in importlib.import_module(f"{package}.{name}").TABLE.items():
            assert switch not in out, f"switch {switch!r} registered twice"
            out[switch] = variant
    return out


class OwnWrites(Hooks):
    """A hook set that writes every reply and $/partial to the host itself
    (``write``), keeping the proxy's books as send_host would: a reply
    retires its request, a batch counts on it."""

    def write(self, proxy, msg) -> None:
        raise NotImplementedError

    def reply(self, proxy, req, msg):
        self.write(proxy, msg)
        proxy.requests.pop(msg.get("id"), None)
        return None

    def partial(self, proxy, req, msg):
        self.write(proxy, msg)
        if req is not None:
            req.partials += 1
        return None


class HitsEdit(Hooks):
    """A hook set that edits every search hit in place (``hit``): in the
    $/partial batches here, and in a one-shot reply's items where the
    subclass's ``reply`` hands them to ``_hits``."""

    def partial(self, proxy, req, msg):
        self._hits((msg.get("params") or {}).get("items"))
        return msg

    def _hits(self, items):
        for hit in items or []:
            if isinstance(hit, dict):
                self.hit(hit)

    def hit(self, hit: dict) -> None:
        raise NotImplementedError


def repo_name(repo: object) -> str:
    """The fixture directory name of a repository id (the org part is ignored)."""
    text = repo if isinstance(repo, str) else ""
    return text.split("/", 1)[1] if "/" in text else text


def is_git(proxy, repo: object) -> bool:
    name = repo_name(repo)
    return bool(name) and (proxy.fixture / name / ".git").exists()


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git_blob_id(data: bytes) -> str:
    """git's blob id: sha1 of "blob <len>\\0" + bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class BlobIds(Hooks):
    """Rewrite blob content ids wherever the adapter emits them (tree entries,
    blob_at, search hits) through ``fake(...)``, and map the fake ids back to
    the reference's ids in repo/blob requests, so the adapter stays
    self-consistent. ``fake`` returning the id unchanged leaves it alone.

    ``where`` is "tree", "blob_at" or "hit"; ``ref`` is the request's ref
    (None for the default branch / working tree and for hits).
    """

    def __init__(self):
        self.back: dict[str, str] = {}

    def fake(self, proxy, req: Request, sha: str, repo: str, path: str, ref, where: str) -> str:
        return sha

    def _swap(self, proxy, req, holder: dict, repo, path, ref, where) -> None:
        sha = holder.get("sha")
        if not isinstance(sha, str) or not sha:
            return
        new = self.fake(proxy, req, sha, repo, path, ref, where)
        if new != sha:
            self.back[new] = sha
            holder["sha"] = new

    def request(self, proxy, req, msg):
        if req.method == "repo/blob":
            sha = req.params.get("sha")
            if isinstance(sha, str) and sha in self.back:
                req.params["sha"] = self.back[sha]
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        repo, ref = req.params.get("repo"), req.params.get("ref")
        if req.method == "repo/tree":
            for entry in tree_blobs(result):
                self._swap(proxy, req, entry, repo, entry.get("path"), ref, "tree")
        elif req.method == "repo/blob_at":
            self._swap(proxy, req, result, repo, req.params.get("path"), ref, "blob_at")
        elif req.method == "search/code":
            self._hits(proxy, req, msg)
        return msg

    def partial(self, proxy, req, msg):
        if req is not None:
            self._hits(proxy, req, msg)
        return msg

    def _hits(self, proxy, req, msg):
        for hit in hits_of(req, msg):
            self._swap(proxy, req, hit, hit.get("repo"), hit.get("path"), None, "hit")


class SaltedIds(BlobIds):
    """Every blob id salted with a per-process random value."""

    def __init__(self):
        super().__init__()
        self.salt = os.urandom(8).hex()

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return sha256_hex(f"{self.salt}:{sha}".encode())


class GitIds(BlobIds):
    """Blob ids rewritten to git's blob ids: from ``git ls-tree`` for trees at a
    ref (and blob_at at a ref), from the file on disk for the working tree."""

    def __init__(self):
        super().__init__()
        self.at_ref: dict[tuple, dict] = {}

    def tree_ids(self, proxy, repo, ref) -> dict:
        """path -> git blob id in the tree at ``ref``."""
        key = (repo_name(repo), ref)
        if key not in self.at_ref:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / key[0]), "ls-tree", "-r", "-z",
                                  "--full-tree", str(ref)], capture_output=True)
            ids = {}
            for record in run.stdout.split(b"\0"):
                meta, tab, path = record.partition(b"\t")
                parts = meta.split()
                if tab and len(parts) == 3 and parts[1] == b"blob":
                    ids[path.decode("utf-8", "surrogateescape")] = parts[2].decode()
            self.at_ref[key] = ids
        return self.at_ref[key]

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if ref is not None:
            return self.tree_ids(proxy, repo, ref).get(path) or sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else git_blob_id(data)

    def request(self, proxy, req, msg):
        sha = req.params.get("sha") if req.method == "repo/blob" else None
        if isinstance(sha, str) and sha not in self.back:
            found = self.recover(proxy, req.params.get("repo"), sha)
            if found is not None:
                self.back[sha] = found
        return super().request(proxy, req, msg)

    @staticmethod
    def recover(proxy, repo, sha: str) -> str | None:
        """The reference's id of the bytes a git blob id names, for an id an
        earlier process listed (a git id names the same bytes in every
        process): git's object, else a worktree file of those bytes."""
        import subprocess
        if not isinstance(repo, str) or len(sha) != 40 or not all(c in "0123456789abcdef" for c in sha):
            return None
        root = proxy.fixture / repo_name(repo)
        run = subprocess.run(["git", "-C", str(root), "cat-file", "blob", sha], capture_output=True,
                             stdin=subprocess.DEVNULL)
        if run.returncode == 0 and git_blob_id(run.stdout) == sha:
            return sha256_hex(run.stdout)
        for here, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                try:
                    with open(os.path.join(here, name), "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if git_blob_id(data) == sha:
                    return sha256_hex(data)
        return None


class RelistedGenuine(BlobIds):
    """A BlobIds whose reverse map forgets a fake id once the adapter lists
    that id unchanged: the latest listing of this id is genuine."""

    def _swap(self, proxy, req, holder, repo, path, ref, where):
        sha = holder.get("sha")
        super()._swap(proxy, req, holder, repo, path, ref, where)
        if holder.get("sha") == sha and isinstance(sha, str):
            self.back.pop(sha, None)


class CachedIds(BlobIds):
    """Working-tree blob ids cached for the process lifetime under
    ``key(proxy, repo, path)``: the first id listed for a key is listed ever
    after."""

    def __init__(self):
        super().__init__()
        self.first: dict[tuple, str] = {}

    def key(self, proxy, repo, path) -> tuple:
        return (repo_name(repo), path)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref is not None:
            return sha
        return self.first.setdefault(self.key(proxy, repo, path), sha)


class ResultEdit(Hooks):
    """Edit the results of ``method`` for which ``applies(proxy, req)`` holds
    with ``edit(proxy, req, result)``."""

    method = ""

    def applies(self, proxy, req: Request) -> bool:
        return True

    def edit(self, proxy, req: Request, result: dict) -> None:
        pass

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == self.method and result is not None
                and self.applies(proxy, req)):
            self.edit(proxy, req, result)
        return msg


class InitResult(ResultEdit):
    """Rewrite the initialize result with ``edit(proxy, req, result)``."""

    method = "initialize"


class OneShotFirstPage(ResultEdit):
    """One-shot searches (those ``applies`` names) return only their first
    100 hits (one backend page) with truncated false."""

    method = "search/code"

    def applies(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        items = result.get("items") or []
        if len(items) > 100:
            result["items"] = items[:100]
            result["truncated"] = False


class EveryBranchDefault(ResultEdit):
    """repo/refs results (those ``applies`` names) mark every branch default."""

    method = "repo/refs"

    def edit(self, proxy, req, result):
        for branch in result.get("branches") or []:
            if isinstance(branch, dict):
                branch["default"] = True


class KindRewrite(Hooks):
    """Rewrite ``data.kind`` of error replies: kind ``old`` becomes ``new``
    (for ``methods`` only, when given)."""

    def __init__(self, old: str, new: str, methods: tuple[str, ...] = ()):
        self.old, self.new, self.methods = old, new, methods

    def reply(self, proxy, req, msg):
        if "error" in msg and (not self.methods or (req is not None and req.method in self.methods)):
            data = error_data(msg)
            if data is not None and data.get("kind") == self.old:
                data["kind"] = self.new
        return msg


class AwaitsCancel(Hooks):
    """Base of the mutants whose defect shows only on a cancel that reaches a
    request still in flight. A fast adapter may have answered before the
    host's cancel arrives (the reference answers a search of every repository
    in a few ms), so the reply of a search/code that ``holds`` is kept up to
    CANCEL_WAIT_S for its cancel to show up: a slow backend, which is what
    a cancel is for. ``cancelled(proxy, req)`` waits and says whether it came.
    """

    CANCEL_WAIT_S = 1.0

    def __init__(self):
        self._cancels: dict = {}
        self._lock = threading.Lock()

    def _event(self, rid) -> threading.Event:
        with self._lock:
            return self._cancels.setdefault(rid, threading.Event())

    def holds(self, req: Request) -> bool:
        return req.method == "search/code"

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest":
            rid = params_id(msg)
            if rid in proxy.requests:
                self._event(rid).set()
        return msg

    def cancelled(self, proxy, req: Request) -> bool:
        """Whether the host cancels ``req`` (waiting up to CANCEL_WAIT_S for it)."""
        return self._event(req.id).wait(self.CANCEL_WAIT_S if self.holds(req) else 0.0)


class StreamPause(Hooks):
    """Pause before forwarding stream frames of streaming searches.

    ``before(req, n)`` says how long to wait before forwarding partial number
    ``n`` (0-based) of ``req``; ``before_reply(req)`` before its final reply.
    The pump is ordered, so the pause is a silence on the whole output.
    """

    def before(self, req: Request, n: int) -> float:
        return 0.0

    def before_reply(self, req: Request) -> float:
        return 0.0

    def partial(self, proxy, req, msg):
        if req is not None and req.streaming:
            pause = self.before(req, req.partials)
            if pause > 0:
                time.sleep(pause)      # the behaviour under test: a silent adapter
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and req.method == "search/code":
            pause = self.before_reply(req)
            if pause > 0:
                time.sleep(pause)
        return msg


class SearchLock(StreamPause):
    """A streaming search holds the lock file cache_dir/LOCK_NAME from its
    arrival until its reply goes out, pausing HOLD_S (a legal pause, well
    inside the inactivity window) before that reply, so a kill after the
    first batch leaves the lock behind. A subclass calls ``take_lock`` from
    its ``request`` and says what a start over a left lock does; a lock the
    process found ``stale`` at its start is not its own to drop."""

    LOCK_NAME = "search.lock"
    HOLD_S = 1.0
    stale = False

    def before_reply(self, req):
        return self.HOLD_S

    @classmethod
    def lock(cls, proxy):
        """The lock file's pathlib.Path under the host's cache_dir, or None."""
        from pathlib import Path
        cache = proxy.init_params.get("cache_dir")
        return Path(cache) / cls.LOCK_NAME if isinstance(cache, str) else None

    def take_lock(self, proxy, req: Request) -> None:
        lock = self.lock(proxy)
        if req.method == "search/code" and req.streaming and lock is not None:
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.write_text(str(os.getpid()))

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        lock = self.lock(proxy)
        if req is not None and req.streaming and lock is not None and not self.stale:
            try:
                lock.unlink()
            except OSError:
                pass
        return msg


class LastBatch(Hooks):
    """Remember each stream's last batch (for a partial sent after the reply)."""

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state["last"] = (msg.get("params") or {}).get("items") or []
        return msg

    @staticmethod
    def late(req) -> dict:
        return {"jsonrpc": "2.0", "method": "$/partial",
                "params": {"id": req.id, "items": req.state.get("last", [])}}


class StreamedItemsInReply(Hooks):
    """A streamed search whose final result ``applies`` repeats every hit it
    streamed in that reply's items."""

    def applies(self, result: dict) -> bool:
        return True

    def partial(self, proxy, req, msg):
        if req is not None:
            req.state.setdefault("items", []).extend(hits_of(req, msg))
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None and self.applies(result):
            result["items"] = req.state.get("items", [])
        return msg


class FilesearchOnly(Hooks):
    """A forge with filename search only (legal, §2.4): the handshake declares
    code_search false and file_search true, and a content search/code (any
    query not starting with path:) is refused with a provider error, so a
    suite that sent one would show it. Subclasses call super() for the rest."""

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and not (isinstance(q, str) and q.startswith("path:")):
            proxy.error(req, "no content search on this forge", kind="provider")
            return None
        return super().request(proxy, req, msg)

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "initialize" and result is not None:
            caps = result.setdefault("capabilities", {})
            caps["code_search"], caps["file_search"] = False, True
            return msg
        return super().reply(proxy, req, msg)


class PairReplies(Hooks):
    """Hold a reply to a request ``holds`` names while ``waits(proxy, req)``
    (another such request is in flight), up to HOLD_S, so a lone request is
    never stalled for long; when the next such reply comes,
    ``pair(proxy, held, msg)`` sends one of the two and returns the other."""

    HOLD_S = 0.3

    def __init__(self):
        self.held: dict | None = None
        self.lock = threading.Lock()

    def holds(self, req: Request) -> bool:
        return True

    def waits(self, proxy, req: Request) -> bool:
        return False

    def pair(self, proxy, held: dict, msg: dict) -> dict | None:
        return msg

    def _release(self, proxy, msg):
        with self.lock:
            if self.held is not msg:
                return
            self.held = None
        proxy.send_host(msg)

    def reply(self, proxy, req, msg):
        if req is None or not self.holds(req):
            return msg
        with self.lock:
            held, self.held = self.held, None
            if held is None:
                if self.waits(proxy, req):
                    self.held = msg
                    proxy.later(self.HOLD_S, lambda: self._release(proxy, msg))
                    return None
                return msg
        return self.pair(proxy, held, msg)


class Refuse(Hooks):
    """Answer the listed methods with an error instead of asking the child."""

    def __init__(self, methods: tuple[str, ...], message: str = "unknown method '{method}'",
                 kind: str | None = None, code: int = 1, marker: str | None = None):
        self.methods, self.message, self.kind, self.code = methods, message, kind, code
        self.marker = marker

    def applies(self, req: Request) -> bool:
        return req.method in self.methods

    def request(self, proxy, req, msg):
        if not self.applies(req):
            return msg
        if self.marker:
            sys.stderr.write(f"{self.marker} {req.method} {req.params!r}\n")
            sys.stderr.flush()
        proxy.error(req, self.message.format(method=req.method), kind=self.kind, code=self.code)
        return None


class BigBlobsFromDisk(Hooks):
    """Serve blobs the reference refuses for size (over 1 MiB) from the file on
    disk, cut to ``cut`` bytes (None: whole). The file is found through the
    working-tree listings the adapter emitted (blob id -> repo, path)."""

    cut: int | None = None

    def __init__(self):
        self.paths: dict[str, tuple] = {}

    def reply(self, proxy, req, msg):
        if req is None:
            return msg
        result = result_of(msg)
        if req.method == "repo/tree" and req.params.get("ref") is None and result is not None:
            for entry in tree_blobs(result):
                self.paths[entry.get("sha")] = (req.params.get("repo"), entry.get("path"))
        elif req.method == "repo/blob" and "error" in msg and req.params.get("sha") in self.paths:
            data = read_worktree(proxy, *self.paths[req.params["sha"]])
            if data is not None and len(data) > MIB:
                data = data if self.cut is None else data[:self.cut]
                return {"jsonrpc": "2.0", "id": req.id,
                        "result": {"bytes_b64": base64.b64encode(data).decode("ascii")}}
        return msg


def read_worktree(proxy, repo: object, path: object) -> bytes | None:
    """A file's bytes from the materialized fixture (the default branch's worktree)."""
    name = repo_name(repo)
    if not name or not isinstance(path, str):
        return None
    try:
        return (proxy.fixture / name / path).read_bytes()
    except OSError:
        return None


def fixture_repos(proxy) -> set[str]:
    """Names the reference serves: the top-level directories of the fixture."""
    try:
        return {p.name for p in proxy.fixture.iterdir() if p.is_dir()}
    except OSError:
        return set()
