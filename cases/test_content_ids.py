"""Content id cases (FC-010..FC-013): blob ids follow the bytes, nothing else.

Ids are opaque: only equality is used, and expectations come from the bytes
on disk. Directory ids are not content ids, so only paths that are files on
disk are compared (the entries' ``type`` is FC-021's business).
"""

from cases.kit.api import case, fc_assert, listing, need, owner, show
from cases.kit.facts import ESCAPE_HINT, content_of, disk_blobs, read_or_none, served, url_hostile
from cases.kit.replies import (attempt, blob_bytes, blob_ids, files_at, listed_ids, remembered,
                               search, sweep, tree, tree_what, try_request)
from fixture.catalog import ALPHA, BETA, TERM_LINE, TERM_LINE_PATH, TERM_MANY_ALPHA, VCS, WIDE

BLOB_REFUSAL_BYTES = 1 << 20   # §3.4: a blob over 1 MiB may be refused


def changed_ids(first: dict, second: dict) -> dict:
    return {p: (first[p], second[p]) for p in first if p in second and first[p] != second[p]}


# The search whose hits' shas the id rules judge: content hits in 8 files of alpha.
HIT_TERM = TERM_MANY_ALPHA
HIT_PARAMS = {"q": HIT_TERM, "limit": 50}


def hits_by_file(adapter, fx, *, fresh: bool = False, located: bool = False,
                 partial: bool = False) -> dict[tuple[str, str], set[str]]:
    """(repo dir name, path) -> the non-empty string shas of the search/code
    HIT_PARAMS hits for that file of the fixture (a search item's sha is
    optional: "" is the default); with ``partial``, of the hits the same
    search streams (the host's global search, whose previews fetch them).
    Asked once a process unless ``fresh``;
    {} when the adapter declares no content search or answers an error (the
    search cases' business). Hits naming no served file are left out (FC-070's);
    with ``located``, so are hits that say located: false (§3.13: a lagging
    index that knows it may carry the id of the bytes it indexed)."""
    if not adapter.caps.code_search:
        return {}
    memo = {} if fresh else remembered(adapter)
    key = ("search/code", HIT_TERM) + (("streamed",) if partial else ())
    if key not in memo:
        found, err = attempt(search, adapter, HIT_TERM, limit=HIT_PARAMS["limit"],
                             partial=partial)
        memo[key] = () if err is not None else found.streamed if partial else found.items
    repos, out = served(fx), {}
    for hit in memo[key]:
        name = repos.get(hit.repo)
        if (name and hit.path in disk_blobs(fx, name) and isinstance(hit.sha, str) and hit.sha
                and not (located and hit.located is False)):
            out.setdefault((name, hit.path), set()).add(hit.sha)
    return out


@case("FC-010")
def test_same_bytes_same_id_across_calls(adapter, fx):
    """Two repo/tree calls of every repository (alpha, beta, wide, vcs; vcs at
    each branch and tag too when refs is declared) give
    every file the same sha, and two searches give a file's hits the same
    (non-empty) sha.

    Falsified by: ids-salted-per-call: Plain-directory trees salt blob ids with a per-process call
    counter from the second tree call on.
    """
    moved, lost, swept = [], [], sweep(adapter, fx)
    for name, ref, reading in swept.trees:
        first = listed_ids(adapter, fx, name, files_at(fx, name, ref), ref=ref,
                           listed=reading.model)
        second = blob_ids(tree(adapter, fx, name, ref).model, set(first))
        if not second:   # the second listing lost every file: coverage, FC-020's; left out
            lost.append(f"the second {tree_what(fx, name, ref)} listed none of the files the "
                        f"first listed")
            continue
        moved += [f"{tree_what(fx, name, ref)}: {p}: {a} then {b}"
                  for p, (a, b) in changed_ids(first, second).items()]
    before, after = hits_by_file(adapter, fx), hits_by_file(adapter, fx, fresh=True)
    moved += [f"search/code {HIT_TERM!r} (twice): the hits for {name}/{path}: "
              f"{listing(shas)} then {listing(after[name, path])}"
              for (name, path), shas in before.items()
              if (name, path) in after and after[name, path] != shas]
    fc_assert(not moved, expected="the same sha for unchanged bytes", got=listing(moved, 4),
              why="an unchanged file must keep its id from one call to the next")
    need(len(lost) < len(swept.trees), listing(lost, 2), owner("coverage is"))
    swept.done()


