"""Deep mutants: one real protocol violation each, hidden where the cases do not look first.

The mutant matrix (mutants.py) proves each case fails on the path it samples
first. ``DEEP`` holds the adversary's mutants: each breaks ONE MUST of
PROTOCOL.md on another path (another repository, ref, batch, method,
generation, process start or moment), the way an independent adapter breaks
a rule where a case does not look first. Each Variant's ``expected`` is exactly
the case that owns the broken rule per RULINGS.md and the registry; the hook
class carries ``rule`` (the section and the MUST it breaks) and its docstring
says where the defect hides (``Hides on:``).

Two owner markers stand for rules no registry case owns (no deep mutant
names either today):

- ``PENDING``: a rule whose owning case is not in the registry yet;
- ``UNOWNED``: a rule no case covers, or whose owner RULINGS does not name.

Such mutants are NOT in MUTANTS: the matrix stays green without them. A deep mutant its owner case catches exactly is promoted where it is
written: ``@promoted`` instead of ``@deep`` registers it in MUTANTS (and so
in tests/test_mutants.py) instead of DEEP. Run one with ``python3 tests/mutant_deep.py <switch> <fixture-dir>``;
``python3 tests/deep_verdicts.py`` runs the suite against all of them and
prints the verdict table.
"""

from __future__ import annotations

import base64
import os
import re

# datetime, socket and pathlib are imported where used: every test adapter
# process imports this module, few of them use any (see tests/adapters/proxy.py).

from fixture.catalog import VCS_BLAME_TWO_AUTHORS, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
from tests.adapters.hooks import (
    MIB, AwaitsCancel, BigBlobsFromDisk, BlobIds, CachedIds, EveryBranchDefault, GitIds, InitResult, KindRewrite,
    LastBatch, OneShotFirstPage, Refuse, RelistedGenuine, ResultEdit, SaltedIds, SearchLock,
    StreamedItemsInReply, Variant, fixture_repos, is_git, read_worktree, registrar, repo_name, sha256_hex)
from tests.adapters.mutants import AnswersNotifications, CanaryGet, FAULTS, UnknownParamsError, mutant
from tests.adapters.proxy import Hooks, error_data, hits_of, params_id, result_of

DEEP: dict[str, Variant] = {}
_register = registrar(DEEP)

PENDING = "FC-12x"      # a rule whose owning case is not in the registry yet
UNOWNED = "unowned"     # no case covers the rule, or RULINGS names no owner

MAIN, FEATURE = VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
BRANCH_REFS = (None, MAIN, FEATURE)   # the refs the revision cases sample first


def deep(switch: str, owner: str, rule: str):
    """Register a deep mutant: ``owner`` is the one case id it must fail,
    ``rule`` the PROTOCOL.md section and MUST it breaks."""
    def add(cls):
        cls.rule, cls.owner = rule, owner
        return _register(switch, owner)(cls)
    return add


def promoted(switch: str, owner: str, rule: str):
    """A deep mutant its owner case catches, promoted into the matrix:
    registered in MUTANTS (mutants.py imports this module at its end), its
    ``rule`` and docstring kept. It leaves DEEP."""
    def add(cls):
        cls.rule, cls.owner = rule, owner
        return mutant(switch, owner)(cls)
    return add


def hides_on(variant: Variant) -> str:
    """The docstring's "Hides on:" sentence (where the cases do not look)."""
    doc = " ".join((variant.hooks.__doc__ or "").split())
    found = re.search(r"Hides on:\s*(.*?)(?:$|(?<=\.)\s)", doc)
    return found.group(1) if found else ""


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


# ====================================================================== handshake
# FC-001..005 and FC-080 judge the group adapter's generation-1 answer; FC-005
# starts a process without cache params and only checks that it serves a tree.
# A respawn-only change would also break FC-051 (same answer every
# generation), so these hide in the no-cache-params start instead.

class NoCacheInit(InitResult):
    """Edit the initialize result only when the process got no cache params."""

    def change(self, result: dict) -> None:
        pass

    def edit(self, proxy, req, result):
        if no_cache(proxy):
            self.change(result)


@promoted("protocol-string-no-cache", "FC-001", '§2.3: adapters "MUST send integer 1"')
class ProtocolStringNoCache(NoCacheInit):
    """initialize answers protocol "1" when started without cache params.

    Hides on: the process FC-005 starts without cache_bytes/cache_dir; FC-001
    reads only the group adapter's handshake.
    """

    def change(self, result):
        result["protocol"] = "1"


@promoted("name-number-no-cache", "FC-002",
      '§2.3 name: optional string; RULINGS "a member that is present ... has its stated JSON type"')
class NameNumberNoCache(NoCacheInit):
    """initialize answers name 42 when started without cache params.

    Hides on: FC-005's start; FC-002 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["name"] = 42


@promoted("capability-string-no-cache", "FC-003", '§2.4: "MUST Capability values are JSON booleans"')
class CapabilityStringNoCache(NoCacheInit):
    """capabilities.code_search is "yes" when started without cache params.

    Hides on: FC-005's start; FC-003 reads only the group adapter's handshake.
    """

    def change(self, result):
        result.setdefault("capabilities", {})["code_search"] = "yes"


@promoted("icon-misspelled-no-cache", "FC-004",
      '§2.5: "MUST If present, icon is a string that is either one of the builtin names ... or '
      'exactly one literal character"')
class IconMisspelledNoCache(NoCacheInit):
    """icon "GitLab" when started without cache params.

    Hides on: FC-005's start; FC-004 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["icon"] = "GitLab"


@promoted("icon-private-use-no-cache", "FC-080",
      '§2.5: "MUST If present, icon is a string that is ... exactly one literal character that any '
      'terminal can display without special fonts"')
class IconPrivateUseNoCache(NoCacheInit):
    """icon "\\ue709" (a Nerd Font private-use glyph) when started without cache params.

    Hides on: FC-005's start; FC-080 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["icon"] = "\ue709"


@promoted("revision-cap-string-no-cache", "FC-099", '§2.4: "MUST Capability values are JSON booleans"')
class RevisionCapStringNoCache(NoCacheInit):
    """capabilities.blame is "true" (a string) when started without cache params.

    Hides on: FC-005's start; FC-099 reads only the group adapter's handshake.
    """

    def change(self, result):
        result.setdefault("capabilities", {})["blame"] = "true"


@promoted("no-cache-blob-fails", "FC-005",
      '§2.2: "MUST Adapters tolerate both cache fields being absent"')
class NoCacheBlobFails(Hooks):
    """Without cache params, initialize and repo/tree work but repo/blob answers an error.

    Hides on: repo/blob; FC-005 only checks that the no-cache process serves
    repo/tree of alpha.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/blob" and no_cache(proxy):
            proxy.error(req, "blob store unavailable: no cache_dir was given", kind="provider")
            return None
        return msg


