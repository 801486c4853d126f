"""Expectations and plumbing for the case modules.

Cases compute what an adapter must answer from the bytes of the
materialized fixture (``fx.read`` / ``fx.walk``) and from git itself
(``fx.git``), never from hard-coded ids or line numbers. This module owns
that arithmetic, plus the wire plumbing several cases share:

* evidence: ``need`` and the owners it names. A case passes only when it
  compared the thing it owns; when the evidence is missing because of a
  defect another case owns (a tree listing none of the paths on disk, a
  search without hits, a reply that is not an object) it skips, saying what
  is missing and whose rule that is, and never re-judges that rule;
* tolerant readers of replies (a malformed member is judged by the case that
  owns it, every other case reads around it: RULINGS "Attribution");
* requests: trees, blobs, searches (one-shot and streaming), expected errors
  and their kinds;
* transcript views (partial frames, replies, reply-like lines);
* fixture facts: files containing a term, the 1-based lines of a term;
* git facts: paths at a ref, bytes at a ref, log, blame coalesced into ranges;
* ISO-8601 instants ("Z" included) and strict base64;
* FC-052's instruments: a canary TCP listener on 127.0.0.1 and a psutil
  sampler of the adapter tree's inet sockets.
"""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import hashlib
import json
import os
import re
import select
import socket
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import psutil

from cases.plugin import NO_FAULTS, fail, fc_assert, skip, warn
from fixture.catalog import ALPHA, BETA, VCS, WIDE
from wire import ProviderError

# ---------------------------------------------------------------- rendering


def show(value: Any, limit: int = 160) -> str:
    """A short JSON rendering of a value for expected/got evidence."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def listing(items: Iterable[Any], limit: int = 6) -> str:
    """'a, b, c (and 4 more)' for a collection of evidence items."""
    items = sorted(str(i) for i in items)
    head = ", ".join(items[:limit])
    return head + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def is_int(value: Any) -> bool:
    """A JSON integer: never a boolean, never a float."""
    return type(value) is int


# The icon names the host renders itself (PROTOCOL §2.5), exact spelling.
BUILTIN_ICONS = ("github", "gitlab", "bitbucket", "folder")


# ---------------------------------------------------------------- the fixture


def served(fx) -> dict[str, str]:
    """Repository id -> top-level directory name, for every repo the fixture serves."""
    names = [ALPHA, BETA, WIDE] + ([VCS] if fx.vcs_built else [])
    return {fx.repo(name): name for name in names}


_blobs_cache: dict[tuple[str, str], frozenset] = {}


def disk_blobs(fx, name: str) -> frozenset[str]:
    """Paths of the files of a repo on disk (vcs: its worktree, .git excluded).
    Remembered per copy: no case adds or removes files."""
    key = (str(fx.path), name)
    if key not in _blobs_cache:
        _blobs_cache[key] = frozenset(p for p, kind in fx.walk(name).items() if kind == "blob")
    return _blobs_cache[key]


def read_or_none(fx, name: str, path: str) -> bytes | None:
    try:
        return fx.read(name, path)
    except (OSError, ValueError):
        return None


def lines_with(data: bytes, term: str) -> list[int]:
    """1-based numbers of the lines containing ``term`` (lines split on \\n only)."""
    needle = term.encode("utf-8")
    return [n for n, line in enumerate(data.split(b"\n"), 1) if needle in line]


_containing_cache: dict[tuple[str, str], frozenset] = {}


def files_containing(fx, term: str) -> frozenset[tuple[str, str]]:
    """(repo id, path) of every text file of the fixture whose bytes contain ``term``.

    Binary files (with a NUL byte) are left out: adapters may skip them. The
    walk reads the files directly (thousands of them in wide): like fx.walk,
    it leaves out a git repo's .git."""
    key = (str(fx.path), term)
    if key not in _containing_cache:
        needle = term.encode("utf-8")
        found = set()
        for repo, name in served(fx).items():
            top = os.path.join(fx.path, name)
            for dirpath, dirnames, filenames in os.walk(top):
                if dirpath == top:
                    dirnames[:] = [d for d in dirnames if d != ".git"]
                for filename in filenames:
                    with open(os.path.join(dirpath, filename), "rb") as f:
                        data = f.read()
                    if needle in data and b"\0" not in data:
                        rel = os.path.relpath(os.path.join(dirpath, filename), top)
                        found.add((repo, rel.replace(os.sep, "/")))
        _containing_cache[key] = frozenset(found)
    return _containing_cache[key]


