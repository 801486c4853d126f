"""Revision round-trip cases (FC-130..FC-133): repo/log and repo/blame at a
non-null ref, their commit ids fed back as refs (PROTOCOL §3.5-§3.8), and
repo/blob_at with ref null.

Expectations come from git. Commit ids are the backend's vocabulary
(RULINGS "Content and revisions"): an id is judged by what it resolves to,
so an abbreviated id of the right commit passes. Each case reads its
capability first and skips, saying why, when it is false or absent, or when
git is missing.
"""

from cases.kit.api import case, fc_assert, listing, need, owner, show, skip
from cases.kit.commit_ids import git_commit_of, own_spelling, refs_round_trips, resolve
from cases.kit.commitfacts import ask, resolves_to
from cases.kit.formats import b64_loose
from cases.kit.gitfacts import (blame_telling_file, git_all_commits, git_blame, git_log,
                                git_log_touching, git_paths, git_show, log_left_out,
                                not_newest_first)
from cases.kit.replies import blob_ids, by_path, read_reply, tree, try_request
from fixture import GIT_MISSING_REASON
from fixture.catalog import (VCS, VCS_ANNOTATED_TAG, VCS_BINARY_CHANGED, VCS_BLAME_TWO_AUTHORS,
                             VCS_CRLF, VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH,
                             VCS_FEATURE_REWRITTEN, VCS_ESCAPE_PATHS, VCS_LIGHT_TAG,
                             VCS_MAIN_ADVANCED, VCS_THREE_COMMITS)
from wire.messages import Blame, BlobAt, Log, read


def require(adapter, fx, capability):
    if not fx.vcs_built:
        skip(f"the vcs repo is missing: {fx.vcs_skip_reason or GIT_MISSING_REASON}")
    if not getattr(adapter.caps, capability):
        skip(f"needs the {capability!r} capability, which the adapter declares false or omits")


def need_blob_at_served(adapter, fx):
    """Skip, naming FC-099, when repo/blob_at is not served at all (at the
    default branch's name): a declared capability not served is FC-099's."""
    probe = {"repo": fx.repo(VCS), "path": VCS_THREE_COMMITS, "ref": VCS_DEFAULT_BRANCH}
    _, err = try_request(adapter, "repo/blob_at", probe)
    need(err is None, f"repo/blob_at {show(probe)} answered an error "
         f"({err.message if err else ''!r}): blob_at is not served at all",
         owner("declared capabilities served are"))


def sha_at_ref_agrees(adapter, fx, path):
    """Whether blob_at's sha at the default branch's name equals the tree's entry
    there (FC-096's rule): only then is a disagreement at ref null this case's."""
    result = adapter.request("repo/blob_at", {"repo": fx.repo(VCS), "path": path,
                                              "ref": VCS_DEFAULT_BRANCH})
    listed = blob_ids(tree(adapter, fx, VCS, VCS_DEFAULT_BRANCH).model, {path})
    return isinstance(result, dict) and result.get("sha") == listed.get(path)


def log_at(adapter, fx, ref, path=None) -> Log:
    """repo/log (limit null) read around malformed members; a reply that is not
    an object skips the running case (log replies are FC-094's, at any ref)."""
    result = adapter.request("repo/log", {"repo": fx.repo(VCS), "path": path, "ref": ref,
                                          "limit": None})
    return read_reply(result, Log, f"repo/log at {ref}", owner("log replies are")).model


