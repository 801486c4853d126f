"""Controls of what the protocol leaves to the adapter: legal variations of the reference that must stay green.

``TABLE`` maps each switch to its Variant (tests/adapters/controls/__init__.py
gathers the tables into CONTROLS).
"""

from __future__ import annotations

import base64
import collections
import copy
import os
import re
import sys
import threading
import zlib

from fixture.catalog import TERM_PATHONLY, VCS_DEFAULT_BRANCH
from tests.adapters.common import CommitReply, CommitterDates, HitEdit, commit_files, counted, git, header, parsed, query, with_note
from tests.adapters.controls.backend import DatesBasicFormat
from tests.adapters.hooks import BigBlobsFromDisk, BlobIds, GitIds, MIB, PairReplies, ResultEdit, StreamPause, Variant, is_git, kept_in, read_worktree, registrar, repo_name, sha256_hex
from tests.adapters.proxy import Hooks, hits_of, result_of

TABLE: dict[str, Variant] = {}
control = registrar(TABLE)
kept = kept_in(TABLE)   # deep controls (controls_deep.py) the suite passes


GAP_S = 1.5


@control("slow-streamer")
class SlowStreamer(StreamPause):
    """Every gap of a streamed search is 1.5 s: before each batch and before the final reply."""

    def before(self, req, n):
        return GAP_S

    def before_reply(self, req):
        return GAP_S


@control("serve-big-blobs")
class ServeBigBlobs(BigBlobsFromDisk):
    """Blobs over 1 MiB are served whole (the reference refuses them with kind provider)."""


@control("ignore-limit")
class IgnoreLimit(Hooks):
    """search/code ignores limit: the full set, truncated false."""

    def request(self, proxy, req, msg):
        if req.method == "search/code":
            req.params.pop("limit", None)
        return msg


@control("ignore-cancel")
class IgnoreCancel(Hooks):
    """$/cancelRequest is ignored (never reaches the adapter)."""

    def notification(self, proxy, msg):
        return None if msg.get("method") == "$/cancelRequest" else msg


@control("commit-keyed", warns=("FC-093",))
class CommitKeyed(BlobIds):
    """Blob ids at a ref are derived from (commit, path): identical bytes at two refs get different ids.

    The working tree (ref null) keeps content ids, so changed bytes still
    change the id there. FC-093 must warn "commit-keyed" and pass.
    """

    def __init__(self):
        super().__init__()
        self.commits: dict[tuple, str] = {}

    def commit_of(self, proxy, repo, ref) -> str:
        key = (repo_name(repo), ref)
        if key not in self.commits:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / key[0]), "rev-parse", "--verify",
                                  "--quiet", f"{ref}^{{commit}}"], capture_output=True, text=True)
            self.commits[key] = run.stdout.strip() or str(ref)
        return self.commits[key]

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if ref is None or not is_git(proxy, repo):
            return sha
        return sha256_hex(f"{self.commit_of(proxy, repo, ref)}:{path}".encode())


@control("out-of-order")
class OutOfOrder(PairReplies):
    """Concurrent requests are answered newest first (higher id before lower).

    While another request is in flight, a reply is held (up to HOLD_S, so a
    lone slow request is never stalled for long); when the next reply comes,
    the two go out higher id first. Each swap is logged to stderr.
    """

    HOLD_S = 0.3

    def __init__(self):
        super().__init__()
        self.swapped = 0

    def holds(self, req):
        return req.method != "initialize"

    def waits(self, proxy, req):
        return any(rid != req.id for rid in list(proxy.requests))

    def pair(self, proxy, held, msg):
        first, second = sorted((held, msg), key=lambda m: m.get("id"), reverse=True)
        proxy.send_host(first)
        self.swapped += 1
        proxy.log(f"out-of-order: reply {first.get('id')} sent before {second.get('id')} "
                  f"({self.swapped} swapped)")
        return second


