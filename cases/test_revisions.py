"""Revision cases (FC-090..FC-099): refs, trees and blobs at a ref, log, blame.

Everything is asked of the vcs repo and compared with git itself: paths at a
ref, bytes at a ref, log order and dates, blame ranges. Each case reads the
capabilities first and skips, saying why, when its capability is false or
absent, or when git is missing (no vcs repo). FC-099 judges the declarations
themselves.

"""

from cases.kit.api import case, fc_assert, listing, need, owner, show, skip, warn
from cases.kit.facts import url_hostile
from cases.kit.commit_ids import (can_resolve, git_commit_of, own_spelling, refs_round_trips,
                                  resolve)
from cases.kit.formats import b64_loose, basic_instant, instant
from cases.kit.gitfacts import (UNKNOWN_REF, author_matches, git_blame, git_log, git_log_touching,
                                git_paths, log_complete, log_left_out,
                                git_ref_commit, git_refs, git_show, git_text, not_newest_first,
                                telling_files, unknown_commit_id)
from cases.kit.replies import (handshakes, blob_bytes, blob_ids, by_path, expect_error, judge_kind,
                               listed_ids, read_reply, tree, tree_what, try_request)
from fixture import GIT_MISSING_REASON
from fixture.catalog import (VCS, VCS_ANNOTATED_TAG, VCS_BLAME_TWO_AUTHORS, VCS_CRLF,
                             VCS_DEFAULT_BRANCH, VCS_LIGHT_TAG, VCS_FEATURE_BRANCH,
                             VCS_FEATURE_REWRITTEN, VCS_MAIN_ADVANCED, VCS_SAME_BOTH,
                             VCS_THREE_COMMITS)
from wire.messages import Blame, BlobAt, Log, Refs, read, structure

MAIN, FEATURE = VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH
DIVERGING = (VCS_MAIN_ADVANCED, VCS_FEATURE_REWRITTEN)   # main advanced / feature rewrote
REVISION_CAPABILITIES = ("refs", "log", "blame", "commit")


def require(adapter, fx, capability):
    """Skip unless the vcs repo exists and the adapter declares ``capability``."""
    if not fx.vcs_built:
        skip(f"the vcs repo is missing: {fx.vcs_skip_reason or GIT_MISSING_REASON}")
    if not getattr(adapter.caps, capability):
        skip(f"needs the {capability!r} capability, which the adapter declares false or omits")


def refs_listed(result):
    """Every name and sha repo/refs listed (branches and tags), read around any
    malformed member (refs replies are FC-090's)."""
    refs = read(result, Refs).model
    listed = [*refs.branches, *refs.tags] if refs is not None else []
    out = [v for ref in listed for v in (ref.name, ref.sha) if isinstance(v, str)]
    return list(dict.fromkeys(out))


@case("FC-090")
def test_refs_shape(adapter, fx):
    """repo/refs (asked twice: every reply is judged) lists branches and tags
    with name and sha, at most one branch marked default (another than main
    warns), each listed sha naming (resolving to, as a ref) the commit git's
    ref points at: an annotated tag may list its tag object's id or the
    tagged commit's (RULINGS "Content and revisions"). A branch or tag git
    has and the reply leaves out warns (§3.6 sets no MUST on completeness).

    Falsified by: two-defaults: repo/refs marks every branch default.
    """
    require(adapter, fx, "refs")
    commits = Commits(adapter, fx)
    for call in ("first", "second"):
        refs = structure(adapter.request("repo/refs", {"repo": fx.repo(VCS)}), Refs)
        defaults = [b.name for b in refs.branches if b.default]
        fc_assert(len(defaults) <= 1, expected="at most one default branch",
                  got=f"default: true on {listing(defaults)} (the {call} repo/refs)",
                  why="one branch is the default")
        for what, kind, listed in (("branches", "heads", refs.branches),
                                   ("tags", "tags", refs.tags)):
            want, got = set(git_refs(fx, kind)), {r.name for r in listed}
            if not want <= got:
                # §3.6 sets no MUST on completeness (a backend may page its
                # refs): a ref left out warns; what is listed is judged below
                warn(f"repo/refs left out {what} git has: {listing(want - got)} (the {call} "
                     f"repo/refs); the host's ref picker will not offer them")
            wrong = [f"{r.name}: sha {show(r.sha)} names {(got or 'no commit')[:12]}, git's "
                     f"{r.name} is {want_sha[:12]}"
                     for r, want_sha, got in ((r, git_ref_commit(fx, kind, r.name), commits(r.sha))
                                              for r in listed if r.name in want)
                     if got != want_sha and can_resolve(adapter, r.sha)]
            fc_assert(not wrong,
                      expected=f"the sha of each of the {what} naming the commit git's ref "
                               f"points at",
                      got=f"{listing(wrong)} (the {call} repo/refs)",
                      why="a ref's sha is the revision the ref points at (§3.6)")
    if defaults and defaults[0] != MAIN:
        warn(f"the branch marked default is {defaults[0]!r}; git's default branch is {MAIN!r}")


