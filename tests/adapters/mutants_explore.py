#!/usr/bin/env python3
"""Explore mutants: wrong only on shapes the canonical fixture lacks.

Each one passes every canonical case (the fixture has no such shape) and
breaks one MUST on a shape a drawn repository set has (fixture/drawn.py):
``python3 run --explore`` finds it, names ``owner``, and shrinks it
(tests/test_explore.py). They are kept out of the mutant matrix
(tests/adapters/mutants.py, tests/mutant.py): a canonical run must stay
green on them.

    python3 tests/adapters/mutants_explore.py <switch> <fixture-dir>
    python3 tests/adapters/mutants_explore.py --list
"""

from __future__ import annotations

import os
import sys
import threading
import time

if __name__ == "__main__":   # run as a script: the checkout's root on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))))
    from cases.kit.invocation import keep_bytecode
    keep_bytecode()   # before the hooks: started once per drawn example, their modules compile once

from tests.adapters.hooks import (MIB, HitsEdit, ResultEdit, Variant, is_git, read_worktree,  # noqa: E402
                                  registrar, repo_name, sha256_hex)
from tests.adapters.proxy import Hooks  # noqa: E402

EXPLORE: dict[str, Variant] = {}
_register = registrar(EXPLORE)

# A backend page no canonical directory reaches with one entry to spare
# (alpha's, beta's and vcs's hold fewer, wide's 1,200 and 10 entries).
PAGE = 20


# Examples tests/test_explore.py draws for a mutant with the default seed. A
# count, not a budget, so the verdict does not hang on the machine's load;
# hypothesis sizes its early draws by the count, so each mutant's is the one
# measured to find it (README "How it is proven"): one count for all, the one they
# were measured at (each is found well within it), bar a mutant measured at another.
EXAMPLES = 30


def explore(switch: str, owner: str, rule: str, examples: int = EXAMPLES):
    """Register an explore mutant: ``owner`` is the case its drawn shape fails."""
    def add(cls):
        cls.rule, cls.owner, cls.examples = rule, owner, examples
        return _register(switch, owner)(cls)
    return add


@explore("lines-splitlines", "FC-031", "§3.13: line is the real 1-based line (split on \\n only)")
class LinesSplitlines(HitsEdit):
    """Search hit lines (streamed and one-shot) are counted with str.splitlines(), so a \\r, a
    form feed or another Unicode line break before the match moves the line.

    Hides on: the canonical fixture, where no file a search term lands in has any line break
    but \\n before the term."""

    def hit(self, hit):
        if not isinstance(hit.get("line"), int) or not hit.get("matches"):
            return
        try:
            with open(os.path.join(self.proxy.fixture, repo_name(hit.get("repo")),
                                   hit.get("path", "")), "rb") as f:
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return
        needle = str(hit["matches"][0]).lower()
        for n, line in enumerate(text.splitlines(), 1):
            if needle in line.lower():
                hit["line"] = n
                return

    def reply(self, proxy, req, msg):
        result = msg.get("result")
        if req is not None and req.method == "search/code" and isinstance(result, dict):
            self._hits(result.get("items"))
        return msg

    def start(self, proxy):
        self.proxy = proxy


@explore("web-url-unescaped", "FC-114", "§3.10: url is a URL (a path's ' ', '#', '?', '%' escaped)")
class WebUrlUnescaped(ResultEdit):
    """repo/web_url returns its URL with every escape decoded: a path's space, '#', '?' and
    '%' go into the URL raw.

    Hides on: FC-114, which asks the URL of every escape-needing alpha name and checks a string
    comes back."""

    method = "repo/web_url"

    def edit(self, proxy, req, result):
        import urllib.parse
        if isinstance(result.get("url"), str):
            result["url"] = urllib.parse.unquote(result["url"])


@explore("tree-last-page-dropped", "FC-020",
         "§3.3: one entry per path (the adapter aggregates the backend's pages)")
