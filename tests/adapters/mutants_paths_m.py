"""Path mutants, part m: repo/commit asked what it must refuse, where
FC-108 did not ask before (found by an adversarial review of the commits
group): git's 7-digit short length, the id of an object that is no commit,
and a real commit id asked of a repository that does not exist; a log id
it must accept back (FC-132); and commit-ish names it must resolve right
(FC-101); counts standing in for unknown ones (FC-107).

Each fails exactly its case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations

import re

from tests.adapters.controls_deep import ShortCommitIdsRefused, shorten
from tests.adapters.hooks import fixture_repos, is_git, repo_name
from tests.adapters.mutants_deep import promoted
from tests.adapters.mutants_v16 import CommitReply, commit_files, git_out
from tests.adapters.proxy import Hooks, result_of

HEX = re.compile(r"[0-9a-fA-F]{4,40}")
RULE = ('§3.12/§6.2: repo/commit of a sha that names no commit of the repository is an error '
        '(not_found preferred)')


def git(proxy, repo, *args: str) -> str:
    """``git <args>`` in the served repository ``repo``, as text ("" on failure)."""
    return git_out(proxy, repo, *args).decode("utf-8", "replace").strip()


class RefusalAnsweredByTip(Hooks):
    """An error reply to repo/commit of a git repository that ``refused(proxy,
    sha)`` names is replaced by the default branch tip's commit."""

    def refused(self, proxy, repo, sha: str) -> bool:
        return False

    def reply(self, proxy, req, msg):
        if req is None or req.method != "repo/commit" or "error" not in msg \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        sha = req.params.get("sha")
        if not (isinstance(sha, str) and HEX.fullmatch(sha)
                and self.refused(proxy, req.params["repo"], sha)):
            return msg

        def tip(answer: dict) -> None:
            proxy.send_host({**answer, "id": req.id} if "result" in answer else msg)

        proxy.call_child("repo/commit", {"repo": req.params["repo"], "sha": "HEAD"}, tip)
        return None


@promoted("short7-unknown-tip", "FC-108", RULE)
class Short7UnknownTip(RefusalAnsweredByTip):
    """repo/commit of an unknown hex abbreviation shorter than 12 digits (git's 7-digit short ids) answers the default branch's tip.

    Hides on: FC-108 asked a 40-hex id, a 12-hex prefix and a name; the
    short-hex-unknown-tip mutant breaks every abbreviated length, this one
    only the length the host shows (git's %h).
    """

    def refused(self, proxy, repo, sha):
        return len(sha) < 12


@promoted("commit-of-non-commit-object", "FC-108", RULE)
class CommitOfNonCommitObject(RefusalAnsweredByTip):
    """repo/commit of the id of a blob or a tree answers the default branch's tip (the object exists, which is all it checks).

    Hides on: FC-108 asked ids naming no object at all; never an existing
    blob or tree id.
    """

    def refused(self, proxy, repo, sha):
        return git(proxy, repo, "cat-file", "-t", sha) in ("blob", "tree")


@promoted("commit-of-any-repo", "FC-108", RULE)
class CommitOfAnyRepo(Hooks):
    """repo/commit of a repository that is not served answers the commit of that id from the git repository (commits looked up by id alone).

    Hides on: FC-108 asked vcs only; FC-062 asks a missing repository the
    sha 000...0, which no repository has.
    """

    def request(self, proxy, req, msg):
        repo, sha = req.params.get("repo"), req.params.get("sha")
        if req.method != "repo/commit" or not isinstance(repo, str) or not isinstance(sha, str) \
                or repo_name(repo) in fixture_repos(proxy):
            return msg
        for name in sorted(fixture_repos(proxy)):
            if is_git(proxy, name) and git(proxy, name, "rev-parse", "--verify", "-q",
                                           f"{sha}^{{commit}}"):
                org = repo.split("/", 1)[0] if "/" in repo else "local"
                msg["params"]["repo"] = f"{org}/{name}"
                break
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


@promoted("commit-ish-answers-tip", "FC-101",
          '§3.12: "sha: the resolved (full) commit id"; RULINGS: a commit is judged by what it '
          'resolves to')
class CommitIshAnswersTip(Hooks):
    """repo/commit of a branch or tag name, or of an annotated tag's id, answers the default branch's tip.

    Hides on: commit-ish that are no spelling of a commit id; the commit
    cases asked git's full and abbreviated ids, and "main" is the tip anyway.
    """

    def request(self, proxy, req, msg):
        sha = req.params.get("sha")
        if req.method != "repo/commit" or not isinstance(sha, str) or not sha \
                or not is_git(proxy, req.params.get("repo")):
            return msg
        commit = git(proxy, req.params["repo"], "rev-parse", "--verify", "-q", f"{sha}^{{commit}}")
        if commit and not commit.lower().startswith(sha.lower()):
            msg["params"]["sha"] = "HEAD"
        return msg


@promoted("counts-zero-without-patch", "FC-107",
          '§3.12: "MUST NOT Report missing counts as zero"')
class CountsZeroWithoutPatch(CommitReply):
    """A text change whose patch is left out (unavailable) reports deletions 0 although lines were removed (the additions stay right).

    Hides on: one zero beside a true count without a patch; FC-107 compared
    counts with the patch when one was sent and, without one, failed only
    two zeros.
    """

    def edit(self, proxy, req, result):
        for f in commit_files(result):
            if isinstance(f.get("patch"), str) and f["patch"] and \
                    isinstance(f.get("deletions"), int) and f["deletions"] > 0 and \
                    isinstance(f.get("additions"), int) and f["additions"] > 0:
                del f["patch"]
                f["deletions"] = 0
