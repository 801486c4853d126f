"""Tree and blob cases (FC-020..FC-025): repo/tree lists the disk, repo/blob serves bytes.

Expected paths, types, sizes and bytes come from the materialized copy on
disk; blob ids are taken from the adapter's own listing.
"""

import base64
from collections import Counter

from cases.api import case, fail, fc_assert, listing, need, owner, show, warn
from cases.formats import b64_loose, b64_strict_problem
from cases.replies import (blob_ids, by_path, expect_error, judge_kind, listed_ids, read_reply,
                           tree, tree_what, try_request)
from fixture.catalog import (ALPHA, ALPHA_BIG, ALPHA_BINARY, ALPHA_EMPTY, ALPHA_ESCAPE_PATHS,
                             BETA, VCS, WIDE)
from wire.messages import Blob, structure

# The members of a listed entry FC-021 judges (its shape problems included).
ENTRY_MEMBERS = ("type", "sha", "size")


def listed_repos(fx):
    return (ALPHA, BETA, VCS) if fx.vcs_built else (ALPHA, BETA)


@case("FC-020")
def test_walk_covers_every_path(adapter, fx):
    """The recursive tree of alpha, beta and vcs (null ref) lists every path on
    disk, files and directories, exactly once, repository-relative.

    Falsified by: tree-page-overlap: The working-tree walk lists its last entry twice (two backend
    pages overlapping by one).
    """
    for name in listed_repos(fx):
        disk = set(fx.walk(name))   # the URL-hostile and non-ASCII names verbatim
        listed = Counter(e.path for e in tree(adapter, fx, name, own=True).model.entries)
        odd = [p for p in listed if p.startswith(("/", "./")) or not p]
        fc_assert(not odd, expected="repository-relative paths",
                  got=f"{name}: {listing(map(repr, odd))}", why="paths have no leading '/' or './'")
        missing, extra = disk - set(listed), set(listed) - disk
        fc_assert(not missing and not extra, expected=f"{name}: the {len(disk)} paths on disk",
                  got=f"missing {listing(missing) or 'none'}; "
                  f"not on disk {listing(extra) or 'none'}",
                  why="the walk must be recursive and name every path as it is on disk")
        twice = [p for p, n in listed.items() if n > 1]
        fc_assert(not twice, expected="each path once",
                  got=f"{name}: listed more than once: {listing(twice)}",
                  why="a path is listed exactly once")


@case("FC-021")
def test_entry_typing(adapter, fx):
    """Every listed entry is typed as on disk ("tree" for directories, "blob"
    for files), carries a non-empty string sha, and any size is the file's length.

    Falsified by: dirs-typed-dir: Directories are typed "dir" instead of "tree".
    """
    problems, unlisted = [], []
    for name in listed_repos(fx):
        disk = fx.walk(name)
        reading = tree(adapter, fx, name)
        judged = {p: e for p, e in by_path(reading.model).items() if p in disk}
        if not judged:   # paths not on disk, or missing ones, are FC-020's
            unlisted.append(f"{tree_what(fx, name)} listed none of the {len(disk)} paths on disk")
        for path, entry in judged.items():
            where = f"{name}/{path}"
            problems += [f"{where}: {member.rpartition('.')[2]}: {message}"
                         for member, message in (p for m in ENTRY_MEMBERS
                                                 for p in reading.of(entry, m))]
            if entry.type is not None and entry.type != disk[path]:
                problems.append(f"{where}: type {show(entry.type)}, not {disk[path]!r}")
            if entry.sha == "":
                problems.append(f"{where}: sha {show(entry.sha)}")
            want = len(fx.read(name, path)) if disk[path] == "blob" else None
            if entry.size is not None and want is not None and entry.size != want:
                problems.append(f"{where}: size {show(entry.size)}, file has {want} bytes")
    fc_assert(not problems, expected="type, sha and size as on disk", got=listing(problems, 4),
              why="every tree entry is typed like the disk and carries a sha")
    need(not unlisted, "; ".join(unlisted), owner("coverage is"))


