"""Path mutants, part d, and their controls: the revision rules on paths their
cases do not take first (refs' shas, log cuts without truncated, blame dates,
refs round trips through blob_at/log/blame, unknown short ids) and the legal
variations those cases must keep green (opaque commit ids).

Each mutant breaks its rule where its owner case does not look first and
fails exactly that case; each control passes the whole suite. A hook class
per switch, its docstring's first line what it changes, then "Hides on:"
(mutants) or why it is legal (controls).
"""

from __future__ import annotations

import re

from fixture.catalog import VCS_DEFAULT_BRANCH
from tests.adapters.controls import control
from tests.adapters.hooks import is_git, repo_name
from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks, result_of


def git(proxy, repo, *args: str) -> subprocess.CompletedProcess:
    import subprocess
    return subprocess.run(["git", "-C", str(proxy.fixture / repo_name(repo)), *args],
                          capture_output=True, text=True)


def commit_of(proxy, repo, ref) -> str | None:
    """git's commit id of ``ref`` in ``repo``, or None."""
    if not isinstance(ref, str) or not ref:
        return None
    run = git(proxy, repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    return run.stdout.strip() or None


# ---------------------------------------------------------------- opaque commit ids (control)

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


# ---------------------------------------------------------------- refs: each sha the ref's commit

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


# ---------------------------------------------------------------- log: a cut says truncated

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


# ---------------------------------------------------------------- blame: ISO-8601 dates

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


# ---------------------------------------------------------------- refs round trips (§3.6)

class OffMainIdDefault(Hooks):
    """``method`` at a 40-hex commit id that is not on the default branch's history serves the default branch."""

    method = ""

    def request(self, proxy, req, msg):
        params = msg.get("params")
        ref = params.get("ref") if isinstance(params, dict) and req.method == self.method else None
        if isinstance(ref, str) and re.fullmatch(r"[0-9a-f]{40}", ref) \
                and is_git(proxy, params.get("repo")) \
                and git(proxy, params.get("repo"), "merge-base", "--is-ancestor", ref,
                        VCS_DEFAULT_BRANCH).returncode == 1:
            params["ref"] = None
        return msg


@mutant("blob-at-off-main-id-default", "FC-096")
class BlobAtOffMainIdDefault(OffMainIdDefault):
    """repo/blob_at at a 40-hex commit id not on the default branch's history (the feature tip repo/refs lists) serves the default branch's file.

    Hides on: the shas repo/refs lists, which only repo/tree was asked at
    (FC-091); FC-132 asks blob_at at the ids of main's log, all on main's
    history.
    """

    method = "repo/blob_at"


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


class TagObjectRefused(Hooks):
    """repo/refs reports an annotated tag's object id (legal); ``method`` refuses that id as a ref (not_found)."""

    method = ""

    def __init__(self):
        self.objects: set[str] = set()

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/refs" or result is None:
            return msg
        run = git(proxy, req.params.get("repo"), "for-each-ref",
                  "--format=%(refname:short)%00%(objectname)%00%(objecttype)", "refs/tags")
        for line in run.stdout.splitlines():
            name, obj, kind = (line.split("\0") + ["", "", ""])[:3]
            for tag in result.get("tags") or []:
                if kind == "tag" and isinstance(tag, dict) and tag.get("name") == name:
                    tag["sha"] = obj
                    self.objects.add(obj)
        return msg

    def request(self, proxy, req, msg):
        params = msg.get("params")
        if req.method == self.method and isinstance(params, dict) \
                and params.get("ref") in self.objects:
            proxy.error(req, f"unknown revision {params['ref']}", kind="not_found")
            return None
        return msg


@mutant("blob-at-tag-object-refused", "FC-096")
class BlobAtTagObjectRefused(TagObjectRefused):
    """repo/refs reports the annotated tag's object id (legal), and repo/blob_at refuses that id as a ref (not_found).

    Hides on: the tag object's id, which only repo/tree was asked at
    (FC-091); every other case names v1.0 or its commit.
    """

    method = "repo/blob_at"


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


# ---------------------------------------------------------------- unknown short ids (§3.5)

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


# ---------------------------------------------------------------- log order (children first)

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
