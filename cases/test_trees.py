"""Tree and blob cases (FC-020..FC-025): repo/tree lists the disk, repo/blob serves bytes.

Expected paths, types, sizes and bytes come from the materialized copy on
disk; blob ids are taken from the adapter's own listing.
"""

import base64
import unicodedata
from collections import Counter

from cases.kit.api import case, fail, fc_assert, listing, need, owner, show, warn
from cases.kit.facts import ESCAPE_HINT, disk_blobs, git_entries_at, read_or_none, url_hostile
from cases.kit.formats import b64_loose, b64_strict_problem
from cases.kit.gitfacts import git_show
from cases.kit.replies import (attempt, blob_ids, by_path, expect_error, judge_kind, listed_ids,
                           paths_at, read_reply, sweep, swept_trees, tree, tree_what, try_request)
from fixture.catalog import (ALPHA, ALPHA_BIG, ALPHA_BINARY, ALPHA_EMPTY, ALPHA_ESCAPE_PATHS,
                             ALPHA_UNICODE, BETA, VCS, VCS_BINARY_CHANGED, VCS_DEFAULT_BRANCH,
                             VCS_CRLF, VCS_ESCAPE_PATHS, VCS_NO_FINAL_NEWLINE, WIDE)
from wire.messages import Blob, Log, Reading, Tree, read

def kinds_at(fx, name: str, ref: str | None) -> dict[str, tuple[str, int | None]]:
    """path -> (type, size of a file) on disk at ref null, from git at a ref."""
    if ref is None:
        top = fx.path / name   # stat, not read: wide has thousands of files
        return {p: (kind, (top / p).stat().st_size if kind == "blob" else None)
                for p, kind in fx.walk(name).items()}
    return {path: (kind, size) for path, (kind, _obj, size) in git_entries_at(fx, ref).items()}


def cap_hint(listed: int, missing: set) -> str:
    """Names a missing path and the listing's size: a silently capped walk's signature."""
    if not missing:
        return ""
    return (f" (hint: the listing has {listed} entries and leaves out "
            f"{sorted(missing)[0]!r}: a page or entry cap reached without truncated: true?)")

# The members of a listed entry FC-021 judges (its shape problems included).
ENTRY_MEMBERS = ("type", "sha", "size")


def listed_repos(fx):
    return (ALPHA, BETA, VCS) if fx.vcs_built else (ALPHA, BETA)


@case("FC-020")
def test_walk_covers_every_path(adapter, fx):
    """The recursive tree of every repository (alpha, beta, wide, vcs; vcs at
    each branch and each tag too when refs is declared) lists every path,
    files and directories, exactly once, repository-relative (a tree that
    says truncated true may leave paths out; wide cut without saying so is
    FC-022's).

    Falsified by: tree-page-overlap: The working-tree walk lists its last entry twice (two backend
    pages overlapping by one).
    """
    capped, swept = [], sweep(adapter, fx, own=True)
    for name, ref, reading in swept.trees:
        where = tree_what(fx, name, ref)
        want = paths_at(fx, name, ref)   # the URL-hostile and non-ASCII names verbatim
        model = reading.model
        listed = Counter(e.path for e in model.entries)
        odd = [p for p in listed if p.startswith(("/", "./")) or not p]
        fc_assert(not odd, expected="repository-relative paths",
                  got=f"{where}: {listing(map(repr, odd))}",
                  why="paths have no leading '/' or './'")
        missing, extra = want - set(listed), set(listed) - want
        if model.truncated is True:
            missing = set()   # a cut walk may leave paths out (its honesty is FC-022's)
        elif name == WIDE and missing:   # the tree past every cap: a silent cut, left out
            capped.append(f"{where} left out {listing(missing, 3)} without truncated: true")
            missing = set()
        fc_assert(not missing and not extra, expected=f"{where}: the {len(want)} paths "
                  f"{'on disk' if ref is None else 'of git at ' + ref}",
                  got=f"missing {listing(missing) or 'none'}; "
                  f"not in the repository {listing(extra) or 'none'}"
                  + cap_hint(len(model.entries), missing),
                  why="the walk must be recursive and name every path as it is in the repository")
        twice = [p for p, n in listed.items() if n > 1]
        fc_assert(not twice, expected="each path once",
                  got=f"{where}: listed more than once: {listing(twice)}",
                  why="a path is listed exactly once (overlapping backend pages list one twice)")
    need(len(capped) < len(swept.trees), listing(capped, 2),
         owner("walks cut without truncated: true are"))
    swept.done()