@control("stderr-flood")
class StderrFlood(Hooks):
    """Writes 4 MiB to stderr at start and 64 KiB before every request."""

    def start(self, proxy):
        self._spill(4 * MIB)

    def request(self, proxy, req, msg):
        self._spill(64 * 1024)
        return msg

    @staticmethod
    def _spill(n: int) -> None:
        line = b"stderr-flood: " + b"x" * 113 + b"\n"
        out = sys.stderr.buffer
        out.write(line * (n // len(line)))
        out.flush()


EXTRA = {"x_forge_extra": {"nested": [1, "two", None], "flag": True}}


def _decorate(value, depth=0):
    """Add EXTRA to every object of a result (results, items, entries...)."""
    if isinstance(value, dict):
        for key, inner in list(value.items()):
            _decorate(inner, depth + 1)
        value.update(EXTRA)
    elif isinstance(value, list):
        for inner in value:
            _decorate(inner, depth + 1)


@control("unknown-fields")
class UnknownFields(Hooks):
    """Every result, item, error and partial carries unknown members (and an unknown capability)."""

    def reply(self, proxy, req, msg):
        msg["x_envelope_extra"] = 1
        if isinstance(msg.get("result"), dict):
            _decorate(msg["result"])
            if req is not None and req.method == "initialize":
                caps = msg["result"].get("capabilities")
                if isinstance(caps, dict):
                    caps.pop("x_forge_extra", None)
                    caps["x_future"] = "maybe"
        elif isinstance(msg.get("error"), dict):
            _decorate(msg["error"])
        return msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict):
            _decorate(params.get("items"))
            params.update(EXTRA)
        return msg


@control("git-blob-ids")
class GitBlobIds(GitIds):
    """Blob ids are git's (sha1 of "blob <len>\\0" + bytes) instead of sha256."""


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
    """repo/commit replies leave out every optional member but patch and binary (parents, counts, and truncated where it is false, its default)."""

    def edit(self, result, f):
        result.pop("parents", None)
        if result.get("truncated") is not True:   # absent says false: a cut list must say so
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


@control("error-code-zero", warns=("FC-063",))
class ErrorCodeZero(Hooks):
    """Every error carries code 0 (an integer, as MUST; not positive, as SHOULD: FC-063 warns)."""

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if isinstance(err, dict):
            err["code"] = 0
        return msg


@control("filename-hits-with-matches", warns=("FC-030",))
class FilenameHitsWithMatches(HitEdit):
    """Filename hits carry matches [<the path: text>] (a search API's path match) instead of [].

    §3.13: a path-only hit is a MAY, and "SHOULD matches are literal
    substrings of the stored file": the name's text is not in the file, so
    FC-030 warns (RULINGS "Search": a filename match MAY be path-only).
    """

    def edit(self, proxy, req, hit):
        if not hit.get("matches"):
            hit["matches"] = [TERM_PATHONLY] if TERM_PATHONLY in query(req) else []


@control("single-batch-stream")
class SingleBatchStream(Hooks):
    """Every stream is buffered and sent as one $/partial right before the final reply.

    RULINGS "Streaming": one batch carrying every hit is a legal stream
    (FC-043 warned that the window's reset went unexercised).
    """

    def partial(self, proxy, req, msg):
        if req is None:
            return msg
        req.state.setdefault("hits", []).extend(hits_of(req, msg))
        return None

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and "hits" in req.state:
            proxy.send_host({"jsonrpc": "2.0", "method": "$/partial",
                             "params": {"id": req.id, "items": req.state["hits"]}})
        return msg


@control("hit-per-matching-line")
class HitPerMatchingLine(Hooks):
    """A streamed hit is sent once per line of its file containing the match, each with that line.

    One hit per matching chunk (GitLab-style); the host folds by file. No
    SHOULD asks for the first occurrence (FC-031 warned on the others).
    """

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if req is None or not isinstance(items, list):
            return msg
        out = []
        for hit in items:
            data = read_worktree(proxy, hit.get("repo"), hit.get("path"))
            match = (hit.get("matches") or [None])[0]
            if data is None or not match or not isinstance(hit.get("line"), int):
                out.append(hit)
                continue
            out += [dict(copy.deepcopy(hit), line=n)
                    for n, line in enumerate(data.split(b"\n"), 1) if match.encode() in line]
        params["items"] = out
        return msg


@control("org-repos-basic-pushed-at", warns=("FC-112",))
class OrgReposBasicPushedAt(ResultEdit):
    """org/repos answers v1.4 objects whose pushed_at is in the ISO-8601 basic format (20260302T093000Z).

    RULINGS "Content and revisions": the basic format passes with a warning.
    """

    method = "org/repos"

    def edit(self, proxy, req, result):
        result["repos"] = [{"name": n, "pushed_at": "20260302T093000Z"} if isinstance(n, str)
                           else n for n in result.get("repos") or []]


OPAQUE = "c-"


def opaque(sha):
    return OPAQUE + sha if isinstance(sha, str) and sha and not sha.startswith(OPAQUE) else sha


def plain(sha):
    return sha[len(OPAQUE):] if isinstance(sha, str) and sha.startswith(OPAQUE) else sha


@control("opaque-commit-ids")
class OpaqueCommitIds(Hooks):
    """Every commit id is the backend's opaque spelling c-<git id> (refs, log, blame, commit sha and parents), accepted back everywhere.

    Legal: RULINGS "Content and revisions": commit ids are in the backend's
    vocabulary; any string accepted back as a ref (and as repo/commit's sha)
    that resolves to the right commit passes. git itself knows none of these
    spellings, so the suite can only resolve them through the adapter.
    """

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict):
            key = {"repo/tree": "ref", "repo/blob_at": "ref", "repo/log": "ref",
                   "repo/blame": "ref", "repo/commit": "sha"}.get(req.method)
            if key is not None:
                params[key] = plain(params.get(key))
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "repo/refs":
            rows = [*(result.get("branches") or []), *(result.get("tags") or [])]
        elif req.method in ("repo/log", "repo/blame"):
            rows = result.get("items" if req.method == "repo/log" else "ranges") or []
        elif req.method == "repo/commit":
            rows = [result]
            if isinstance(result.get("parents"), list):
                result["parents"] = [opaque(p) for p in result["parents"]]
        else:
            rows = []
        for row in rows:
            if isinstance(row, dict):
                row["sha"] = opaque(row.get("sha"))
        return msg


