"""The matrix mutants that break a case of cases/test_content_ids.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from tests.adapters.common import FirstInitialize, OLD_SWEEP, ref_of, tag_name
from tests.adapters.hooks import BlobIds, CachedIds, ResultEdit, SaltedIds, Variant, is_git, matrix, read_worktree, repo_name, sha256_hex
from tests.adapters.proxy import Hooks, hits_of, result_of, tree_blobs

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("ids-salted-per-call", "FC-010")
class IdsSaltedPerCall(BlobIds):
    """Plain-directory trees salt blob ids with a per-process call counter from the second tree call on.

    The counter restarts with the process, so a respawned process repeats the
    same ids for the same call sequence (FC-013 stays green); git worktrees and
    trees at refs are left alone (FC-096 compares those).
    """

    def __init__(self):
        super().__init__()
        self.calls = 0

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/tree" and req.params.get("ref") is None
                and result_of(msg) is not None and not is_git(proxy, req.params.get("repo"))):
            self.calls += 1
            req.state["call"] = self.calls
        return super().reply(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        call = req.state.get("call", 1) if where == "tree" else 1
        return sha if call == 1 else sha256_hex(f"call-{call}:{sha}".encode())


@mutant("ids-cached-by-path", "FC-011")
class IdsCachedByPath(CachedIds):
    """Working-tree blob ids are cached by (repo, path) for the process lifetime."""


@mutant("ids-by-basename-size", "FC-012")
class IdsByBasenameSize(BlobIds):
    """Plain-directory blob ids are keyed by (file name, size), not by content.

    The reverse map keeps the latest file listed under a key, so repo/blob
    serves one of the colliding files. Git worktrees and refs are left alone.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref is not None or is_git(proxy, repo) or not isinstance(path, str):
            return sha
        data = read_worktree(proxy, repo, path)
        size = len(data) if data is not None else -1
        return sha256_hex(f"{path.rsplit('/', 1)[-1]}\0{size}".encode())


@mutant("ids-salted-per-process", "FC-013")
class IdsSaltedPerProcess(SaltedIds):
    """Every blob id is salted with a per-process random value (self-consistent within a process)."""


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


@promoted("ref-tree-shared-id", "FC-012",
          '§4: "MUST NOT Share one blob id between different contents"')
class RefTreeSharedId(ResultEdit):
    """Trees at a non-null ref list notes/shared.txt with README.md's id.

    Hides on: trees at a ref; FC-012 compared the ids of ref-null trees only.
    """

    method = "repo/tree"

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        entries = {e.get("path"): e for e in result.get("entries") or [] if isinstance(e, dict)}
        if "notes/shared.txt" in entries and "README.md" in entries:
            entries["notes/shared.txt"]["sha"] = entries["README.md"]["sha"]


@promoted("tag-ids-salted-per-process", "FC-013",
          '§4: "MUST Ids are stable ... after the adapter is killed and respawned"')