URL_HOSTILE = " #?%+"


def url_hostile(path: str) -> bool:
    return any(ch in path for ch in URL_HOSTILE)


# ---------------------------------------------------------------- base64


def b64_loose(text: Any) -> bytes | None:
    """Decode base64 the forgiving way (url-safe alphabet, whitespace, missing
    padding): for cases that judge bytes, not the encoding (FC-024 owns that)."""
    if not isinstance(text, str):
        return None
    cleaned = re.sub(r"\s+", "", text).translate(str.maketrans("-_", "+/"))
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        return None


def b64_strict_problem(text: Any) -> str | None:
    """None when ``text`` is strict standard base64 (RFC 4648 alphabet, padded,
    no whitespace), else what is wrong with it."""
    if not isinstance(text, str):
        return f"bytes_b64 is not a string ({show(text, 40)})"
    if re.search(r"\s", text):
        return "contains whitespace or line breaks"
    if re.search(r"[-_]", text):
        return "uses the URL-safe alphabet ('-' or '_')"
    if len(text) % 4:
        return f"is not padded to a multiple of 4 characters (length {len(text)})"
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"does not decode ({exc})"
    if base64.b64encode(decoded).decode("ascii") != text:
        return "is not canonical (re-encoding the decoded bytes gives different text)"
    return None


# ---------------------------------------------------------------- ISO-8601

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$")


def instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 date-time names (offsets and 'Z' honoured), or None.

    A date-time without an offset is read as UTC."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    if m.group(9):
        delta = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        tz = _dt.timezone(delta if m.group(9) == "+" else -delta)
    else:
        tz = _dt.timezone.utc
    try:
        return _dt.datetime(year, month, day, hour, minute, min(second, 59), micro, tzinfo=tz)
    except ValueError:
        return None


def epoch_instant(seconds: int | str) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(int(seconds), _dt.timezone.utc)


# ---------------------------------------------------------------- evidence

# Whose rule it is when a case's evidence is missing (the tail of a skip reason).
COVERAGE = "coverage is FC-020's"
TREE_REPLIES = "tree replies are FC-020's"
ENTRY_SHAS = "entry shas are FC-021's"
REF_TREES = "trees at a ref are FC-091's"
BLOB_REPLIES = "blob replies are FC-024's"
SEARCH_REPLIES = "one-shot search replies are FC-070's"
SEARCH_RECALL = "search recall is FC-070's"
FILE_SEARCH = "path: queries are FC-034's"
STREAMED = "streamed replies are FC-042's"
STREAMED_HITS = "streamed hits are FC-042's"
RESPAWN_SERVES = "serving after a respawn is FC-050's"


def need(evidence: Any, what: str, owner: str | None = None) -> None:
    """Skip the running case as not evaluated unless ``evidence`` is truthy.

    ``what`` says what is missing, ``owner`` whose rule that is (one of the
    constants above, or None when no case's defect explains it), e.g.
    "[FC-021] not evaluated: repo/tree of local/alpha listed none of the 25
    paths on disk (coverage is FC-020's)"."""
    if not evidence:
        skip(f"not evaluated: {what}" + (f" ({owner})" if owner else ""))


def reply_object(result: Any, what: str, owner: str | None) -> dict:
    """``result`` when it is a JSON object. Otherwise the case that owns the
    reply's shape (``owner`` None) fails, and any other case skips naming
    the owner."""
    if isinstance(result, dict):
        return result
    if owner is None:
        fail(f"{what} must answer a JSON object", expected="a result object", got=show(result))
    need(False, f"{what} answered {show(result, 60)}, not an object", owner)
    raise AssertionError("unreachable")


# ---------------------------------------------------------------- replies, read tolerantly