class TreeLastPageDropped(ResultEdit):
    """repo/tree drops a directory's last backend page when it holds one entry (a directory of
    21, 41, ... entries loses its last one), with truncated false.

    Hides on: the canonical fixture, whose directories hold fewer than 21 entries or a
    multiple of 20 (wide's 1,200 and 10)."""

    method = "repo/tree"

    def edit(self, proxy, req, result):
        entries = result.get("entries")
        if not isinstance(entries, list):
            return
        children: dict[str, list[str]] = {}
        for e in entries:
            path = e.get("path") if isinstance(e, dict) else None
            if isinstance(path, str):
                children.setdefault(path.rpartition("/")[0], []).append(path)
        dropped = [max(kids) for kids in children.values()
                   if len(kids) > PAGE and len(kids) % PAGE == 1]
        if dropped:
            result["entries"] = [e for e in entries if not any(
                isinstance(e, dict) and (e.get("path") == d or str(e.get("path")).startswith(d + "/"))
                for d in dropped)]


# Entries a silently capped tree walk keeps (wide, the canonical fixture's largest tree, has
# 3,200; a drawn fan-out of 5,001 files is the one shape past it).
TREE_CAP = 5000


@explore("tree-cap-5000", "FC-020",
         "§3.3: truncated: true when (and only when) the adapter's budget cut the walk")
class TreeCap5000(ResultEdit):
    """repo/tree keeps the first 5,000 entries of a walk and drops the rest, with truncated
    false (a budget that never says so).

    Hides on: the canonical fixture, whose largest tree (wide) holds 3,200 entries."""

    method = "repo/tree"

    def edit(self, proxy, req, result):
        entries = result.get("entries")
        if isinstance(entries, list) and len(entries) > TREE_CAP:
            result["entries"] = entries[:TREE_CAP]


# A name's bytes past which the long-names mutant's backend gives up (no canonical name
# comes near it; a drawn long name is 250 to 255 bytes).
LONG_NAME = 200


@explore("long-names-dropped", "FC-020", "§3.3: one entry per path in the repository")
class LongNamesDropped(ResultEdit):
    """repo/tree leaves out every entry with a name longer than 200 bytes (a backend whose
    name column is shorter than the file system's 255), and what is under such a directory,
    with truncated false.

    Hides on: the canonical fixture, whose longest name is far below 200 bytes."""

    method = "repo/tree"

    def edit(self, proxy, req, result):
        entries = result.get("entries")
        if isinstance(entries, list):
            result["entries"] = [e for e in entries if not (
                isinstance(e, dict) and isinstance(e.get("path"), str)
                and any(len(seg.encode("utf-8")) > LONG_NAME for seg in e["path"].split("/")))]


@explore("blob-at-big-cut", "FC-096", "§3.4/§3.5: a blob above 1 MiB is refused or served whole")
class BlobAtBigCut(Hooks):
    """repo/blob_at of a file above 1 MiB serves its first 1 MiB (a raw-file download with a
    size cap) with the tree's id, at any ref, where the reference refuses it.

    Hides on: the canonical fixture, whose one blob above 1 MiB (alpha's big.bin) is asked
    through repo/blob, never repo/blob_at (vcs has none)."""

    def reply(self, proxy, req, msg):
        params = req.params if req is not None else {}
        if req is not None and req.method == "repo/blob_at" and "error" in msg:
            data = file_at(proxy, params.get("repo"), params.get("path"), params.get("ref"))
            if data is not None and len(data) > MIB:
                import base64
                return {"jsonrpc": "2.0", "id": req.id,
                        "result": {"bytes_b64": base64.b64encode(data[:MIB]).decode("ascii"),
                                   "sha": sha256_hex(data)}}
        return msg


def file_at(proxy, repo, path, ref) -> bytes | None:
    """A file's bytes at ``ref`` (null: the worktree on disk; else git's), or None."""
    if ref is None:
        return read_worktree(proxy, repo, path)
    if not isinstance(ref, str) or not isinstance(path, str) or not is_git(proxy, repo):
        return None
    import subprocess
    proc = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "cat-file", "blob",
                           f"{ref}:{path}"], capture_output=True, stdin=subprocess.DEVNULL)
    return proc.stdout if proc.returncode == 0 else None


