"""Path mutants, part m, of the commits group: a log id repo/commit must
accept back (FC-132); commit-ish names
it must resolve right (FC-101); counts standing in for unknown ones
(FC-107). (A result for an id that names no commit only warns, FC-108:
tests/adapters/controls_backend.py.)

Each fails exactly its case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations


from tests.adapters.controls_deep import ShortCommitIdsRefused, shorten
from tests.adapters.hooks import is_git
from tests.adapters.mutants_deep import promoted
from tests.adapters.mutants_v16 import CommitReply, commit_files, git_out
from tests.adapters.proxy import Hooks, result_of

def git(proxy, repo, *args: str) -> str:
    """``git <args>`` in the served repository ``repo``, as text ("" on failure)."""
    return git_out(proxy, repo, *args).decode("utf-8", "replace").strip()


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