def entries(result: Any) -> list[dict]:
    """Tree entries that are objects with a string path."""
    raw = result.get("entries") if isinstance(result, dict) else None
    if not isinstance(raw, list):
        return []
    return [e for e in raw if isinstance(e, dict) and isinstance(e.get("path"), str)]


def by_path(result: Any) -> dict[str, dict]:
    """Tree entries by path (the first entry listing a path wins)."""
    out: dict[str, dict] = {}
    for entry in entries(result):
        out.setdefault(entry["path"], entry)
    return out


def path_types(result: Any) -> dict[str, Any]:
    """path -> type of the listed entries (ids left out)."""
    return {path: e.get("type") for path, e in by_path(result).items()}


def blob_ids(result: Any, files: set[str]) -> dict[str, str]:
    """path -> sha for the listed entries that are files on disk (their ``type``
    is FC-021's business) and carry a string sha."""
    return {path: e["sha"] for path, e in by_path(result).items()
            if path in files and isinstance(e.get("sha"), str)}


def hits(items: Any) -> list[dict]:
    """Search hits that are objects with string repo and path."""
    if not isinstance(items, list):
        return []
    return [h for h in items if isinstance(h, dict)
            and isinstance(h.get("repo"), str) and isinstance(h.get("path"), str)]


def folded(items: Any) -> set[tuple[str, str]]:
    """Hits folded by file identity (repo, path), like the host."""
    return {(h["repo"], h["path"]) for h in hits(items)}


def truncated_flag(result: Any) -> Any:
    return result.get("truncated", False) if isinstance(result, dict) else False


# ---------------------------------------------------------------- requests


def tree_what(fx, name: str, ref: str | None = None) -> str:
    return f"repo/tree of {fx.repo(name)}" + (f" at {ref}" if ref is not None else "")


def tree(adapter, fx, name: str, ref: str | None = None, *, own: bool = False) -> dict:
    """repo/tree's result. One that is not an object fails the running case
    when it ``own``s tree replies, else skips it (FC-020's; FC-091's at a ref)."""
    result = adapter.request("repo/tree", {"repo": fx.repo(name), "ref": ref})
    return reply_object(result, tree_what(fx, name, ref),
                        None if own else TREE_REPLIES if ref is None else REF_TREES)


def listed_ids(adapter, fx, name: str, files: Iterable[str] | None = None, *,
               ref: str | None = None, every: bool = False, result: dict | None = None
               ) -> dict[str, str]:
    """path -> sha of ``files`` (default: every file of the repo on disk) as
    the tree (``result``, or a fresh repo/tree) lists them.

    The running case skips when the listing gives it nothing to compare: none
    of the files (or, with ``every``, not all of them) listed with a string
    sha; listing is FC-020's (FC-091's at a ref), shas are FC-021's."""
    files = set(disk_blobs(fx, name) if files is None else files)
    if result is None:
        result = tree(adapter, fx, name, ref)
    ids = blob_ids(result, files)
    listed = set(by_path(result)) & files
    where = tree_what(fx, name, ref)
    owner = COVERAGE if ref is None else REF_TREES
    if every:
        need(listed == files, f"{where} did not list {listing(files - listed)}", owner)
        need(set(ids) == files, f"{where} listed {listing(files - set(ids))} without a string "
             f"sha", ENTRY_SHAS)
    else:
        need(listed, f"{where} listed none of the {len(files)} files on disk", owner)
        need(ids, f"{where} listed no file with a string sha", ENTRY_SHAS)
    return ids


def blob_bytes(adapter, fx, name: str, sha: str) -> bytes | None:
    """repo/blob decoded leniently (None when bytes_b64 does not decode even
    leniently). A reply that is not an object, or has no string bytes_b64,
    skips the running case (blob replies are FC-024's)."""
    what = f"repo/blob of {sha[:16]} in {fx.repo(name)}"
    result = reply_object(adapter.request("repo/blob", {"repo": fx.repo(name), "sha": sha}),
                          what, BLOB_REPLIES)
    text = result.get("bytes_b64")
    need(isinstance(text, str), f"{what} carried bytes_b64 {show(text, 40)}", BLOB_REPLIES)
    return b64_loose(text)


