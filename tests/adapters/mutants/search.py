"""The matrix mutants that break a case of cases/test_search.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from fixture.catalog import TERM_PATHONLY
from tests.adapters.common import FirstInitialize, HitEdit, SearchEdit, path_query, query
from tests.adapters.hooks import InitResult, Variant, matrix, read_worktree, repo_name
from tests.adapters.proxy import Hooks, hits_of, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


class EveryHit(Hooks):
    """Apply ``edit(hit)`` to every search hit, streamed or not."""

    def edit(self, hit: dict) -> None:
        pass

    def _all(self, req, msg):
        for hit in hits_of(req, msg):
            self.edit(hit)
        return msg

    def reply(self, proxy, req, msg):
        return self._all(req, msg) if req is not None and req.method == "search/code" else msg

    def partial(self, proxy, req, msg):
        return self._all(req, msg)


@mutant("pathonly-prefixed", "FC-030")
class PathOnlyPrefixed(EveryHit):
    """Path-only hits (no matches) carry a path prefixed with the repository name."""

    def edit(self, hit):
        if not hit.get("matches") and isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


@mutant("lines-zero-based", "FC-031")
class LinesZeroBased(EveryHit):
    """Search hit lines are 0-based."""

    def edit(self, hit):
        if isinstance(hit.get("line"), int):
            hit["line"] -= 1


@mutant("located-string", "FC-032")
class LocatedString(EveryHit):
    """Every hit carries located "stale" (a string, not a boolean)."""

    def edit(self, hit):
        hit["located"] = "stale"


@mutant("index-as-of-number", "FC-033")
class IndexAsOfNumber(Hooks):
    """Search results carry index {"as_of": 1732838400} (a number, not a string)."""

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and result is not None:
            result["index"] = {"as_of": 1732838400}
        return msg


@mutant("no-file-search", "FC-034")
class NoFileSearch(InitResult):
    """file_search is omitted (so it inherits code_search: true) but path: queries answer an error."""

    def edit(self, proxy, req, result):
        (result.get("capabilities") or {}).pop("file_search", None)

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and isinstance(q, str) and "path:" in q:
            proxy.error(req, "path: qualifier is not supported", kind="provider")
            return None
        return msg


class IndexedHitEdit(Hooks):
    """Apply ``edit(proxy, req, hit, n)`` to hits of the searches ``applies`` picks
    (``n``: the hit's index in its reply or batch)."""

    def applies(self, proxy, req) -> bool:
        return True

    def edit(self, proxy, req, hit: dict, n: int) -> None:
        pass

    def _all(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and self.applies(proxy, req):
            for n, hit in enumerate(hits_of(req, msg)):
                self.edit(proxy, req, hit, n)
        return msg

    def reply(self, proxy, req, msg):
        return self._all(proxy, req, msg)

    def partial(self, proxy, req, msg):
        return self._all(proxy, req, msg)


@promoted("pathonly-prefixed-streamed", "FC-030",
      '§3.13 hit path: "repository-relative path"; RULINGS "Types"/§3.13 path-only hit "the host '
      'must still display it"')
class PathOnlyPrefixedStreamed(IndexedHitEdit):
    """Streamed path-only hits carry a path prefixed with the repository name.

    Hides on: streamed searches; FC-030 reads one-shot searches only.
    """

    def applies(self, proxy, req):
        return req.streaming

    def edit(self, proxy, req, hit, n):
        if not hit.get("matches") and isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


@promoted("line-drift-after-first", "FC-031",
      '§3.13: "MUST line, when present, is 1-based and is the real line of the match in that blob"')
class LineDriftAfterFirst(IndexedHitEdit):
    """Every hit after the first of a reply or batch names a line that does not contain the match.

    Hides on: the k-th hit (k >= 2); FC-031's term has one hit in the whole fixture.
    """

    def edit(self, proxy, req, hit, n):
        if n == 0 or type(hit.get("line")) is not int:
            return
        data = read_worktree(proxy, hit.get("repo"), hit.get("path"))
        matches = [m for m in hit.get("matches") or [] if isinstance(m, str) and m]
        if data is None or not matches:
            return
        needle = matches[0].lower().encode("utf-8")
        lines = data.split(b"\n")
        for number, line in enumerate(lines, 1):
            if needle not in line.lower():
                hit["line"] = number
                return


@promoted("located-string-wide", "FC-032", '§3.13 located: "boolean"; "MUST located: false is tolerated"; '
      'RULINGS "Types"')
class LocatedStringWide(IndexedHitEdit):
    """Hits in the wide repo carry located "stale" (a string).

    Hides on: wide's hits (FC-044, FC-070 search them); FC-032 reads alpha's term only.
    """

    def edit(self, proxy, req, hit, n):
        if repo_name(hit.get("repo")) == "wide":
            hit["located"] = "stale"


@promoted("as-of-number-when-truncated", "FC-033", '§3.13: "MUST index.as_of, when present, is a string"')
class AsOfNumberWhenTruncated(Hooks):
    """Search replies that say truncated true carry index {"as_of": 1732838400} (a number).

    Hides on: cut searches (FC-044, FC-070 get them); FC-033's term is never cut.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and result and result.get("truncated") is True:
            result["index"] = {"as_of": 1732838400}
        return msg


@promoted("file-search-streamed-error", "FC-034",
      'RULINGS "Capability keys": declared true means served (worded for FC-099\'s keys; FC-034 '
      'applies it to file_search, which §2.4 says inherits code_search; the matrix\'s no-file-search '
      'breaks the same rule one-shot)')
class FileSearchStreamedError(Hooks):
    """path: queries answer an error when streamed (partial: true), the host's global search path.

    Hides on: streamed path: queries; FC-034 and FC-030 send them one-shot.
    """

    def request(self, proxy, req, msg):
        q = req.params.get("q")
        if req.method == "search/code" and req.streaming and isinstance(q, str) and "path:" in q:
            proxy.error(req, "path: is not supported on the streaming path", kind="provider")
            return None
        return msg


@promoted("filename-hits-matched-prefixed", "FC-030",
          '§3.13: hit "path": "repository-relative path"')
class FilenameHitsMatchedPrefixed(HitEdit):
    """Filename hits carry matches [<the path: text>] and a path prefixed with the repository name.

    Hides on: hits with non-empty matches; FC-030 judged the repo and path of
    path-only hits (matches []) only.
    """

    def applies(self, req):
        return TERM_PATHONLY in query(req)

    def edit(self, proxy, req, hit):
        hit["matches"] = [TERM_PATHONLY]
        if isinstance(hit.get("path"), str):
            hit["path"] = f"{repo_name(hit.get('repo'))}/{hit['path']}"


def content_terms(req) -> list[str]:
    """The bare terms of a search's q (qualifiers left out)."""
    return [t for t in query(req).split() if ":" not in t]


@promoted("scoped-line-zero-based", "FC-031",
          '§3.13: "MUST line, when present, is 1-based and is the real line of the match"')
class ScopedLineZeroBased(HitEdit):
    """Hits of repo:-scoped searches carry line counted from 0 (the first matching line's index).

    Hides on: repo:-scoped queries (the host's repository search); FC-031
    searched unscoped terms only.
    """

    def applies(self, req):
        return "repo:" in query(req)

    def edit(self, proxy, req, hit):
        data, terms = read_worktree(proxy, hit.get("repo"), hit.get("path")), content_terms(req)
        if data is None or not terms:
            return
        for n, line in enumerate(data.split(b"\n")):
            if terms[0].encode() in line and n > 0:
                hit["line"] = n
                return


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


@promoted("respawn-lines-zero-based", "FC-031",
          '§3.13: "line, when present, is 1-based and is the real line of the match in that blob"')
class RespawnLinesZeroBased(FirstInitialize, EveryHit):
    """A respawned generation's search hits, one-shot and streamed, give 0-based lines.

    Hides on: a respawned generation; FC-031 reads the lines of its own
    searches, all in the group adapter's first generation (cases.judges.claims
    reads the line of every hit of a fixture term's search in the run).
    """

    def edit(self, hit):
        if self.respawned and isinstance(hit.get("line"), int):
            hit["line"] -= 1
