"""The matrix mutants that break a case of cases/test_roundtrips.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import re

from tests.adapters.common import BlobAtCrlfAsLf, HEX_ID, OffMainIdDefault, TagObjectRefused, TreeEdit, git, git_lines, git_out, ref_of, shorten
from tests.adapters.controls.backend import ShortCommitIdsRefused
from tests.adapters.hooks import BlobIds, Variant, git_blob_id, is_git, matrix, read_worktree, repo_name
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("log-ignores-ref", "FC-130")
class LogIgnoresRef(Hooks):
    """repo/log walks the default branch whatever ref is asked."""

    def request(self, proxy, req, msg):
        if req.method == "repo/log" and isinstance(msg.get("params"), dict):
            msg["params"]["ref"] = None
        return msg


@mutant("blame-ignores-ref", "FC-131")
class BlameIgnoresRef(Hooks):
    """repo/blame blames the default branch whatever ref is asked."""

    def request(self, proxy, req, msg):
        if req.method == "repo/blame" and isinstance(msg.get("params"), dict):
            msg["params"]["ref"] = None
        return msg


@mutant("blob-at-hex-ref-worktree", "FC-132")
class BlobAtHexRefWorktree(Hooks):
    """repo/blob_at at a commit id (hex, one git resolves) serves the working tree's bytes."""

    def request(self, proxy, req, msg):
        ref = req.params.get("ref")
        if (req.method == "repo/blob_at" and isinstance(ref, str)
                and all(c in "0123456789abcdef" for c in ref) and len(ref) >= 4
                and git_out(proxy, req.params.get("repo"), "rev-parse", "--verify", "-q",
                            f"{ref}^{{commit}}")):
            msg["params"]["ref"] = None
        return msg


@mutant("blob-at-null-ref-git-sha", "FC-133")
class BlobAtNullRefGitSha(BlobIds):
    """repo/blob_at with ref null reports git's blob id while trees report sha256 ids."""

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "blob_at" or ref is not None:
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else git_blob_id(data)


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


@promoted("log-path-ignores-ref", "FC-130",
          '§3.7: "MUST With ref, history is walked from that revision"')
class LogPathIgnoresRef(Hooks):
    """repo/log with a path walks the default branch whatever ref is asked (the path-filtered query drops the ref).

    Hides on: repo/log with both path and ref; FC-130 asks refs without a
    path, and the path-filtered logs of the other cases are at ref null.
    """

    def request(self, proxy, req, msg):
        if (req.method == "repo/log" and isinstance(msg.get("params"), dict)
                and req.params.get("path")):
            msg["params"]["ref"] = None
        return msg


@promoted("blame-hex-ref-default", "FC-131",
          '§3.8: "MUST sha is the commit that last changed those lines"; §3.6: "MUST Every name and sha '
          'listed here is accepted back as a ref by ... repo/blame"')
class BlameHexRefDefault(Hooks):
    """repo/blame at a commit id (40 hex) blames the default branch; branch and tag names are honoured.

    Hides on: commit ids as ref; FC-131 asks the v0.1 tag and the feature
    branch by name.
    """

    def request(self, proxy, req, msg):
        ref = req.params.get("ref")
        if (req.method == "repo/blame" and isinstance(ref, str) and len(ref) == 40
                and all(c in "0123456789abcdef" for c in ref)):
            msg["params"]["ref"] = None
        return msg


@promoted("blob-at-null-ref-binary-git-sha", "FC-133",
          '§3.5: "MUST sha equals the sha the same path has in repo/tree at the same ref"')
