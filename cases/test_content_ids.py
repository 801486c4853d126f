"""Content id cases (FC-010..FC-013): blob ids follow the bytes, nothing else.

Ids are opaque: only equality is used, and expectations come from the bytes
on disk. Directory ids are not content ids, so only paths that are files on
disk are compared (the entries' ``type`` is FC-021's business).
"""

from cases.api import case, fc_assert, listing, need, owner, show
from cases.facts import read_or_none
from cases.replies import blob_bytes, blob_ids, listed_ids, tree, tree_what
from fixture.catalog import ALPHA, BETA, TERM_LINE_PATH, VCS


def changed_ids(first: dict, second: dict) -> dict:
    return {p: (first[p], second[p]) for p in first if p in second and first[p] != second[p]}


@case("FC-010")
def test_same_bytes_same_id_across_calls(adapter, fx):
    """Two repo/tree calls of alpha (and of beta) give every file the same sha.

    Falsified by: ids-salted-per-call: Plain-directory trees salt blob ids with a per-process call
    counter from the second tree call on.
    """
    for name in (ALPHA, BETA):
        first = listed_ids(adapter, fx, name)
        second = blob_ids(tree(adapter, fx, name).model, set(first))
        need(second, f"the second {tree_what(fx, name)} listed none of the files the first "
             f"listed", owner("coverage is"))
        moved = changed_ids(first, second)
        fc_assert(not moved, expected="the same sha for unchanged bytes",
                  got=f"{name}: {listing(f'{p}: {a} then {b}' for p, (a, b) in moved.items())}",
                  why="an unchanged file must keep its id from one call to the next")


@case("FC-011")
def test_changed_bytes_change_id(spawn, fx_mutable):
    """After a file is rewritten with different bytes, its tree sha changes and
    repo/blob of the new sha serves the new bytes.

    Falsified by: ids-cached-by-path: Working-tree blob ids are cached by (repo, path) for the
    process lifetime.
    """
    provider = spawn(fixture=fx_mutable)
    path = TERM_LINE_PATH
    original = fx_mutable.read(ALPHA, path)
    rewritten = original + b"\n// FC-011 rewrote this file\n"
    before = listed_ids(provider, fx_mutable, ALPHA, {path}, every=True)[path]
    target = fx_mutable.path / ALPHA / path
    try:
        target.write_bytes(rewritten)
        after = blob_ids(tree(provider, fx_mutable, ALPHA).model, {path}).get(path)
        fc_assert(after is not None and after != before, expected=f"a new sha for {path}",
                  got=f"{show(before)} before and {show(after)} after the rewrite",
                  why="an id must change when the bytes change")
        served = blob_bytes(provider, fx_mutable, ALPHA, after)
        fc_assert(served == rewritten, expected=f"the rewritten {len(rewritten)} bytes",
                  got="undecodable bytes_b64" if served is None else f"{len(served)} bytes "
                  f"({'the old content' if served == original else 'other content'})",
                  why="repo/blob of the new id must serve the new bytes")
    finally:
        target.write_bytes(original)


@case("FC-012")
def test_different_content_different_id(adapter, fx):
    """Over alpha (and the vcs worktree), two files sharing a sha have identical bytes.

    Falsified by: ids-by-basename-size: Plain-directory blob ids are keyed by (file name, size), not
    by content.
    """
    for name in (ALPHA, VCS) if fx.vcs_built else (ALPHA,):
        ids = listed_ids(adapter, fx, name)
        need(len(ids) > 1, f"{tree_what(fx, name)} listed only {listing(ids)} with a sha: "
             f"no two files to compare", owner("coverage is"))
        owners: dict[str, list[str]] = {}
        for path, sha in ids.items():
            owners.setdefault(sha, []).append(path)
        clashes = [f"{sha[:16]}: {', '.join(sorted(paths))}" for sha, paths in owners.items()
                   if len({read_or_none(fx, name, p) for p in paths}) > 1]
        fc_assert(not clashes, expected="one id per distinct content",
                  got=f"{name}: different bytes under one id: {listing(clashes)}",
                  why="an id must never be shared by different contents")


@case("FC-013")
def test_ids_survive_respawn(spawn, fx):
    """Every alpha blob sha is the same before a kill and after the respawn.

    Falsified by: ids-salted-per-process: Every blob id is salted with a per-process random value
    (self-consistent within a process).
    """
    provider = spawn()
    before = listed_ids(provider, fx, ALPHA)
    provider.kill()
    provider.respawn()
    after = blob_ids(tree(provider, fx, ALPHA).model, set(before))
    need(after, f"after the respawn, {tree_what(fx, ALPHA)} listed none of the "
         f"{len(before)} files listed before", owner("serving after a respawn is"))
    moved = changed_ids(before, after)
    fc_assert(not moved, expected="the same sha for every file after a respawn",
              got=listing(f"{p}: {a} then {b}" for p, (a, b) in moved.items()),
              why="ids must not depend on the process that computed them")