def changed_at(fx, ref):
    """The files whose bytes at ``ref`` differ from main's (the diverging
    files at main itself): where a tree at ``ref`` shows which revision it serves."""
    if ref == MAIN:
        return list(DIVERGING)
    out = git_text(fx, "diff", "--name-only", "--no-renames", "-z", MAIN, ref)
    at, main = git_paths(fx, ref) or set(), git_paths(fx, MAIN) or set()
    return sorted(p for p in out.split("\0") if p in at   # a mode change keeps the bytes
                  and (p not in main or git_show(fx, MAIN, p) != git_show(fx, ref, p)))


@case("FC-091")
def test_tree_at_ref(adapter, fx):
    """repo/tree at main, at feature and at every ref name and sha repo/refs
    lists serves that revision: git's paths, and the bytes (through the listed
    ids, fetched right after their tree) of every file that differs from main.
    `branch` is a string when sent; not echoing the ref asked warns (a SHOULD).

    Falsified by: tag-tree-worktree-bytes: Trees at refs other than main/feature list the
    checked-out files' ids (so their bytes) where the path exists.
    """
    require(adapter, fx, "refs")
    listed = refs_listed(adapter.request("repo/refs", {"repo": fx.repo(VCS)}))
    left_out, judged = [], 0
    for ref in dict.fromkeys([MAIN, FEATURE, *listed]):
        reading = tree(adapter, fx, VCS, ref, own=True)
        bad = reading.at("branch")
        fc_assert(not bad, expected="branch a string", got=listing(m for _, m in bad),
                  why=f"{tree_what(fx, VCS, ref)}: branch has its type")
        result = reading.model
        if git_paths(fx, ref) is None:
            continue   # a spelling git does not know: round trips are judged elsewhere
        want_paths = git_paths(fx, ref)
        if set(by_path(result)) != want_paths:   # RULINGS: coverage is FC-020's, every ref
            left_out.append(f"{tree_what(fx, VCS, ref)} does not list git's paths at {ref} "
                            f"({owner('coverage is')})")
            continue
        judged += 1
        paths = changed_at(fx, ref)
        ids = blob_ids(result, set(paths))
        for path in paths:   # fetched right after their own tree: ids are opaque
            got = blob_bytes(adapter, fx, VCS, ids.get(path, ""))
            want_bytes = git_show(fx, ref, path)
            if got not in (None, want_bytes) \
                    and got == want_bytes.decode("utf-8", "replace").encode():
                left_out.append(f"{path} at {ref} comes back text-decoded (U+FFFD) "
                                f"({owner('blob replies are')})")
                continue
            fc_assert(got == want_bytes, expected=f"{path} as git has it at {ref}",
                      got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                      why=f"{tree_what(fx, VCS, ref)}: the ids listed serve that ref's bytes")
        if ref in (MAIN, FEATURE) and result.branch != ref:
            warn(f"{tree_what(fx, VCS, ref)} answered branch {show(result.branch)}; the ref "
                 f"asked ({ref!r}) is what the host displays (SHOULD echo)")
    need(judged, listing(left_out, 2))   # a ref left out above is its owner's; the rest judged


def unknown_short_id(fx):
    """An abbreviated-looking (12-hex) id git resolves to nothing."""
    full = unknown_commit_id(fx)
    return next(full[i:i + 12] for i in range(0, 28) if git_commit_of(fx, full[i:i + 12]) is None)


@case("FC-092")
def test_tree_at_unknown_ref(adapter, fx):
    """repo/tree at an unknown ref name, and at a 40-hex and a 12-hex id that
    exist nowhere, is an error (an adapter that never answers fails at the
    deadline); its kind is preferably not_found: another kind, or none,
    warns (§3.3 SHOULD; RULINGS "Strength": the title says "preferred").

    Falsified by: unknown-ref-default: repo/tree at a ref the adapter cannot resolve serves the
    default branch instead.
    """
    require(adapter, fx, "refs")
    for ref in (UNKNOWN_REF, unknown_commit_id(fx), unknown_short_id(fx)):
        what = f"repo/tree at the unknown ref {ref}"
        err = expect_error(adapter, "repo/tree", {"repo": fx.repo(VCS), "ref": ref}, what=what)
        if err.raw_kind != "not_found":
            kind = "no data.kind" if err.raw_kind is None else f"data.kind {show(err.raw_kind)}"
            warn(f"{what}: {kind} (not_found preferred); message {err.message!r}")


