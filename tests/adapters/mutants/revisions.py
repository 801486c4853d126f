"""The matrix mutants that break a case of cases/test_revisions.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

import base64
import re

from fixture.catalog import VCS_BLAME_TWO_AUTHORS, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
from tests.adapters.common import BlobAtCrlfAsLf, DATE_OF_COMMIT, HEX_ID, NoCacheInit, OffMainIdDefault, OffsetDropped, RespawnedEdit, TRUNCATED_RULE, TagObjectRefused, Wedge, git, git_lines, ref_of, resolves
from tests.adapters.hooks import BlobIds, EveryBranchDefault, GitIds, InitResult, Refuse, RelistedGenuine, ResultEdit, Variant, fixture_repos, is_git, matrix, read_worktree, repo_name, sha256_hex
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("two-defaults", "FC-090")
class TwoDefaults(EveryBranchDefault):
    """repo/refs marks every branch default."""


@mutant("tag-tree-worktree-bytes", "FC-091")
class TagTreeWorktreeBytes(BlobIds):
    """Trees at refs other than main/feature list the checked-out files' ids (so their bytes) where the path exists.

    Hides on: tags and commit ids as ref; FC-091 fetches bytes at main and
    feature only and compares paths elsewhere.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "tree" or ref in (None, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH):
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else sha256_hex(data)

    def _swap(self, proxy, req, holder, repo, path, ref, where):
        sha = holder.get("sha")
        if isinstance(sha, str) and sha:
            holder["sha"] = self.fake(proxy, req, sha, repo, path, ref, where)   # real ids: no back map


@mutant("unknown-ref-default", "FC-092")
class UnknownRefDefault(Hooks):
    """repo/tree at a ref the adapter cannot resolve serves the default branch instead."""

    def reply(self, proxy, req, msg):
        if req is None or req.method != "repo/tree" or "error" not in msg or req.params.get("ref") is None:
            return msg

        def fallback(answer: dict) -> None:
            if "result" in answer:
                proxy.reply(req, answer["result"])
            else:
                proxy.send_host(msg)

        proxy.call_child("repo/tree", {"repo": req.params.get("repo"), "ref": None}, fallback)
        return None


@mutant("ref-ids-from-worktree", "FC-093")
class RefIdsFromWorktree(RelistedGenuine):
    """Blob ids at a ref are the checked-out (default branch) file's ids; blobs resolve by the last tree listed.

    Trees at refs and blob_at report, for every path that exists in the
    working tree, the id of the working-tree file, so a file that differs
    between main and feature gets one id at both refs. repo/blob resolves a
    fake id through the most recent listing that emitted it, which is what
    keeps tree-at-ref bytes (FC-091) and blob_at (FC-096) right.
    """

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if ref is None or where == "hit":
            return sha
        data = read_worktree(proxy, repo, path)
        return sha if data is None else sha256_hex(data)


@mutant("log-oldest-first", "FC-094")
class LogOldestFirst(Hooks):
    """repo/log lists commits oldest first."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None:
            result["items"] = list(reversed(result.get("items") or []))
        return msg


@mutant("log-ignores-limit", "FC-095")
class LogIgnoresLimit(Hooks):
    """repo/log ignores limit (serves its default page)."""

    def request(self, proxy, req, msg):
        if req.method == "repo/log":
            req.params["limit"] = None
        return msg


@mutant("blob-at-git-sha", "FC-096")
class BlobAtGitSha(GitIds):
    """repo/blob_at reports git's blob id while trees report sha256 ids."""

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return super().fake(proxy, req, sha, repo, path, ref, where) if where == "blob_at" else sha


@mutant("blob-at-empty-for-unknown", "FC-097")
class BlobAtEmptyForUnknown(Hooks):
    """repo/blob_at answers empty bytes for a path or ref it cannot resolve in a served repository."""

    def reply(self, proxy, req, msg):
        if (req is not None and req.method == "repo/blob_at" and "error" in msg
                and repo_name(req.params.get("repo")) in fixture_repos(proxy)):
            return {"jsonrpc": "2.0", "id": req.id,
                    "result": {"bytes_b64": "", "sha": sha256_hex(b"")}}
        return msg