@case("FC-130")
def test_log_at_ref(adapter, fx):
    """repo/log at the feature branch (and at the v0.1 tag) walks history from
    that revision: git's commits of that ref (in any order here: newest first
    is FC-094's), not main's; commit ids judged by the commit they resolve to.
    The same holds with a path: each file that tells the ref's history from
    main's (rewritten on feature, advanced on main, touched thrice on main)
    is logged at both refs. A log the adapter's default page (limit null)
    cut with truncated true passes when every commit it lists is one of the
    ref's history. When refs is declared, every other name and sha
    repo/refs lists (§3.6: accepted back as a ref) is logged with limit 2:
    the commit it resolves to is listed, and only commits of its history.

    Falsified by: log-ignores-ref: repo/log walks the default branch whatever ref is asked.
    """
    require(adapter, fx, "log")
    paths = (VCS_FEATURE_REWRITTEN, VCS_MAIN_ADVANCED, VCS_THREE_COMMITS)
    for ref in (VCS_FEATURE_BRANCH, VCS_LIGHT_TAG):
        at_ref = git_paths(fx, ref) or set()
        for path in (None, *(p for p in paths if p in at_ref)):
            want = [c.sha for c in git_log(fx, ref, path)]
            # a path's log may hold what another reading of "touch" finds across a
            # merge (FIXTURES.md "repo/log of a path across merges")
            may = git_log_touching(fx, ref, path) if path else frozenset()
            log = log_at(adapter, fx, ref, path)
            got = [i.sha for i in log.items]
            resolved = [resolve(adapter, fx, g) for g in got]
            asked = f"repo/log at {ref}" + (f" of {path}" if path else "")
            # what FC-094 and FC-095 judge on every log comes first: their defect
            # seen again here is theirs (the case skips naming it)
            need(all(resolved), f"{asked} lists "
                 f"{listing(str(g) for g, r in zip(got, resolved) if not r)}, which names no "
                 f"commit of git's", owner("log replies are"))
            need(not (resolved and log_left_out(resolved, want) and log.truncated is not True
                      and not_newest_first(fx, resolved, want, may) is None),
                 f"{asked} lists the newest {len(resolved)} of git's {len(want)} commits "
                 f"without truncated: true", owner("log cuts are"))
            matched = sorted(resolved)
            if log.truncated is True and matched and set(matched) <= set(want) | may:
                # cut by the adapter's default page (§3.7 MAY choose one when limit is
                # null; whether the cut is honest and a leading part is FC-095's and
                # FC-094's), and every commit it lists is of the ref's history
                continue
            fc_assert(len(set(matched)) == len(matched)
                      and set(want) <= set(matched) <= set(want) | may,
                      expected=f"git log {ref}{' -- ' + path if path else ''}: "
                               f"{', '.join(w[:12] for w in want)}",
                      got=", ".join(str(g)[:12] for g in got) or "no items",
                      why=f"{asked} walks history from that revision")
    if not adapter.caps.refs:
        return
    for spelled, (commit, label) in refs_round_trips(adapter, fx).items():
        if spelled in (VCS_FEATURE_BRANCH, VCS_LIGHT_TAG):
            continue   # walked in full above
        params = {"repo": fx.repo(VCS), "path": None, "ref": spelled, "limit": 2}
        items = read_reply(adapter.request("repo/log", params), Log, f"repo/log {show(params)}",
                           owner("log replies are")).model.items
        history = {c.sha for c in git_log(fx, commit)}
        got = [resolve(adapter, fx, i.sha) for i in items]
        need(all(got), f"repo/log {show(params)} lists "
             f"{listing(str(i.sha) for i, g in zip(items, got) if not g)}, which names no commit "
             f"of git's", owner("log replies are"))
        fc_assert(commit in got and set(got) <= history,
                  expected=f"{commit[:12]} and commits of its history (git log {commit[:12]})",
                  got=", ".join(f"{str(i.sha)[:12]} ({(g or 'no commit')[:12]})"
                                for i, g in zip(items, got)) or "no items",
                  why=f"repo/log {show(params)} ({label}) walks history from that revision: "
                      f"every name and sha repo/refs lists is accepted back as a ref (§3.6)")