@explore("nfd-as-nfc", "FC-020", "§3.3: paths as they are in the repository")
class NfdAsNfc(ResultEdit):
    """repo/tree serves every path normalized to NFC (a backend that normalizes names): an NFD
    file name is listed under a name the repository does not have.

    Hides on: the canonical fixture, whose one non-ASCII name is already NFC."""

    method = "repo/tree"

    def edit(self, proxy, req, result):
        import unicodedata
        for e in result.get("entries") or []:
            if isinstance(e, dict) and isinstance(e.get("path"), str):
                e["path"] = unicodedata.normalize("NFC", e["path"])


@explore("default-branch-main", "FC-020", "§3.3: ref null is the default branch")
class DefaultBranchMain(Hooks):
    """repo/tree of a git repository at ref null walks the branch named main, whatever the
    repository's default branch is (an error where there is no main).

    Hides on: the canonical vcs repository, whose default branch is main."""

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if (req is not None and req.method == "repo/tree" and isinstance(params, dict)
                and params.get("ref") is None and is_git(proxy, params.get("repo"))):
            params["ref"] = "main"
        return msg


@explore("partial-false-streams", "FC-046",
         "§5.1: $/partial only for a request that opted in (partial: true)")
class PartialFalseStreams(Hooks):
    """search/code streams whenever its params carry a partial member, false included: a
    one-shot search sent with partial false gets $/partial batches and a reply without items.

    Hides on: the canonical cases, which send partial true or leave it out."""

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if (req is not None and req.method == "search/code" and isinstance(params, dict)
                and params.get("partial") is False):
            params["partial"] = True
        return msg


@explore("stream-exact-fill-truncated", "FC-042",
         "§5.3: a streamed reply's truncated is true only when a matching file was left out")
class StreamExactFillTruncated(Hooks):
    """A streamed search whose hits exactly fill its limit ends with truncated true (the
    adapter stops at the limit without looking one hit further), although nothing was cut.

    Hides on: the canonical streams, whose limits are never exactly their number of hits."""

    def partial(self, proxy, req, msg):
        if req is not None:
            items = (msg.get("params") or {}).get("items")
            req.state["hits"] = req.state.get("hits", 0) + (len(items) if isinstance(items, list)
                                                            else 0)
        return msg

    def reply(self, proxy, req, msg):
        result = msg.get("result")
        if (req is not None and req.method == "search/code" and req.streaming
                and isinstance(result, dict) and req.state.get("hits", 0)
                and req.state.get("hits") == req.params.get("limit")):
            result["truncated"] = True
        return msg


# The requests in flight together an adapter's slot table holds (FC-120 sends
# eight: three streams and five requests).
SLOTS = 8
# A reply waits until the host has written no request for this long (slowness is legal), so a
# burst written together is all in flight when its ninth request arrives, whatever the load.
BURST_QUIET_S = 0.1


@explore("ninth-in-flight-misrouted", "FC-120",
         "§7.4: requests in flight are each answered with their own reply")
class NinthInFlightMisrouted(Hooks):
    """A request arriving while eight others are in flight takes the slot of the oldest one of
    its method in a table of eight: it is answered, under its own id, with the result that slot
    held.

    Hides on: FC-120, which has eight requests in flight at once, never nine."""

    def __init__(self):
        self.results: dict = {}
        self.written = threading.Condition()
        self.last_request = 0.0

    def request(self, proxy, req, msg):
        with self.written:
            self.last_request = time.monotonic()
        if req is not None and len(proxy.requests) > SLOTS:
            same = [i for i, r in proxy.requests.items() if i != req.id and r.method == req.method]
            if same:
                req.state["slot"] = min(same)
        return msg

    def reply(self, proxy, req, msg):
        with self.written:
            while (left := self.last_request + BURST_QUIET_S - time.monotonic()) > 0:
                self.written.wait(left)
        if req is None or "result" not in msg:
            return msg
        self.results[req.id] = msg["result"]
        slot = req.state.get("slot")
        if slot in self.results:
            msg["result"] = self.results[slot]
        return msg


@explore("cancel-scoped-error", "FC-045",
         "§5.4: a cancelled request still ends with a normal reply")
class CancelScopedError(Hooks):
    """A repo:-scoped search/code cancelled in flight is answered with an error (its scan's
    abort surfaces as a failure) instead of a result.

    Hides on: FC-045, which cancels unscoped searches only."""

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "search/code" and req.cancelled
                and str(req.params.get("q", "")).startswith("repo:")):
            return {"jsonrpc": "2.0", "id": msg.get("id"),
                    "error": {"code": 1, "message": "search aborted", "data": {"kind": "provider"}}}
        return msg