# ====================================================================== content ids

class PerCallIds(BlobIds):
    """Salt working-tree blob ids of the repos ``applies`` names with the
    process's count of tree calls for that repo, from the second call on."""

    def __init__(self):
        super().__init__()
        self.calls: dict[str, int] = {}

    def applies(self, proxy, repo) -> bool:
        return False

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/tree" and ref_of(req) is None
                and result_of(msg) is not None and self.applies(proxy, req.params.get("repo"))):
            name = repo_name(req.params.get("repo"))
            self.calls[name] = self.calls.get(name, 0) + 1
            req.state["call"] = self.calls[name]
        return super().reply(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        call = req.state.get("call", 1) if where == "tree" else 1
        return sha if call == 1 else sha256_hex(f"call-{call}:{sha}".encode())


@promoted("ids-per-call-vcs", "FC-010",
      '§4: "MUST Ids are stable: the same unchanged content ... yields the same id on every call"')
class IdsPerCallVcs(PerCallIds):
    """The vcs working tree's blob ids change from the second repo/tree call of a process on.

    Hides on: the git-backed repo; FC-010 lists alpha and beta twice, never vcs.
    """

    def applies(self, proxy, repo):
        return is_git(proxy, repo)


@promoted("ids-cached-by-size", "FC-011", '§4: "MUST ... if the bytes change, the id changes"')
class IdsCachedBySize(CachedIds):
    """Working-tree blob ids are cached by (repo, path, size): a same-size rewrite keeps its id.

    Hides on: a rewrite that keeps the file's length; FC-011 appends a line,
    so the size (and the cache key) changes.
    """

    def key(self, proxy, repo, path):
        data = read_worktree(proxy, repo, path)
        return (repo_name(repo), path, -1 if data is None else len(data))


@promoted("hit-sha-cached-by-path", "FC-011", '§4: "MUST ... if the bytes change, the id changes"')
class HitShaCachedByPath(BlobIds):
    """Search hits carry the sha their (repo, path) had at the process's first hit for it.

    Hides on: search/code hits; FC-011 rewrites a file and reads only repo/tree.
    """

    def __init__(self):
        super().__init__()
        self.first: dict[tuple, str] = {}

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "hit":
            return sha
        return self.first.setdefault((repo_name(repo), path), sha)


@promoted("ids-by-basename-size-wide", "FC-012",
      '§4: "MUST NOT Share one blob id between different contents"')
class IdsByBasenameSizeWide(BlobIds):
    """wide's blob ids are keyed by (file name, size): the leaf-N.txt files of one size share one.

    Hides on: the wide repo; FC-012 compares alpha and the vcs worktree only.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref is not None or repo_name(repo) != "wide" or not isinstance(path, str):
            return sha
        data = read_worktree(proxy, repo, path)
        return sha256_hex(f"{path.rsplit('/', 1)[-1]}\0{-1 if data is None else len(data)}".encode())


@promoted("ids-salted-per-process-vcs", "FC-013",
      '§4: "MUST Ids are stable ... after the adapter is killed and respawned"')
class IdsSaltedPerProcessVcs(SaltedIds):
    """Blob ids of the git-backed repo (every ref, blob_at, hits) are salted per process.

    Hides on: vcs; FC-013 respawns and compares alpha only.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return super().fake(proxy, req, sha, repo, path, ref, where) if is_git(proxy, repo) else sha


# ====================================================================== trees and blobs

class TreeEdit(ResultEdit):
    """Edit repo/tree results for which ``applies(req)`` holds."""

    method = "repo/tree"


@promoted("wide-entry-twice", "FC-020",
      '§3.3: "MUST The walk is recursive: one entry per path ... each path exactly once"')
class WideEntryTwice(TreeEdit):
    """The directory of more than 1,000 entries lists one entry twice (backend pages overlapping).

    Hides on: wide's flat/ directory; FC-020 walks alpha, beta and vcs only.
    """

    def applies(self, proxy, req):
        return repo_name(req.params.get("repo")) == "wide"

    def edit(self, proxy, req, result):
        entries = result.get("entries") or []
        flat = [e for e in entries if isinstance(e, dict) and str(e.get("path")).startswith("flat/")]
        if len(flat) > 1000:
            entries.insert(entries.index(flat[1000]), dict(flat[999]))


@promoted("ref-tree-drops-path", "FC-020",
      '§3.3: "MUST ... one entry per path in the repository" (RULINGS: coverage is FC-020, on '
      'every repository and ref)')
class RefTreeDropsPath(TreeEdit):
    """Trees at a ref leave out README.md.

    Hides on: trees at a ref; FC-020 walks null refs only (FC-091 compares
    paths at refs, but RULINGS gives coverage on every ref to FC-020).
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        result["entries"] = [e for e in result.get("entries") or []
                             if not (isinstance(e, dict) and e.get("path") == "README.md")]


@promoted("ref-tree-entry-twice", "FC-020",
      '§3.3: "MUST ... each path exactly once" (RULINGS: on every repository and ref)')
class RefTreeEntryTwice(TreeEdit):
    """Trees at a ref list their last entry twice.

    Hides on: trees at a ref; FC-020 walks null refs, FC-091 compares sets.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        entries = result.get("entries") or []
        if entries:
            entries.append(dict(entries[-1]))


@promoted("ref-dirs-typed-dir", "FC-021",
      '§3.3 entry type: "\\"blob\\" for files, \\"tree\\" for directories"; "MUST ... with correct '
      'typing (FC-021)"')
class RefDirsTypedDir(TreeEdit):
    """Trees at a ref type directories "dir".

    Hides on: trees at a ref; FC-021 types null-ref trees only.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        for entry in result.get("entries") or []:
            if isinstance(entry, dict) and entry.get("type") == "tree":
                entry["type"] = "dir"


@promoted("wide-dir-no-sha", "FC-021",
      '§3.3 entry sha: "yes, for both types ... Directories need one too"; §3.0 "MUST Reply members '
      'marked required ... are present"')
class WideDirNoSha(TreeEdit):
    """wide's directory entries carry no sha.

    Hides on: the wide repo; FC-021 checks alpha, beta and vcs.
    """

    def applies(self, proxy, req):
        return repo_name(req.params.get("repo")) == "wide"

    def edit(self, proxy, req, result):
        for entry in result.get("entries") or []:
            if isinstance(entry, dict) and entry.get("type") == "tree":
                entry.pop("sha", None)


@promoted("wide-truncated-lie", "FC-022",
      '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class WideTruncatedLie(TreeEdit):
    """wide's tree lists every path but says truncated true.

    Hides on: FC-022 accepts any truncated-true wide tree that lists one entry.
    """

    def applies(self, proxy, req):
        return repo_name(req.params.get("repo")) == "wide"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("beta-truncated-lie", "FC-022",
      '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class BetaTruncatedLie(TreeEdit):
    """beta's (small, complete) tree says truncated true.

    Hides on: beta; FC-022 checks the small-tree rule on alpha only.
    """

    def applies(self, proxy, req):
        return repo_name(req.params.get("repo")) == "beta"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("big-blob-cut-on-retry", "FC-023", '§3.4: "MUST NOT Hang, truncate, or corrupt a large blob"')
class BigBlobCutOnRetry(BigBlobsFromDisk):
    """A >1 MiB blob is refused the first time, then served cut to 1 MiB (a half-written cache).

    Hides on: the second request of the same blob in a process; FC-023 asks once.
    """

    cut = MIB

    def __init__(self):
        super().__init__()
        self.asked: dict[str, int] = {}

    def request(self, proxy, req, msg):
        if req.method == "repo/blob":
            sha = req.params.get("sha")
            self.asked[sha] = self.asked.get(sha, 0) + 1
            req.state["nth"] = self.asked[sha]
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob" and req.state.get("nth", 1) == 1:
            return msg      # the first ask gets the reference's refusal
        return super().reply(proxy, req, msg)


class BlobText(Hooks):
    """Re-encode bytes_b64 of ``methods`` replies for which ``applies`` holds."""

    methods: tuple[str, ...] = ()

    def applies(self, proxy, req) -> bool:
        return True

    def encode(self, data: bytes) -> str:
        return base64.b64encode(data).decode("ascii")

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method in self.methods and result is not None and self.applies(proxy, req):
            text = result.get("bytes_b64")
            if isinstance(text, str):
                result["bytes_b64"] = self.encode(base64.b64decode(text))
        return msg


@promoted("blob-at-b64-wrapped", "FC-024",
      '§3.4: "MUST bytes_b64 is ... standard base64 ... no line breaks or whitespace"; §3.5 '
      '"same base64 rules as §3.4"')
class BlobAtB64Wrapped(BlobText):
    """repo/blob_at's bytes_b64 is wrapped at 76 columns (MIME style, trailing newline).

    Hides on: repo/blob_at; FC-024 checks repo/blob only, FC-096 decodes leniently.
    """

    methods = ("repo/blob_at",)

    def encode(self, data):
        return base64.encodebytes(data).decode("ascii")


@promoted("beta-b64-unpadded", "FC-024", '§3.4: "MUST bytes_b64 is ... standard base64 ..., with = padding"')
class BetaB64Unpadded(BlobText):
    """repo/blob in beta drops the = padding.

    Hides on: beta's blobs; FC-024 fetches alpha's binary, empty and URL-escaping files.
    """

    methods = ("repo/blob",)

    def applies(self, proxy, req):
        return repo_name(req.params.get("repo")) == "beta"

    def encode(self, data):
        return base64.b64encode(data).decode("ascii").rstrip("=")


@promoted("vcs-binary-as-text", "FC-024", '§3.4: "MUST Binary content is served raw — no transcoding, NUL '
      'bytes intact"')
class VcsBinaryAsText(BlobText):
    """Binary blobs of the git-backed repo (repo/blob and blob_at) are text-decoded (U+FFFD).

    Hides on: vcs's assets/logo.bin; FC-024 fetches alpha's icon.png only.
    """

    methods = ("repo/blob", "repo/blob_at")

    def applies(self, proxy, req):
        return is_git(proxy, req.params.get("repo"))

    def encode(self, data):
        if b"\0" in data:
            data = data.decode("utf-8", "replace").encode("utf-8")
        return base64.b64encode(data).decode("ascii")


class MissingRepoEmptyTree(Hooks):
    """Answer an empty tree instead of the error for a missing repository when ``applies``."""

    def applies(self, proxy, req) -> bool:
        return False

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree" and "error" in msg:
            name = repo_name(req.params.get("repo"))
            if name not in fixture_repos(proxy) and name not in FAULTS and self.applies(proxy, req):
                return {"jsonrpc": "2.0", "id": req.id,
                        "result": {"entries": [], "truncated": False, "branch": "main"}}
        return msg


@promoted("missing-repo-tree-at-ref-empty", "FC-025", '§3.3: "MUST Unknown repository → error"')
class MissingRepoTreeAtRefEmpty(MissingRepoEmptyTree):
    """repo/tree of a missing repository at a non-null ref answers an empty tree.

    Hides on: a non-null ref; FC-025 asks with ref null.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None


@promoted("missing-repo-negative-cache", "FC-025", '§3.3: "MUST Unknown repository → error"')
class MissingRepoNegativeCache(MissingRepoEmptyTree):
    """The second repo/tree of the same missing repository answers an empty tree (a negative cache).

    Hides on: the second ask; FC-025 asks once.
    """

    def __init__(self):
        self.seen: set = set()

    def applies(self, proxy, req):
        name = repo_name(req.params.get("repo"))
        again = name in self.seen
        self.seen.add(name)
        return again


# ====================================================================== search

class HitEdit(Hooks):
    """Apply ``edit(proxy, req, hit, n)`` to hits of the searches ``applies`` picks
    (``n``: the hit's index in its reply or batch)."""

    def applies(self, proxy, req) -> bool:
        return True

    def edit(self, proxy, req, hit: dict, n: int) -> None:
        pass

    def _all(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and self.applies(proxy, req):
            for n, hit in enumerate(hits_of(req, msg)):
                self.edit(proxy, req, hit, n)
        return msg

    def reply(self, proxy, req, msg):
        return self._all(proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._all(proxy, req, msg)


@promoted("pathonly-prefixed-streamed", "FC-030",
      '§3.13 hit path: "repository-relative path"; RULINGS "Types"/§3.13 path-only hit "the host '
      'must still display it"')
class PathOnlyPrefixedStreamed(HitEdit):
    """Streamed path-only hits carry a path prefixed with the repository name.

    Hides on: streamed searches; FC-030 reads one-shot searches only.
    """

    def applies(self, proxy, req):
        return req.streaming

    def edit(self, proxy, req, hit, n):
        if not hit.get("matches") and isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


@promoted("line-drift-after-first", "FC-031",
      '§3.13: "MUST line, when present, is 1-based and is the real line of the match in that blob"')
class LineDriftAfterFirst(HitEdit):
    """Every hit after the first of a reply or batch names a line that does not contain the match.

    Hides on: the k-th hit (k >= 2); FC-031's term has one hit in the whole fixture.
    """

    def edit(self, proxy, req, hit, n):
        if n == 0 or type(hit.get("line")) is not int:
            return
        data = read_worktree(proxy, hit.get("repo"), hit.get("path"))
        matches = [m for m in hit.get("matches") or [] if isinstance(m, str) and m]
        if data is None or not matches:
            return
        needle = matches[0].lower().encode("utf-8")
        lines = data.split(b"\n")
        for number, line in enumerate(lines, 1):
            if needle not in line.lower():
                hit["line"] = number
                return


@promoted("located-string-wide", "FC-032", '§3.13 located: "boolean"; "MUST located: false is tolerated"; '
      'RULINGS "Types"')
class LocatedStringWide(HitEdit):
    """Hits in the wide repo carry located "stale" (a string).

    Hides on: wide's hits (FC-044, FC-070 search them); FC-032 reads alpha's term only.
    """

    def edit(self, proxy, req, hit, n):
        if repo_name(hit.get("repo")) == "wide":
            hit["located"] = "stale"


@promoted("as-of-number-when-truncated", "FC-033", '§3.13: "MUST index.as_of, when present, is a string"')
class AsOfNumberWhenTruncated(Hooks):
    """Search replies that say truncated true carry index {"as_of": 1732838400} (a number).

    Hides on: cut searches (FC-044, FC-070 get them); FC-033's term is never cut.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and result and result.get("truncated") is True:
            result["index"] = {"as_of": 1732838400}
        return msg


@promoted("file-search-streamed-error", "FC-034",
      'RULINGS "Capability keys": declared true means served (worded for FC-099\'s keys; FC-034 '
      'applies it to file_search, which §2.4 says inherits code_search; the matrix\'s no-file-search '
      'breaks the same rule one-shot)')
class FileSearchStreamedError(Hooks):
    """path: queries answer an error when streamed (partial: true), the host's global search path.

    Hides on: streamed path: queries; FC-034 and FC-030 send them one-shot.
    """

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and req.streaming and isinstance(q, str) and "path:" in q:
            proxy.error(req, "path: is not supported on the streaming path", kind="provider")
            return None
        return msg


# ====================================================================== streaming

@promoted("partial-id-echo-later-batches", "FC-040",
      '§5.2: "MUST params.id is the opted-in request\'s id (same integer)"')
class PartialIdEchoLaterBatches(Hooks):
    """From the second batch of a stream on, each $/partial is followed by a copy with params.id + 1.

    Hides on: the second and later batches; FC-040's term streams one batch.
    """

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if req is not None and req.partials >= 1 and isinstance(params, dict) and isinstance(params.get("id"), int):
            proxy.send_host(msg)
            return dict(msg, params=dict(params, id=params["id"] + 1))
        return msg


@promoted("partial-late-1s", "FC-041", '§5.3: "MUST ... After N\'s reply there are no more partials for N"')
class PartialLate1s(LastBatch):
    """A streamed search sends its last batch again 1 s after its reply.

    Hides on: 1 s later; FC-041 watches SILENCE_S (0.5 s) after the reply.
    """

    LATE_S = 1.0

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and req.method == "search/code":
            late = self.late(req)
            proxy.later(self.LATE_S, lambda: proxy.send_host(late))
        return msg


@promoted("partial-after-truncated-reply", "FC-041",
      '§5.3: "MUST ... After N\'s reply there are no more partials for N"')
class PartialAfterTruncatedReply(LastBatch):
    """A stream cut by its limit sends one more batch right after the reply (the scan thread ran on).

    Hides on: streams cut by limit (FC-044's); FC-041's stream is never cut.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None and result.get("truncated") is True:
            proxy.send_host(msg)
            return self.late(req)
        return msg


@promoted("streamed-truncated-false-when-cut", "FC-042",
      '§5.3: "MUST Metadata-only reply: ... carries the authoritative truncated"; §3.13 truncated '
      '"true = the result set is provably incomplete"')
class StreamedTruncatedFalseWhenCut(Hooks):
    """A stream cut by its limit ends with truncated false.

    Hides on: streams cut by limit (FC-044's); FC-042's stream is complete.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.streaming and result is not None and result.get("truncated") is True:
            result["truncated"] = False
        return msg


@promoted("items-in-truncated-streamed-reply", "FC-042",
      '§5.3: "MUST Metadata-only reply: when the adapter streamed, the final reply has items: []"')
class ItemsInTruncatedStreamedReply(StreamedItemsInReply):
    """A stream cut by its limit repeats its streamed hits in the final reply.

    Hides on: streams cut by limit; FC-042's stream is complete.
    """

    def applies(self, result):
        return result.get("truncated") is True


@promoted("bad-item-in-small-batch", "FC-044",
      '§5.2: "MUST params.items is an array of the method\'s own result-item shape"')
class BadItemInSmallBatch(Hooks):
    """Every streamed batch of at most 10 items gets one malformed item (path 7).

    Hides on: small batches (alpha's 8 hits, one-hit streams); FC-044 reads
    only its own stream of wide, whose batch is large.
    """

    def partial(self, proxy, req, msg):
        items = (msg.get("params") or {}).get("items")
        if isinstance(items, list) and 0 < len(items) <= 10:
            first = items[0] if isinstance(items[0], dict) else {}
            items.append({"repo": first.get("repo", ""), "path": 7})
        return msg


@promoted("cancel-poisons-next-search", "FC-045",
      '§5.4: "MUST Ignore cancels for unknown or already-completed ids — no error"; RULINGS: after '
      '$/cancelRequest the adapter must ... stay usable')
class CancelPoisonsNextSearch(AwaitsCancel):
    """After a cancel reaches a live stream, the process's next search/code answers an error.

    Hides on: the next search; FC-045 checks only a repo/tree after the cancel.
    A stream's final reply waits up to CANCEL_WAIT_S for its cancel (AwaitsCancel).
    """

    def __init__(self):
        super().__init__()
        self.poisoned = False

    def holds(self, req):
        return req.method == "search/code" and req.streaming

    def request(self, proxy, req, msg):
        if req.method == "search/code" and self.poisoned:
            self.poisoned = False
            proxy.error(req, "scan aborted by an earlier cancel", kind="provider")
            return None
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.streaming and self.cancelled(proxy, req):
            self.poisoned = True
        return msg


@promoted("cancel-oneshot-error", "FC-045",
      'RULINGS: "After $/cancelRequest the adapter must still send a terminal reply ... An error '
      'reply after a cancel fails FC-045"; §5.4 cancel is advisory')
class CancelOneshotError(AwaitsCancel):
    """A cancelled non-streaming request (the host cancels previews) is answered with an error.

    Hides on: one-shot requests; FC-045 cancels a stream only.
    A one-shot search's reply waits up to CANCEL_WAIT_S for its cancel (AwaitsCancel).
    """

    def holds(self, req):
        return req.method == "search/code" and not req.streaming

    def reply(self, proxy, req, msg):
        if req is not None and not req.streaming and "result" in msg \
                and (req.cancelled or self.cancelled(proxy, req)):
            return {"jsonrpc": "2.0", "id": req.id,
                    "error": {"code": 1, "message": "request cancelled", "data": {"kind": "provider"}}}
        return msg


# ====================================================================== lifecycle

@promoted("stale-vcs-lock", "FC-050",
      '§7.11: "MUST Startup is cheap and idempotent"; §7.1 "MUST Adapters tolerate being killed at '
      'any instant"')
class StaleVcsLock(SearchLock):
    """A streaming search holds cache_dir/vcs.lock; a process started over a stale lock fails every vcs request.

    The search pauses HOLD_S before its final reply, so a kill after the first
    batch leaves the lock behind (as the matrix's stale-lock does).

    Hides on: the git-backed repo after the restart; FC-050's respawned
    process is asked for alpha only.
    """

    LOCK_NAME = "vcs.lock"

    def __init__(self):
        self.stale = False

    def request(self, proxy, req, msg):
        lock = self.lock(proxy)
        if req.method == "initialize":
            self.stale = lock is not None and lock.exists() and lock.read_text() != str(os.getpid())
            return msg
        if self.stale and is_git(proxy, req.params.get("repo")):
            proxy.error(req, f"{lock} exists: another process is using the repository", kind="provider")
            return None
        self.take_lock(proxy, req)
        return msg


@promoted("caps-change-after-cache-write", "FC-051",
      '§7.11: "MUST Startup is cheap and idempotent: ... must give the same answer every time"')
class CapsChangeAfterCacheWrite(InitResult):
    """Once a request has written to cache_dir, later initializes flip capabilities.orgs.

    Hides on: a respawn after real work; FC-051 respawns twice without a request in between.
    """

    def marker(self, proxy):
        cache = proxy.init_params.get("cache_dir")
        from pathlib import Path
        return Path(cache) / "served" if isinstance(cache, str) else None

    def request(self, proxy, req, msg):
        marker = self.marker(proxy)
        if req.method != "initialize" and marker is not None and not marker.exists():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text("1")
        return msg

    def edit(self, proxy, req, result):
        marker = self.marker(proxy)
        if marker is not None and marker.exists():
            caps = result.setdefault("capabilities", {})
            caps["orgs"] = not caps.get("orgs", True)


@deep("network-on-reinitialize", "FC-052",
      '§2.1: "MUST NOT Perform network I/O or credential lookups while answering initialize"')
class NetworkOnReinitialize(Hooks):
    """A respawned generation's initialize (id != 1) opens a TCP connection to a loopback test double first.

    Hides on: a respawned generation; FC-052 samples one first start only.
    """

    def request(self, proxy, req, msg):
        import socket
        if req.method == "initialize" and req.id != 1:
            with socket.socket() as server:
                server.bind(("127.0.0.1", 0))
                server.listen(1)
                with socket.create_connection(server.getsockname(), timeout=2):
                    server.accept()[0].close()
        return msg


@promoted("canary-get-on-respawn", "FC-052",
          '§2.1: "MUST NOT Perform network I/O or credential lookups while answering initialize"')
class CanaryGetOnRespawn(CanaryGet):
    """A respawned generation's initialize (id != 1: not the process's first start) makes an HTTP GET to FORGE_CANARY_URL before answering.

    Hides on: the first start, which FC-052 judges first.
    """

    def request(self, proxy, req, msg):
        return msg if req.id == 1 else super().request(proxy, req, msg)


PROBED_BY_FC053 = ("repo/tree", "repo/blob", "repo/web_url", "repo/clone_url")


@promoted("unknown-params-error-unprobed", "FC-053",
      '§3.0: "MUST params members not listed for a method are ignored"; §7.2 reader tolerance')
class UnknownParamsErrorUnprobed(UnknownParamsError):
    """Unknown params (or envelope members) answer an error on every method FC-053 does not probe.

    Hides on: initialize, search/repos, org/*, repo/refs, log, blame, blob_at,
    commit and streamed search/code; FC-053 probes tree, blob, web_url,
    clone_url and one-shot search.
    """

    def request(self, proxy, req, msg):
        probed = req.method in PROBED_BY_FC053 or (req.method == "search/code" and not req.streaming)
        return msg if probed else super().request(proxy, req, msg)


@promoted("answers-array-params-notification", "FC-054",
          '§1.2: "MUST Notifications (messages with no id) are never answered"')
class AnswersArrayParamsNotification(AnswersNotifications):
    """Only a notification whose params is an array is answered {"id": null, "error": method not found}.

    Hides on: $/progress, window/logMessage and the cancel for an id never issued, which FC-054 sends first.
    """

    def notification(self, proxy, msg):
        return super().notification(proxy, msg) if isinstance(msg.get("params"), list) else msg


@deep("notification-answered-late", "FC-054", '§1.2: "MUST Notifications (messages with no id) are never answered"')
class NotificationAnsweredLate(Hooks):
    """Unknown notifications are answered {"id": null, "error": ...} 1 s later.

    Hides on: after FC-054's SILENCE_S (0.5 s) window and its follow-up tree.
    """

    LATE_S = 1.0

    def notification(self, proxy, msg):
        if msg.get("method") != "$/cancelRequest":
            answer = {"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32601, "message": f"method not found: {msg.get('method')}"}}
            proxy.later(self.LATE_S, lambda: proxy.send_host(answer))
        return msg


# ====================================================================== errors

class KindRewriteOffTree(KindRewrite):
    """A KindRewrite for every method but repo/tree (the one the kind cases ask)."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree":
            return msg
        return super().reply(proxy, req, msg)


@promoted("auth-as-provider-off-tree", "FC-060",
      'RULINGS "Strength": a case whose title names a kind (FC-060) fails on a different kind; '
      '§6.2 auth is for "missing, expired or insufficient credentials"; README: every request '
      'naming denied must fail with kind auth')
class AuthAsProviderOffTree(KindRewriteOffTree):
    """Credential failures of every method but repo/tree are kind "provider".

    Hides on: repo/blob, search, log... of the denied repo; FC-060 asks repo/tree only.
    """

    def __init__(self):
        super().__init__("auth", "provider")


@promoted("throttle-as-network-off-tree", "FC-061",
      'RULINGS "Strength": a case whose title names a kind (FC-061) fails on a different kind; '
      '§6.2 rate_limited is for "backend throttling"; README: every request naming throttled must '
      'fail with kind rate_limited')
class ThrottleAsNetworkOffTree(KindRewriteOffTree):
    """Throttling of every method but repo/tree is kind "network".

    Hides on: other methods on the throttled repo; FC-061 asks repo/tree only.
    """

    def __init__(self):
        super().__init__("rate_limited", "network")


@promoted("retry-after-float", "FC-063",
      '§6.3: "MUST If sent, it is a non-negative JSON integer number of seconds" (RULINGS: error shape '
      'incl. retry_after_s is FC-063\'s)')
class RetryAfterFloat(Hooks):
    """retry_after_s is sent as 37.0 (a float; the host ignores it).

    Hides on: the throttled fault, which FC-063 does not provoke (FC-061 only warns).
    """

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if data is not None and type(data.get("retry_after_s")) is int:
            data["retry_after_s"] = float(data["retry_after_s"])
        return msg


@promoted("vcs-blob-notfound-as-provider", "FC-062", '§3.4: "MUST Unknown repository or id → error, SHOULD '
      'kind not_found" (RULINGS: a case whose title names a kind fails on a different kind)')
class VcsBlobNotFoundAsProvider(KindRewrite):
    """repo/blob of an unknown id in the git-backed repo answers kind "provider" (git cat-file failed).

    Hides on: vcs; FC-062 asks alpha and a missing repo.
    """

    def __init__(self):
        super().__init__("not_found", "provider", methods=("repo/blob",))

    def reply(self, proxy, req, msg):
        if req is None or not is_git(proxy, req.params.get("repo")):
            return msg
        return super().reply(proxy, req, msg)


@promoted("missing-repo-kind-provider-revisions", "FC-062",
      '§6.2 not_found "unknown repository, blob id, path, ref, commit" (RULINGS: a case whose title '
      'names a kind fails on a different kind; FC-062 "not_found for missing repo/blob")')
class MissingRepoKindProviderRevisions(Hooks):
    """A missing repository asked through refs, log, blame, clone_url or web_url is kind "provider".

    Hides on: methods other than tree and blob; FC-063 provokes these errors
    but judges their shape only.
    """

    METHODS = ("repo/refs", "repo/log", "repo/blame", "repo/clone_url", "repo/web_url")

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if (req is not None and req.method in self.METHODS and data is not None
                and data.get("kind") == "not_found"
                and repo_name(req.params.get("repo")) not in fixture_repos(proxy)):
            data["kind"] = "provider"
        return msg


@promoted("ref-error-data-string", "FC-063",
      '§6.1: error.data "optional object" (RULINGS: error shape, data an object, is FC-063\'s)')
class RefErrorDataString(Hooks):
    """Errors of requests carrying a non-null ref have data "not_found" (a string, not an object).

    Hides on: ref errors (FC-092, FC-097 provoke them, and only warn on a
    kindless error); FC-063 asks no request with a ref.
    """

    def reply(self, proxy, req, msg):
        data = error_data(msg)
        if req is not None and ref_of(req) is not None and data is not None:
            msg["error"]["data"] = str(data.get("kind"))
        return msg


@promoted("fault-empty-message", "FC-063", '§6.1: "MUST error.message be a human-readable string" '
      '(RULINGS: message a non-empty string, FC-063)')
class FaultEmptyMessage(Hooks):
    """Errors of the denied and throttled fault repos have an empty message.

    Hides on: the auth and rate-limit faults; FC-063 provokes only the broken fault.
    """

    def reply(self, proxy, req, msg):
        if (req is not None and isinstance(msg.get("error"), dict)
                and repo_name(req.params.get("repo")) in ("denied", "throttled")):
            msg["error"]["message"] = ""
        return msg


# ====================================================================== bounded compute

@promoted("scoped-search-one-page", "FC-070",
      'RULINGS "Bounded compute": what fails is ... a cut without truncated: true; §3.13 truncated '
      '"true = the result set is provably incomplete"')
class ScopedSearchOnePage(OneShotFirstPage):
    """One-shot repo:-scoped searches return only the first 100 hits (one page) without truncated.

    Hides on: repo: qualified searches; FC-070 searches unscoped.
    """

    def applies(self, proxy, req):
        q = req.params.get("q")
        return not req.streaming and isinstance(q, str) and "repo:" in q


# ====================================================================== revisions

@promoted("refs-defaults-from-second-call", "FC-090", '§3.6: "MUST default: true marks at most one branch"')
class RefsDefaultsFromSecondCall(EveryBranchDefault):
    """From the second repo/refs call of a process on, every branch is marked default.

    Hides on: later calls (FC-091 reads refs again); FC-090 reads the first.
    """

    def __init__(self):
        self.calls = 0

    def edit(self, proxy, req, result):
        self.calls += 1
        if self.calls > 1:
            super().edit(proxy, req, result)


@promoted("short-hex-unknown-ref-default", "FC-092", '§3.3: "MUST Unknown ref → error"')
class ShortHexUnknownRefDefault(Hooks):
    """repo/tree at an unresolvable short hex ref (7-12 digits) serves the default branch.

    Hides on: abbreviated-looking refs; FC-092 asks a name and a 40-hex id.
    """

    SHORT_HEX = re.compile(r"[0-9a-f]{7,12}")

    def reply(self, proxy, req, msg):
        ref = ref_of(req)
        if (req is None or req.method != "repo/tree" or "error" not in msg or not isinstance(ref, str)
                or not self.SHORT_HEX.fullmatch(ref)):
            return msg

        def fallback(answer: dict) -> None:
            proxy.send_host({"jsonrpc": "2.0", "id": req.id, "result": answer["result"]}
                            if "result" in answer else msg)

        proxy.call_child("repo/tree", {"repo": req.params.get("repo"), "ref": None}, fallback)
        return None


@promoted("tag-ids-from-main", "FC-093",
      '§4: "MUST (one-directional change rule) If a path\'s bytes differ between two refs, the ids ... '
      'differ"')
class TagIdsFromMain(RelistedGenuine):
    """Trees at tags report main's id for every path main has; repo/blob resolves an id by the latest tree that listed it.

    Hides on: tags (v0.1 differs from main in most files); FC-093 compares
    main and feature only. Bytes stay right when fetched after their own tree.
    """

    def __init__(self):
        super().__init__()
        self.main_ids: dict[str, str | None] = {}

    def main_id(self, proxy, repo, path) -> str | None:
        if path not in self.main_ids:
            import subprocess
            run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "show",
                                  f"{MAIN}:{path}"], capture_output=True)
            self.main_ids[path] = sha256_hex(run.stdout) if run.returncode == 0 else None
        return self.main_ids[path]

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref in BRANCH_REFS or not is_git(proxy, repo):
            return sha
        tags = set(git_lines(proxy, repo, "tag", "--list"))
        return (self.main_id(proxy, repo, path) or sha) if ref in tags else sha


class LogEdit(ResultEdit):
    """Edit repo/log results for which ``applies`` holds."""

    method = "repo/log"


@promoted("log-path-at-ref-oldest-first", "FC-094", '§3.7: "MUST Newest first"')
class LogPathAtRefOldestFirst(LogEdit):
    """repo/log with a path filter at a non-null ref lists oldest first.

    Hides on: path + ref; FC-094 asks with ref null.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None and req.params.get("path") is not None

    def edit(self, proxy, req, result):
        result["items"] = list(reversed(result.get("items") or []))


@promoted("log-unfiltered-dates-not-iso", "FC-094", '§3.7: "MUST date is ISO-8601"')
class LogUnfilteredDatesNotIso(LogEdit):
    """The unfiltered log (path null) gives dates in git's default format ("Tue Mar 3 09:30:00 2026 +0100").

    Hides on: the unfiltered log; FC-094 parses the dates of the filtered one only.
    """

    def applies(self, proxy, req):
        return req.params.get("path") is None

    def edit(self, proxy, req, result):
        import datetime as _dt
        for item in result.get("items") or []:
            try:
                when = _dt.datetime.fromisoformat(str(item.get("date")).replace("Z", "+00:00"))
            except ValueError:
                continue
            item["date"] = when.strftime("%a %b %-d %H:%M:%S %Y %z")


@promoted("log-at-ref-item-no-author", "FC-094",
      '§3.7 item "(all four required strings)"; §3.0 "MUST Reply members marked required ... are present"')
class LogAtRefItemNoAuthor(LogEdit):
    """repo/log at a non-null ref leaves author out of every item.

    Hides on: logs at a ref; every log the suite asks has ref null.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        for item in result.get("items") or []:
            if isinstance(item, dict):
                item.pop("author", None)


@promoted("log-limit-ignored-unfiltered", "FC-095",
      '§3.7: "MUST (per FC-095) limit ... cut the list off near N items and flag truncated: true"')
class LogLimitIgnoredUnfiltered(Hooks):
    """repo/log ignores limit when no path is given.

    Hides on: the unfiltered log; FC-095 asks with a path.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/log" and req.params.get("path") is None:
            req.params["limit"] = None
        return msg


@promoted("log-limit-no-truncated-at-ref", "FC-095",
      '§3.7: "MUST (per FC-095) limit ... cut the list off near N items and flag truncated: true '
      'whenever further matching commits are known to exist"')
class LogLimitNoTruncatedAtRef(LogEdit):
    """repo/log at a non-null ref honours limit but never says truncated.

    Hides on: logs at a ref; FC-095 asks with ref null.
    """

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        result.pop("truncated", None)


class BlobAtGitShaWhere(GitIds):
    """blob_at reports git's blob id (trees keep sha256 ids) for the refs ``applies`` picks."""

    def applies(self, proxy, ref) -> bool:
        return False

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "blob_at" or not self.applies(proxy, ref):
            return sha
        return super().fake(proxy, req, sha, repo, path, ref, where)


@promoted("blob-at-tag-git-sha", "FC-096",
      '§3.5: "MUST sha equals the sha the same path has in repo/tree at the same ref"')
class BlobAtTagGitSha(BlobAtGitShaWhere):
    """repo/blob_at at refs other than main/feature (tags, commit ids) reports git's blob id.

    Hides on: tags and commit ids; FC-096 asks at main and feature.
    """

    def applies(self, proxy, ref):
        return ref not in BRANCH_REFS


@promoted("blob-at-second-ref-git-sha", "FC-096",
      '§3.5: "MUST sha equals the sha the same path has in repo/tree at the same ref"')
class BlobAtSecondRefGitSha(BlobAtGitShaWhere):
    """repo/blob_at at feature (the second branch FC-096 asks) reports git's blob id.

    Hides on: the second ref of FC-096's loop, the brief's example; FC-096
    does walk both branches, so this one is a positive check of the verdict table.
    """

    def applies(self, proxy, ref):
        return ref == FEATURE


@promoted("blob-at-unknown-path-null-ref-empty", "FC-097", '§3.5: "MUST Unknown path or unknown ref → error"')
class BlobAtUnknownPathNullRefEmpty(Hooks):
    """repo/blob_at of an unknown path with ref null answers empty bytes.

    Hides on: ref null (the worktree read path); FC-097 asks unknown paths at main.
    """

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/blob_at" and "error" in msg and ref_of(req) is None
                and repo_name(req.params.get("repo")) in fixture_repos(proxy)):
            return {"jsonrpc": "2.0", "id": req.id, "result": {"bytes_b64": "", "sha": sha256_hex(b"")}}
        return msg


@promoted("blame-uncoalesced-other-files", "FC-098",
      '§3.8: "MUST Adjacent ranges attributed to the same commit are coalesced into one range"')
class BlameUncoalescedOtherFiles(Hooks):
    """repo/blame splits every range into one range per line, except for src/parse.rs.

    Hides on: every other file; FC-098 (and FC-099's probe) blame src/parse.rs only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/blame" and result is not None
                and req.params.get("path") != VCS_BLAME_TWO_AUTHORS):
            split = []
            for rng in result.get("ranges") or []:
                start, end = rng.get("start_line"), rng.get("end_line")
                if type(start) is int and type(end) is int:
                    split += [dict(rng, start_line=n, end_line=n) for n in range(start, end + 1)]
                else:
                    split.append(rng)
            result["ranges"] = split
        return msg


@promoted("blob-at-unimplemented", "FC-099",
      '§2.4: log governs "repo/log ... and its companion repo/blob_at"; RULINGS: FC-099 owns declared '
      'true means served')
class BlobAtUnimplemented(Refuse):
    """Declares log true but answers repo/blob_at "unknown method".

    Hides on: the log capability's companion method; FC-099 probes repo/log only.
    """

    def __init__(self):
        super().__init__(("repo/blob_at",))


@promoted("commit-tips-only", "FC-099",
      '§3.12: params sha "a commit id the adapter emitted (from repo/log, repo/blame, repo/refs)"; '
      '§3.7 "MUST Every sha listed is accepted back ... as repo/commit\'s sha"')
class CommitTipsOnly(Hooks):
    """repo/commit answers not_found for every commit that is not a branch or tag tip.

    Hides on: older commits; FC-099 asks for main's tip only (no other case reads repo/commit).
    """

    def request(self, proxy, req, msg):
        if req.method != "repo/commit":
            return msg
        repo = req.params.get("repo")
        tips = set(git_lines(proxy, repo, "for-each-ref", "--format=%(objectname)%0a%(*objectname)",
                             "refs/heads", "refs/tags"))
        if req.params.get("sha") not in tips and is_git(proxy, repo):
            proxy.error(req, f"no commit {req.params.get('sha')!r}", kind="not_found")
            return None
        return msg


@promoted("log-shas-not-refs", "FC-132", '§3.7: "MUST Every sha listed is accepted back as a ref"')
class LogShasNotRefs(Hooks):
    """A full commit id that is not a branch or tag tip is refused as a ref (tree, blob_at, blame, log).

    Hides on: commit ids from repo/log that are no tip; FC-091 uses the refs' tips only
    (FC-132 asks them back).
    """

    METHODS = ("repo/tree", "repo/blob_at", "repo/blame", "repo/log")

    def request(self, proxy, req, msg):
        ref = ref_of(req)
        if req.method not in self.METHODS or not isinstance(ref, str) or not re.fullmatch(r"[0-9a-f]{40}", ref):
            return msg
        repo = req.params.get("repo")
        tips = set(git_lines(proxy, repo, "for-each-ref", "--format=%(objectname)%0a%(*objectname)",
                             "refs/heads", "refs/tags"))
        if ref not in tips:
            proxy.error(req, f"no ref {ref!r}", kind="not_found")
            return None
        return msg


@promoted("tree-at-commit-id-serves-default", "FC-132",
          '§3.3: "ref ... a branch, tag or commit id"; §9: "MUST the shas repo/log lists are accepted '
          'back as refs"')
class TreeAtCommitIdServesDefault(Hooks):
    """repo/tree at a full commit id that is no branch or tag tip serves the default branch's tree.

    Hides on: trees at commit ids of older commits; the tree cases ask branch
    and tag names, and blob_at at those ids stays right.
    """

    def request(self, proxy, req, msg):
        ref = ref_of(req)
        if req.method != "repo/tree" or not isinstance(ref, str) or not re.fullmatch(r"[0-9a-f]{40}", ref):
            return msg
        repo = req.params.get("repo")
        tips = set(git_lines(proxy, repo, "for-each-ref", "--format=%(objectname)%0a%(*objectname)",
                             "refs/heads", "refs/tags"))
        if ref in tips or ref not in set(git_lines(proxy, repo, "rev-list", "--all")):
            return msg
        return dict(msg, params=dict(msg["params"], ref=None))


@promoted("commit-id-tree-drops-readme", "FC-132",
          '§3.7: "MUST Every sha listed is accepted back as a ref"; §3.3: "one entry per path"')
class CommitIdTreeDropsReadme(TreeEdit):
    """Trees at a full commit id leave out README.md (a path every commit has).

    Hides on: trees at commit ids; FC-020 sweeps branch and tag names, and the
    path does not tell one commit from another.
    """

    def applies(self, proxy, req):
        ref = ref_of(req)
        return isinstance(ref, str) and re.fullmatch(r"[0-9a-f]{40}", ref) is not None

    def edit(self, proxy, req, result):
        result["entries"] = [e for e in result.get("entries") or []
                             if not (isinstance(e, dict) and e.get("path") == "README.md")]


# ====================================================================== frames

@promoted("banner-on-stdout", "FC-123", '§7.2: "MUST NOT Adapters write anything except protocol messages to stdout"')
class BannerOnStdout(Hooks):
    """Prints a banner line on stdout at start, before any reply.

    Hides on: the wire client drops it as junk; no case judges stdout hygiene yet.
    """

    def start(self, proxy):
        proxy.send_host(b"fs adapter 0.1 ready (serving the fixture)\n")


@promoted("partial-on-oneshot", "FC-046",
      '§5.1: "MUST NOT Send $/partial for a request that did not opt in"')
class PartialOnOneshot(Hooks):
    """One-shot search/code also sends its hits in a $/partial before the reply.

    Hides on: the host drops it (not_streaming); no case looks at partials of one-shot requests.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and not req.streaming and result and result.get("items"):
            proxy.send_host({"jsonrpc": "2.0", "method": "$/partial",
                             "params": {"id": req.id, "items": result["items"]}})
        return msg


@promoted("partial-without-jsonrpc", "FC-124",
      '§5.2: "MUST It is a notification: top-level jsonrpc and method: \\"$/partial\\""')
class PartialWithoutJsonrpc(Hooks):
    """Every $/partial lacks the top-level jsonrpc member.

    Hides on: the client routes partials without it; no case checks the envelope.
    """

    def partial(self, proxy, req, msg):
        msg.pop("jsonrpc", None)
        return msg


@promoted("null-id-error-extra", "FC-120",
      '§1.2: "MUST ... A reply repeats the request\'s id"; §7.3 "MUST Adapters echo the id exactly"')
class NullIdErrorExtra(Hooks):
    """Before each repo/blob reply, an extra {"id": null, "error": ...} line.

    Hides on: the host drops unroutable ids; the real reply still follows.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob":
            proxy.send_host({"jsonrpc": "2.0", "id": None,
                             "error": {"code": -32603, "message": "internal: request context lost"}})
        return msg


@promoted("reply-echo-previous-id", "FC-120",
      '§1.2: "MUST ... A reply repeats the request\'s id"; §7.6 a reply is the only one for its id')
class ReplyEchoPreviousId(Hooks):
    """Before each repo/blob reply, a copy of it carrying the previous request's id.

    Hides on: the previous id is retired, so the host drops the copy.
    """

    def __init__(self):
        self.last_id = None

    def request(self, proxy, req, msg):
        req.state["previous"], self.last_id = self.last_id, req.id
        return msg

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob" and req.state.get("previous") is not None:
            proxy.send_host(dict(msg, id=req.state["previous"]))
        return msg


@promoted("reply-id-string-extra", "FC-120", '§7.3: "MUST Adapters echo the id exactly, as the same JSON '
      'integer (not a string, not a float)"')
class ReplyIdStringExtra(Hooks):
    """Before each repo/blob reply, a copy of it whose id is the string "N".

    Hides on: the host drops string ids (invalid_id); the integer reply still follows.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/blob":
            proxy.send_host(dict(msg, id=str(req.id)))
        return msg


@promoted("request-to-host", "FC-124", '§7.6: "MUST NOT Adapters send requests to the host"')
class RequestToHost(Hooks):
    """Before each search/code reply, sends the host a window/showMessage request.

    Hides on: the host treats it as a reply for an id it never issued and drops it.
    """

    def __init__(self):
        self.next_id = 1 << 50

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "search/code":
            self.next_id += 1
            proxy.send_host({"jsonrpc": "2.0", "id": self.next_id, "method": "window/showMessage",
                             "params": {"type": 3, "message": "search finished"}})
        return msg


@promoted("error-reply-with-result", "FC-124",
          '§1.2: "MUST ... A reply repeats the request\'s id and contains exactly one of result / '
          'error"; §6.1: "MUST An error reply has the request\'s id and no result"')
class ErrorReplyWithResult(Hooks):
    """Error replies of repo/blob_at and repo/log also carry "result": null.

    Hides on: the error replies of revision methods; the host reads them as
    errors all the same (an error member decides), so no error case sees it.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method in ("repo/blob_at", "repo/log") and "error" in msg:
            return {**msg, "result": None}
        return msg


# ====================================================================== listings and links

@promoted("clone-url-not-cloneable", "FC-113", '§3.9: "MUST A URL (or path) that git clone accepts"')
class CloneUrlNotCloneable(Hooks):
    """repo/clone_url of the git-backed repo points at a path that does not exist.

    Hides on: repo/clone_url's value, which only FC-113 clones (FC-053 compares it, FC-063 errors it).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/clone_url" and result is not None and is_git(
                proxy, req.params.get("repo")):
            result["clone_url"] = str(proxy.fixture / "no-such-clone-source.git")
        return msg