@case("FC-131")
def test_blame_at_ref(adapter, fx):
    """repo/blame at the v0.1 tag and at feature, by name and by commit id
    (the id git gives each, the v1.0 tag's commit too; an adapter whose ids
    git cannot read and that refuses git's is asked by its own id for that
    commit: §3.7 asks it to accept back the ids it emits), names, range by
    range, the commits git blame gives at that ref (at v0.1 every line of
    src/parse.rs is the root's; numbering and coverage are FC-098's). Each
    of these refs, and every name and sha repo/refs lists (when refs is
    declared; §3.6: accepted back as a ref), also blames a file whose blame
    there differs from main's (at main: from feature's).

    Falsified by: blame-ignores-ref: repo/blame blames the default branch whatever ref is asked.
    """
    require(adapter, fx, "blame")
    names = (VCS_LIGHT_TAG, VCS_FEATURE_BRANCH, VCS_ANNOTATED_TAG)
    asked = {n: n for n in names[:2]}   # ref -> what it names, for the message
    for n in names:
        asked.setdefault(fx.git("rev-parse", "--verify", "-q", f"{n}^{{commit}}").strip(),
                         f"{n}'s commit id")
    asks = [(ref, VCS_BLAME_TWO_AUTHORS, ref, label) for ref, label in asked.items()]
    listed = refs_round_trips(adapter, fx) if adapter.caps.refs else {}
    commits = {r: (fx.git("rev-parse", "--verify", "-q", f"{r}^{{commit}}").strip(), label)
               for r, label in asked.items()}
    for spelled, (commit, label) in {**commits, **listed}.items():
        path = blame_telling_file(fx, commit)   # a file whose blame tells commit from main
        if path is not None and path != VCS_BLAME_TWO_AUTHORS:
            asks.append((spelled, path, commit, label))
    named = {}   # the adapter's ids -> git's commits, resolved once
    for ref, path, commit, label in asks:
        params = {"repo": fx.repo(VCS), "path": path, "ref": ref}
        result, err = try_request(adapter, "repo/blame", params)
        if err is not None:
            # git's id refused: an adapter whose ids git cannot read is asked by its own
            own = own_spelling(adapter, fx, ref) if git_commit_of(fx, ref) == ref else None
            if own is None:
                raise err
            params = {**params, "ref": own}
            result = adapter.request("repo/blame", params)
        ranges = read_reply(result, Blame, f"repo/blame at {params['ref']}",
                            owner("blame replies are")).model.ranges
        want = git_blame(fx, commit, path)
        # line by line: how the lines are numbered, covered and coalesced is
        # FC-098's; ranges numbering another count of lines well blame another file
        spans = [(r.start_line, r.end_line) for r in ranges]
        need(all(a <= b for a, b in spans)
             and [a for a, _ in spans] == [1, *(b + 1 for _, b in spans)][:len(spans)],
             f"repo/blame {show(params)}: ranges {show(spans)} do not number the lines 1, 2, ... "
             f"once each", owner("blame replies are"))
        got_lines = [r.sha for r in ranges for _ in range(r.start_line, r.end_line + 1)]
        want_lines = [w.sha for w in want for _ in range(w.start_line, w.end_line + 1)]
        need(len(got_lines) == len(want_lines) or blame_covers_at_default(adapter, fx, path),
             f"repo/blame {show(params)} covers {len(got_lines)} of the file's "
             f"{len(want_lines)} lines, and at {VCS_DEFAULT_BRANCH} too it does not cover the "
             f"file's lines", owner("blame replies are"))
        ok = len(got_lines) == len(want_lines)
        for g, w in zip(got_lines if ok else (), want_lines):
            if g not in named:
                named[g] = resolve(adapter, fx, g)
            ok = ok and named[g] == w
        fc_assert(ok, expected=show([(w.start_line, w.end_line, w.sha[:12]) for w in want]),
                  got=show([(r.start_line, r.end_line, str(r.sha)[:12]) for r in ranges]),
                  why=f"repo/blame {show(params)} ({label}) blames that revision")