@case("FC-093")
def test_ids_across_refs(adapter, fx):
    """Files whose bytes differ between main and another ref (feature: both
    ways the branches diverge; every tag) have different ids at each; the
    listed ids must serve their ref's bytes (else the tree is FC-091's);
    identical bytes sharing one id is advisory.

    Falsified by: ref-ids-from-worktree: Blob ids at a ref are the checked-out (default branch)
    file's ids; blobs resolve by the last tree listed.
    """
    require(adapter, fx, "refs")
    at_main = git_paths(fx, MAIN) or set()
    others = {ref: [p for p in changed_at(fx, ref) if p in at_main]
              for ref in (FEATURE, *sorted(git_refs(fx, "tags")))}
    main = listed_ids(adapter, fx, VCS, {VCS_SAME_BOTH, *DIVERGING, *(p for ps in others.values()
                                                                         for p in ps)},
                      ref=MAIN)
    left_out, judged = [], 0
    for ref, paths in others.items():
        ids = blob_ids(tree(adapter, fx, VCS, ref).model, {*paths, VCS_SAME_BOTH})
        for path in paths:   # fetched right after their own tree: ids are opaque
            if path not in ids or path not in main:   # left out
                left_out.append(f"{path} is not listed with a sha at {MAIN} and at {ref} "
                                f"({owner('coverage is')})")
                continue
            if blob_bytes(adapter, fx, VCS, ids[path]) != git_show(fx, ref, path):
                left_out.append(f"the id {tree_what(fx, VCS, ref)} lists for {path} does not "
                                f"serve its bytes at {ref} ({owner('trees at a ref are')})")
                continue
            judged += 1
            fc_assert(main[path] != ids[path],
                      expected=f"different ids for {path} at {MAIN} and {ref}",
                      got=f"{show(main[path])} at both",
                      why="an id must change when the content changes")
        if ref == FEATURE and VCS_SAME_BOTH in main and VCS_SAME_BOTH in ids \
                and main[VCS_SAME_BOTH] != ids[VCS_SAME_BOTH]:
            warn(f"commit-keyed: {VCS_SAME_BOTH} has identical bytes on {MAIN} and {FEATURE} but "
                 f"different ids (allowed; one shared id would save the host a fetch)")
    need(judged, listing(left_out, 2))


def log_instant(date, what):
    """The instant a log/blame date names: ISO-8601 extended format, or the
    basic format with a warning (RULINGS: the host shows dates verbatim)."""
    when = instant(date)
    if when is None:
        when = basic_instant(date)
        if when is not None:
            warn(f"{what}: date {date!r} is ISO-8601 basic format (the host shows it verbatim; "
                 f"the extended format reads better)")
    return when


class Commits:
    """The adapter's commit ids resolved to git's commits, remembered for the
    case (cases.kit.commit_ids: abbreviated or backend spellings pass)."""

    def __init__(self, adapter, fx):
        self.adapter, self.fx, self.seen = adapter, fx, {}

    def __call__(self, sha):
        if sha not in self.seen:
            self.seen[sha] = resolve(self.adapter, self.fx, sha)
        return self.seen[sha]


# The logs FC-094 reads: a path's (ref null, and at refs), and the unfiltered one.
LOG_REFS = (None, FEATURE, VCS_ANNOTATED_TAG)


