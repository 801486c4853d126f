"""The matrix mutants that break a case of cases/test_bounded.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from tests.adapters.common import HitEdit, RespawnedEdit, SearchEdit, TRUNCATED_RULE, is_path_query
from tests.adapters.hooks import OneShotFirstPage, ResultEdit, Variant, matrix, repo_name
from tests.adapters.proxy import hits_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("search-one-page", "FC-070")
class SearchOnePage(OneShotFirstPage):
    """One-shot searches return only the first 100 hits (one backend page) without truncated."""


@mutant("search-page-20", "FC-070")
class SearchPage20(OneShotFirstPage):
    """One-shot searches return only their first 20 hits (a backend page of 20) with truncated false."""

    def edit(self, proxy, req, result):
        items = result.get("items") or []
        if len(items) > 20:
            result["items"], result["truncated"] = items[:20], False


@promoted("scoped-search-one-page", "FC-070",
      'RULINGS "Bounded compute": what fails is ... a cut without truncated: true; §3.13 truncated '
      '"true = the result set is provably incomplete"')
class ScopedSearchOnePage(OneShotFirstPage):
    """One-shot repo:-scoped searches return only the first 100 hits (one page) without truncated.

    Hides on: repo: qualified searches; FC-070 searches unscoped.
    """

    def applies(self, proxy, req):
        q = req.params.get("q")
        return not req.streaming and isinstance(q, str) and "repo:" in q


class OneShotContent(ResultEdit):
    """One-shot content searches (not path: queries)."""

    method = "search/code"

    def applies(self, proxy, req):
        return not req.streaming and not is_path_query(req)


@promoted("oneshot-content-empty-untruncated", "FC-070",
          'RULINGS "Bounded compute": "what fails is ... a cut without truncated: true"')
class OneshotContentEmptyUntruncated(OneShotContent):
    """One-shot content searches answer no hit with truncated false (a "cut" before the first hit, claimed complete).

    Hides on: the cases that need one-shot hits skip naming FC-070 when
    there are none; FC-070 alone can tell an empty result is incomplete.
    """

    def edit(self, proxy, req, result):
        result["items"], result["truncated"] = [], False


@promoted("oneshot-first-repo-only", "FC-070",
          'RULINGS "Bounded compute": "what fails is ... a cut without truncated: true"')
class OneshotFirstRepoOnly(OneShotContent):
    """One-shot searches return only the hits of the first repository that has any, truncated false.

    Hides on: terms in several repositories; FC-070 searched wide's term only.
    """

    def edit(self, proxy, req, result):
        items = [h for h in result.get("items") or [] if isinstance(h, dict)]
        if items:
            result["items"] = [h for h in items if h.get("repo") == items[0].get("repo")]


@promoted("oneshot-content-hit-basename", "FC-070",
          '§3.13: hit "path": "repository-relative path"')
class OneshotContentHitBasename(OneShotContent):
    """One-shot content hits carry the file's base name as path (src/net/retry.rs -> retry.rs).

    Hides on: FC-070 judged no hit of a cut reply, and wide's files sit one
    directory deep; FC-031 skipped hits naming no file.
    """

    def edit(self, proxy, req, result):
        for hit in hits_of(req, {"result": result}):
            if hit.get("matches") and isinstance(hit.get("path"), str):
                hit["path"] = hit["path"].rsplit("/", 1)[-1]


@promoted("oneshot-beta-hits-under-alpha", "FC-070",
          '§3.13: hit "repo": "repository id", "path": "repository-relative path"')
class OneshotBetaHitsUnderAlpha(HitEdit):
    """One-shot hits in beta are reported under alpha's repository id (the path kept).

    Hides on: terms in alpha and beta; FC-070 searched wide's term only.
    """

    def applies(self, req):
        return not req.streaming

    def edit(self, proxy, req, hit):
        if repo_name(hit.get("repo")) == "beta":
            hit["repo"] = hit["repo"].rsplit("/", 1)[0] + "/alpha"


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


@promoted("respawn-search-truncated-lie", "FC-070",
          '§3.13: "truncated ... true = the result set is provably incomplete"; ' + TRUNCATED_RULE)
class RespawnSearchTruncatedLie(RespawnedEdit):
    """A respawned generation's one-shot searches say truncated true whatever they found.

    Hides on: a respawned generation; FC-070 judged the group adapter's
    one-shot replies, and FC-013 and FC-050, which search after a respawn,
    read the hits only.
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        result["truncated"] = True


@promoted("respawn-search-cut-untruncated", "FC-070", TRUNCATED_RULE + " (§3.13)")
class RespawnSearchCutUntruncated(RespawnedEdit):
    """A respawned generation's one-shot searches leave out their last hit and say truncated false.

    Hides on: a respawned generation; FC-070 judged the group adapter's
    one-shot replies, and FC-050, which compares a search after a kill
    with the group adapter's, named the missing file as a respawn that
    serves badly (a second owner of one rule).
    """

    method = "search/code"

    def also(self, proxy, req):
        return not req.streaming

    def edit(self, proxy, req, result):
        items = result.get("items")
        if isinstance(items, list) and items:
            result["items"] = items[:-1]
            result["truncated"] = False