def blame_covers_at_default(adapter, fx, path) -> bool:
    """Whether repo/blame of ``path`` at the default branch's name covers its
    lines as git counts them there (FC-098's rule): when it does not either, a
    wrong count at another ref is that defect (True when the default branch
    has no such file: nothing to blame the count on)."""
    want = git_blame(fx, VCS_DEFAULT_BRANCH, path)
    if not want:
        return True
    params = {"repo": fx.repo(VCS), "path": path, "ref": VCS_DEFAULT_BRANCH}
    result, err = try_request(adapter, "repo/blame", params)
    model = read(result, Blame).model if err is None else None
    ranges = model.ranges if model is not None else ()
    covered = sum(r.end_line - r.start_line + 1 for r in ranges
                  if isinstance(r.start_line, int) and isinstance(r.end_line, int))
    return covered == want[-1].end_line


@case("FC-132")
def test_log_shas_as_refs(adapter, fx):
    """Every commit id repo/log lists for a file (at ref null, and at feature
    for the file feature rewrote: its ids off the default branch's history)
    is accepted back as a ref:
    repo/blob_at of that file at each id serves git's bytes at that commit,
    and repo/tree at each id (when refs is declared) is that commit's tree
    (a slip its tree at the default branch shows too is coverage: FC-020's);
    and, when commit is declared, as repo/commit's sha (§3.7 MUST): an id
    spelled otherwise than git's full id (the full ids are FC-100's) is
    answered with that commit (its message and date, author or committer).
    The ids are opaque: each is judged at the commit it resolves to
    (cases.kit.commit_ids: as git spells ids, else back through repo/log).

    Falsified by: blob-at-hex-ref-worktree: repo/blob_at at a commit id (hex, one git resolves)
    serves the working tree's bytes.
    """
    require(adapter, fx, "log")
    need_blob_at_served(adapter, fx)
    # the default branch's logs, and feature's (its commit below the tip is
    # on no other log, and no ref names it: only its id reaches it)
    asks = ((None, VCS_THREE_COMMITS), (None, VCS_MAIN_ADVANCED),
            (VCS_FEATURE_BRANCH, VCS_FEATURE_REWRITTEN))
    judged, left_out = 0, []
    if adapter.caps.refs:
        # what the adapter already gets wrong at the default branch is coverage
        # (FC-020 sweeps that tree); the same slip at a commit id is not judged twice
        at_default = set(by_path(tree(adapter, fx, VCS, VCS_DEFAULT_BRANCH).model))
        git_default = git_paths(fx, VCS_DEFAULT_BRANCH) or set()
        default_missing, default_extra = git_default - at_default, at_default - git_default
    for ref, path in asks:
        items = log_at(adapter, fx, ref, path).items
        shas = [i.sha for i in items if isinstance(i.sha, str)]
        if not shas:   # log replies are FC-094's: left out
            left_out.append(f"repo/log of {path} at {ref} listed no commit id "
                            f"({owner('log replies are')})")
        for spelled in shas:
            commit = resolve(adapter, fx, spelled)   # opaque: judged by what it names
            if not commit:   # log replies are FC-094's: left out
                left_out.append(f"repo/log listed {spelled!r}, which names no commit of git's "
                                f"(neither as git spells ids nor back through repo/log; "
                                f"{owner('log replies are')})")
                continue
            judged += 1
            what = f"repo/blob_at of {path} at {spelled[:12]}"
            params = {"repo": fx.repo(VCS), "path": path, "ref": spelled}
            answer, err = try_request(adapter, "repo/blob_at", params)
            result = read_reply(answer, BlobAt, what, owner("blob_at replies are")).model \
                if err is None else None
            got = b64_loose(result.bytes_b64) if result is not None else None
            want = git_show(fx, commit, path)
            if got != want and ref is not None \
                    and not blob_at_right(adapter, fx, path, tip_of(adapter, fx, ref)):
                # off the default branch: the same slip at the tip repo/refs lists is FC-096's
                left_out.append(f"repo/blob_at of {path} at {ref}'s tip (a sha repo/refs "
                                f"lists) is wrong too ({owner('blob_at replies are')})")
                continue
            fc_assert(err is None, expected=f"{path} as git has it at {commit[:12]}",
                      got=f"an error: {err.message if err else ''!r}",
                      why=f"repo/log of {path} at {ref} listed {spelled!r}: a commit id from "
                          f"repo/log is accepted back as a ref (repo/blob_at {show(params)})")
            fc_assert(got == want, expected=f"{path} as git has it at {commit[:12]}",
                      got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                      why=f"a commit id from repo/log is accepted back as a ref (repo/blob_at "
                          f"{show(params)})")
            if adapter.caps.commit and spelled != commit:
                judge_commit_of(adapter, fx, spelled, commit, f"repo/log of {path} at {ref}")
            if adapter.caps.refs:
                listed = set(by_path(tree(adapter, fx, VCS, spelled).model))
                want_paths, telling, elsewhere = telling_paths(fx, commit)
                # A path that tells this commit from the repo's others always
                # counts (the tree of another commit is a ref resolved wrongly);
                # any other slip counts unless the default branch's tree has it
                # too: then it is coverage, FC-020's (RULINGS).
                missing = {p for p in want_paths - listed
                           if p in telling or p not in default_missing}
                extra = {p for p in listed - want_paths if p in elsewhere or p not in default_extra}
                fc_assert(not missing and not extra, expected=f"git's paths at {commit[:12]} "
                          f"(repo/tree {show({'repo': fx.repo(VCS), 'ref': spelled})})",
                          got=f"missing {listing(missing) or 'none'}; extra "
                          f"{listing(extra) or 'none'}",
                          why="a commit id from repo/log is accepted back as repo/tree's ref")
    need(judged, listing(left_out, 2) or f"repo/log listed no commit ({owner('log replies are')})")