def serves_like(provider, adapter, fx, when: str) -> None:
    """``provider`` (a process started another way: without cache params, in a
    minimal environment, after a kill) serves repo/tree of alpha: it lists
    every path on disk that the group ``adapter`` lists. When the group
    adapter lists none, nothing can be compared (coverage is FC-020's)."""
    disk = set(fx.walk(ALPHA))
    usual = set(by_path(tree(adapter, fx, ALPHA))) & disk
    need(usual, f"{tree_what(fx, ALPHA)} listed none of the {len(disk)} paths on disk", COVERAGE)
    result = provider.request("repo/tree", {"repo": fx.repo(ALPHA), "ref": None})
    missing = usual - set(by_path(result))
    fc_assert(not missing, expected=f"the {len(usual)} paths the group adapter lists",
              got=f"missing {listing(missing)}" if isinstance(result, dict) else show(result, 60),
              why=f"{when}, the adapter must serve {tree_what(fx, ALPHA)} as usual")


def expect_error(adapter, method: str, params: dict, *, what: str) -> ProviderError:
    """Send a request that must fail; return the adapter's error.

    A result fails the running case; a host-side failure (timeout, closed
    output) propagates and the plugin reports it."""
    try:
        result = adapter.request(method, params)
    except ProviderError as err:
        if err.origin != "adapter":
            raise
        return err
    fail(f"{what} must answer an error", expected="an error reply", got=f"a result {show(result)}")
    raise AssertionError("unreachable")


def judge_kind(err: ProviderError, expected: str, *, what: str) -> None:
    """A named kind: the wrong kind fails; an absent kind passes with a warning."""
    raw = err.raw_kind
    if raw is None:
        warn(f"{what}: the error carries no data.kind ({expected!r} expected); "
             f"message {err.message!r}")
        return
    fc_assert(raw == expected, expected=f"data.kind {expected!r}",
              got=f"data.kind {show(raw)} (message {err.message!r})",
              why=f"{what} must be reported with kind {expected}")


def require_code_search(adapter) -> None:
    """Skip the running case when the adapter declares code_search false (the
    host then never sends content searches)."""
    if not adapter.caps.code_search:
        skip("needs content search and the adapter declares code_search false")


def try_request(adapter, method: str, params: dict) -> tuple[Any, ProviderError | None]:
    """(result, None) or (None, the adapter's error); host-side failures propagate."""
    try:
        return adapter.request(method, params), None
    except ProviderError as err:
        if err.origin != "adapter":
            raise
        return None, err


# ---------------------------------------------------------------- searches


@dataclass
class Search:
    """One finished search/code request and where it sits in the transcript."""
    adapter: Any
    call: Any
    result: dict
    mark: int               # transcript seq just before the request
    q: str = ""
    partial: bool = False

    @property
    def what(self) -> str:
        return f"search/code {self.q!r}" + (" (streamed)" if self.partial else "")

    @property
    def items(self) -> list:
        items = self.result.get("items")
        return items if isinstance(items, list) else []

    @property
    def batches(self) -> list[list]:
        """The batches the client routed to this request (params.items of each)."""
        return [b if isinstance(b, list) else [] for b in self.call.partials]

    @property
    def streamed(self) -> list:
        return [item for batch in self.batches for item in batch]

    def all_items(self) -> list:
        return self.items + self.streamed

    def need_hits(self) -> list[dict]:
        """The hits of a query the fixture matches (the streamed ones for a
        streamed search); the running case skips when there are none."""
        got = hits(self.streamed if self.partial else self.items)
        owner = (FILE_SEARCH if self.q.startswith("path:") else
                 STREAMED_HITS if self.partial else SEARCH_RECALL)
        need(got, f"{self.what} returned no hit although the fixture matches it", owner)
        return got

    def need_partials(self) -> list:
        """The $/partial frames between the request and its reply (whatever
        their params.id); the running case skips when there are none."""
        frames = partial_frames(self.window())
        need(frames, f"{self.what} sent no $/partial although the fixture matches it",
             STREAMED_HITS)
        return frames

    def window(self) -> list:
        """Inbound transcript entries from the request up to and including its reply."""
        out = []
        for entry in self.adapter.transcript.since(self.mark):
            if entry.direction != "in":
                continue
            out.append(entry)
            if entry.kind == "reply" and entry.id == self.call.id:
                break
        return out