@case("FC-022")
def test_truncated_flag(adapter, fx):
    """alpha's tree says truncated false; wide's tree lists every path unless it
    says truncated true (then it lists at least one entry).

    Falsified by: tree-capped-1000: Trees stop at 1,000 entries without setting truncated.
    """
    readings = {name: tree(adapter, fx, name, own=True) for name in (ALPHA, WIDE)}
    bad = [f"{name}: {m}" for name, r in readings.items() for _, m in r.at("truncated")]
    fc_assert(not bad, expected="truncated a boolean (or absent)", got=listing(bad),
              why="truncated is a JSON boolean")
    alpha, wide = readings[ALPHA].model, readings[WIDE].model
    fc_assert(alpha.truncated is False, expected="truncated false (or absent)",
              got=f"truncated {show(alpha.truncated)}", why="a small tree is never cut")
    listed, disk = set(by_path(wide)), set(fx.walk(WIDE))
    if wide.truncated is True:
        fc_assert(listed, expected="at least one entry", got="none",
                  why="a cut tree still lists entries")
        return
    fc_assert(disk <= listed, expected=f"all {len(disk)} paths of wide, or truncated true",
              got=f"{len(listed & disk)} paths, truncated {show(wide.truncated)}",
              why="an adapter that stops at a budget must say truncated true")


@case("FC-023")
def test_big_blob(adapter, fx):
    """repo/blob of big.bin (> 1 MiB) is an error (kind provider preferred) or
    exactly the file's bytes: never a hang, a truncation or corruption.

    Falsified by: big-blob-cut: Blobs over 1 MiB are served cut to their first 1 MiB (the reference
    refuses them).
    """
    want = fx.read(ALPHA, ALPHA_BIG)
    sha = listed_ids(adapter, fx, ALPHA, {ALPHA_BIG}, every=True)[ALPHA_BIG]
    result, err = try_request(adapter, "repo/blob", {"repo": fx.repo(ALPHA), "sha": sha})
    if err is not None:
        if err.raw_kind != "provider":
            warn(f"the >1 MiB refusal came with kind {show(err.raw_kind)}; 'provider' is preferred")
        return
    got = b64_loose(read_reply(result, Blob, f"repo/blob of {ALPHA_BIG}", None).model.bytes_b64)
    if got == want:
        return
    damage = "a truncated prefix" if got is not None and want.startswith(got) else "other content"
    fail("a big blob is refused or served whole", expected=f"{len(want)} bytes of {ALPHA_BIG}",
         got="undecodable bytes_b64" if got is None else f"{len(got)} bytes, {damage}")


@case("FC-024")
def test_binary_blobs_strict_base64(adapter, fx):
    """repo/blob of the binary file, the empty file and the URL-escaping files is
    strict standard base64 decoding to the exact bytes (the empty file is "").

    Falsified by: binary-as-text: Small binary blobs (with NUL bytes) are text-decoded: invalid
    UTF-8 becomes U+FFFD.
    """
    paths = (ALPHA_BINARY, ALPHA_EMPTY, *ALPHA_ESCAPE_PATHS)
    alpha = tree(adapter, fx, ALPHA).model
    ids = blob_ids(alpha, set(paths))
    for path in (p for p in paths if p in ids):
        result = adapter.request("repo/blob", {"repo": fx.repo(ALPHA), "sha": ids[path]})
        text = structure(result, Blob).bytes_b64
        problem = b64_strict_problem(text)
        fc_assert(problem is None, expected="standard padded base64 without whitespace",
                  got=f"{path}: {problem}", why="the host decodes blobs strictly")
        want = fx.read(ALPHA, path)
        got = base64.b64decode(text)
        fc_assert(got == want, expected=f"{path}: {len(want)} bytes as on disk",
                  got=f"{len(got)} other bytes", why="blob bytes are served raw")
    listed_ids(adapter, fx, ALPHA, paths, every=True, listed=alpha)   # any not judged: skip


@case("FC-025")
def test_missing_repo_tree(adapter, fx):
    """repo/tree of an unknown repository is an error of kind not_found (or no kind).

    Falsified by: unknown-repo-empty-tree: repo/tree of a repository that does not exist answers an
    empty tree.
    """
    err = expect_error(adapter, "repo/tree", {"repo": f"{fx.org}/no-such-repo-fc025", "ref": None},
                       what="repo/tree of a missing repository")
    judge_kind(err, "not_found", what="repo/tree of a missing repository")