@mutant("blame-zero-based", "FC-098")
class BlameZeroBased(Hooks):
    """repo/blame ranges are 0-based."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/blame" and result is not None:
            for rng in result.get("ranges") or []:
                for key in ("start_line", "end_line"):
                    if isinstance(rng.get(key), int):
                        rng[key] -= 1
        return msg


@mutant("commit-unimplemented", "FC-099")
class CommitUnimplemented(Refuse):
    """Declares commit true but answers repo/commit "unknown method"."""

    def __init__(self):
        super().__init__(("repo/commit",))


@promoted("revision-cap-string-no-cache", "FC-099", '§2.4: "MUST Capability values are JSON booleans"')
class RevisionCapStringNoCache(NoCacheInit):
    """capabilities.blame is "true" (a string) when started without cache params.

    Hides on: FC-005's start; FC-099 reads only the group adapter's handshake.
    """

    def change(self, result):
        result.setdefault("capabilities", {})["blame"] = "true"


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


MAIN, FEATURE = VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH


BRANCH_REFS = (None, MAIN, FEATURE)   # the refs the revision cases sample first


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


def commit_of(proxy, repo, ref) -> str | None:
    """git's commit id of ``ref`` in ``repo``, or None."""
    if not isinstance(ref, str) or not ref:
        return None
    run = git(proxy, repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return run.stdout.strip() or None


@mutant("refs-sha-default-tip", "FC-090")
class RefsShaDefaultTip(Hooks):
    """repo/refs reports every branch's and tag's sha as the default branch's tip (the backend reads HEAD for each ref).

    Hides on: the shas themselves, which no case compared with git (§3.6
    "sha is ... the revision the ref points at"): FC-091 judges the tree at
    each listed sha as the revision that sha names, and the tip is a real
    commit every other method accepts back.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/refs" or result is None:
            return msg
        tip = commit_of(proxy, req.params.get("repo"), VCS_DEFAULT_BRANCH)
        for row in [*(result.get("branches") or []), *(result.get("tags") or [])]:
            if isinstance(row, dict) and tip:
                row["sha"] = tip
        return msg


@mutant("log-default-page-untruncated", "FC-095")
class LogDefaultPageUntruncated(Hooks):
    """repo/log with limit null serves one backend page of 6 commits and never says truncated (more exist).

    Hides on: limit null, where FC-094 accepts any prefix of git's log (a
    budget cut is legal) and FC-095 asked only limit 2; only main's
    unfiltered history is longer than 6.
    """

    PAGE = 6

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/log" or result is None \
                or req.params.get("limit") is not None:
            return msg
        items = result.get("items")
        if isinstance(items, list) and len(items) > self.PAGE:
            result["items"] = items[:self.PAGE]
            result.pop("truncated", None)
        return msg


@mutant("blame-at-ref-dates-git-format", "FC-098")
class BlameAtRefDatesGitFormat(Hooks):
    """repo/blame at a ref other than the default branch gives dates in git's default format (Tue Jan 9 16:30:00 2024 +0200).

    Hides on: blame dates, which FC-098 compared with git only as a SHOULD
    (a warning) and only at the default branch; FC-131 blames at refs but
    judges only the commits.
    """

    def reply(self, proxy, req, msg):
        import datetime as _dt
        result = result_of(msg)
        if req is None or req.method != "repo/blame" or result is None \
                or req.params.get("ref") in (None, VCS_DEFAULT_BRANCH):
            return msg
        for row in result.get("ranges") or []:
            try:
                when = _dt.datetime.fromisoformat(str(row["date"]).replace("Z", "+00:00"))
            except (TypeError, KeyError, ValueError):
                continue
            row["date"] = when.strftime("%a %b %-d %H:%M:%S %Y %z")
        return msg


@mutant("blob-at-off-main-id-default", "FC-096")
class BlobAtOffMainIdDefault(OffMainIdDefault):
    """repo/blob_at at a 40-hex commit id not on the default branch's history (the feature tip repo/refs lists) serves the default branch's file.

    Hides on: the shas repo/refs lists, which only repo/tree was asked at
    (FC-091); FC-132 asks blob_at at the ids of main's log, all on main's
    history.
    """

    method = "repo/blob_at"


@mutant("blob-at-tag-object-refused", "FC-096")
class BlobAtTagObjectRefused(TagObjectRefused):
    """repo/refs reports the annotated tag's object id (legal), and repo/blob_at refuses that id as a ref (not_found).

    Hides on: the tag object's id, which only repo/tree was asked at
    (FC-091); every other case names v1.0 or its commit.
    """

    method = "repo/blob_at"


@mutant("blob-at-short-unknown-default", "FC-097")
class BlobAtShortUnknownDefault(Hooks):
    """repo/blob_at at an abbreviated hex ref (7 to 12 digits) that names no commit serves the default branch.

    Hides on: the short spelling; FC-097 asked an unknown name and an
    unknown 40-hex id (repo/tree's variant is FC-092's
    short-hex-unknown-ref-default).
    """

    def request(self, proxy, req, msg):
        params = msg.get("params")
        ref = params.get("ref") if isinstance(params, dict) and req.method == "repo/blob_at" else None
        if isinstance(ref, str) and re.fullmatch(r"[0-9a-f]{7,12}", ref) \
                and is_git(proxy, params.get("repo")) and commit_of(proxy, params["repo"], ref) is None:
            params["ref"] = None
        return msg


@mutant("log-first-parent", "FC-094")
class LogFirstParent(Hooks):
    """repo/log follows first parents only: the merged topic commit is left out of main's log.

    Hides on: nothing the order alone shows (every listed commit still comes
    before its ancestors); FC-094 reads newest first as children before
    parents, and a commit listed while its descendant (topic, under the
    merge) is left out is no newest-first listing. FC-095 sees fewer commits
    than git's without truncated and skips, naming FC-094.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/log" or result is None \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        ref = req.params.get("ref") or VCS_DEFAULT_BRANCH
        keep = set(git(proxy, req.params["repo"], "rev-list", "--first-parent", ref).stdout.split())
        items = result.get("items")
        if isinstance(items, list) and keep:
            result["items"] = [i for i in items if not isinstance(i, dict) or i.get("sha") in keep]
        return msg