def search(adapter, q: str, *, limit: int = 500, partial: bool = False,
           inactivity_s: float | None = None, on_partial: Callable[..., Any] | None = None,
           extra: dict | None = None, own: bool = False) -> Search:
    """search/code, one-shot or streaming (``partial``), with ``extra`` params
    members if given; raises ProviderError. A reply that is not an object
    fails the running case when it ``own``s that reply, else skips it
    (path: queries are FC-034's, streamed replies FC-042's, others FC-070's)."""
    params: dict = {"q": q, "limit": limit, **(extra or {})}
    if partial:
        params["partial"] = True
    mark = adapter.transcript.mark()
    kwargs: dict = {}
    if inactivity_s is not None:
        kwargs["inactivity_s"] = inactivity_s
    if on_partial is not None:
        kwargs["on_partial"] = on_partial
    call = adapter.call("search/code", params, **kwargs)
    result = call.result()
    found = Search(adapter, call, {}, mark, q, partial)
    owner = None if own else (FILE_SEARCH if q.startswith("path:") else
                              STREAMED if partial else SEARCH_REPLIES)
    found.result = reply_object(result, found.what, owner)
    return found


def partial_frames(entries_: Iterable[Any]) -> list[Any]:
    """Inbound $/partial frames, whatever their params.id (usable or not)."""
    out = []
    for e in entries_:
        if e.direction != "in":
            continue
        if e.kind == "partial" or (isinstance(e.msg, dict) and e.msg.get("method") == "$/partial"
                                   and "id" not in e.msg):
            out.append(e)
    return out


def partial_id(entry: Any) -> Any:
    """params.id of a partial frame as sent (the entry's id when the frame was cut)."""
    if isinstance(entry.msg, dict):
        params = entry.msg.get("params")
        return params.get("id") if isinstance(params, dict) else None
    return entry.id


def frame_items(entry: Any) -> list:
    """params.items of a parsed $/partial frame ([] when absent or malformed)."""
    params = entry.msg.get("params") if isinstance(entry.msg, dict) else None
    items = params.get("items") if isinstance(params, dict) else None
    return items if isinstance(items, list) else []


def reply_like(entry: Any) -> bool:
    """An inbound line that looks like a reply: an id member, or result/error."""
    if entry.direction != "in":
        return False
    if isinstance(entry.msg, dict):
        return any(k in entry.msg for k in ("id", "result", "error"))
    return entry.kind == "reply" or entry.outcome == "invalid_id"


RAW_ID = 2_000_000_053   # an id this client never issues (its counter starts at 1)


def raw_request(adapter, method: str, params: dict, envelope: dict, timeout: float) -> Any:
    """Send a request line built here, with extra top-level ``envelope`` members,
    under an id the client never issues; return the reply message, or None if
    none came within ``timeout``. Keep it to methods with small replies: the
    transcript keeps no parsed message for long frames."""
    got = threading.Event()
    found: list = []
    previous = adapter.transcript.listener

    def listen(entry: Any) -> None:
        if previous is not None:
            previous(entry)
        if entry.direction == "in" and entry.id == RAW_ID and entry.kind == "reply":
            found.append(entry)
            got.set()

    msg = {"jsonrpc": "2.0", "id": RAW_ID, "method": method, "params": params, **envelope}
    adapter.transcript.listener = listen
    try:
        adapter.send_raw(json.dumps(msg, separators=(",", ":")).encode("utf-8") + b"\n")
        got.wait(timeout)
    finally:
        adapter.transcript.listener = previous
    return found[0].msg if found else None


def wait_first_partial_or_end(call: Any, event: threading.Event, timeout: float) -> None:
    """Block until ``event`` (set by on_partial) fires or the call ends, at most ``timeout``."""
    done = threading.Thread(target=lambda: (call.wait(), event.set()), daemon=True)
    done.start()
    event.wait(timeout)


# ---------------------------------------------------------------- git (the vcs repo)


_git_cache: dict[tuple, bytes] = {}