@case("FC-094")
def test_log(adapter, fx):
    """repo/log, with and without a path, at ref null, feature and a tag, lists
    git's commits for it newest first (commit ids judged by the commit they
    resolve to), with ISO-8601 dates at an instant of that commit (git's
    author or committer date: §3.7 asks ISO-8601 only; the author is the
    backend's string); the path filter narrows the log. A
    subject other than git's warns. Narrowing is judged by length only when
    the unfiltered log is complete: a default page (limit null) that cuts it
    with truncated true leaves the filtered log judged against git's log of
    the path alone. Newest first is read as children before
    parents (gitfacts.not_newest_first): git's default order, --date-order
    and --topo-order all pass, since §3.7 says only "newest first" and
    parallel lines of history have no order the graph gives; a reply cut
    short is judged as the leading part of such a listing (the cut's
    truncated flag, its type included, is FC-095's). Every vcs log reply of
    the run (any ref, path or limit) has its dates and the order of its
    commits judged the same way (cases/judges/claims.py, log-date and
    log-order).

    Falsified by: log-oldest-first: repo/log lists commits oldest first.
    """
    require(adapter, fx, "log")
    commits = Commits(adapter, fx)
    left_out = []
    for ref in LOG_REFS:
        lengths, cut = {}, {}
        for path in (VCS_THREE_COMMITS, None):
            params = {"repo": fx.repo(VCS), "path": path, "ref": ref, "limit": None}
            what = f"repo/log {show(params)}"
            result = adapter.request("repo/log", params)
            items = structure(items_only(result), Log).items
            want = git_log(fx, ref or MAIN, path)
            got = [commits(i.sha) for i in items]
            if ref not in (None, MAIN) and set(got) - {c.sha for c in want} - {None}:
                # commits of another history: the ref was not walked, FC-130's rule; left out
                # (an id that names no commit is this case's at every ref)
                left_out.append(f"{what} lists commits that are not in git's history of {ref}")
                continue
            # a path's log may also list what another reading of "touch" finds
            # across the merge (FIXTURES.md "repo/log of a path across merges")
            may = git_log_touching(fx, ref or MAIN, path) if path else frozenset()
            wrong = not_newest_first(fx, got, [c.sha for c in want], may) if items else "no items"
            fc_assert(not wrong,
                      expected=f"git log {ref or MAIN}" + (f" -- {path}" if path else "")
                      + f", newest first: {', '.join(c.sha[:12] for c in want[:8])}",
                      got=f"{wrong}: " + ", ".join(f"{i.sha[:12]} ({(g or 'no commit')[:12]})"
                                                   for i, g in zip(items[:8], got)),
                      why=f"{what} lists the commits of that history, newest first (each "
                          f"before its ancestors)")
            by_sha = {c.sha: c for c in (git_log(fx, ref or MAIN) if may else want)}
            for item, commit in ((i, by_sha[g]) for i, g in zip(items, got)):
                when = log_instant(item.date, what)
                fc_assert(when is not None, expected="an ISO-8601 date",
                          got=f"date {item.date!r} of {item.sha[:12]}",
                          why=f"{what}: log dates are ISO-8601")
                fc_assert(when in commit.dates,
                          expected=" or ".join(dict.fromkeys(d.isoformat() for d in commit.dates))
                          + f" for {commit.sha[:12]}",
                          got=f"date {item.date!r}",
                          why=f"{what}: the date is an instant of that commit (its author or "
                              f"committer date)")
                if item.subject != commit.subject:   # the author string is the backend's
                    warn(f"{what}: {item.sha[:12]}'s subject is {item.subject!r}; git says "
                         f"{commit.subject!r}")
            lengths[path] = len(items)
            # a malformed truncated is FC-095's; only a well-formed true is a cut here
            cut[path] = isinstance(result, dict) and result.get("truncated") is True
        if len(lengths) < 2 or cut[None]:
            # A log left out above cannot show the narrowing, nor can an
            # unfiltered log the adapter's default page (limit null: §3.7 MAY
            # choose one) cut: what the filter lists is judged against git's
            # log of the path above.
            continue
        fc_assert(lengths[None] > lengths[VCS_THREE_COMMITS],
                  expected=f"more than {lengths[VCS_THREE_COMMITS]} commits",
                  got=f"{lengths[None]} without a path (ref {show(ref)})",
                  why="the path filter narrows the log")
    need(len(left_out) < 2 * len(LOG_REFS), listing(left_out, 2), owner("logs at a ref are"))


def items_only(result):
    """A repo/log result without its truncated member: that member (its type
    too) is FC-095's (R-3.7-limit), as repo/tree's is FC-022's; FC-094 reads
    the items."""
    return {k: v for k, v in result.items() if k != "truncated"} if isinstance(result, dict) \
        else result


@case("FC-095")
def test_log_limit(adapter, fx):
    """repo/log with limit 2, with and without a path, at ref null, main,
    feature, every tag and the tip commits of main and feature spelled as
    the adapter's log lists them (commit ids as ref), where git has more
    than 2 commits, answers exactly 2 items and truncated true (a truncated
    that is not a boolean fails here, not in FC-094); with limit equal to
    git's count of commits there it answers them all and does not say
    truncated true (no further commit exists); and FC-094's logs (limit null: the adapter's default,
    with and without a path, at ref null, main, feature and a tag) say
    truncated true when they list fewer commits than git has, and only then
    (RULINGS "Bounded compute": a cut without truncated: true, or a claim of
    truncation that is false, fails; listing other commits is FC-094's or,
    at a ref, FC-130's). Every vcs log reply of the run whose items git
    reads as a newest-first leading part of its log there is judged the
    same way (respawned generations too: cases/judges/claims.py).

    Falsified by: log-ignores-limit: repo/log ignores limit (serves its default page).
    """
    require(adapter, fx, "log")
    # (ref as sent, git's revision for it): the names, then the tip commits
    # of main and feature spelled as the adapter's own log lists them (the
    # host's history lens walks from those ids)
    refs = [(ref, ref or MAIN) for ref in (None, MAIN, FEATURE, *sorted(git_refs(fx, "tags")))]
    refs += tip_ids(adapter, fx)
    # its own limit-2 questions first: a reply it cannot read is its own
    for ref, rev in refs:
        for path in (VCS_THREE_COMMITS, None):
            if len(git_log(fx, rev, path)) <= 2:
                continue   # nothing more exists: no truncation to claim
            reading, what = log_reading(adapter, fx, ref, path, 2, None)
            count, truncated = len(reading.model.items), flag(reading)
            fc_assert(count == 2 and truncated == "true",
                      expected="2 items and truncated true (more commits exist)",
                      got=f"{count} items, truncated {truncated}",
                      why=f"{what} honours limit and says when more exists")
    commits = Commits(adapter, fx)
    # a limit that git's whole history there fits exactly: no further commit exists
    for ref, rev in refs:
        for path in (VCS_THREE_COMMITS, None):
            want = [c.sha for c in git_log(fx, rev, path)]
            if want:
                judge_log_cut(fx, commits, *log_reading(adapter, fx, ref, path, len(want),
                                                        owner("log replies are")), want, ref, path,
                              rev)
    # FC-094's logs, at the adapter's default limit
    for ref in (None, MAIN, FEATURE, VCS_ANNOTATED_TAG):
        for path in (VCS_THREE_COMMITS, None):
            want = [c.sha for c in git_log(fx, ref or MAIN, path)]
            judge_log_cut(fx, commits, *log_reading(adapter, fx, ref, path, None,
                                                    owner("log replies are")), want, ref, path,
                          ref or MAIN)