@promoted("blob-at-crlf-as-lf", "FC-096",
          '§3.5: "MUST Bytes are the file at that ref (same base64 rules as §3.4)", the raw '
          'bytes, line ends included')
class BlobAtNamedRefCrlfAsLf(BlobAtCrlfAsLf):
    """repo/blob_at at a named ref or commit id serves CRLF line ends as LF.

    Hides on: a text file with CRLF line ends at a ref; the fixture had none
    before notes/line-endings.txt (vcs, main), and FC-096 asks it at main.
    """

    def at_ref(self, ref):
        return ref is not None


LOG_RULE = ('§3.7: "MUST (per FC-095) ... flag truncated: true whenever further matching '
            'commits are known to exist"; RULINGS "Bounded compute": a claim of truncation '
            'that is false fails')


@promoted("log-complete-truncated", "FC-095", LOG_RULE)
class LogCompleteTruncated(LogEdit):
    """repo/log with limit null says truncated true over git's whole history.

    Hides on: limit null; FC-095 read a truncated-true reply as a legal
    budget cut and judged nothing more, and FC-094 leaves the flag to it.
    """

    def applies(self, proxy, req):
        return req.params.get("limit") is None

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("log-full-at-limit-truncated", "FC-095", LOG_RULE)
class LogFullAtLimitTruncated(LogEdit):
    """repo/log says truncated true whenever it returns exactly limit items (it never looks one commit past the limit).

    Hides on: a limit equal to the number of commits git has there
    (src/lib.rs's 3); FC-095 asked limit 2 where more exist, and limit null,
    whose default page is longer than any history of vcs.
    """

    def edit(self, proxy, req, result):
        limit = req.params.get("limit")
        if isinstance(limit, int) and len(result.get("items") or []) == limit:
            result["truncated"] = True


