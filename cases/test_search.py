"""Search cases (FC-030..FC-034): what search/code hits must mean.

Single lower-case terms from fixture.catalog; hits are folded by (repo, path)
and checked against the bytes on disk. Items are read through the SearchHit
model: a streamed hit's shape as a whole is FC-044's, each member here is
judged by its owner (``located`` by FC-032, ``index`` by FC-033).
"""

from cases.api import case, fc_assert, listing, need, owner, show, skip, warn
from cases.facts import disk_blobs, lines_with, read_or_none, served
from cases.formats import instant
from cases.replies import attempt, blob_bytes, require_code_search, search
from fixture.catalog import TERM_LINE, TERM_MANY_ALPHA, TERM_PATHONLY


@case("FC-030")
def test_path_only_hits_render(adapter, fx):
    """Path-only hits (`matches` []) of a filename-only term name a served repo
    and a real path, and a non-empty `sha` resolves to that file's bytes.

    Falsified by: pathonly-prefixed: Path-only hits (no matches) carry a path prefixed with the
    repository name.
    """
    if not adapter.caps.file_search:
        skip("needs filename search and file_search is false")
    by_name, err = attempt(search, adapter, f"path:{TERM_PATHONLY}")
    if err is not None:
        need(False, f"search/code 'path:{TERM_PATHONLY}' answered an error ({err.message})",
             owner("path: queries are"))
    found = [by_name]
    found[0].need_hits()
    if adapter.caps.code_search:
        found.append(search(adapter, TERM_PATHONLY))
    path_only = [h for s in found for h in s.items
                 if h.matches == () and not s.reading.of(h, "matches")]
    fc_assert(path_only, expected=f"at least one hit with matches [] for {TERM_PATHONLY!r}",
              got=f"{sum(len(s.items) for s in found)} hits, none path-only",
              why="a term found only in a file name yields a path-only hit")
    repos = served(fx)
    for hit in path_only:
        name = repos.get(hit.repo)
        fc_assert(name is not None and hit.path in disk_blobs(fx, name),
                  expected="a served repo and a file of it",
                  got=f"repo {show(hit.repo)}, path {show(hit.path)}",
                  why="the host opens a path-only hit by its repo and path")
        if isinstance(hit.sha, str) and hit.sha:
            got = blob_bytes(adapter, fx, name, hit.sha)
            fc_assert(got == fx.read(name, hit.path), expected=f"the bytes of {hit.path}",
                      got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                      why="a hit's sha previews that file through repo/blob")


@case("FC-031")
def test_line_is_one_based_and_real(adapter, fx):
    """Every hit carrying `line` (one-shot or streamed) has line >= 1, and that
    1-based line of the file contains the term.

    Falsified by: lines-zero-based: Search hit lines are 0-based.
    """
    require_code_search(adapter)
    found = [search(adapter, TERM_LINE), search(adapter, TERM_LINE, partial=True)]
    got = [h for s in found for h in s.need_hits()]
    repos, judged = served(fx), 0
    for hit in got:
        line = hit.line
        data = read_or_none(fx, repos[hit.repo], hit.path) if hit.repo in repos else None
        if line is None or data is None:
            continue
        judged += 1
        where = f"{hit.path} line {line}"
        fc_assert(line >= 1, expected="line >= 1", got=where, why="lines count from 1")
        lines = lines_with(data, TERM_LINE)
        if not lines or line == lines[0]:
            continue
        fc_assert(line in lines, expected=f"line {lines[0]} (contains {TERM_LINE!r})",
                  got=f"{where}, which does not contain it",
                  why="line is the real line of the match")
        warn(f"{where} contains the term, but its first occurrence is line {lines[0]}")
    if not judged:
        warn("no hit carried a line, so line numbering could not be checked")


@case("FC-032")
def test_located_is_boolean(adapter, fx):
    """`located`, when present, is a boolean; a hit with located false still
    names the repo and path of a real file.

    Falsified by: located-string: Every hit carries located "stale" (a string, not a boolean).
    """
    require_code_search(adapter)
    found = [search(adapter, TERM_MANY_ALPHA), search(adapter, TERM_MANY_ALPHA, partial=True)]
    for s in found:
        s.need_hits()
    readings = [r for s in found for r in (s.reading, *s.batches)]
    bad = [f"{path}: {message}" for r in readings for path, message in r.at("...located")]
    fc_assert(not bad, expected="located true or false", got=listing(bad, 3),
              why="located is a JSON boolean")
    repos = served(fx)
    stale = [h for s in found for h in (*s.items, *s.streamed) if h.located is False]
    unreal = [f"{h.repo} {h.path}" for h in stale
              if h.repo not in repos or h.path not in disk_blobs(fx, repos[h.repo])]
    fc_assert(not unreal, expected="stale hits on real files", got=listing(unreal, 3),
              why="a hit marked located false still names a real file")


@case("FC-033")
def test_index_as_of_shape(adapter, fx):
    """`index` is absent or an object whose `as_of` is absent or a string
    (ISO-8601 advised), in one-shot and streamed replies.

    Falsified by: index-as-of-number: Search results carry index {"as_of": 1732838400} (a number,
    not a string).
    """
    require_code_search(adapter)
    for found in (search(adapter, TERM_MANY_ALPHA), search(adapter, TERM_MANY_ALPHA, partial=True)):
        bad = found.reading.at("index...")
        fc_assert(not bad, expected="index absent, or an object whose as_of is absent or a "
                  "string", got=listing(f"{p}: {m}" for p, m in bad),
                  why="index.as_of lives in an index object")
        as_of = found.result.index.as_of if found.result.index is not None else None
        if as_of is not None and instant(as_of) is None:
            warn(f"index.as_of {as_of!r} is not an ISO-8601 date-time")


@case("FC-034")
def test_file_search_inherits_code_search(adapter, fx):
    """With file_search effectively true (declared, or inherited from
    code_search), a path: query answers a result with at least one hit.

    Falsified by: no-file-search: file_search is omitted (so it inherits code_search: true) but
    path: queries answer an error.
    """
    if not adapter.caps.file_search:
        skip("file_search is effectively false, so no path: query is sent")
    found = search(adapter, f"path:{TERM_PATHONLY}", own=True)
    fc_assert(found.items, expected=f"at least one hit for path:{TERM_PATHONLY}",
              got=f"{len(found.items)} hits",
              why="file search is available, so a file name is found")