def collisions(ids: dict[str, str], fx, name: str, ref: str | None = None) -> list[str]:
    """"sha: path, path" for each id that ``ids`` (path -> sha) gives to
    different bytes (on disk at ref null, git's at a ref)."""
    owners: dict[str, list[str]] = {}
    for path, sha in ids.items():
        owners.setdefault(sha, []).append(path)
    content = content_of(fx, name, ref) if any(len(p) > 1 for p in owners.values()) else None
    return [f"{sha[:16]}: {', '.join(sorted(paths)[:3])}" for sha, paths in owners.items()
            if len(paths) > 1 and len({content(p) for p in paths}) > 1]


def hit_shas(provider, fx, path: str) -> set[str]:
    """The non-empty shas of the search hits for ``path`` of alpha (TERM_LINE
    is in it) that do not say located: false: a hit that does is one the
    adapter knows its index is out of date for (§3.13), and may carry the id
    of the bytes it indexed (that id serving those bytes is judged apart)."""
    if not provider.caps.code_search:
        return set()
    found, err = attempt(search, provider, TERM_LINE, limit=50)
    if err is not None:
        return set()   # search errors are the search cases' business
    return {h.sha for h in found.items if h.repo == fx.repo(ALPHA) and h.path == path
            and isinstance(h.sha, str) and h.sha and h.located is not False}


@case("FC-011")
def test_changed_bytes_change_id(spawn, fx_mutable):
    """After a file is rewritten with different bytes (longer, then the same
    length), its tree sha changes each time, repo/blob of the new sha serves
    the new bytes, repo/blob of each older sha serves that sha's older bytes
    or an error (an adapter may forget an old id; serving other bytes under
    it fails), and no search hit for it carries an id of older bytes unless
    it says located: false (a lagging index that knows it).

    Falsified by: ids-cached-by-path: Working-tree blob ids are cached by (repo, path) for the
    process lifetime.
    """
    provider = spawn(fixture=fx_mutable)
    path = TERM_LINE_PATH
    original = fx_mutable.read(ALPHA, path)
    longer = original + b"\n// FC-011 rewrote this file\n"
    same_size = longer[:-2] + (b"Y\n" if longer[-2:] != b"Y\n" else b"Z\n")
    old = [listed_ids(provider, fx_mutable, ALPHA, {path}, every=True)[path]]
    named = {old[0]: original}   # each id listed for the file -> the bytes it was listed for
    hit_shas(provider, fx_mutable, path)   # an adapter that caches hit ids caches them now
    target = fx_mutable.path / ALPHA / path
    try:
        for how, rewritten in (("appended to", longer), ("rewritten at the same size", same_size)):
            target.write_bytes(rewritten)
            listed = tree(provider, fx_mutable, ALPHA).model
            after = blob_ids(listed, {path}).get(path)
            if after in old:   # ids keyed by something shared with other contents: FC-012's
                files = set(disk_blobs(fx_mutable, ALPHA))
                clash = collisions(blob_ids(listed, files), fx_mutable, ALPHA)
                need(not clash, f"{tree_what(fx_mutable, ALPHA)} gives one id to different "
                     f"bytes ({listing(clash, 2)})", owner("ids shared by different contents are"))
            fc_assert(after is not None and after not in old,
                      expected=f"a new sha for {path} in {tree_what(fx_mutable, ALPHA)}",
                      got=f"{show(old[-1])} before and {show(after)} after it was {how}",
                      why="an id must change when the bytes change")
            served_ = blob_bytes(provider, fx_mutable, ALPHA, after)
            fc_assert(served_ == rewritten, expected=f"the {len(rewritten)} bytes {how}",
                      got="undecodable bytes_b64" if served_ is None else f"{len(served_)} "
                      f"bytes ({'older' if served_ in (original, longer) else 'other'} content)",
                      why="repo/blob of the new id must serve the new bytes")
            for sha in old:   # an id names one content: an old id never serves new bytes
                got, err = attempt(blob_bytes, provider, fx_mutable, ALPHA, sha)
                fc_assert(err is not None or got == named[sha],
                          expected=f"repo/blob of {show(sha)} (the sha {path} had before it was "
                          f"{how}): its {len(named[sha])} older bytes, or an error",
                          got="undecodable bytes_b64" if got is None else f"{len(got)} bytes ("
                          f"{'the new content' if got == rewritten else 'other content'})",
                          why="an id names one content: after a rewrite its old id must not "
                          "serve the new bytes (an id -> path map does)")
            named[after] = rewritten
            old.append(after)
        stale = hit_shas(provider, fx_mutable, path) & set(old[:-1])
        fc_assert(not stale, expected=f"search/code {TERM_LINE!r}: hits for {path} with its "
                  f"current id (or none)", got=f"a hit sha of older bytes: {listing(stale)}",
                  why="an id must change when the bytes change, in search hits too")
    finally:
        target.write_bytes(original)