def tag_names(proxy, repo) -> set[str]:
    """The tag names of a git repository of the fixture (none for the others)."""
    return set(git_lines(proxy, repo, "tag")) if isinstance(repo, str) else set()


@promoted("log-limit-no-truncated-at-tag", "FC-095", LOG_RULE)
class LogLimitNoTruncatedAtTag(LogEdit):
    """repo/log at a tag name honours limit but never says truncated.

    Hides on: tags; FC-095 asked limit 2 at ref null, main and feature, and
    at the annotated tag only with limit null, whose page holds its history.
    """

    def applies(self, proxy, req):
        return req.params.get("ref") in tag_names(proxy, req.params.get("repo"))

    def edit(self, proxy, req, result):
        result.pop("truncated", None)


@promoted("respawn-log-truncated-lie", "FC-095", TRUNCATED_RULE + " (§3.7)")
class RespawnLogTruncatedLie(RespawnedEdit):
    """A respawned generation's repo/log says truncated true over git's whole history.

    Hides on: a respawned generation; FC-095 read truncated on the group
    adapter's first generation, and FC-050, which asks the log at the
    feature branch after a kill, compares its subjects only.
    """

    method = "repo/log"

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-log-cut-untruncated", "FC-095", TRUNCATED_RULE + " (§3.7)")
class RespawnLogCutUntruncated(RespawnedEdit):
    """A respawned generation's repo/log with limit null stops after one commit and says truncated false.

    Hides on: a respawned generation; FC-095 judged the cut of the group
    adapter's logs only, and FC-050's log comparison after a kill named a
    missing commit as a respawn that serves badly.
    """

    method = "repo/log"

    def also(self, proxy, req):
        return req.params.get("limit") is None

    def edit(self, proxy, req, result):
        items = result.get("items")
        if isinstance(items, list) and len(items) > 1:
            result["items"] = items[:1]
            result["truncated"] = False


@promoted("log-truncated-string", "FC-095",
          '§3.7: "Result: {items, truncated?: <boolean>}"; R-3.7-limit (truncated is FC-095\'s)')
class LogTruncatedString(ResultEdit):
    """repo/log answers truncated as the string "false" or "true" (not a boolean).

    Hides on: nothing new: the rule had two owners, FC-094 (the log's shape,
    through the monitor) and FC-095 (its truncated); the registry gives the
    member to FC-095 (R-3.7-limit), like repo/tree's to FC-022.
    """

    method = "repo/log"

    def edit(self, proxy, req, result):
        result["truncated"] = "true" if result.get("truncated") else "false"


@promoted("log-limit-at-id-untruncated", "FC-095", TRUNCATED_RULE + " (§3.7)")
class LogLimitAtIdUntruncated(ResultEdit):
    """repo/log at a commit id honours limit but never says truncated.

    Hides on: commit ids as ref (the host's history lens walks from the ids
    repo/log lists); FC-095 asked limit 2 at branch and tag names only, and
    FC-130, which asks logs at ids, judges which commits they list.
    """

    method = "repo/log"

    def applies(self, proxy, req):
        return HEX_ID.fullmatch(str(req.params.get("ref"))) is not None

    def edit(self, proxy, req, result):
        result.pop("truncated", None)


def git_has(proxy, repo, ref, path) -> bool:
    """Whether git has ``path`` at ``ref`` in the fixture repository."""
    import subprocess
    run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "cat-file", "-e",
                          f"{ref}:{path}"], capture_output=True)
    return run.returncode == 0