@case("FC-021")
def test_entry_typing(adapter, fx):
    """Every listed entry of every repository (vcs at each branch and tag too
    when refs is declared) is typed as in the repository
    ("tree" for directories, "blob" for files), carries a non-empty string
    sha, and any size is the file's length (git's at a ref).

    Falsified by: dirs-typed-dir: Directories are typed "dir" instead of "tree".
    """
    problems, unlisted, typed, swept = [], [], 0, sweep(adapter, fx)
    for name, ref, reading in swept.trees:
        kinds = kinds_at(fx, name, ref)
        judged = {p: e for p, e in by_path(reading.model).items() if p in kinds}
        if not judged:   # paths not in the repository, or missing ones, are FC-020's: left out
            unlisted.append(f"{tree_what(fx, name, ref)} listed none of the {len(kinds)} paths")
            continue
        typed += 1
        for path, entry in judged.items():
            where = f"{tree_what(fx, name, ref)} {path}"
            kind, want = kinds[path]
            problems += [f"{where}: {member.rpartition('.')[2]}: {message}"
                         for member, message in (p for m in ENTRY_MEMBERS
                                                 for p in reading.of(entry, m))]
            if entry.type is not None and entry.type != kind:
                problems.append(f"{where}: type {show(entry.type)}, not {kind!r}")
            if entry.sha == "":
                problems.append(f"{where}: sha {show(entry.sha)}")
            if entry.size is not None and want is not None and entry.size != want:
                problems.append(f"{where}: size {show(entry.size)}, file has {want} bytes")
    fc_assert(not problems, expected="type, sha and size as in the repository",
              got=listing(problems, 4),
              why="every tree entry is typed like the repository and carries a sha")
    need(typed, "; ".join(unlisted), owner("coverage is"))
    swept.done()


@case("FC-022")
def test_truncated_flag(adapter, fx):
    """The small trees (alpha, beta, vcs; vcs at each branch and tag
    too when refs is declared, and at each commit id repo/log lists when log
    is declared too) say truncated false; wide's tree
    lists every path unless it says truncated true, and says truncated true
    only when it leaves a path out (then it lists at least one entry). The
    same holds for every tree reply of the run (respawned generations, other
    cases' requests: cases/judges/claims.py, the monitor's verdict names where).

    Falsified by: tree-capped-1000: Trees stop at 1,000 entries without setting truncated.
    """
    swept = sweep(adapter, fx, own=True)
    readings = {(name, ref): r for name, ref, r in swept.trees}
    readings.update(((VCS, ref), r) for ref, r in trees_at_ids(adapter, fx))
    bad = [f"{tree_what(fx, *at)}: {m}" for at, r in readings.items() for _, m in r.at("truncated")]
    fc_assert(not bad, expected="truncated a boolean (or absent)", got=listing(bad),
              why="truncated is a JSON boolean")
    cut = [f"{tree_what(fx, *at)}: truncated {show(r.model.truncated)}"
           for at, r in readings.items() if at[0] != WIDE and r.model.truncated is not False]
    fc_assert(not cut, expected="truncated false (or absent) on the small trees",
              got=listing(cut), why="a small tree is never cut")
    swept.done()
    wide = readings[(WIDE, None)].model
    listed, disk = set(by_path(wide)), set(fx.walk(WIDE))
    missing = disk - listed
    if wide.truncated is True:
        fc_assert(listed, expected="at least one entry", got="none",
                  why="a cut tree still lists entries")
        fc_assert(missing, expected=f"{tree_what(fx, WIDE)}: truncated false, as all "
                  f"{len(disk)} paths are listed", got="truncated true with nothing left out",
                  why="truncated is true only when the budget cut the walk")
        return
    fc_assert(not missing, expected=f"all {len(disk)} paths of {tree_what(fx, WIDE)}, or "
              f"truncated true",
              got=f"{len(listed & disk)} paths, truncated {show(wide.truncated)}, missing "
              f"{listing(missing, 3)}" + cap_hint(len(wide.entries), missing),
              why="an adapter that stops at a budget must say truncated true")


def trees_at_ids(adapter, fx) -> list[tuple[str, Reading]]:
    """(id, tree reading) of vcs at each commit id repo/log lists for the
    default branch (the ids a host browses history by, §3.3), when refs and
    log are declared. A log or tree reply that is an error or cannot be read
    is left out: log replies are FC-094's, trees at an id FC-132's."""
    if not (fx.vcs_built and adapter.caps.refs and adapter.caps.log):
        return []
    log, err = attempt(adapter.request, "repo/log",
                       {"repo": fx.repo(VCS), "path": None, "ref": None, "limit": None})
    listed = read(log, Log).model if err is None else None
    items = listed.items if listed is not None else []
    out = []
    for spelled in dict.fromkeys(i.sha for i in items if isinstance(i.sha, str) and i.sha):
        result, err = attempt(adapter.request, "repo/tree", {"repo": fx.repo(VCS), "ref": spelled})
        reading = read(result, Tree) if err is None else None
        if reading is not None and reading.model is not None:
            out.append((spelled, reading))
    return out


