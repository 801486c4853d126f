"""The matrix mutants that break a case of cases/test_trees.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import base64
import re
import unicodedata

from tests.adapters.common import CrlfAsLf, OLD_SWEEP, RespawnedEdit, TreeEdit, ref_of, tag_name
from tests.adapters.hooks import BigBlobsFromDisk, MIB, ResultEdit, Variant, fixture_repos, is_git, matrix, repo_name
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("tree-page-overlap", "FC-020")
class TreePageOverlap(Hooks):
    """The working-tree walk lists its last entry twice (two backend pages overlapping by one)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if (req is not None and req.method == "repo/tree" and req.params.get("ref") is None
                and result is not None and result.get("entries")):
            result["entries"].append(dict(result["entries"][-1]))
        return msg


@mutant("dirs-typed-dir", "FC-021")
class DirsTypedDir(Hooks):
    """Directories are typed "dir" instead of "tree"."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            for entry in result.get("entries") or []:
                if isinstance(entry, dict) and entry.get("type") == "tree":
                    entry["type"] = "dir"
        return msg


@mutant("tree-capped-1000", "FC-022")
class TreeCapped1000(Hooks):
    """Trees stop at 1,000 entries without setting truncated."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            entries = result.get("entries") or []
            if len(entries) > 1000:
                result["entries"] = entries[:1000]
                result["truncated"] = False
        return msg


@mutant("dir-capped-1000", "FC-022")
class DirCapped1000(Hooks):
    """Each directory lists at most 1,000 of its own entries (a directory API's page), truncated false.

    Hides on: a directory past the cap inside a tree of thousands of
    entries; a cap on the whole tree cuts elsewhere.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            seen: dict = {}
            kept = []
            for entry in result.get("entries") or []:
                path = entry.get("path") if isinstance(entry, dict) else None
                parent = path.rsplit("/", 1)[0] if isinstance(path, str) and "/" in path else ""
                seen[parent] = seen.get(parent, 0) + 1
                if seen[parent] <= 1000:
                    kept.append(entry)
            if len(kept) < len(result.get("entries") or []):
                result["entries"], result["truncated"] = kept, False
        return msg


@mutant("big-blob-cut", "FC-023")
class BigBlobCut(BigBlobsFromDisk):
    """Blobs over 1 MiB are served cut to their first 1 MiB (the reference refuses them)."""

    cut = MIB


@mutant("binary-as-text", "FC-024")
class BinaryAsText(Hooks):
    """Small binary blobs (with NUL bytes) are text-decoded: invalid UTF-8 becomes U+FFFD."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/blob" and result is not None:
            b64 = result.get("bytes_b64")
            if isinstance(b64, str) and len(b64) < MIB:
                data = base64.b64decode(b64)
                if b"\0" in data:
                    text = data.decode("utf-8", "replace").encode("utf-8")
                    result["bytes_b64"] = base64.b64encode(text).decode("ascii")
        return msg


FAULTS = ("denied", "throttled", "broken")


@mutant("unknown-repo-empty-tree", "FC-025")
class UnknownRepoEmptyTree(Hooks):
    """repo/tree of a repository that does not exist answers an empty tree."""

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "repo/tree" and "error" in msg:
            name = repo_name(req.params.get("repo"))
            if name not in fixture_repos(proxy) and name not in FAULTS:
                return {"jsonrpc": "2.0", "id": req.id,
                        "result": {"entries": [], "truncated": False, "branch": "main"}}
        return msg


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


def beyond_branches(req) -> bool:
    """A tree at a tag or a commit id: a ref the sweep did not ask before."""
    return ref_of(req) not in OLD_SWEEP


class TagTreeEdit(ResultEdit):
    """Edit repo/tree results at tags and commit ids."""

    method = "repo/tree"

    def applies(self, proxy, req):
        return beyond_branches(req)


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


@promoted("blob-crlf-as-lf", "FC-024",
          '§3.4: "MUST bytes_b64 is the file\'s exact bytes" (line ends included)')
class BlobCrlfAsLf(CrlfAsLf):
    """repo/blob serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends; the fixture had none before
    notes/line-endings.txt (vcs, main).
    """

    method = "repo/blob"


HEX_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")


@promoted("tree-at-id-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class TreeAtIdTruncatedLie(ResultEdit):
    """Every tree at a commit id (40 or 64 hex digits) lists every path but says truncated true.

    Hides on: trees at a commit id (the host browses history by the ids
    repo/log lists); FC-022 judged trees at ref null and at branch and tag
    names, and FC-132, which asks trees at ids, judges their paths only.
    """

    method = "repo/tree"

    def applies(self, proxy, req):
        return HEX_ID.fullmatch(str(req.params.get("ref"))) is not None

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-tree-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class RespawnTreeTruncatedLie(RespawnedEdit):
    """A respawned generation's trees list every path but say truncated true.

    Hides on: a respawned generation; FC-022 read truncated on the group
    adapter's first generation only, and FC-013, FC-050 and FC-051, which
    ask trees after a respawn, judge their paths and ids.
    """

    method = "repo/tree"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("crowded-tree-truncated-lie", "FC-022",
          '§3.3: "MUST set truncated: true when (and only when) the budget cut the walk"')
class CrowdedTreeTruncatedLie(ResultEdit):
    """A repo/tree answered while another request is in flight lists every path but says truncated true (a budget shared by the requests in flight).

    Hides on: requests in flight together; FC-022 asks one tree at a time,
    and FC-120, which sends wide's and alpha's trees beside streams and
    blobs, compares their paths only.
    """

    method = "repo/tree"

    def applies(self, proxy, req):
        return any(r.id != req.id for r in list(proxy.requests.values()))

    def edit(self, proxy, req, result):
        result["truncated"] = True