class BlobAtNullRefBinaryGitSha(BlobIds):
    """repo/blob_at with ref null reports git's blob id for binary files (NUL bytes); text files keep the tree's ids.

    Hides on: binary files; FC-133 asks three text files.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "blob_at" or ref is not None:
            return sha
        data = read_worktree(proxy, repo, path)
        return git_blob_id(data) if data is not None and b"\0" in data else sha


@mutant("blob-at-null-hostile-not-found", "FC-133")
class BlobAtNullHostileNotFound(Hooks):
    """repo/blob_at with ref null sends the path to the backend unescaped: a URL-hostile name (space, #, ?, %, +) answers not_found; at a named ref the path is escaped and served."""

    def request(self, proxy, req, msg):
        path = req.params.get("path")
        if (req.method == "repo/blob_at" and req.params.get("ref") is None
                and isinstance(path, str) and any(ch in path for ch in " #?%+")):
            proxy.error(req, f"404 Not Found: {path}", kind="not_found")
            return None
        return msg


@mutant("log-off-main-id-default", "FC-130")
class LogOffMainIdDefault(OffMainIdDefault):
    """repo/log at a 40-hex commit id not on the default branch's history (the feature tip repo/refs lists) walks the default branch.

    Hides on: the shas repo/refs lists; FC-130 walked feature and v0.1 by
    name only, FC-094 logs at names, FC-132 never logs at an id.
    """

    method = "repo/log"


@mutant("blame-off-main-id-default", "FC-131")
class BlameOffMainIdDefault(OffMainIdDefault):
    """repo/blame at a 40-hex commit id not on the default branch's history (the feature tip) blames the default branch.

    Hides on: the file: FC-131 blamed every commit id it asks with
    src/parse.rs, whose blame at feature's tip is main's; only v0.1's id
    told, and v0.1 is on main's history.
    """

    method = "repo/blame"


@mutant("log-tag-object-refused", "FC-130")
class LogTagObjectRefused(TagObjectRefused):
    """repo/refs reports the annotated tag's object id (legal), and repo/log refuses that id as a ref (not_found).

    Hides on: the tag object's id; FC-094 logs at the name v1.0, FC-131
    blames at its commit's id.
    """

    method = "repo/log"


@mutant("blame-tag-name-refused", "FC-131")
class BlameTagNameRefused(Hooks):
    """repo/blame refuses the annotated tag's name v1.0 as a ref (not_found): only lightweight tags are peeled.

    Hides on: the name: FC-131 blamed at v1.0's commit id, never at the
    name repo/refs lists.
    """

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if req.method == "repo/blame" and isinstance(params, dict) and isinstance(params.get("ref"), str) \
                and is_git(proxy, params.get("repo")) and git(
                    proxy, params.get("repo"), "cat-file", "-t", f"refs/tags/{params['ref']}"
                ).stdout.strip() == "tag":
            proxy.error(req, f"no such ref {params['ref']}", kind="not_found")
            return None
        return msg


@promoted("log-short-ids-commit-refuses", "FC-132",
          '§3.7: "MUST Every sha listed is accepted back as a ref and (if commit is declared) as '
          'repo/commit\'s sha"')
class LogShortIdsCommitRefuses(ShortCommitIdsRefused):
    """repo/log lists 12-hex abbreviations, which repo/commit refuses (it takes full ids only).

    Each half alone is legal (the controls abbreviated-commit-ids and
    short-commit-ids-refused); together a listed id is not accepted back.

    Hides on: log ids asked back as repo/commit's sha; the commit cases ask
    git's full ids (an abbreviation may be refused), FC-132 asked log ids
    back through blob_at and tree only.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None:
            for row in result.get("items") or []:
                if isinstance(row, dict):
                    row["sha"] = shorten(row.get("sha"))
        return msg


@promoted("blob-at-null-ref-crlf-as-lf", "FC-133",
          '§3.5: "MUST Bytes are the file at that ref"; "null = default branch"')
class BlobAtNullRefCrlfAsLf(BlobAtCrlfAsLf):
    """repo/blob_at with ref null serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends on the default branch; the
    fixture had none before notes/line-endings.txt (vcs, main).
    """

    def at_ref(self, ref):
        return ref is None


@promoted("ids-off-main-refused", "FC-132",
          '§3.7: "Every sha listed is accepted back as a ref"')
class IdsOffMainRefused(Hooks):
    """repo/tree and repo/blob_at at a commit id that is neither on the default branch's history nor a branch or tag tip answer not_found (ids resolved by walking main's log).

    Hides on: the ids of feature's log below its tip; FC-132 asked back the
    ids of logs at the default branch only, and the tips are asked as the
    shas repo/refs lists (FC-091, FC-096).
    """

    def request(self, proxy, req, msg):
        repo, ref = req.params.get("repo"), req.params.get("ref")
        if (req.method in ("repo/tree", "repo/blob_at") and isinstance(ref, str)
                and HEX_ID.fullmatch(ref) and is_git(proxy, repo)):
            tips = {line.split()[0] for line in git_lines(proxy, repo, "show-ref", "--dereference")}
            import subprocess
            on_main = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)),
                                      "merge-base", "--is-ancestor", ref, "HEAD"],
                                     capture_output=True).returncode == 0
            if not on_main and not any(t.startswith(ref) for t in tips):
                proxy.error(req, f"no commit {ref}", kind="not_found")
                return None
        return msg