@case("FC-023")
def test_big_blob(adapter, fx):
    """repo/blob of big.bin (> 1 MiB) is an error (kind provider preferred) or
    exactly the file's bytes: never a hang, a truncation or corruption.

    Falsified by: big-blob-cut: Blobs over 1 MiB are served cut to their first 1 MiB (the reference
    refuses them).
    """
    want = fx.read(ALPHA, ALPHA_BIG)
    sha = listed_ids(adapter, fx, ALPHA, {ALPHA_BIG}, every=True)[ALPHA_BIG]
    params = {"repo": fx.repo(ALPHA), "sha": sha}
    for ask in ("first", "second"):   # a half-written cache shows on the second ask
        result, err = try_request(adapter, "repo/blob", params)
        if err is not None:
            if err.raw_kind != "provider":
                warn(f"the >1 MiB refusal ({ask} ask) came with kind {show(err.raw_kind)}; "
                     f"'provider' is preferred")
            continue
        got = b64_loose(read_reply(result, Blob, f"repo/blob of {ALPHA_BIG}", None).model.bytes_b64)
        judge_big_blob(f"repo/blob {show(params)} ({ask} ask)", got, want, ALPHA_BIG)


def judge_big_blob(what: str, got: bytes | None, want: bytes, name: str = "the file") -> None:
    """FC-023 on a result (not an error) for a blob above 1 MiB: exactly its
    bytes, ``want``; ``got`` is the decoded bytes_b64 (None: undecodable)."""
    if got == want:
        return
    prefix = got is not None and want.startswith(got)
    damage = "a truncated prefix" if prefix else "other content"
    fail("a big blob is refused or served whole",
         expected=f"{len(want)} bytes of {name}",
         got=f"{what}: " + ("undecodable bytes_b64" if got is None else f"{len(got)} bytes, {damage}"))


def shares_id(listed, fx, name: str, path: str) -> list[str]:
    """Other files of the listing under ``path``'s sha whose bytes differ (FC-012's defect)."""
    entries = by_path(listed)
    sha = entries[path].sha
    mine = read_or_none(fx, name, path)
    return sorted(p for p, e in entries.items()
                  if p != path and e.sha == sha and read_or_none(fx, name, p) not in (None, mine))


def normalised(data: bytes) -> str | None:
    """``data`` as NFC text (None when it is not UTF-8): two spellings of one text compare equal."""
    try:
        return unicodedata.normalize("NFC", data.decode("utf-8"))
    except UnicodeDecodeError:
        return None


def judge_bytes(adapter, method: str, params: dict, want: bytes | None, path: str) -> tuple:
    """(problem or None, decoded bytes, the error reply or None) of one blob
    reply: the reply shape, strict base64, and (``want`` given) the exact
    bytes. An error reply is a problem too; the caller says whose."""
    hint = f"; {ESCAPE_HINT}" if url_hostile(path) else ""
    asked = f"{method} {show(params)}"
    result, err = try_request(adapter, method, params)
    if err is not None:
        return (f"{asked}: an error, kind {show(err.raw_kind)}, message {err.message!r}{hint}",
                None, err)
    text = getattr(read(result, Blob).model, "bytes_b64", None)
    problem = b64_strict_problem(text)
    if problem is not None:
        return f"{asked}: {problem}", None, None
    got = base64.b64decode(text)
    if want is None or got == want:
        return None, got, None
    nfc = normalised(got)
    how = ("NUL bytes or invalid UTF-8 transcoded (U+FFFD)" if b"\xef\xbf\xbd" in got
           and b"\xef\xbf\xbd" not in want else
           "the text Unicode-normalised (the same characters, other bytes)"
           if nfc is not None and nfc == normalised(want) else "other bytes")
    said = f"{asked} ({path}): {len(got)} bytes, {how}, not the {len(want)} on disk{hint}"
    return said, got, None


def revision_of(adapter, fx, name: str, path: str, got: bytes | None) -> str | None:
    """The swept ref (a branch or tag) at which ``path`` has the bytes ``got``
    where they are not the file's at ref null: an id the worktree shares with
    another revision's content (FC-093's defect), not a transcoding."""
    if got is None or name != VCS:
        return None
    for _, ref in swept_trees(adapter, fx):
        try:
            if ref is not None and got == git_show(fx, ref, path):
                return ref
        except RuntimeError:   # no such path at that ref
            continue
    return None