def tip_ids(adapter, fx) -> list[tuple[str, str]]:
    """(id, git's commit) of the newest commit of main's and of feature's
    log, as the adapter's repo/log (limit null) spells it. A log that is an
    error, lists nothing, or whose first id resolves to no commit gives none
    (log replies are FC-094's, ids FC-132's)."""
    out = []
    for branch in (MAIN, FEATURE):
        result, err = try_request(adapter, "repo/log", {"repo": fx.repo(VCS), "path": None,
                                                        "ref": branch, "limit": None})
        listed = read(result, Log).model if err is None else None
        first = listed.items[0].sha if listed is not None and listed.items else None
        commit = resolve(adapter, fx, first) if isinstance(first, str) and first else None
        if commit is not None and first not in (ref for ref, _ in out):
            out.append((first, commit))
    return out


def log_reading(adapter, fx, ref, path, limit, shape_owner):
    """repo/log of vcs read as a Log, and the request as the failure names it."""
    params = {"repo": fx.repo(VCS), "path": path, "ref": ref, "limit": limit}
    what = f"repo/log {show(params)}"
    return read_reply(adapter.request("repo/log", params), Log, what, shape_owner), what


def flag(reading) -> str:
    """A log reply's truncated as shown (``malformed (...)`` when not a boolean)."""
    bad = reading.at("truncated")
    return f"malformed ({bad[0][1]})" if bad else show(reading.model.truncated)


def judge_log_cut(fx, commits, reading, what: str, want: list[str], ref, path, rev) -> None:
    """FC-095 on one log reply where git has the commits ``want`` (its
    default listing at ``rev``): one of them left out says truncated true,
    and every commit touching the path by any reading listed never does
    (FIXTURES.md "repo/log of a path across merges"). A reply that is not a
    newest-first leading part of such a listing (other commits, a gap) is
    FC-094's, at a ref FC-130's: the case skips naming it."""
    items, truncated = reading.model.items, flag(reading)
    got = [commits(i.sha) for i in items]
    may = git_log_touching(fx, rev, path) if path else frozenset()
    cut_unsaid = bool(log_left_out(got, want)) and truncated != "true"
    cut_claimed = log_complete(got, want, may) and truncated == "true"
    if not (cut_unsaid or cut_claimed):
        return
    wrong = not_newest_first(fx, got, want, may)
    need(wrong is None, f"{what} is not a leading part of git's log, newest first: {wrong}",
         owner("log replies are" if ref in (None, MAIN) else "logs at a ref are"))
    history = f"git log {ref or MAIN}" + (f" -- {path}" if path else "")
    fc_assert(not cut_unsaid, expected=f"all {len(want)} commits of {history}, or truncated: true",
              got=f"{len(items)} items, truncated {truncated}",
              why=f"{what}: a log cut short says truncated: true (more commits exist)")
    fc_assert(not cut_claimed, expected=f"truncated false (or absent): all {len(want)} commits "
              f"of {history} are listed and no further one exists",
              got=f"{len(items)} items and truncated true (hint: truncated set because the reply "
              f"is full, without looking one commit past it?)",
              why=f"{what}: truncated true claims more commits than were sent")