def git_bytes(fx, *args: str) -> bytes:
    """fx.git_bytes, remembered: the vcs repo never changes during a run, and
    several cases ask git the same questions."""
    key = (str(fx.path), *args)
    if key not in _git_cache:
        _git_cache[key] = fx.git_bytes(*args)
    return _git_cache[key]


def git_text(fx, *args: str) -> str:
    return git_bytes(fx, *args).decode("utf-8", "replace")


def git_paths(fx, ref: str) -> set[str] | None:
    """Every path (files and directories) of the tree at ``ref``; None when git
    cannot resolve ``ref``."""
    try:
        out = git_text(fx, "ls-tree", "-r", "-t", "--name-only", "-z", ref)
    except RuntimeError:   # fx.git raises when git exits non-zero
        return None
    return {p for p in out.split("\0") if p}


def git_show(fx, ref: str, path: str) -> bytes:
    return git_bytes(fx, "show", f"{ref}:{path}")


def unknown_commit_id(fx) -> str:
    """A 40-hex id naming no object of the vcs repo."""
    for n in range(100):
        candidate = hashlib.sha1(f"forge-conformance: no such commit {n}".encode()).hexdigest()
        try:
            git_bytes(fx, "cat-file", "-e", candidate)
        except RuntimeError:   # fx.git raises when git exits non-zero: no such object
            return candidate
    raise RuntimeError("could not find an unused commit id")


UNKNOWN_REF = "forge-conformance-no-such-ref"


def git_refs(fx, kind: str) -> dict[str, str]:
    """Short name -> object id of every branch ("heads") or tag ("tags")."""
    out = git_text(fx, "for-each-ref", "--format=%(refname:short)%00%(objectname)", f"refs/{kind}")
    return dict(line.split("\0", 1) for line in out.splitlines() if "\0" in line)


@dataclass(frozen=True)
class GitCommit:
    sha: str
    subject: str
    author: str
    email: str
    date: _dt.datetime


def git_log(fx, ref: str, path: str | None = None) -> list[GitCommit]:
    """git log of ``ref`` (newest first), narrowed to ``path`` when given."""
    args = ["log", "--format=%H%x1f%s%x1f%an%x1f%ae%x1f%aI%x1e", ref]
    if path is not None:
        args += ["--", path]
    out = []
    for record in git_text(fx, *args).split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) == 5:
            sha, subject, author, email, date = fields
            out.append(GitCommit(sha, subject, author, email, instant(date)))
    return out


def author_matches(sent: Any, name: str, email: str) -> bool:
    """The author as git knows it: the name, or 'name <email>'."""
    return sent in (name, f"{name} <{email}>")


@dataclass(frozen=True)
class BlameRange:
    start: int
    end: int
    sha: str
    author: str
    email: str
    date: _dt.datetime


def git_blame(fx, ref: str, path: str) -> list[BlameRange]:
    """git blame of ``path`` at ``ref``, adjacent same-commit lines coalesced."""
    out = git_text(fx, "blame", "--line-porcelain", ref, "--", path)
    ranges: list[BlameRange] = []
    info: dict[str, str] = {}
    for line in out.split("\n"):
        if not line:
            continue
        if line.startswith("\t"):
            final = int(info["final"])
            sha = info["sha"]
            if ranges and ranges[-1].sha == sha and ranges[-1].end == final - 1:
                ranges[-1] = BlameRange(ranges[-1].start, final, sha, ranges[-1].author,
                                        ranges[-1].email, ranges[-1].date)
            else:
                ranges.append(BlameRange(final, final, sha, info.get("author", ""),
                                         info.get("author-mail", "").strip("<>"),
                                         epoch_instant(info.get("author-time", "0"))))
            info = {}
            continue
        head = line.split(" ")
        if not info and re.fullmatch(r"[0-9a-f]{40,64}", head[0]):
            info = {"sha": head[0], "final": head[2]}
        else:
            key, _, value = line.partition(" ")
            info[key] = value
    return ranges


# ---------------------------------------------------------------- FC-052 instruments

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")