@case("FC-024")
def test_binary_blobs_strict_base64(adapter, fx):
    """repo/blob of the binary, empty and URL-escaping files of alpha and vcs,
    of vcs's CRLF file and its file without a final newline, of alpha's
    non-ASCII text file, of every file of beta and of a file of
    wide (when the adapter serves that id) is strict standard base64 decoding to the exact bytes
    (the empty file is ""), the files with non-ASCII bytes asked twice (a cache that
    stores what it served transcoded shows on the second ask); repo/blob_at
    of those vcs files (log declared) is strict standard base64. A listed id
    that answers an error (FC-012's: every emitted id resolves) or serves
    another file's or revision's bytes (FC-012's, FC-093's) is left out;
    the rest is judged.

    Falsified by: binary-as-text: Small binary blobs (with NUL bytes) are text-decoded: invalid
    UTF-8 becomes U+FFFD.
    """
    wanted = {ALPHA: (ALPHA_BINARY, ALPHA_EMPTY, ALPHA_UNICODE, *ALPHA_ESCAPE_PATHS),
              BETA: tuple(sorted(disk_blobs(fx, BETA))),
              WIDE: tuple(sorted(disk_blobs(fx, WIDE))[:1])}
    if fx.vcs_built:
        wanted[VCS] = (VCS_BINARY_CHANGED, VCS_CRLF, VCS_NO_FINAL_NEWLINE, *VCS_ESCAPE_PATHS)
    problems, collided, listings, across, unfetched, judged = [], [], {}, False, [], 0
    for name, paths in wanted.items():
        if name == WIDE:   # not a contract id: the grammar may be the adapter's (RULINGS)
            reading, err = attempt(tree, adapter, fx, name, seen=True)
            if err is not None:
                continue
            listed = listings[name] = reading.model
        else:
            listed = listings[name] = tree(adapter, fx, name, seen=True).model
        for path, sha in sorted(blob_ids(listed, set(paths)).items()):
            want = fx.read(name, path)
            for ask in ("",) if want.isascii() else ("", " (second ask)"):
                problem, got, err = judge_bytes(adapter, "repo/blob",
                                                {"repo": fx.repo(name), "sha": sha}, want, path)
                if err is not None:
                    # a listed id that does not resolve is FC-012's: left out here
                    unfetched.append(f"{name}/{path}")
                    break
                twins = shares_id(listed, fx, name, path) if got is not None else []
                there = revision_of(adapter, fx, name, path, got) if problem else None
                if problem and twins:   # another file's bytes under a shared id: left out
                    collided.append(f"{name}/{path} shares its sha with {listing(twins, 2)}")
                    break
                if there:   # another revision's bytes under the worktree's id: left out
                    collided.append(f"the sha {tree_what(fx, name)} lists for {path} serves its "
                                    f"bytes at {there}")
                    across = True
                    break
                judged += 1
                if problem:
                    problems.append(problem + ask)
    if fx.vcs_built and adapter.caps.log:   # blob_at's bytes are FC-096's, its base64 is ours
        for path in wanted[VCS]:
            params = {"repo": fx.repo(VCS), "path": path, "ref": VCS_DEFAULT_BRANCH}
            problem, _, err = judge_bytes(adapter, "repo/blob_at", params, None, path)
            if problem and err is None:
                problems.append(problem)
    fc_assert(not problems, expected="standard padded base64 without whitespace, of the exact "
              "bytes", got=listing(problems, 3),
              why="the host decodes blobs strictly and blob bytes are served raw")
    need(judged or collided, f"repo/blob of the listed id of every sampled file answered an "
         f"error ({listing(unfetched, 3)})", owner("emitted blob ids resolving is"))
    need(judged, "; ".join(collided), owner("ids across refs are" if across else
                                            "ids shared by different contents are"))


@case("FC-025")
def test_missing_repo_tree(adapter, fx):
    """repo/tree of an unknown repository is an error of kind not_found (or no
    kind): with ref null, asked twice (no negative cache answering a tree),
    and at a ref.

    Falsified by: unknown-repo-empty-tree: repo/tree of a repository that does not exist answers an
    empty tree.
    """
    repo = f"{fx.org}/no-such-repo-fc025"
    asks = [(None, ""), (None, " (asked again)")]
    if adapter.caps.refs:   # a non-null ref comes from revision flows only (§3.0)
        asks.append((VCS_DEFAULT_BRANCH, ""))
    for ref, when in asks:
        what = f"repo/tree {show({'repo': repo, 'ref': ref})} of a missing repository{when}"
        err = expect_error(adapter, "repo/tree", {"repo": repo, "ref": ref}, what=what)
        judge_kind(err, "not_found", what=what)