@control("opaque-ids-git-ids-refused")
class OpaqueIdsGitIdsRefused(OpaqueCommitIds):
    """Commit ids are opaque (c-<git id>, as opaque-commit-ids) and a hex id as a ref or as repo/commit's sha is refused with not_found (a backend whose vocabulary is not git's).

    Legal: PROTOCOL §3.7 "Every sha listed is accepted back as a ref and
    (if commit is declared) as repo/commit's sha"; §3.12 repo/commit's sha
    is "a commit id the adapter emitted"; RULINGS "Content and revisions":
    commit ids are in the backend's vocabulary, any string accepted back
    that resolves to the right commit passes. git's ids are none of this
    backend's, so refusing them is refusing an unknown ref. Branch and tag
    names are served. The commit cases (and FC-053's repo/commit) ask by
    git's ids and are not evaluated here.
    """

    HEX = re.compile(r"[0-9a-fA-F]{4,40}")

    def request(self, proxy, req, msg):
        params = msg.get("params")
        key = {"repo/tree": "ref", "repo/blob_at": "ref", "repo/log": "ref",
               "repo/blame": "ref", "repo/commit": "sha"}.get(req.method)
        value = params.get(key) if isinstance(params, dict) and key is not None else None
        if isinstance(value, str) and self.HEX.fullmatch(value):
            proxy.error(req, f"unknown revision {value}", kind="not_found")
            return None
        return super().request(proxy, req, msg)


