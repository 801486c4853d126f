"""Search cases (FC-030..FC-034): what search/code hits must mean.

Single lower-case terms from fixture.catalog; hits are folded by (repo, path)
and checked against the bytes on disk. Items are read through the SearchHit
model: a streamed hit's shape as a whole is FC-044's, each member here is
judged by its owner (``located`` by FC-032, ``index`` by FC-033).
"""

from cases.kit.api import case, fc_assert, listing, need, owner, show, skip, warn
from cases.kit.facts import disk_blobs, files_named, lines_with, read_or_none, served
from cases.kit.formats import instant
from cases.kit.replies import attempt, blob_bytes, judge_path_cut, require_code_search, search
from fixture.catalog import (ALPHA, TERM_LINE, TERM_MANY_ALPHA, TERM_PATHONLY, TERM_SEVERAL,
                             TERM_WIDE, WIDE_BIG_DIR)


@case("FC-030")
def test_path_only_hits_render(adapter, fx):
    """Hits of a filename-only term (a path: query, and the bare term with
    content search), one-shot and streamed, name a served repo and a real
    path, and a non-empty `sha` resolves to that file's bytes. A path-only
    hit (`matches` []) is a MAY; `matches` that are not in the file's bytes
    warn (a SHOULD: the host cannot locate them).

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
    # streamed too (the host's global search); an error there is FC-034's
    streamed, _ = attempt(search, adapter, f"path:{TERM_PATHONLY}", partial=True)
    found += [streamed] if streamed is not None else []
    if adapter.caps.code_search:
        found += [search(adapter, TERM_PATHONLY), search(adapter, TERM_PATHONLY, partial=True)]
    # every hit: TERM_PATHONLY is in a file name only, so each hit is a filename match
    hits = [(s, h) for s in found for h in (s.streamed if s.partial else s.items)]
    # Matching is the adapter's (RULINGS "Search"): a `path:` query may be an
    # ordinary term, so the file may come back only for the bare term. Judged
    # on every hit any of the four queries returned; none at all is no evidence.
    need(hits, f"no search for {TERM_PATHONLY!r} (path:, bare, one-shot or streamed) returned a "
               "hit", None)
    repos = served(fx)
    unlocatable = []
    for s, hit in hits:
        name = repos.get(hit.repo)
        fc_assert(name is not None and hit.path in disk_blobs(fx, name),
                  expected="a served repo and a file of it",
                  got=f"repo {show(hit.repo)}, path {show(hit.path)} in {s.what}",
                  why="the host opens a filename hit by its repo and path"
                  + (" (a path prefixed with the repo?)" if name and hit.path.startswith(name + "/")
                     else ""))
        data = fx.read(name, hit.path)
        if isinstance(hit.sha, str) and hit.sha:
            got = blob_bytes(adapter, fx, name, hit.sha)
            fc_assert(got == data, expected=f"the bytes of {hit.path}",
                      got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                      why="a hit's sha previews that file through repo/blob")
        absent = [m for m in hit.matches if isinstance(m, str) and m.encode() not in data]
        if absent:
            unlocatable.append(f"{hit.path} matches {show(absent)} in {s.what}")
    if unlocatable:
        # §3.13 SHOULD: matches are literal substrings of the stored file; a
        # filename match may be path-only (MAY; RULINGS "Search")
        warn(f"{listing(unlocatable, 2)}: not in the file's bytes, so the host marks the hit "
             f"unlocatable; a filename match can be sent path-only (matches [])")


# A few of wide's hits suffice for a member's type or a line (a limited query,
# and a stream read that far: see replies.search); a limit that cuts TERM_WIDE.
WIDE_SAMPLE, CUT_LIMIT = 10, 20

# FC-031's terms: the one on a line other than 1, a term with several hits per
# batch (the k-th hit), one in alpha and beta, and one in wide's many files.
LINE_TERMS = (TERM_LINE, TERM_MANY_ALPHA, TERM_SEVERAL, TERM_WIDE)


@case("FC-031")
def test_line_is_one_based_and_real(adapter, fx):
    """Every hit carrying `line`, one-shot and streamed, for terms with hits in
    every plain repository (alpha, beta, and a sample of WIDE_SAMPLE of
    wide's 600 files) and several hits per reply or batch, and for a repo:-scoped search (the host's
    repository search), has line >= 1, and that 1-based line of the file contains the term (any
    line that does: one hit per matching line is fine). An adapter that sends
    no line at all is not evaluated (skipped, not warned).

    Falsified by: lines-zero-based: Search hit lines are 0-based.
    """
    require_code_search(adapter)
    repos, judged, bad, elsewhere = served(fx), 0, [], []
    scoped = f"repo:{fx.repo(ALPHA)} {TERM_LINE}"   # TERM_LINE is in alpha
    for q, term in (*((t, t) for t in LINE_TERMS), (scoped, TERM_LINE)):
        # wide's many files: a sample of them holds lines enough
        sample = {"limit": WIDE_SAMPLE} if term == TERM_WIDE else {}
        found = [search(adapter, q, **sample),
                 search(adapter, q, partial=True, enough=sample.get("limit"), **sample)]
        if q == TERM_LINE:
            for s in found:
                s.need_hits()
        for s in found:
            for n, hit in enumerate(s.streamed if s.partial else s.items):
                line = hit.line
                if line is None:
                    continue
                data = (read_or_none(fx, repos[hit.repo], hit.path)
                        if hit.repo in repos else None)
                if data is None:   # no such file: which file a hit names is its owner's
                    elsewhere.append(s)
                    continue
                judged += 1
                lines = lines_with(data, term)
                if line < 1 or line not in lines:
                    bad.append(f"{hit.repo} {hit.path} line {line} (hit {n + 1} of {s.what}): "
                               f"the term is on line(s) "
                               f"{listing(lines, 3) if lines else 'none'}"
                               + (" (0-based?)" if line + 1 in lines else ""))
    fc_assert(not bad, expected="line >= 1, a line of the file that contains the term",
              got=listing(bad, 3), why="line is the 1-based real line of the match")
    if not judged and elsewhere:
        need(False, f"every hit with a line named a file the fixture does not have (e.g. in "
             f"{elsewhere[0].what})", owner("streamed hits are" if elsewhere[0].partial
                                            else "search recall is"))
    # line is optional (§3.13) and no SHOULD asks for it: an adapter that never
    # sends one is not evaluated (a skip, as FC-105/FC-107 do), never warned
    need(judged, "no hit carried a line (optional, §3.13), so line numbering could not be "
         "checked")


@case("FC-032")
def test_located_is_boolean(adapter, fx):
    """`located`, when present, is a boolean on every hit (alpha's and wide's,
    one-shot and streamed); a hit with located false still names the repo and
    path of a real file.

    Falsified by: located-string: Every hit carries located "stale" (a string, not a boolean).
    """
    require_code_search(adapter)
    found = [search(adapter, TERM_MANY_ALPHA), search(adapter, TERM_MANY_ALPHA, partial=True)]
    for s in found:
        s.need_hits()
    found += [search(adapter, TERM_WIDE, limit=WIDE_SAMPLE),
              search(adapter, TERM_WIDE, limit=WIDE_SAMPLE, partial=True, enough=WIDE_SAMPLE)]
    bad = [f"{s.what}: {b}" for s in found for r in (s.reading, *s.batches)
           for b in (f"{path}: {message}" for path, message in r.at("...located"))]
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
    (ISO-8601 advised), in one-shot and streamed replies, complete ones and
    ones cut by a small limit.

    Falsified by: index-as-of-number: Search results carry index {"as_of": 1732838400} (a number,
    not a string).
    """
    require_code_search(adapter)
    for term, limit, partial in ((TERM_MANY_ALPHA, 500, False), (TERM_MANY_ALPHA, 500, True),
                                 (TERM_WIDE, CUT_LIMIT, False), (TERM_WIDE, CUT_LIMIT, True)):
        found = search(adapter, term, limit=limit, partial=partial)
        bad = found.reading.at("index...")
        fc_assert(not bad, expected="index absent, or an object whose as_of is absent or a "
                  "string", got=f"{found.what} limit {limit} (truncated "
                  f"{show(found.result.truncated)}): " + listing(f"{p}: {m}" for p, m in bad),
                  why="index.as_of lives in an index object")
        as_of = found.result.index.as_of if found.result.index is not None else None
        if as_of is not None and instant(as_of) is None:
            warn(f"index.as_of {as_of!r} is not an ISO-8601 date-time")