@case("FC-012")
def test_different_content_different_id(adapter, fx):
    """Over every swept tree (alpha, beta, wide, the vcs worktree; vcs at each
    branch and tag too when refs is declared), two files sharing a sha have
    identical bytes; and every non-empty sha of the search hits for a term in
    8 files of alpha, one-shot and streamed, names its file's bytes: hits of
    different bytes never share one (nor a listed file's sha), and repo/blob
    of it serves exactly that file (any blob id the adapter emitted resolves,
    §3.4; an id names one content, §4); and repo/blob of every file id the
    trees of alpha, beta and the vcs worktree list (the URL-hostile names
    among them), and of wide's first, answers a result (files over 1 MiB
    aside: they may be refused).

    Falsified by: ids-by-basename-size: Plain-directory blob ids are keyed by (file name, size), not
    by content.
    """
    clashes, thin, swept, listed = [], [], sweep(adapter, fx), {}
    for name, ref, reading in swept.trees:
        ids = listed_ids(adapter, fx, name, files_at(fx, name, ref), ref=ref,
                         listed=reading.model)
        if ref is None:
            listed[name] = ids
        if len(ids) < 2:   # no two files to compare (coverage is FC-020's): left out
            thin.append(f"{tree_what(fx, name, ref)} listed only {listing(ids)} with a sha")
            continue
        clashes += [f"{tree_what(fx, name, ref)}: {clash}"
                    for clash in collisions(ids, fx, name, ref)]
    fc_assert(not clashes, expected="one id per distinct content",
              got=f"different bytes under one id: {listing(clashes, 4)}",
              why="an id must never be shared by different contents")
    need(len(thin) < len(swept.trees), listing(thin, 2), owner("coverage is"))
    swept.done()
    hits = hits_by_file(adapter, fx)
    for file, shas in hits_by_file(adapter, fx, partial=True).items():
        hits.setdefault(file, set()).update(shas)
    shared = []
    for name in sorted({n for n, _ in hits}):   # a hit's sha beside the other hits' and the tree's
        owners: dict[str, set[str]] = {}
        for (n, path), shas in hits.items():
            for sha in shas if n == name else ():
                owners.setdefault(sha, set()).add(path)
        for path, sha in listed.get(name, {}).items():
            if sha in owners:
                owners[sha].add(path)
        shared += [f"{name}: {sha[:16]}: {', '.join(sorted(paths)[:3])}"
                   for sha, paths in owners.items()
                   if len({read_or_none(fx, name, p) for p in paths}) > 1]
    fc_assert(not shared, expected=f"search/code {HIT_TERM!r}: one id per distinct content",
              got=f"hits of different bytes under one id (or a listed file's): "
              f"{listing(shared, 4)}",
              why="an id must never be shared by different contents, in search hits too")
    wrong = unresolved(adapter, fx, listed)
    for (name, path), shas in sorted(hits.items()):
        want = fx.read(name, path)
        for sha in sorted(shas):
            got, err = attempt(blob_bytes, adapter, fx, name, sha)
            if err is not None:
                wrong.append(f"{name}/{path}: repo/blob of its hit sha {show(sha)} answered an "
                             f"error ({err.message!r})")
            elif got != want:
                wrong.append(f"{name}/{path}: repo/blob of its hit sha {show(sha)} served "
                             + ("undecodable bytes_b64" if got is None else
                                f"{len(got)} other bytes, not its {len(want)}"))
    fc_assert(not wrong, expected=f"every sha the trees of {listing(RESOLVED)} list resolves; "
              f"search/code {HIT_TERM!r}: each hit's sha serves its file's bytes",
              got=listing(wrong, 3),
              why="any blob id the adapter emitted, a tree entry's and a search item's sha "
              "included, resolves through repo/blob to the content it names")


# The trees (ref null) whose every listed file id FC-012 asks back (alpha
# holds the URL-hostile names, vcs the same names under git), and how many
# of wide's (sorted by path: the one FC-024 reads the bytes of).
RESOLVED, WIDE_RESOLVED = (ALPHA, BETA, VCS), 1


