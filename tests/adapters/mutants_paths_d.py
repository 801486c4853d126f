"""Path mutants, part d, and their controls: the revision rules the review
found unjudged (refs' shas, log cuts without truncated, blame dates, refs
round trips through blob_at/log/blame, unknown short ids) and the legal
variations the fixes must keep green (opaque commit ids).

Each mutant breaks its rule where its owner case did not look before and
fails exactly that case; each control passes the whole suite. A hook class
per switch, its docstring's first line what it changes, then "Hides on:"
(mutants) or why it is legal (controls).
"""

from __future__ import annotations

import datetime as _dt
import re
import subprocess

from fixture.catalog import VCS_DEFAULT_BRANCH
from tests.adapters.controls import control
from tests.adapters.hooks import is_git, repo_name
from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks, result_of


def git(proxy, repo, *args: str) -> subprocess.CompletedProcess:
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