def blob_at_missing(proxy, req) -> bool:
    """A repo/blob_at at a named ref of a git repository whose tree lacks the path."""
    repo, ref, path = (req.params.get(k) for k in ("repo", "ref", "path"))
    return (req.method == "repo/blob_at" and isinstance(ref, str) and isinstance(path, str)
            and is_git(proxy, repo) and git_lines(proxy, repo, "rev-parse", "--verify", "--quiet",
                                                  f"{ref}^{{commit}}") != []
            and not git_has(proxy, repo, ref, path))


@promoted("blob-at-absent-from-worktree", "FC-097",
          '§3.5: "MUST Unknown path or unknown ref -> error"')
class BlobAtAbsentFromWorktree(Hooks):
    """repo/blob_at of a path the asked ref does not have serves the checked-out file of that path (a fallback to the working tree).

    Hides on: a path that exists on the default branch but not at the ref
    (docs/new-name.md at a tag); FC-097 asked a path no revision has, and
    FC-096 asks each file only at the refs where it exists.
    """

    def request(self, proxy, req, msg):
        if blob_at_missing(proxy, req):
            data = read_worktree(proxy, req.params.get("repo"), req.params.get("path"))
            if data is not None:
                proxy.reply(req, {"bytes_b64": base64.b64encode(data).decode("ascii"),
                                  "sha": sha256_hex(data)})
                return None
        return msg


@promoted("blob-at-deleted-from-history", "FC-097",
          '§3.5: "MUST Unknown path or unknown ref -> error"')
class BlobAtDeletedFromHistory(Hooks):
    """repo/blob_at of a path deleted before the asked ref serves its last version from an older commit (a lookup across the whole history).

    Hides on: a path an older revision had (obsolete.txt, removed on main);
    FC-097 asked a path no revision ever had.
    """

    def request(self, proxy, req, msg):
        if blob_at_missing(proxy, req):
            repo, path = req.params.get("repo"), req.params.get("path")
            last = git_lines(proxy, repo, "rev-list", "-1", "--all", "--", path)
            if last:
                import subprocess
                older = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), "show",
                                        f"{last[0]}^:{path}"], capture_output=True)
                if older.returncode == 0:
                    proxy.reply(req, {"bytes_b64": base64.b64encode(older.stdout).decode("ascii"),
                                      "sha": sha256_hex(older.stdout)})
                    return None
        return msg


@promoted("log-dates-offset-dropped", "FC-094", DATE_OF_COMMIT)
class LogDatesOffsetDropped(OffsetDropped):
    """repo/log dates keep their wall clock and lose their UTC offset (read as UTC).

    Hides on: commits written in UTC (the fixture's `*` commits are not).
    """

    methods = ("repo/log",)

    def items(self, result):
        items = result.get("items")
        return items if isinstance(items, list) else []


@promoted("unknown-ref-tree-wedge", "FC-092",
          '§3.3: "MUST Unknown ref -> error"; §7.5: the host fails a request at its deadline')
class UnknownRefTreeWedge(Wedge):
    """repo/tree of vcs at a ref git cannot resolve is never answered.

    Hides on: a tree at an unknown ref (the revision flows only ask refs
    the adapter listed).
    """

    def wedged(self, proxy, req):
        repo = req.params.get("repo")
        return (req.method == "repo/tree" and req.params.get("ref") is not None
                and is_git(proxy, repo) and not resolves(proxy, repo, req.params["ref"]))


