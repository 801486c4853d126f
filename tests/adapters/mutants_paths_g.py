"""Path mutants, part g: the tree sweep reaching tags,
the blob bytes asked twice and of the non-ASCII text file, an old id after
a rewrite, and search hits' shas; each breaks a MUST where its owner case
does not look first, and fails exactly that case. One control: a lagging
search index whose stale hits say located: false (FC-011 passes it).

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import base64
import re
import unicodedata

from fixture.catalog import VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
from tests.adapters.hooks import BlobIds, ResultEdit, SaltedIds, read_worktree, repo_name, \
    sha256_hex
from tests.adapters.controls import control
from tests.adapters.mutants_deep import promoted, ref_of
from tests.adapters.proxy import Hooks, hits_of, result_of, tree_blobs

# The refs the tree sweep asked before: ref null and the two branches.
OLD_SWEEP = (None, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH)
_HEX = re.compile(r"[0-9a-f]{4,64}")


def beyond_branches(req) -> bool:
    """A tree at a tag or a commit id: a ref the sweep did not ask before."""
    return ref_of(req) not in OLD_SWEEP


def tag_name(req) -> bool:
    """A tree at a ref that is neither null, a branch nor a hex id (a tag name)."""
    ref = ref_of(req)
    return ref not in OLD_SWEEP and not _HEX.fullmatch(str(ref))


class TagTreeEdit(ResultEdit):
    """Edit repo/tree results at tags and commit ids."""

    method = "repo/tree"

    def applies(self, proxy, req):
        return beyond_branches(req)


# ---------------------------------------------------------------- trees at tags and commit ids

@promoted("tag-tree-drops-path", "FC-020",
          '§3.3: "MUST ... one entry per path in the repository" (RULINGS: coverage is FC-020, on '
          'every repository and ref)')
class TagTreeDropsPath(TagTreeEdit):
    """Trees at tag names leave out README.md.

    Hides on: trees at tag names; FC-020 walked ref null and the branches
    (FC-091 compares paths at tags, skipping naming FC-020).
    """

    def applies(self, proxy, req):
        return tag_name(req)

    def edit(self, proxy, req, result):
        result["entries"] = [e for e in result.get("entries") or []
                             if not (isinstance(e, dict) and e.get("path") == "README.md")]


@promoted("tag-tree-entry-twice", "FC-020",
          '§3.3: "MUST ... each path exactly once" (RULINGS: on every repository and ref)')
class TagTreeEntryTwice(TagTreeEdit):
    """Trees at tags and commit ids list their last entry twice.

    Hides on: trees at tags and commit ids; FC-020 walked ref null and the
    branches, FC-091 compares sets.
    """

    def edit(self, proxy, req, result):
        entries = result.get("entries") or []
        if entries:
            entries.append(dict(entries[-1]))


@promoted("tag-dirs-typed-dir", "FC-021",
          '§3.3 entry type: "\\"blob\\" for files, \\"tree\\" for directories"')
class TagDirsTypedDir(TagTreeEdit):
    """Trees at tags and commit ids type directories "dir".

    Hides on: trees at tags and commit ids; FC-021 typed ref null and the branches.
    """

    def edit(self, proxy, req, result):
        for entry in result.get("entries") or []:
            if isinstance(entry, dict) and entry.get("type") == "tree":
                entry["type"] = "dir"


@promoted("tag-tree-size-plus-one", "FC-021",
          '§3.3 entry size: "bytes; blobs only" (the file\'s length)')
class TagTreeSizePlusOne(TagTreeEdit):
    """Trees at tags and commit ids give every file's size plus one.

    Hides on: trees at tags and commit ids; FC-021 sized ref null and the branches.
    """

    def edit(self, proxy, req, result):
        for entry in result.get("entries") or []:
            if isinstance(entry, dict) and isinstance(entry.get("size"), int):
                entry["size"] += 1


@promoted("ref-tree-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class RefTreeTruncatedLie(ResultEdit):
    """Every tree at a non-null ref lists every path but says truncated true.

    Hides on: trees at a ref; FC-022 judged the trees at ref null only.
    """

    method = "repo/tree"

    def applies(self, proxy, req):
        return ref_of(req) is not None

    def edit(self, proxy, req, result):
        result["truncated"] = True


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


# ---------------------------------------------------------------- blob bytes

@promoted("blob-cache-text-decoded", "FC-024",
          '§3.4: "MUST Binary content is served raw — no transcoding, NUL bytes intact"')
class BlobCacheTextDecoded(Hooks):
    """repo/blob remembers what it served text-decoded (U+FFFD): a later ask of an id gets that.

    Hides on: the second ask of a blob id; FC-024 asked each binary id once
    (FC-091 and FC-093 ask again, skipping naming FC-024).
    """

    def __init__(self):
        self.served: dict[tuple, bytes] = {}

    def request(self, proxy, req, msg):
        key = (repo_name(req.params.get("repo")), req.params.get("sha"))
        if req.method == "repo/blob" and key in self.served:
            proxy.reply(req, {"bytes_b64": base64.b64encode(self.served[key]).decode()})
            return None
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/blob" and result is not None
                and isinstance(result.get("bytes_b64"), str)):
            data = base64.b64decode(result["bytes_b64"])
            key = (repo_name(req.params.get("repo")), req.params.get("sha"))
            self.served[key] = data.decode("utf-8", "replace").encode("utf-8")
        return msg


@promoted("text-blobs-nfd", "FC-024",
          '§3.4: "MUST bytes_b64 is the file\'s exact bytes"')
class TextBlobsNfd(ResultEdit):
    """repo/blob serves UTF-8 text with non-ASCII characters normalised to NFD (other bytes).

    Hides on: docs/café.md, the only text file with non-ASCII content; FC-024
    read the binary, empty and URL-escaping files and beta's (ASCII) files.
    """

    method = "repo/blob"

    def edit(self, proxy, req, result):
        if not isinstance(result.get("bytes_b64"), str):
            return
        try:
            text = base64.b64decode(result["bytes_b64"]).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            return
        if "\0" not in text and not text.isascii():
            nfd = unicodedata.normalize("NFD", text).encode("utf-8")
            result["bytes_b64"] = base64.b64encode(nfd).decode()


# ---------------------------------------------------------------- ids after a rewrite

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


# ---------------------------------------------------------------- search hits' shas

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


# ---------------------------------------------------------------- a lagging search index (legal)

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