@control("log-topo-order")
class LogTopoOrder(Hooks):
    """repo/log lists commits in topological order (git log --topo-order): the merged topic commit (Jan 17) before "Add version()" (Jan 18).

    Legal: §3.7 says "Newest first" and no more; the suite reads it as
    children before parents (FIXTURES.md "repo/log order"), which git's
    --topo-order, libgit2's GIT_SORT_TOPOLOGICAL and Bitbucket's listing
    keep: every commit is still listed before its ancestors.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/log" or result is None \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        path = req.params.get("path")
        order = git(proxy, req.params["repo"], "log", "--topo-order", "--format=%H",
                    req.params.get("ref") or VCS_DEFAULT_BRANCH,
                    *(["--", path] if isinstance(path, str) else [])).stdout.split()
        pos = {sha: i for i, sha in enumerate(order)}
        items = result.get("items")
        if isinstance(items, list) and all(isinstance(i, dict) and i.get("sha") in pos for i in items):
            result["items"] = sorted(items, key=lambda i: pos[i["sha"]])
        return msg


@control("log-full-history")
class LogFullHistory(Hooks):
    """repo/log of a path walks every line of history (git log --full-history): the merge of topic is listed in src/lib.rs's log on main.

    Legal: §3.7 lists "commits that touch that path" and says nothing of
    history simplification; the merge's tree differs there from its first
    parent (§3.12 reads a merge's changes against it), and a backend that
    walks every line lists it (FIXTURES.md "repo/log of a path across
    merges"). Limit and truncated as the reference keeps them: its default
    page and cap, one row looked past the limit.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        path = req.params.get("path") if req is not None and req.method == "repo/log" else None
        if result is None or not isinstance(path, str) or not path \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        limit = req.params.get("limit")
        n = max(1, min(limit, 99)) if isinstance(limit, int) and not isinstance(limit, bool) else 50
        out = git(proxy, req.params["repo"], "log", "--full-history", "-z",
                  "--format=%H%x1f%an%x1f%aI%x1f%s", f"-n{n + 1}",
                  req.params.get("ref") or "HEAD", "--", path)
        if out.returncode != 0:
            return msg
        items = [dict(zip(("sha", "author", "date", "subject"), r.strip("\n").split("\x1f", 3)))
                 for r in out.stdout.split("\0") if r.strip()]
        if items:
            result["items"], result["truncated"] = items[:n], len(items) > n
        return msg


OPTIONS = (("--diff-algorithm=patience", "-U1"), ("--histogram", "-U5"),
           ("--minimal", "-U0"), ("--diff-algorithm=myers", "-U2"))


def resplit(patch: str) -> str:
    """Each hunk with a removed line followed by an added one cut in two there:
    the removal, then the addition at the same place (a legal spelling)."""
    out = []
    for old, oc, new, nc, tail, body in parsed(patch):
        cut = next((k for k in range(1, len(body))
                    if body[k - 1].startswith("-") and body[k].startswith("+")), None)
        if cut is None:
            out.append(header(old, oc, new, nc, tail))
            out += body
            continue
        first, second = body[:cut], body[cut:]
        o1 = sum(1 for ln in first if ln[:1] in " -")
        n1 = sum(1 for ln in first if ln[:1] in " +")
        out.append(header(old, o1, new, n1, tail))
        out += first
        out.append(header(old + o1, oc - o1, new + n1, nc - n1))
        out += second
    return "\n".join(out)


@control("patch-other-diff-options")
class PatchOtherDiffOptions(CommitReply):
    """Patches are recomputed by git diff with another algorithm and context size per file (patience -U1, histogram -U5, minimal -U0, myers -U2), removals and additions cut into separate hunks, counts to match.

    The same first-parent change, written differently: FC-103 must not
    compare patch text with git's.
    """

    legal = ('§3.12: patch is "unified hunks" (any diff algorithm, context size or hunk '
             'split writing the first-parent change)')

    def edit(self, proxy, req, result):
        repo = req.params.get("repo")
        sha, parents = result.get("sha"), result.get("parents") or []
        if not is_git(proxy, repo) or not isinstance(sha, str):
            return
        where = str(proxy.fixture / repo_name(repo))
        import subprocess
        base = parents[0] if parents else subprocess.run(
            ["git", "-C", where, "hash-object", "-t", "tree", "--stdin"], input=b"",
            capture_output=True, text=False).stdout.decode().strip()
        for f in commit_files(result):
            if not isinstance(f.get("patch"), str) or not f["patch"] or f.get("binary"):
                continue
            paths = [p for p in (f.get("previous_path"), f.get("path")) if isinstance(p, str)]
            pick = zlib.crc32(f"{sha} {f.get('path')}".encode()) % len(OPTIONS)
            run = subprocess.run(["git", "-C", where, "diff", "--no-color", "--no-ext-diff",
                                  "--no-textconv", "-M", *OPTIONS[pick], base, sha, "--", *paths],
                                 capture_output=True)
            lines = run.stdout.decode("utf-8", "replace").split("\n")
            start = next((n for n, ln in enumerate(lines) if ln.startswith("@@")), None)
            if run.returncode != 0 or start is None:
                continue
            f["patch"] = resplit("\n".join(ln for ln in lines[start:] if ln))
            counted(f)


@control("stale-index-located-false")
class StaleIndexLocatedFalse(Hooks):
    """Hits keep the id of their file's first hit; once the file changed, they say located: false.

    A lagging search index (§3.13 located: "the adapter is aware its index is
    out of date for this particular hit"): the stale hit carries the id of
    the bytes it indexed, the reply carries index.as_of, and repo/blob of
    that id still serves those older bytes (an id names one content).
    """

    def __init__(self):
        self.indexed: dict[tuple, str] = {}    # (repo, path) -> the id at its first hit
        self.kept: dict[str, tuple] = {}       # that id -> (repo, the bytes it named)

    def request(self, proxy, req, msg):
        kept = self.kept.get(req.params.get("sha")) if req.method == "repo/blob" else None
        if kept is not None and kept[0] == req.params.get("repo"):
            proxy.reply(req, {"bytes_b64": base64.b64encode(kept[1]).decode()})
            return None
        return msg

    def _hits(self, proxy, req, msg):
        if req is None or req.method != "search/code":
            return msg
        stale = False
        for hit in hits_of(req, msg):
            key, sha = (hit.get("repo"), hit.get("path")), hit.get("sha")
            if not isinstance(sha, str) or not sha:
                continue
            if key not in self.indexed:
                data = read_worktree(proxy, *key)
                if data is not None:
                    self.indexed[key], self.kept[sha] = sha, (key[0], data)
            elif self.indexed[key] != sha:
                hit.update(sha=self.indexed[key], located=False)
                hit.pop("line", None)
                stale = True
        result = result_of(msg)
        if stale and result is not None:
            result["index"] = {"as_of": "2026-01-01T00:00:00Z"}
        return msg

    def reply(self, proxy, req, msg):
        return self._hits(proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._hits(proxy, req, msg)


@kept("blame-committer-date",
      '§3.8: "SHOULD author/date match that commit\'s author and author date as repo/log '
      'reports them": a blame date that is not the author date warns, it never fails',
      warns=("FC-098",))
class BlameCommitterDate(CommitterDates):
    """repo/blame ranges carry the committer date of their commit.

    A control, not a mutant: §3.8 makes the author date of a blame range a
    SHOULD, so FC-098 warns on the lines last changed by `eol` (CHANGELOG.md
    and notes/line-endings.txt at main, the only commit whose two dates
    differ) and fails nothing; before `eol` it could not even warn.
    """

    methods = ("repo/blame",)

    def items(self, result):
        return list(result.get("ranges") or [])


@kept("tree-budget-2000",
      '§3.3: "aggregate the backend\'s pages up to an adapter-chosen budget ... set truncated: '
      'true when (and only when) the budget cut the walk"')
class TreeBudget2000(ResultEdit):
    """Trees at ref null stop at an adapter budget of 2,000 entries and then say truncated true (wide's, the only tree that large).

    A control, not a mutant: the budget is the adapter's to choose, and a
    walk it cut says so. FC-020 lets a truncated tree leave paths out and
    FC-022 accepts the cut; nothing else may hold the missing paths against
    it.
    """

    method = "repo/tree"
    BUDGET = 2000

    def applies(self, proxy, req):
        return req.params.get("ref") is None

    def edit(self, proxy, req, result):
        entries = result.get("entries")
        if isinstance(entries, list) and len(entries) > self.BUDGET:
            result["entries"] = entries[:self.BUDGET]
            result["truncated"] = True


@kept("path-name-only",
      'RULINGS "Search": the protocol fixes the qualifiers, not matching semantics (a path: '
      'query may match file names only)')
class PathNameOnly(Hooks):
    """path: queries match the file name only, not the directories above it (path:flat finds none of wide's flat/ files).

    A control, not a mutant: how a path: query matches is the adapter's.
    FC-034 and FC-042 judge a path: query's truncated against the files whose
    path holds the text only when the reply names some of them; a reply
    that names none of them, complete, passes.
    """

    def _query(self, req) -> str | None:
        q = req.params.get("q") if req is not None and req.method == "search/code" else None
        return q[len("path:"):] if isinstance(q, str) and q.startswith("path:") else None

    def _keep(self, req, items):
        text = self._query(req)
        return [h for h in items if not isinstance(h, dict)
                or text in str(h.get("path", "")).rsplit("/", 1)[-1]]

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if self._query(req) is not None and isinstance(params, dict) \
                and isinstance(params.get("items"), list):
            params["items"] = self._keep(req, params["items"])
            if not params["items"]:
                return None   # a batch of nothing is not sent
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if self._query(req) is not None and result is not None:
            if isinstance(result.get("items"), list):
                result["items"] = self._keep(req, result["items"])
            result["truncated"] = False   # what is left is every file name holding the text
        return msg


@control("utf8-note-every-reply")
class Utf8NoteEveryReply(Hooks):
    """Every reply carries an unknown member holding non-ASCII text, validly UTF-8 encoded."""

    def reply(self, proxy, req, msg):
        if req is None or result_of(msg) is None:
            return msg
        proxy.send_host(with_note(msg, "utf-8"))
        proxy.requests.pop(req.id, None)
        return None


THROTTLE_AT = 3   # requests in flight (initialize aside) from which a new repo/blob is refused


@control("rate-limited-in-flight")
class RateLimitedInFlight(Hooks):
    """While 3 or more requests are in flight, a new repo/blob is answered at once, under its own
    id, with a rate_limited error (retry_after_s 1): a backend's concurrency cap (§6.2).
    """

    def request(self, proxy, req, msg):
        others = [r for r in list(proxy.requests.values())
                  if r.id != req.id and r.method != "initialize"]
        if req.method == "repo/blob" and len(others) >= THROTTLE_AT:
            proxy.error(req, "too many concurrent requests", kind="rate_limited", retry_after_s=1)
            return None
        return msg


@control("search-repos-org-names", warns=("FC-110",))
class SearchReposOrgNames(Hooks):
    """search/repos matches organisation names only: "alpha" answers [{"org": "alpha"}], "" answers [].

    Legal: §3.1 sets no MUST on matching ("Each item is ... else has a
    string org → an organisation"); RULINGS "Search": "search/repos matching
    is the adapter's ... a fixture repository not found by its name warns at
    most" (FC-110 warns).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/repos" and result is not None:
            query = req.params.get("query")
            result["items"] = [{"org": query}] if isinstance(query, str) and query else []
        return msg


@control("path-as-content-term")
class PathAsContentTerm(Hooks):
    """search/code reads path:<text> as an ordinary term: the literal "path:<text>" looked for in file contents (the fixture has none).

    Legal: §3.13 REF "path: counts as an ordinary term"; RULINGS "Search": "A
    path: query may be matched as an ordinary term ... zero hits for a path:
    query is never red by itself".
    """

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and isinstance(q, str):
            words = [f'"{w}"' if w.lower().startswith("path:") else w for w in q.split()]
            req.params["q"] = " ".join(words)
        return msg


def holds_files(path: str) -> bool:
    try:
        return any(e.is_file(follow_symlinks=False) for e in os.scandir(path))
    except OSError:
        return False


def proxy_org() -> str:
    return os.environ.get("FORGE_ORG") or "local"


@control("nested-ids")
class NestedIds(Hooks):
    """Every directory that directly holds files is a repository, nested ones too (<org>/alpha/src/net, <org>/wide/flat ...); every other id is refused with not_found.

    Legal: §1.1 "the adapter owns its grammar", "Ids may contain more than one
    slash"; RULINGS "Repository ids and listings": "a fixture directory may be
    served as several nested ids. A case judges the ids the adapter lists".
    A nested id serves its directory (its tree, and its clone URL, which is
    its top directory's: RULINGS, two repositories may share a clone URL).
    """

    def start(self, proxy):
        root = proxy.fixture_dir
        self.ids: list[str] = []
        for dirpath, dirnames, _files in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
            if rel != "." and holds_files(dirpath):
                self.ids.append(rel)
        self.ids.sort()
        self.faults = set()
        try:
            import json

            with open(os.path.join(root, "FAULTS.json"), encoding="utf-8") as f:
                self.faults = set(json.load(f))
        except (OSError, ValueError):
            pass

    def request(self, proxy, req, msg):
        repo = req.params.get("repo")
        if not isinstance(repo, str) or "/" not in repo:
            return msg
        org, rel = repo.split("/", 1)
        if rel in self.faults:
            return msg
        if rel not in self.ids:
            proxy.error(req, f"no repository {repo}", "not_found")
            return None
        top, _, inner = rel.partition("/")
        if inner:   # asked of the top repository, the answer narrowed to the directory
            req.state["inner"] = inner
            req.params["repo"] = f"{org}/{top}"
            if req.method in ("repo/web_url", "repo/blob_at", "repo/log", "repo/blame") \
                    and isinstance(req.params.get("path"), str):
                req.params["path"] = "/".join(p for p in (inner, req.params["path"]) if p)
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "search/repos":
            query = str(req.params.get("query") or "").lower()
            org = proxy_org()
            found = [f"{org}/{r}" for r in self.ids if query in f"{org}/{r}".lower()]
            result["items"] = [{"full_name": n} for n in found[:20]] or [{"org": org}]
        elif req.method == "org/repos":
            result["repos"] = list(self.ids)
        elif req.method == "repo/tree" and req.state.get("inner"):
            prefix = req.state["inner"] + "/"
            result["entries"] = [dict(e, path=e["path"][len(prefix):])
                                 for e in result.get("entries") or []
                                 if isinstance(e, dict) and str(e.get("path")).startswith(prefix)]
        return msg


CUT = 20   # hits a search keeps when there are more: a backend budget of its own


@control("honest-small-cut", warns=("FC-042", "FC-070"))
class HonestSmallCut(Hooks):
    """search/code keeps at most 20 hits whatever the limit, and says truncated true when it left any out (500 asked: far below a fifth of it).

    Legal: §3.13 "truncated ... true = the result set is provably incomplete"
    ("whatever chose the budget"); "SHOULD Stop scanning at about N results"
    is a SHOULD; RULINGS "Process behaviour": "a result that really is
    incomplete may stop anywhere below limit and say so; stopping far below
    limit warns" (FC-070 one-shot, FC-042 streamed).
    """

    def partial(self, proxy, req, msg):
        if req is None or req.method != "search/code":
            return msg
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if not isinstance(items, list):
            return msg
        room = CUT - req.state.get("sent", 0)
        if len(items) > room:
            req.state["cut"] = True
            params["items"] = items[:max(room, 0)]
        req.state["sent"] = req.state.get("sent", 0) + len(params["items"])
        return msg if params["items"] or not req.state.get("cut") else None

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "search/code" or result is None:
            return msg
        items = result.get("items")
        if isinstance(items, list) and len(items) > CUT:
            result["items"], req.state["cut"] = items[:CUT], True
        if req.state.get("cut"):
            result["truncated"] = True
        return msg


@control("shared-clone-url")
class SharedCloneUrl(Hooks):
    """repo/clone_url of every plain directory repository (alpha, beta, wide) answers one URL: the fixture root's path (a monorepo forge's).

    Legal: RULINGS "Repository ids and listings": "Two repositories may share
    a clone URL or a web URL (§3.9, §3.10 are silent)"; RULINGS "Content and
    revisions": for the plain-directory repositories the clone URL "must be
    a string URL or path" (only vcs is cloned).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/clone_url" and result is not None:
            repo = req.params.get("repo")
            name = repo.split("/", 1)[1] if isinstance(repo, str) and "/" in repo else ""
            if name and not os.path.exists(os.path.join(proxy.fixture_dir, name, ".git")):
                result["clone_url"] = os.path.abspath(proxy.fixture_dir)
        return msg


@control("unknown-ref-kind-provider", warns=("FC-092",))
class UnknownRefKindProvider(Hooks):
    """repo/tree of the git repository at a ref it cannot resolve is refused with kind provider (a local-folder adapter reporting every failed git command as its own failure).

    Legal: §3.3 "MUST Unknown ref → error, SHOULD kind not_found"; RULINGS
    "Strength": "Where the title says 'preferred' (FC-023, FC-092) any error
    passes and another kind warns" (FC-092: "not_found preferred").
    """

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if req is not None and req.method == "repo/tree" and isinstance(err, dict) \
                and req.params.get("ref") is not None and is_git(proxy, req.params.get("repo")):
            err["data"] = {"kind": "provider"}
        return msg


LOADED_KEEP = 1   # hits a search keeps when it reached the backend beside other requests


class InFlight(Hooks):
    """Marks each request that arrives while another is in flight: req.state["loaded"]."""

    def start(self, proxy):
        self.open: set[int] = set()   # ids asked, not answered yet (retired before the reply)

    def request(self, proxy, req, msg):
        if self.open:
            req.state["loaded"] = True
        if req.method != "initialize":
            self.open.add(req.id)
        return msg

    def reply(self, proxy, req, msg):
        if req is not None:
            self.open.discard(req.id)
        return msg


@control("partial-under-load")
class PartialUnderLoad(InFlight):
    """A search/code that arrives while another request is in flight is served partially: its first hit only, and truncated true when that left any out (a search backend that times out under load and says so, as GitHub's incomplete_results does).

    Legal: §3.13 "truncated ... true = the result set is provably incomplete"
    ("whatever chose the budget"); RULINGS "Process behaviour": "a result that
    really is incomplete may stop anywhere below limit and say so"; §7.4
    routes replies by id, and an honest cut says nothing about routing.
    """

    def keep(self, req, items: list) -> list:
        room = max(LOADED_KEEP - req.state.get("sent", 0), 0)
        if len(items) > room:
            req.state["cut"] = True
        kept = items[:room]
        req.state["sent"] = req.state.get("sent", 0) + len(kept)
        return kept

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if req is None or req.method != "search/code" or not req.state.get("loaded") \
                or not isinstance(params, dict) or not isinstance(params.get("items"), list):
            return msg
        params["items"] = self.keep(req, params["items"])
        return msg if params["items"] else None

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        result = result_of(msg)
        if req is None or req.method != "search/code" or not req.state.get("loaded") \
                or result is None:
            return msg
        if isinstance(result.get("items"), list) and result["items"]:
            result["items"] = self.keep(req, result["items"])
        if req.state.get("cut"):
            result["truncated"] = True
        return msg


LOADED_TREE_BUDGET = 2000   # entries a walk keeps when it reached the backend beside other requests


@control("tree-budget-under-load")
class TreeBudgetUnderLoad(InFlight):
    """A repo/tree that arrives while another request is in flight stops at a budget of 2,000 entries and then says truncated true (a walk paced by a backend under load; wide's is the only tree that large).

    Legal: §3.3 "aggregate the backend's pages up to an adapter-chosen
    budget ... set truncated: true when (and only when) the budget cut the
    walk": the budget is the adapter's, and may depend on the backend's
    load; §7.4 routes replies by id, and an honest cut says nothing about
    routing.
    """

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        result = result_of(msg)
        entries = result.get("entries") if result is not None else None
        if req is not None and req.method == "repo/tree" and req.state.get("loaded") \
                and isinstance(entries, list) and len(entries) > LOADED_TREE_BUDGET:
            result["entries"], result["truncated"] = entries[:LOADED_TREE_BUDGET], True
        return msg


SHORT_SUBJECT = 31   # characters of a description Perforce's `p4 changes` shows


@control("opaque-ids-short-subjects", warns=("FC-094",))
class OpaqueIdsShortSubjects(OpaqueCommitIds):
    """Commit ids are opaque (c-<git id>, as opaque-commit-ids) and repo/log subjects are cut to their first 31 characters (the short description Perforce's `p4 changes` lists).

    Legal: RULINGS "Content and revisions": commit ids are the backend's
    vocabulary, judged by the commit they resolve to; §3.7 asks a subject
    string and says nothing of its text (FC-094: "A subject other than
    git's warns"). The suite resolves these ids through the adapter's own
    log, by the commit's date.
    """

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None:
            for item in result.get("items") or []:
                if isinstance(item, dict) and isinstance(item.get("subject"), str):
                    item["subject"] = item["subject"][:SHORT_SUBJECT]
        return msg


@control("opaque-ids-basic-dates", warns=("FC-094", "FC-098", "FC-100"))
class OpaqueIdsBasicDates(OpaqueCommitIds):
    """Commit ids are opaque (c-<git id>, as opaque-commit-ids) and log, blame and commit dates are in ISO-8601's basic format (20260302T093000Z, as dates-basic-format).

    Legal: each is (RULINGS "Content and revisions": commit ids are the
    backend's vocabulary; "the basic format passes with a warning"), and so
    are both at once: the suite resolves these ids through the adapter's
    own log, by the instant its date names in either format.
    """

    def start(self, proxy):
        super().start(proxy)
        self.dates = DatesBasicFormat()

    def reply(self, proxy, req, msg):
        return self.dates.reply(proxy, req, super().reply(proxy, req, msg))