def unresolved(adapter, fx, listed: dict) -> list[str]:
    """"repo path: ..." for each file id of the trees at ref null
    (``listed``: name -> path -> sha) of RESOLVED, and of wide's first
    files, that repo/blob answers with an error (§3.4: any blob id the
    adapter emitted resolves). A file over 1 MiB may be refused (FC-023's);
    what the bytes are is FC-024's."""
    out = []
    asks = [(name, path, sha) for name in RESOLVED
            for path, sha in sorted(listed.get(name, {}).items())]
    asks += [(WIDE, path, sha)
             for path, sha in sorted(listed.get(WIDE, {}).items())[:WIDE_RESOLVED]]
    for name, path, sha in asks:
        if len(read_or_none(fx, name, path) or b"") > BLOB_REFUSAL_BYTES:
            continue
        _, err = try_request(adapter, "repo/blob", {"repo": fx.repo(name), "sha": sha})
        if err is not None:
            hint = f"; {ESCAPE_HINT}" if url_hostile(path) else ""
            out.append(f"{fx.repo(name)} {path}: repo/blob of its listed sha {show(sha)} "
                       f"answered an error (kind {show(err.raw_kind)}, {err.message!r}){hint}")
    return out


@case("FC-013")
def test_ids_survive_respawn(spawn, fx):
    """Every blob sha of every repository (alpha, beta, wide, vcs; vcs at each
    branch and tag too when refs is declared) is the same
    before a kill and after the respawn; and after the respawn, every
    non-empty sha of the search hits for a term in 8 files of alpha (hits
    that say located: false aside) is an id the first generation gave that
    unchanged file: its tree entry's at ref null, or one of its hits'.

    Falsified by: ids-salted-per-process: Every blob id is salted with a per-process random value
    (self-consistent within a process).
    """
    provider = spawn()
    swept = sweep(provider, fx)
    before = {(n, r): listed_ids(provider, fx, n, files_at(fx, n, r), ref=r, listed=t.model)
              for n, r, t in swept.trees}
    first_hits = hits_by_file(provider, fx, located=True)
    provider.kill()
    provider.respawn()
    moved, lost = [], []
    for (name, ref), ids in before.items():
        after = blob_ids(tree(provider, fx, name, ref).model, set(ids))
        if not after:   # serving after a respawn is FC-050's: left out
            lost.append(f"after the respawn, {tree_what(fx, name, ref)} listed none of the "
                        f"{len(ids)} files listed before")
            continue
        moved += [f"{tree_what(fx, name, ref)}: {p}: {a} then {b}"
                  for p, (a, b) in changed_ids(ids, after).items()]
    fc_assert(not moved, expected="the same sha for every file after a respawn",
              got=listing(moved, 4), why="ids must not depend on the process that computed them")
    drifted = respawned_hit_drift(fx, before, first_hits,
                                  hits_by_file(provider, fx, located=True))
    fc_assert(not drifted, expected=f"after the respawn, search/code {show(HIT_PARAMS)}: each "
              f"hit's sha one of the ids generation 1 gave that unchanged file (its tree "
              f"entry's at ref null or its hits')",
              got=f"{len(drifted)} hit sha(s) generation 1 never gave those bytes: "
              f"{listing(drifted, 2)}",
              why="ids must not depend on the process that computed them, in search hits too "
              "(hit ids salted per process, or numbered by a search index rebuilt at each start, "
              "while the trees' ids stay stable)")
    need(len(lost) < len(before), listing(lost, 2), owner("serving after a respawn is"))
    swept.done()


def respawned_hit_drift(fx, before: dict, first_hits: dict, hits: dict) -> list[str]:
    """"repo path: sha, not ids" for each hit sha of a respawned
    generation (``hits``, as hits_by_file gives them) that is none of the ids
    generation 1 gave that file: its tree entry's at ref null (``before``,
    (name, ref) -> path -> sha) or its own hits' (``first_hits``). A file
    generation 1 gave no id is not compared."""
    known: dict[tuple[str, str], set[str]] = {k: set(v) for k, v in first_hits.items()}
    for (name, ref), ids in before.items():
        for path, sha in ids.items() if ref is None else ():
            known.setdefault((name, path), set()).add(sha)
    return [f"{fx.repo(name)} {path}: {sha[:12]}, not {'/'.join(s[:12] for s in sorted(ids))}"
            for (name, path), shas in sorted(hits.items()) if (ids := known.get((name, path)))
            for sha in sorted(shas - ids)]
