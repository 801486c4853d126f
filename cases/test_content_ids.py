"""Content id cases (FC-010..FC-013): blob ids follow the bytes, nothing else.

Ids are opaque: only equality is used, and expectations come from the bytes
on disk. Directory ids are not content ids, so only paths that are files on
disk are compared (the entries' ``type`` is FC-021's business).
"""

from cases.api import case, fc_assert, listing, need, owner, show
from cases.facts import disk_blobs, read_or_none, served
from cases.replies import (attempt, blob_bytes, blob_ids, files_at, listed_ids, search, swept_trees,
                           tree, tree_what)
from fixture.catalog import ALPHA, TERM_LINE, TERM_LINE_PATH


def changed_ids(first: dict, second: dict) -> dict:
    return {p: (first[p], second[p]) for p in first if p in second and first[p] != second[p]}


@case("FC-010")
def test_same_bytes_same_id_across_calls(adapter, fx):
    """Two repo/tree calls of every repository (alpha, beta, wide, vcs; vcs at
    each branch too when refs is declared) give every file the same sha.

    Falsified by: ids-salted-per-call: Plain-directory trees salt blob ids with a per-process call
    counter from the second tree call on.
    """
    moved = []
    for name, ref in swept_trees(adapter, fx):
        first = listed_ids(adapter, fx, name, files_at(fx, name, ref), ref=ref)
        second = blob_ids(tree(adapter, fx, name, ref).model, set(first))
        need(second, f"the second {tree_what(fx, name, ref)} listed none of the files the "
             f"first listed", owner("coverage is"))
        moved += [f"{tree_what(fx, name, ref)}: {p}: {a} then {b}"
                  for p, (a, b) in changed_ids(first, second).items()]
    fc_assert(not moved, expected="the same sha for unchanged bytes", got=listing(moved, 4),
              why="an unchanged file must keep its id from one call to the next")


def collisions(ids: dict[str, str], fx, name: str) -> list[str]:
    """"sha: path, path" for each id that ``ids`` (path -> sha) gives to different bytes."""
    owners: dict[str, list[str]] = {}
    for path, sha in ids.items():
        owners.setdefault(sha, []).append(path)
    return [f"{sha[:16]}: {', '.join(sorted(paths)[:3])}" for sha, paths in owners.items()
            if len(paths) > 1 and len({read_or_none(fx, name, p) for p in paths}) > 1]


def hit_shas(provider, fx, path: str) -> set[str]:
    """The non-empty shas of the search hits for ``path`` of alpha (TERM_LINE is in it)."""
    if not provider.caps.code_search:
        return set()
    found, err = attempt(search, provider, TERM_LINE, limit=50)
    if err is not None:
        return set()   # search errors are the search cases' business
    return {h.sha for h in found.items
            if h.repo == fx.repo(ALPHA) and h.path == path and isinstance(h.sha, str) and h.sha}


@case("FC-011")
def test_changed_bytes_change_id(spawn, fx_mutable):
    """After a file is rewritten with different bytes (longer, then the same
    length), its tree sha changes each time, repo/blob of the new sha serves
    the new bytes, and no search hit for it carries an id of older bytes.

    Falsified by: ids-cached-by-path: Working-tree blob ids are cached by (repo, path) for the
    process lifetime.
    """
    provider = spawn(fixture=fx_mutable)
    path = TERM_LINE_PATH
    original = fx_mutable.read(ALPHA, path)
    longer = original + b"\n// FC-011 rewrote this file\n"
    same_size = longer[:-2] + (b"Y\n" if longer[-2:] != b"Y\n" else b"Z\n")
    old = [listed_ids(provider, fx_mutable, ALPHA, {path}, every=True)[path]]
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
            fc_assert(after is not None and after not in old, expected=f"a new sha for {path}",
                      got=f"{show(old[-1])} before and {show(after)} after it was {how}",
                      why="an id must change when the bytes change")
            served_ = blob_bytes(provider, fx_mutable, ALPHA, after)
            fc_assert(served_ == rewritten, expected=f"the {len(rewritten)} bytes {how}",
                      got="undecodable bytes_b64" if served_ is None else f"{len(served_)} "
                      f"bytes ({'older content' if served_ in (original, longer) else 'other content'})",
                      why="repo/blob of the new id must serve the new bytes")
            old.append(after)
        stale = hit_shas(provider, fx_mutable, path) & set(old[:-1])
        fc_assert(not stale, expected=f"search/code {TERM_LINE!r}: hits for {path} with its "
                  f"current id (or none)", got=f"a hit sha of older bytes: {listing(stale)}",
                  why="an id must change when the bytes change, in search hits too")
    finally:
        target.write_bytes(original)


@case("FC-012")
def test_different_content_different_id(adapter, fx):
    """Over every repository (alpha, beta, wide, the vcs worktree), two files
    sharing a sha have identical bytes.

    Falsified by: ids-by-basename-size: Plain-directory blob ids are keyed by (file name, size), not
    by content.
    """
    clashes = []
    for name in served(fx).values():
        ids = listed_ids(adapter, fx, name)
        need(len(ids) > 1, f"{tree_what(fx, name)} listed only {listing(ids)} with a sha: "
             f"no two files to compare", owner("coverage is"))
        clashes += [f"{name}: {clash}" for clash in collisions(ids, fx, name)]
    fc_assert(not clashes, expected="one id per distinct content",
              got=f"different bytes under one id: {listing(clashes, 4)}",
              why="an id must never be shared by different contents")


@case("FC-013")
def test_ids_survive_respawn(spawn, fx):
    """Every blob sha of every repository (alpha, beta, wide, vcs; vcs at each
    branch too when refs is declared) is the same before a kill and after the respawn.

    Falsified by: ids-salted-per-process: Every blob id is salted with a per-process random value
    (self-consistent within a process).
    """
    provider = spawn()
    trees = swept_trees(provider, fx)
    before = {(n, r): listed_ids(provider, fx, n, files_at(fx, n, r), ref=r) for n, r in trees}
    provider.kill()
    provider.respawn()
    moved = []
    for (name, ref), ids in before.items():
        after = blob_ids(tree(provider, fx, name, ref).model, set(ids))
        need(after, f"after the respawn, {tree_what(fx, name, ref)} listed none of the "
             f"{len(ids)} files listed before", owner("serving after a respawn is"))
        moved += [f"{tree_what(fx, name, ref)}: {p}: {a} then {b}"
                  for p, (a, b) in changed_ids(ids, after).items()]
    fc_assert(not moved, expected="the same sha for every file after a respawn",
              got=listing(moved, 4), why="ids must not depend on the process that computed them")