class Canary:
    """A 127.0.0.1 TCP listener that counts every connection it is offered.

    Each connection is answered with an empty HTTP 200 so a client that does
    reach out is not left hanging. ``connections()`` also counts a connection
    still waiting in the accept queue, so a connect() that completed before
    the question is asked is never missed. Use as a context manager."""

    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.setblocking(False)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self._wake_r, self._wake_w = socket.socketpair()
        self._lock = threading.Lock()
        self._count = 0
        self._peers: list[str] = []
        self._conns: list[socket.socket] = []
        self._closed = False
        self._thread = threading.Thread(target=self._serve, name="fc052-canary", daemon=True)
        self._thread.start()

    def env(self) -> dict[str, str]:
        """The variables that advertise the canary to an adapter."""
        env = {"FORGE_CANARY_URL": self.url}
        for name in PROXY_VARIABLES:
            env[name] = env[name.lower()] = self.url
        return env

    def _serve(self) -> None:
        while True:
            ready, _, _ = select.select([self._sock, self._wake_r], [], [])
            if self._wake_r in ready:
                return
            with self._lock:
                try:
                    conn, peer = self._sock.accept()
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:
                    return
                self._count += 1
                self._peers.append(f"{peer[0]}:{peer[1]}")
                self._conns.append(conn)
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    @staticmethod
    def _answer(conn: socket.socket) -> None:
        try:
            conn.settimeout(2.0)
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def connections(self) -> int:
        """Connections accepted so far plus any still queued."""
        with self._lock:
            if self._closed:
                return self._count
            queued, _, _ = select.select([self._sock], [], [], 0)
            return self._count + (1 if queued else 0)

    def peers(self) -> list[str]:
        with self._lock:
            return list(self._peers)

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        self._thread.join(5)
        for s in [self._sock, self._wake_r, self._wake_w, *self._conns]:
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self) -> "Canary":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _socket_key(conn: Any) -> tuple:
    return (tuple(conn.laddr or ()), tuple(conn.raddr or ()), conn.status)


class SocketSampler:
    """Samples, in a thread, the inet sockets of every process that descends from
    this one and did not exist when the sampler started (the adapter tree being
    spawned). Use as a context manager around the spawn and its initialize.

    A freshly forked child holds copies of this process's sockets until it
    execs (the canary's listener among them), so sockets this process itself
    had when the sampler started are not counted against the child."""

    def __init__(self, period_s: float = 0.002) -> None:
        self.period_s = period_s
        self.seen: list[str] = []
        self.samples = 0
        self._me = psutil.Process()
        self._baseline = {p.pid for p in self._me.children(recursive=True)}
        self._inherited = {_socket_key(c) for c in self._me.net_connections(kind="inet")}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fc052-sampler", daemon=True)

    def _sample(self) -> None:
        try:
            procs = self._me.children(recursive=True)
        except psutil.Error:
            return
        for proc in procs:
            if proc.pid in self._baseline:
                continue
            try:
                conns = proc.net_connections(kind="inet")
                name = proc.name()
            except psutil.Error:
                continue
            for c in conns:
                if _socket_key(c) in self._inherited:
                    continue
                raddr = f"{c.raddr.ip}:{c.raddr.port}" if c.raddr else "-"
                text = f"pid {proc.pid} ({name}) {c.laddr.ip}:{c.laddr.port} -> {raddr} {c.status}"
                if text not in self.seen:
                    self.seen.append(text)
        self.samples += 1

    def _run(self) -> None:
        while True:
            self._sample()
            if self._stop.wait(self.period_s):
                return

    def __enter__(self) -> "SocketSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)
        self._sample()   # one last look, after initialize returned


# ---------------------------------------------------------------- misc

def faults(fx) -> dict:
    """FAULTS.json of the materialized copy (name -> {"kind", "retry_after_s"?})."""
    try:
        return json.loads((fx.path / "FAULTS.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def faults_disabled() -> bool:
    """FORGE_NO_FAULTS set: the adapter under test has no fault repos."""
    return NO_FAULTS


def unknown_blob_id() -> str:
    """A 64-hex id of bytes that are nowhere in the fixture."""
    return hashlib.sha256(b"forge-conformance: bytes that exist in no fixture file\n").hexdigest()