@case("FC-096")
def test_blob_at(adapter, fx):
    """repo/blob_at of the diverging files (and the CRLF and URL-hostile vcs
    files) at main, feature and every tag where they exist serves git's bytes
    (line ends included), with the sha the tree at
    that ref lists (ref null is FC-133's); and, when refs is declared, a file
    that differs from main's at every sha repo/refs lists (§3.6: each is
    accepted back as a ref; judged at the commit it resolves to). A blob_at
    that serves nothing at all is FC-099's; a tree id that is another ref's
    is FC-093's.

    Falsified by: blob-at-git-sha: repo/blob_at reports git's blob id while trees report sha256 ids.
    """
    require(adapter, fx, "log")
    probe = {"repo": fx.repo(VCS), "path": VCS_THREE_COMMITS, "ref": MAIN}
    _, err = try_request(adapter, "repo/blob_at", probe)
    need(err is None, f"repo/blob_at {show(probe)} answered an error ({err and err.message!r}): "
         f"blob_at is not served at all", owner("declared capabilities served are"))
    trees = {}
    for ref in (MAIN, FEATURE, *sorted(git_refs(fx, "tags"))):
        at = ref
        hostile = sorted(p for p in git_paths(fx, at) or () if url_hostile(p))
        paths = [*DIVERGING, VCS_CRLF, *hostile]
        paths = [p for p in paths if p in (git_paths(fx, at) or ())]
        served = {}
        for path in paths:
            params = {"repo": fx.repo(VCS), "path": path, "ref": ref}
            what = f"repo/blob_at {show(params)}"
            blob = read_reply(adapter.request("repo/blob_at", params), BlobAt, what, None).model
            got = b64_loose(blob.bytes_b64)
            fc_assert(got == git_show(fx, at, path), expected=f"{path} as git has it at {at}",
                      got="undecodable bytes" if got is None else f"{len(got)} other bytes",
                      why=f"{what} serves the file as of that ref")
            served[path] = blob.sha
        listed = trees[ref] = blob_ids(tree(adapter, fx, VCS, ref).model, set(paths))
        for path in paths:
            if path not in listed or served[path] == listed[path]:
                continue   # a path the tree does not list is coverage, FC-020's: left out
            borrowed = [r for r, ids in trees.items() if r != ref and ids.get(path) == listed[path]
                        and git_show(fx, r or MAIN, path) != git_show(fx, at, path)]
            if borrowed:   # an id of another ref's bytes (FC-093's): left out
                continue
            fc_assert(False, expected=f"{path}: sha {show(listed[path])} (the tree at {show(ref)})",
                      got=f"sha {show(served[path])}",
                      why=f"repo/blob_at's sha at {show(ref)} is the tree-at-ref entry's sha")
    if not adapter.caps.refs:
        return
    for spelled, (commit, label) in refs_round_trips(adapter, fx).items():
        paths = telling_files(fx, commit)   # the names were asked above; a sha is asked once
        if spelled in trees or not paths:
            continue
        params = {"repo": fx.repo(VCS), "path": paths[0], "ref": spelled}
        what = f"repo/blob_at {show(params)} ({label})"
        got, err = blob_at_bytes(adapter, params, what)
        if got == git_show(fx, commit, paths[0]):
            continue
        if not log_ids_served(adapter, fx):   # no commit id served as a ref (FC-132's): left out
            continue
        fc_assert(False, expected=f"{paths[0]} as git has it at {commit[:12]}",
                  got=f"the error {err.message!r}" if err is not None
                  else "undecodable bytes" if got is None else f"{len(got)} other bytes",
                  why=f"{what}: every sha repo/refs lists is accepted back as a ref (§3.6)")


def blob_at_bytes(adapter, params, what):
    """(the bytes repo/blob_at serves, None) or (None, its error reply)."""
    result, err = try_request(adapter, "repo/blob_at", params)
    if err is not None:
        return None, err
    return b64_loose(read_reply(result, BlobAt, what, None).model.bytes_b64), None


def log_ids_served(adapter, fx):
    """Whether repo/blob_at at an older commit id of the default branch's log
    (as repo/log lists it) serves that commit's file: when it does not, a
    refs sha refused or served wrongly is that defect, FC-132's."""
    path = VCS_MAIN_ADVANCED
    items = read(adapter.request("repo/log", {"repo": fx.repo(VCS), "path": path, "ref": None,
                                              "limit": None}), Log).model
    for item in items.items if items is not None else ():
        commit = resolve(adapter, fx, item.sha)
        if commit and git_show(fx, commit, path) != fx.read(VCS, path):
            params = {"repo": fx.repo(VCS), "path": path, "ref": item.sha}
            got, _ = blob_at_bytes(adapter, params, f"repo/blob_at {show(params)}")
            return got == git_show(fx, commit, path)
    return True