def tip_of(adapter, fx, branch) -> str | None:
    """The newest id of ``branch``'s log as the adapter spells it (its tip)."""
    items = log_at(adapter, fx, branch).items
    return items[0].sha if items and isinstance(items[0].sha, str) else None


def blob_at_right(adapter, fx, path, spelled) -> bool:
    """Whether repo/blob_at of ``path`` at the id ``spelled`` serves git's bytes there."""
    commit = resolve(adapter, fx, spelled) if spelled else None
    if commit is None:
        return True   # nothing to blame the tip for
    result, err = try_request(adapter, "repo/blob_at", {"repo": fx.repo(VCS), "path": path,
                                                        "ref": spelled})
    model = read(result, BlobAt).model if err is None else None
    return model is not None and b64_loose(model.bytes_b64) == git_show(fx, commit, path)


def blob_at_default_right(adapter, fx, path) -> bool:
    """Whether repo/blob_at of ``path`` at the default branch's name serves
    git's bytes there (FC-096's rule)."""
    result, err = try_request(adapter, "repo/blob_at", {"repo": fx.repo(VCS), "path": path,
                                                        "ref": VCS_DEFAULT_BRANCH})
    model = read(result, BlobAt).model if err is None else None
    return model is not None and b64_loose(model.bytes_b64) == git_show(fx, VCS_DEFAULT_BRANCH,
                                                                        path)


def judge_commit_of(adapter, fx, spelled: str, commit: str, listed_by: str) -> None:
    """repo/commit of the id ``spelled`` (listed by ``listed_by``) answers
    git's commit ``commit``: a result whose message and date (author or committer) are that
    commit's (the reply's other members are the commit cases')."""
    params = {"repo": fx.repo(VCS), "sha": spelled}
    asked = ask(adapter, fx, spelled)
    if asked.commit is None:
        got = (f"error {asked.error.message!r} (kind {show(asked.error.raw_kind)})"
               if asked.error is not None else f"a result {show(asked.result, 60)}")
        fc_assert(False, expected=f"the commit {commit[:12]}", got=got,
                  why=f"{listed_by} listed {spelled!r}: every sha repo/log lists is accepted "
                      f"back as repo/commit's sha (repo/commit {show(params)}; an adapter "
                      f"that takes only full ids must list full ids)")
    fc_assert(resolves_to(adapter, fx, spelled, commit), expected=f"the commit {commit[:12]}",
              got=f"a commit with sha {show(asked.commit.sha)} and another message or date",
              why=f"{listed_by} listed {spelled!r}, which names {commit[:12]}: "
                  f"repo/commit {show(params)} answers that commit")