@mutant("log-tree-ids", "FC-094")
class LogTreeIds(Hooks):
    """repo/log lists each commit's tree id (git log --format=%T) where its
    commit id belongs.

    Hides on: nothing that reads a log's ids: an id that names no commit is
    FC-094's at every ref, and FC-130, FC-095 and FC-132, which read logs
    at refs again, skip naming it.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        items = result.get("items") if result is not None else None
        if req is None or req.method != "repo/log" or not isinstance(items, list):
            return msg
        shas = [i["sha"] for i in items if isinstance(i, dict) and isinstance(i.get("sha"), str)]
        if not shas:
            return msg
        import subprocess
        run = subprocess.run(["git", "-C", str(proxy.fixture / repo_name(req.params.get("repo"))),
                              "rev-parse", *(f"{sha}^{{tree}}" for sha in shas)],
                             capture_output=True, text=True)
        trees = dict(zip(shas, run.stdout.split())) if run.returncode == 0 else {}
        for item in items:
            if isinstance(item, dict) and item.get("sha") in trees:
                item["sha"] = trees[item["sha"]]
        return msg


@mutant("log-drops-root", "FC-095")
class LogDropsRoot(Hooks):
    """repo/log leaves the oldest commit it would list out of every log that
    lists more than one (truncated false).

    Hides on: a log of one commit, and logs cut by limit (they say truncated
    true). A log cut without truncated true is FC-095's (every log reply of
    the run, cases/judges/claims.py); FC-130, which walks logs at refs again,
    skips naming it.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/log" and result is not None \
                and not result.get("truncated") and len(result.get("items") or []) > 1:
            result["items"] = result["items"][:-1]
        return msg


@mutant("blame-drops-last-line", "FC-098")
class BlameDropsLastLine(Hooks):
    """repo/blame's last range stops one line short (the file's last line is never blamed).

    Hides on: a one-line range at the end (it is dropped, and the ranges
    still number 1, 2, ... in order). FC-131 blames at refs the same way:
    FC-098's.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        ranges = result.get("ranges") if result is not None else None
        if req is None or req.method != "repo/blame" or not isinstance(ranges, list) or not ranges:
            return msg
        last = ranges[-1]
        if last.get("end_line", 0) > last.get("start_line", 0):
            last["end_line"] -= 1
        else:
            ranges.pop()
        return msg


@mutant("blob-at-crlf-as-lf-everywhere", "FC-096")
class BlobAtCrlfAsLfEverywhere(Hooks):
    """repo/blob_at serves CRLF line ends as LF at every ref, ref null included
    (its sha left as it was).

    Hides on: a text file with CRLF line ends (notes/line-endings.txt).
    FC-133 reads it with ref null: the same bytes at the default branch's
    name are FC-096's.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/blob_at" or result is None:
            return msg
        try:
            data = base64.b64decode(result.get("bytes_b64") or "", validate=True)
        except (ValueError, TypeError):
            return msg
        if b"\0" not in data and b"\r\n" in data:
            result["bytes_b64"] = base64.b64encode(data.replace(b"\r\n", b"\n")).decode("ascii")
        return msg


@mutant("log-capability-string-respawn", "FC-099")
class LogCapabilityStringRespawn(InitResult):
    """A respawned generation's initialize (id not 1) answers capabilities.log "true" (a string).

    Hides on: the spawned processes' respawns; FC-099 read only the group
    adapter's handshake (RULINGS: the revision keys' types are FC-099's).
    """

    def edit(self, proxy, req, result):
        if req.id != 1:
            result.setdefault("capabilities", {})["log"] = "true"


@mutant("log-limited-dates-not-iso", "FC-094")
class LogLimitedDatesNotIso(LogUnfilteredDatesNotIso):
    """repo/log with a limit (not null) gives dates in git's default format ("Tue Mar 3 09:30:00 2026 +0100").

    Hides on: logs asked with a limit; FC-094 asks limit null, and the
    limited logs (FC-095's, FC-130's) were judged on their commits only.
    """

    def applies(self, proxy, req):
        return req.params.get("limit") is not None


@mutant("log-limited-oldest-first", "FC-094")
class LogLimitedOldestFirst(LogEdit):
    """repo/log with a limit (not null) lists its page oldest first.

    Hides on: logs asked with a limit; FC-094 asks limit null.
    """

    def applies(self, proxy, req):
        return req.params.get("limit") is not None

    def edit(self, proxy, req, result):
        result["items"] = list(reversed(result.get("items") or []))