@explore("blame-unterminated-last-line", "FC-098",
         "§3.8: blame ranges cover every line of the file once")
class BlameUnterminatedLastLine(ResultEdit):
    """repo/blame at ref null counts a file's lines as its newlines: the last line of a file
    that does not end in a newline is left out of the ranges.

    Hides on: the canonical vcs repository, whose files all end in a newline."""

    method = "repo/blame"

    def edit(self, proxy, req, result):
        ranges = result.get("ranges")
        params = req.params
        if not ranges or params.get("ref") is not None or not isinstance(ranges[-1], dict):
            return
        try:
            with open(os.path.join(proxy.fixture, repo_name(params.get("repo")),
                                   str(params.get("path"))), "rb") as f:
                data = f.read()
        except OSError:
            return
        last = ranges[-1]
        if data.endswith(b"\n") or not isinstance(last.get("end_line"), int):
            return
        last["end_line"] -= 1
        if last["end_line"] < last.get("start_line", 1):
            ranges.pop()


@explore("org-repos-last-page-dropped", "FC-111",
         "§3.2: org/repos lists the org's repositories (the adapter aggregates the backend's "
         "pages)")
class OrgReposLastPageDropped(ResultEdit):
    """org/repos drops the backend's last page when it holds one repository (an org of 21,
    41, ... repositories loses its last one).

    Hides on: the canonical fixture, whose org holds fewer than 21 repositories."""

    method = "org/repos"

    def edit(self, proxy, req, result):
        repos = result.get("repos")
        if isinstance(repos, list) and len(repos) > PAGE and len(repos) % PAGE == 1:
            repos.pop()


@explore("search-repos-escaped", "FC-110",
         "§1.1: an adapter accepts back every repository id it emitted")
class SearchReposEscaped(ResultEdit):
    """search/repos lists each repository's name percent-escaped as in a backend's URL path
    (<org>/a%20b for the directory 'a b'), an id the adapter then does not accept back.

    Hides on: the canonical fixture, whose repository names need no escaping."""

    method = "search/repos"

    def edit(self, proxy, req, result):
        import urllib.parse
        for item in result.get("items") or []:
            name = item.get("full_name") if isinstance(item, dict) else None
            if isinstance(name, str) and "/" in name:
                org, rest = name.split("/", 1)
                item["full_name"] = f"{org}/{urllib.parse.quote(rest, safe='')}"


@explore("cancel-tree-error", "FC-045",
         "§5.4: a cancelled request still ends with a normal reply")
