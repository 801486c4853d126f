"""Path mutants, part p: `truncated` claims on paths their owner cases do
not read (every truncation rule: repo/tree, one-shot and streamed
search/code, repo/log, repo/commit).

Each mutant lies about truncation only where its owner does not look, and
fails exactly its owner case; the two controls at the end are legal
variations those cases must keep green (written like
tests/adapters/mutants_deep.py: a hook class per switch, its docstring's
first line what it changes, then "Hides on:").
"""

from __future__ import annotations

import re

from tests.adapters.controls_deep import kept
from tests.adapters.hooks import ResultEdit
from tests.adapters.mutants_deep import git_lines, promoted
from tests.adapters.proxy import Hooks, result_of

# ---------------------------------------------------------------- repo/log (FC-095)

def tag_names(proxy, repo) -> set[str]:
    """The tag names of a git repository of the fixture (none for the others)."""
    return set(git_lines(proxy, repo, "tag")) if isinstance(repo, str) else set()


class LogEdit(ResultEdit):
    method = "repo/log"


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


# ---------------------------------------------------------------- one-shot search (FC-070)

class SearchEdit(ResultEdit):
    method = "search/code"


SEARCH_RULE = ('§3.13: "truncated ... true = the result set is provably incomplete"; '
               'RULINGS "Bounded compute": a claim of truncation that is false fails')


@promoted("scoped-search-complete-truncated", "FC-070", SEARCH_RULE)
class ScopedSearchCompleteTruncated(SearchEdit):
    """One-shot repo:-scoped searches say truncated true, whatever they found.

    Hides on: repo:-scoped queries whose repository holds fewer matches than
    the limit; FC-070 scoped only wide's 600-file term at limit 500, a cut
    that is true.
    """

    def applies(self, proxy, req):
        return not req.streaming and "repo:" in str(req.params.get("q"))

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("search-full-at-limit-truncated", "FC-070", SEARCH_RULE)
class SearchFullAtLimitTruncated(SearchEdit):
    """One-shot searches say truncated true whenever they return exactly limit hits (they never look one hit past the limit).

    Hides on: a limit equal to the number of files that match; FC-070's
    limits were far above or below every term's count.
    """

    def applies(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        if len(result.get("items") or []) == req.params.get("limit"):
            result["truncated"] = True


# ---------------------------------------------------------------- path: and streams (FC-034, FC-042)

def path_query(req) -> bool:
    return req is not None and str(req.params.get("q")).startswith("path:")


@promoted("path-oneshot-small-limit-error", "FC-034",
          '§2.4: file_search "inherits code_search"; §3.13: path-only queries are carried over '
          'search/code')
class PathOneShotSmallLimitError(Hooks):
    """One-shot path: searches with a limit below 100 answer an error (file search served at the host's limit only).

    Hides on: a path: query's limit; the file search cases asked path:
    queries at the host's 500, and a small limit only of content terms.
    """

    def request(self, proxy, req, msg):
        limit = req.params.get("limit")
        if req.method == "search/code" and not req.streaming and path_query(req) \
                and isinstance(limit, int) and limit < 100:
            proxy.error(req, "file search: bad limit")
            return None
        return msg


@promoted("path-oneshot-cut-untruncated", "FC-034",
          'RULINGS "Bounded compute": what fails is ... a cut without truncated: true')
class PathOneShotCutUntruncated(SearchEdit):
    """One-shot path: searches stopped by their limit say truncated false.

    Hides on: a path: query with more matching files than its limit
    (path:flat, wide's 1,200 files); no case asked one one-shot.
    """

    def applies(self, proxy, req):
        return not req.streaming and path_query(req)

    def edit(self, proxy, req, result):
        result["truncated"] = False


@promoted("path-stream-cut-untruncated", "FC-042",
          '§5.3: "the final reply ... carries the authoritative truncated"; RULINGS "Bounded '
          'compute": a cut without truncated: true fails')
class PathStreamCutUntruncated(SearchEdit):
    """Streamed path: searches stopped by their limit end with truncated false.

    Hides on: path: streams; FC-042 judged the truncated of content streams
    only (a path: stream had no expected set), and path:flat at limit 20
    was streamed by FC-041 and FC-044, which do not read it.
    """

    def applies(self, proxy, req):
        return req.streaming and path_query(req)

    def edit(self, proxy, req, result):
        result["truncated"] = False


# ---------------------------------------------------------------- tree at an id (FC-022)

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


# ---------------------------------------------------------------- commit by name (FC-109)

def asked_by_name(req) -> bool:
    sha = req.params.get("sha")
    return isinstance(sha, str) and not re.fullmatch(r"[0-9a-f]{4,64}", sha)


@promoted("commit-by-name-truncated", "FC-109",
          '§3.12: truncated "true = the file list is incomplete (budget reached)"')
class CommitByNameTruncated(ResultEdit):
    """repo/commit asked by a branch or tag name says truncated true over its full file list.

    Hides on: commits asked by name (the host's "show commit" on a branch or
    tag); FC-109 read truncated on the commits asked by full and by
    abbreviated id, and FC-101, which asks the names, judges only the sha.
    """

    method = "repo/commit"

    def applies(self, proxy, req):
        return asked_by_name(req)

    def edit(self, proxy, req, result):
        result["truncated"] = True


# ---------------------------------------------------------------- controls

@kept("tree-budget-2000",
      '§3.3: "aggregate the backend\'s pages up to an adapter-chosen budget ... set truncated: '
      'true when (and only when) the budget cut the walk"')
class TreeBudget2000(ResultEdit):
    """Trees at ref null stop at an adapter budget of 2,000 entries and then say truncated true (wide's, the only tree that large).

    A control, not a mutant: the budget is the adapter's to choose, and a
    walk it cut says so. FC-020 lets a truncated tree leave paths out and
    FC-022 accepts the cut; nothing else may hold the missing paths against
    it.
    """

    method = "repo/tree"
    BUDGET = 2000

    def applies(self, proxy, req):
        return req.params.get("ref") is None

    def edit(self, proxy, req, result):
        entries = result.get("entries")
        if isinstance(entries, list) and len(entries) > self.BUDGET:
            result["entries"] = entries[:self.BUDGET]
            result["truncated"] = True


@kept("path-name-only",
      'RULINGS "Search": the protocol fixes the qualifiers, not matching semantics (a path: '
      'query may match file names only)')
class PathNameOnly(Hooks):
    """path: queries match the file name only, not the directories above it (path:flat finds none of wide's flat/ files).

    A control, not a mutant: how a path: query matches is the adapter's.
    FC-034 and FC-042 judge a path: query's truncated against the files whose
    path holds the text only when the reply names some of them; a reply
    that names none of them, complete, passes.
    """

    def _query(self, req) -> str | None:
        q = req.params.get("q") if req is not None and req.method == "search/code" else None
        return q[len("path:"):] if isinstance(q, str) and q.startswith("path:") else None

    def _keep(self, req, items):
        text = self._query(req)
        return [h for h in items if not isinstance(h, dict)
                or text in str(h.get("path", "")).rsplit("/", 1)[-1]]

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if self._query(req) is not None and isinstance(params, dict) \
                and isinstance(params.get("items"), list):
            params["items"] = self._keep(req, params["items"])
            if not params["items"]:
                return None   # a batch of nothing is not sent
        return msg

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if self._query(req) is not None and result is not None:
            if isinstance(result.get("items"), list):
                result["items"] = self._keep(req, result["items"])
            result["truncated"] = False   # what is left is every file name holding the text
        return msg