def telling_paths(fx, commit: str) -> tuple[set[str], set[str], set[str]]:
    """(git's paths at ``commit``; those of them, and of the other commits,
    that are not at every commit alike, i.e. what a tree of another commit
    would get wrong; every path some other commit has and ``commit`` has not)."""
    want = git_paths(fx, commit) or set()
    others = [git_paths(fx, c) or set() for c in git_all_commits(fx) if c != commit]
    telling = set().union(*(want ^ o for o in others)) if others else set()
    elsewhere = set().union(*others) - want if others else set()
    return want, telling, elsewhere


@case("FC-133")
def test_blob_at_null_ref(adapter, fx):
    """repo/blob_at with ref null serves the default branch's file (the bytes
    on disk) for files that differ between main and feature (text files, one
    with CRLF line ends and one without a final newline, and a binary one)
    and for the URL-hostile names (space, #, ?, %, +), with
    the sha repo/tree (ref null) lists for that path (binary bytes
    text-decoded are FC-024's).

    Falsified by: blob-at-null-ref-git-sha: repo/blob_at with ref null reports git's blob id while
    trees report sha256 ids.
    """
    require(adapter, fx, "log")
    need_blob_at_served(adapter, fx)
    # the URL-hostile names (VCS_ESCAPE_PATHS): FC-096 asks them at named refs only
    paths = (VCS_MAIN_ADVANCED, VCS_FEATURE_REWRITTEN, VCS_THREE_COMMITS, VCS_BINARY_CHANGED,
             VCS_CRLF, *VCS_ESCAPE_PATHS)
    listed = blob_ids(tree(adapter, fx, VCS).model, set(paths))
    left_out, judged = [], 0
    for path in paths:
        what = f"repo/blob_at of {path} with ref null"
        result = read_reply(adapter.request("repo/blob_at", {"repo": fx.repo(VCS), "path": path,
                                                              "ref": None}), BlobAt, what,
                            owner("blob_at replies are")).model
        got = b64_loose(result.bytes_b64)
        want = fx.read(VCS, path)
        if got not in (None, want) and got == want.decode("utf-8", "replace").encode():
            left_out.append(f"{what} comes back text-decoded (U+FFFD) "
                            f"({owner('blob replies are')})")
            continue
        if got != want and not blob_at_default_right(adapter, fx, path):
            # the same bytes at the default branch's name: FC-096's defect seen again
            left_out.append(f"repo/blob_at of {path} at {VCS_DEFAULT_BRANCH} does not serve "
                            f"git's bytes either ({owner('blob_at replies are')})")
            continue
        fc_assert(got == want, expected=f"{path} as on the default branch ({len(want)} bytes)",
                  got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                  why="blob_at with ref null serves the default branch")
        judged += 1
        if path not in listed:   # the sha has nothing to be compared with: left out
            left_out.append(f"repo/tree of {fx.repo(VCS)} did not list {path} with a sha "
                            f"({owner('coverage is')})")
            continue
        if not sha_at_ref_agrees(adapter, fx, path):
            left_out.append(f"repo/blob_at of {path} at {VCS_DEFAULT_BRANCH} reports a sha its "
                            f"tree at that ref does not list "
                            f"({owner('blob_at shas at a ref are')})")
            continue
        fc_assert(result.sha == listed[path],
                  expected=f"sha {show(listed[path])} (repo/tree, ref null)",
                  got=f"sha {show(result.sha)}",
                  why="blob_at's sha is the tree entry's sha at the same (null) ref")
    need(judged, listing(left_out, 2))