class TagIdsSaltedPerProcess(SaltedIds):
    """Blob ids at tags and commit ids (trees and blob_at) are salted per process.

    Hides on: tags and commit ids; FC-013 respawned and compared ref null and the branches.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where == "hit" or ref in OLD_SWEEP:
            return sha
        return super().fake(proxy, req, sha, repo, path, ref, where)


@promoted("tag-ids-per-call", "FC-010",
          '§4: "MUST ... the same id on every call (FC-010)"')
class TagIdsPerCall(BlobIds):
    """Blob ids at tag names change with every repo/tree call (a tree-call counter salt).

    Hides on: trees at tags; FC-010 called ref null and the branches twice
    (blob_at's ids carry the count of trees answered so far, so FC-096's
    blob_at asks and the tree right after them agree).
    """

    def __init__(self):
        super().__init__()
        self.calls = 0

    def reply(self, proxy, req, msg):
        msg = super().reply(proxy, req, msg)
        if req is not None and req.method == "repo/tree":
            self.calls += 1
        return msg

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where == "hit" or not tag_name(req):
            return sha
        return sha256_hex(f"{self.calls}:{sha}".encode())


@promoted("old-id-serves-new-bytes", "FC-011",
          '§4: "MUST Each blob sha is an opaque identifier of the content"; "MUST NOT Share one '
          'blob id between different contents"')
class OldIdServesNewBytes(Hooks):
    """repo/blob resolves an id through the path it was first listed at: an old id serves new bytes.

    Hides on: an id asked after its file was rewritten; FC-011 asked the new
    id only (ids themselves follow the bytes).
    """

    def __init__(self):
        self.where: dict[str, tuple] = {}

    def request(self, proxy, req, msg):
        sha = req.params.get("sha")
        if req.method == "repo/blob" and sha in self.where:
            data = read_worktree(proxy, *self.where[sha])
            if data is not None:
                msg["params"]["sha"] = sha256_hex(data)
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None \
                and ref_of(req) is None:
            for entry in tree_blobs(result):
                self.where.setdefault(entry.get("sha"), (req.params.get("repo"), entry.get("path")))
        return msg


@promoted("hit-sha-salted-per-search", "FC-010",
          '§4: "MUST ... the same id on every call"')
class HitShaSaltedPerSearch(BlobIds):
    """Search hits carry a new sha for the same file on every search (repo/blob resolves each).

    Hides on: search hits; FC-010 compared tree ids only.
    """

    def __init__(self):
        super().__init__()
        self.searches = 0

    def request(self, proxy, req, msg):
        if req.method == "search/code":
            self.searches += 1
        return super().request(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return sha256_hex(f"{self.searches}:{sha}".encode()) if where == "hit" else sha


class ContentHitShas(Hooks):
    """Rewrite the shas of content hits (non-empty matches) with ``shas(hits)``."""

    def shas(self, hits: list) -> None:
        pass

    def _edit(self, req, msg):
        if req is not None and req.method == "search/code":
            self.shas([h for h in hits_of(req, msg) if h.get("matches")])
        return msg

    def reply(self, proxy, req, msg):
        return self._edit(req, msg)

    def partial(self, proxy, req, msg):
        return self._edit(req, msg)


@promoted("hit-sha-path-keyed", "FC-012",
          '§3.4: "MUST Any blob id the adapter has emitted ... in a search item — resolves '
          'through repo/blob"; §4: "blob ids must not be derived from the path alone"')
class HitShaPathKeyed(ContentHitShas):
    """Content hits carry sha256 of "repo:path", an id repo/blob resolves to nothing.

    Hides on: content hits' shas; only FC-030 resolved hit shas, of path-only hits.
    """

    def shas(self, hits):
        for hit in hits:
            hit["sha"] = sha256_hex(f"{hit.get('repo')}:{hit.get('path')}".encode())


@promoted("hit-sha-first-hit", "FC-012",
          '§4: "MUST NOT Share one blob id between different contents"')
class HitShaFirstHit(ContentHitShas):
    """Every content hit of a reply or batch carries the first hit's sha (different files, one id).

    Hides on: content hits' shas; FC-012 compared tree ids only.
    """

    def shas(self, hits):
        for hit in hits[1:]:
            if hit.get("repo") == hits[0].get("repo"):
                hit["sha"] = hits[0].get("sha")


@promoted("respawn-hit-ids-salted", "FC-013",
          '§4: "MUST Ids are stable: the same unchanged content ... yields the same id on every '
          'call (FC-010) and after the adapter is killed and respawned (FC-013)"')
class RespawnHitIdsSalted(FirstInitialize, SaltedIds):
    """A respawned generation salts its search hits' shas with a per-process random value (its trees' ids stay genuine).

    The salt is fixed for the process, so its hits agree from one search to
    the next, and repo/blob of a salted id serves the file's bytes (the
    reverse map); the first generation of every process is left alone.

    Hides on: search hits after a respawn; FC-013 compared only trees across
    the respawn, and FC-010/FC-012 judge hit shas in a first generation.
    """

    def request(self, proxy, req, msg):
        msg = FirstInitialize.request(self, proxy, req, msg)
        return SaltedIds.request(self, proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "hit" or not self.respawned:
            return sha
        return super().fake(proxy, req, sha, repo, path, ref, where)


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


@mutant("streamed-hit-sha-path-keyed", "FC-012")
class StreamedHitShaPathKeyed(ContentHitShas):
    """Streamed content hits carry sha256 of "repo:path", an id repo/blob resolves to nothing.

    Hides on: $/partial batches (the host's global search, whose previews
    fetch these ids); FC-012 resolves the shas of a one-shot search.
    """

    def reply(self, proxy, req, msg):
        return msg

    def shas(self, hits):
        for hit in hits:
            hit["sha"] = sha256_hex(f"{hit.get('repo')}:{hit.get('path')}".encode())