@case("FC-034")
def test_file_search_inherits_code_search(adapter, fx):
    """With file_search effectively true (declared, or inherited from
    code_search), a path: query answers a result, one-shot and streamed
    (the host's global search streams). What it matches is the adapter's
    (RULINGS "Search": `path:` may be an ordinary term), so no hit is
    required; a one-shot path: query's truncated is honest where the hits
    show it (a streamed one's is FC-042's): true when a reply for wide's
    1,200 flat/ files at limit 20 names some but not all of them; a cut far
    below the limit warns. A stream that answers its hits in the final
    reply is FC-042's defect: the one-shot path is judged and the case then
    skips naming FC-042.

    Falsified by: no-file-search: file_search is omitted (so it inherits code_search: true) but
    path: queries answer an error.
    """
    if not adapter.caps.file_search:
        skip("file_search is effectively false, so no path: query is sent")
    answered = {}
    for q, text, limit in ((f"path:{TERM_PATHONLY}", TERM_PATHONLY, 500),
                           (f"path:{WIDE_BIG_DIR}", WIDE_BIG_DIR, CUT_LIMIT)):
        for partial in (False, True):
            found, err = attempt(search, adapter, q, partial=partial, limit=limit, own=True)
            what = f"search/code {q!r}" + (" (streamed)" if partial else "")
            fc_assert(err is None, expected="a result",
                      got=f"an error: {err.message if err else ''}",
                      why=f"file search is available, so {what} is served")
            answered[(q, partial)] = found
            if not partial:
                judge_path_cut(found, text, found.items, files_named(fx, text))
    # the streams last: hits in a streamed reply's items are FC-042's to judge
    misplaced = [f"{found.what}: {len(found.items)} hit(s)" for (_, partial), found
                 in answered.items() if partial and found.items and not found.streamed]
    need(not misplaced, f"{listing(misplaced)} in the final reply, none streamed",
         owner("streamed replies are"))