@case("FC-097")
def test_blob_at_unknown(adapter, fx):
    """repo/blob_at of an unknown path at main, ref null and feature, of a known path at an unknown
    ref (a name, a 40-hex and a 12-hex id), and of every file another
    revision has at each branch and tag (ref null for main) that lacks it (a
    file added later, deleted or renamed before, or on the other branch
    only), is an error of kind not_found.

    Falsified by: blob-at-empty-for-unknown: repo/blob_at answers empty bytes for a path or ref it
    cannot resolve in a served repository.
    """
    require(adapter, fx, "log")
    asks = [("no/such/file-fc097.txt", MAIN), ("no/such/file-fc097.txt", None),
            ("no/such/file-fc097.txt", FEATURE), (VCS_THREE_COMMITS, UNKNOWN_REF),
            (VCS_THREE_COMMITS, unknown_commit_id(fx)), (VCS_THREE_COMMITS, unknown_short_id(fx))]
    asks += lacking_paths(fx)
    for path, ref in asks:
        what = f"repo/blob_at of {path} at {ref}"
        params = {"repo": fx.repo(VCS), "path": path, "ref": ref}
        judge_kind(expect_error(adapter, "repo/blob_at", params, what=what), "not_found", what=what)


def lacking_paths(fx) -> list[tuple[str, str | None]]:
    """(path, ref): each file some branch or tag of git has, at each branch
    and tag (and ref null for the default branch) whose tree lacks it."""
    refs = (MAIN, FEATURE, *sorted(git_refs(fx, "tags")))
    files = {ref: set(git_text(fx, "ls-tree", "-r", "--name-only", "-z", ref).split("\0")) - {""}
             for ref in refs}
    every = set().union(*files.values())
    return [(path, sent) for ref in refs for sent in ((ref, None) if ref == MAIN else (ref,))
            for path in sorted(every - files[ref])]


# (path, ref) FC-098 blames: every text file git blames into ranges at main, and at refs.
def blame_asks(fx):
    files = sorted(p for p in git_text(fx, "ls-tree", "-r", "--name-only", "-z", MAIN).split("\0")
                   if p and b"\0" not in git_show(fx, MAIN, p))
    return ([(VCS_BLAME_TWO_AUTHORS, None)] + [(p, MAIN) for p in files]
            + [(VCS_FEATURE_REWRITTEN, FEATURE), (VCS_BLAME_TWO_AUTHORS, VCS_LIGHT_TAG)])


@case("FC-098")
def test_blame(adapter, fx):
    """repo/blame of every text file at main (ref null, main), and of files at
    feature and at a tag, gives 1-based inclusive ascending ranges covering
    every line once, same-commit neighbours coalesced; at main each range
    names (resolves to) the commit git blame gives (at other refs that is
    FC-131's); every range's date is ISO-8601 (the basic format warns, as in
    FC-094); authors and date instants should match git.

    Falsified by: blame-zero-based: repo/blame ranges are 0-based.
    """
    require(adapter, fx, "blame")
    commits = Commits(adapter, fx)
    for path, ref in blame_asks(fx):
        params = {"repo": fx.repo(VCS), "path": path, "ref": ref}
        what = f"repo/blame {show(params)}"
        ranges = structure(adapter.request("repo/blame", params), Blame).ranges
        whens = [log_instant(r.date, what) for r in ranges]   # at every ref asked
        bad = [f"{r.start_line}-{r.end_line}: {r.date!r}"
               for r, w in zip(ranges, whens) if w is None]
        fc_assert(not bad, expected="ISO-8601 dates", got=f"dates {listing(bad)}",
                  why=f"{what}: a blame range's date is an ISO-8601 string (§3.8)")
        want = git_blame(fx, ref or MAIN, path)
        spans = [(r.start_line, r.end_line) for r in ranges]
        if ref not in (None, MAIN):
            at_main = [(w.start_line, w.end_line) for w in git_blame(fx, MAIN, path)]
            if spans == at_main and at_main != [(w.start_line, w.end_line) for w in want]:
                continue   # the default branch's ranges: blame at a ref is FC-131's, left out
        # which commit, at another ref: FC-131's
        judge_blame(what, ranges, want, commits, exact=ref in (None, MAIN))
        if ref not in (None, MAIN):
            continue
        for r, when, w in zip(ranges, whens, want):
            if not author_matches(r.author, w.author, w.email) or when != w.date:
                warn(f"{what} lines {r.start_line}-{r.end_line}: author {r.author!r}, date "
                     f"{r.date!r}; git says {w.author!r}, {w.date.isoformat()}")