class CancelTreeError(Hooks):
    """A repo/tree cancelled in flight is answered with an error (its walk's abort surfaces
    as a failure) instead of its tree.

    Hides on: the canonical cases, which cancel in-flight searches only (FC-122's cancels name
    finished requests)."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree" and req.cancelled:
            return {"jsonrpc": "2.0", "id": msg.get("id"),
                    "error": {"code": 1, "message": "walk aborted", "data": {"kind": "provider"}}}
        return msg


@explore("cancel-git-read-error", "FC-045",
         "§5.4: a cancelled request still ends with a normal reply")
class CancelGitReadError(Hooks):
    """A repo/refs, repo/blob_at, repo/blame or repo/clone_url cancelled in flight is answered
    with an error (its backend call's abort surfaces as a failure) instead of its result.

    Hides on: the canonical cases, which cancel in-flight searches only (FC-122's cancels name
    finished requests)."""

    METHODS = ("repo/refs", "repo/blob_at", "repo/blame", "repo/clone_url")

    def reply(self, proxy, req, msg):
        if req is not None and req.method in self.METHODS and req.cancelled:
            return {"jsonrpc": "2.0", "id": msg.get("id"),
                    "error": {"code": 1, "message": "request aborted",
                              "data": {"kind": "provider"}}}
        return msg


# The one canonical fault repository of kind auth (fixture/FAULTS.json).
AUTH_FAULT_REPO = "denied"


@explore("fault-auth-by-name", "FC-060", "§6.2: a credential failure is an error of kind auth",
         examples=100)
class FaultAuthByName(Hooks):
    """A FAULTS.json repository of kind auth is answered with kind auth only when it is named
    'denied' (a backend stand-in keyed on the fixture's names); any other is answered as a
    provider failure.

    Hides on: the canonical fixture, whose one auth fault repository is 'denied'."""

    def reply(self, proxy, req, msg):
        import json
        error = msg.get("error")
        params = req.params if req is not None else {}
        data = error.get("data") if isinstance(error, dict) else None
        repo = params.get("repo") if isinstance(params, dict) else None
        if not isinstance(data, dict) or data.get("kind") != "auth" or not isinstance(repo, str):
            return msg
        name = repo_name(repo)
        try:
            with open(os.path.join(proxy.fixture, "FAULTS.json"), encoding="utf-8") as f:
                faults = json.load(f)
        except (OSError, ValueError):
            return msg
        if name in faults and name != AUTH_FAULT_REPO:
            data["kind"] = "provider"
        return msg


@explore("commit-cap-silent", "FC-103",
         "§3.12: files are the whole first-parent diff, or truncated true says the list is cut")
class CommitCapSilent(ResultEdit):
    """repo/commit of a commit touching more than 500 files lists the first 500 (a backend
    page) and says truncated false, as if that were all.

    Hides on: the canonical vcs repository, whose commits touch at most 15 files."""

    method = "repo/commit"

    def edit(self, proxy, req, result):
        if result.get("truncated") is True:
            result["truncated"] = False


@explore("merge-parents-by-date", "FC-101",
         "§3.12: parents in order, the first parent first")
class MergeParentsByDate(ResultEdit):
    """repo/commit lists a merge's parents newest first by commit date (a backend that hands
    the parents over as a set, sorted for display), not in the commit's order.

    Hides on: the canonical vcs repository, whose one merge's first parent is its newer
    parent."""

    method = "repo/commit"

    def edit(self, proxy, req, result):
        import subprocess
        parents = result.get("parents")
        if not isinstance(parents, list) or len(parents) < 2:
            return
        where = proxy.fixture / repo_name(req.params.get("repo"))
        stamps = {}
        for p in parents:
            proc = subprocess.run(["git", "-C", str(where), "log", "-1", "--format=%ct", str(p)],
                                  capture_output=True, text=True, stdin=subprocess.DEVNULL)
            stamps[p] = int(proc.stdout.strip() or 0)
        result["parents"] = sorted(parents, key=lambda p: -stamps[p])


def git_quoted(path: str) -> str:
    """``path`` as git prints it without -z (core.quotePath): in double quotes
    with C escapes when it holds a byte above 0x7f, a control character, '"'
    or '\\'; unchanged otherwise."""
    data = path.encode("utf-8", "surrogateescape")
    if not any(b >= 0x80 or b < 0x20 or b in (0x22, 0x5C, 0x7F) for b in data):
        return path
    named = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f",
             0x0D: "\\r", 0x22: '\\"', 0x5C: "\\\\"}
    out = "".join(named.get(b) or (f"\\{b:03o}" if b >= 0x80 or b < 0x20 or b == 0x7F else chr(b))
                  for b in data)
    return f'"{out}"'


@explore("commit-paths-quoted", "FC-103", "§3.12: each file's path is the path after the change")
class CommitPathsQuoted(ResultEdit):
    """repo/commit file paths (and previous paths) come as git prints them without -z: a name
    with a non-ASCII character, a control character, a quote or a backslash in double quotes
    with octal escapes ("caf\\303\\251.txt").

    Hides on: the canonical vcs repository, whose changed paths are all printable ASCII."""

    method = "repo/commit"

    def edit(self, proxy, req, result):
        for f in result.get("files") or []:
            for key in ("path", "previous_path"):
                if isinstance(f, dict) and isinstance(f.get(key), str):
                    f[key] = git_quoted(f[key])


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--list"]:
        for m in EXPLORE.values():
            print(f"{m.switch:24} fails {', '.join(sorted(m.expected)):8} {m.description}")
        sys.exit(0)
    if not args or args[0] not in EXPLORE:
        sys.stderr.write(__doc__)
        sys.exit(2)
    from tests.adapters.proxy import main
    main(EXPLORE[args[0]].hooks(), args[1:])