def judge_blame(what: str, ranges, want, commits, *, exact: bool) -> None:
    """FC-098 on one repo/blame reply's ``ranges`` (``want``: git blame's,
    coalesced): 1-based, ascending inclusive ranges covering every line once,
    same-commit neighbours coalesced (``commits`` resolves a sent sha to
    git's commit, None when it cannot); with ``exact``, each range names the
    commit git blame gives."""
    spans = [(r.start_line, r.end_line) for r in ranges]
    lines = want[-1].end_line if want else 0
    fc_assert(not spans or spans[0][0] == 1, expected="the first range starting at line 1",
              got=f"ranges {spans[:8]}", why=f"{what}: blame lines are 1-based")
    covered = [n for start, end in spans for n in range(start, end + 1)]
    fc_assert(covered == list(range(1, lines + 1)) and all(s <= e for s, e in spans),
              expected=f"ascending inclusive ranges covering lines 1..{lines} once",
              got=f"ranges {spans[:8]}", why=f"{what}: blame covers every line exactly once")
    got = [commits(r.sha) for r in ranges]
    split = [f"{a.start_line}-{a.end_line} and {b.start_line}-{b.end_line}"
             for a, b, ga, gb in zip(ranges, ranges[1:], got, got[1:])
             if a.sha == b.sha or (ga is not None and ga == gb)]
    fc_assert(not split, expected="adjacent ranges of one commit coalesced",
              got=f"split ranges {listing(split)}",
              why=f"{what}: same-commit neighbours are one range")
    if not exact:
        return
    fc_assert([(r.start_line, r.end_line, g) for r, g in zip(ranges, got)]
              == [(w.start_line, w.end_line, w.sha) for w in want],
              expected=show([(w.start_line, w.end_line, w.sha[:12]) for w in want]),
              got=show([(r.start_line, r.end_line, r.sha[:12]) for r in ranges]),
              why=f"{what}: each range names the commit git blame gives for those lines")


@case("FC-099")
def test_capability_honesty(adapter, spawn, fx):
    """refs/log/blame/commit, when present, are JSON booleans (in the group
    adapter's handshake and in one started without cache params), and each
    one declared true is served for vcs (refs; log and its companion
    blob_at; blame of a file; commit of main's tip and of an older commit
    answer results, asked by git's id, or by the adapter's own id for that
    commit when git's is refused and git cannot read the ids its repo/log
    lists: §3.12 asks for the ids it emitted; repo/commit's reply is the
    commit cases').

    Falsified by: commit-unimplemented: Declares commit true but answers repo/commit "unknown
    method".
    """
    # every handshake, the one started without cache params included (a start
    # that fails there is FC-005's defect: replies.handshakes leaves it out)
    for when, init in handshakes(adapter, spawn):
        when = f" ({when})"
        raw = init.get("capabilities") if isinstance(init, dict) else None
        raw = raw if isinstance(raw, dict) else {}
        bad = {k: raw[k] for k in REVISION_CAPABILITIES
               if k in raw and not isinstance(raw[k], bool)}
        fc_assert(not bad, expected="true or false", got=show(bad) + when,
                  why="capability values are JSON booleans")
    raw = adapter.init_result.get("capabilities")
    raw = raw if isinstance(raw, dict) else {}
    declared = [k for k in REVISION_CAPABILITIES if raw.get(k) is True]
    if not declared:
        return   # false or absent is never asked (the incapable gate proves it)
    if not fx.vcs_built:
        skip(f"asks vcs for {', '.join(declared)}: {fx.vcs_skip_reason or GIT_MISSING_REASON}")
    unserved, unjudged, probes = [], [], 0
    for capability in declared:
        for method, params in capability_probes(fx, capability):
            probes += 1
            result, err = try_request(adapter, method, params)
            if err is not None and method == "repo/commit":
                # git's id refused: an adapter whose ids git cannot read serves
                # the ids it emits (§3.12: "a commit id the adapter emitted")
                own = own_spelling(adapter, fx, params["sha"])
                if own is not None:
                    params = {**params, "sha": own}
                    result, err = try_request(adapter, method, params)
            if err is not None:
                unserved.append(f"{capability} true but {method} {show(params)} answered "
                                f"{err.message!r}")
            elif not isinstance(result, dict):   # no reply anyone can read: left out
                unjudged.append(f"{method} answered {show(result, 40)}, not an object "
                                f"({REPLY_OWNERS[method]})")
    fc_assert(not unserved, expected="a result for every declared capability",
              got=listing(unserved), why="a capability declared true must be implemented")
    need(len(unjudged) < probes, "; ".join(unjudged))


# Whose rule the reply of each revision probe is.
REPLY_OWNERS = {"repo/refs": owner("refs replies are"), "repo/log": owner("log replies are"),
                "repo/blob_at": owner("blob_at replies are"),
                "repo/blame": owner("blame replies are"),
                "repo/commit": owner("commit replies are")}


def capability_probes(fx, capability):
    """The requests that show ``capability`` is served for vcs."""
    repo = fx.repo(VCS)
    if capability == "refs":
        return [("repo/refs", {"repo": repo})]
    if capability == "log":
        return [("repo/log", {"repo": repo, "path": None, "ref": None, "limit": None}),
                ("repo/blob_at", {"repo": repo, "path": VCS_THREE_COMMITS, "ref": None})]
    if capability == "blame":
        return [("repo/blame", {"repo": repo, "path": VCS_BLAME_TWO_AUTHORS, "ref": None})]
    return [("repo/commit", {"repo": repo, "sha": git_text(fx, "rev-parse", rev).strip()})
            for rev in (MAIN, f"{MAIN}~2")]
