"""Commit cases (FC-100..FC-109): repo/commit, v1.6 (PROTOCOL §3.12).

Every commit of the vcs repo (both branches and the merged topic) is asked
once per adapter process by git's full id and by git's abbreviated id (a
commit-ish the host shows and asks back: an error to it is allowed, a reply
is judged like the full id's) (cases/kit/commitfacts.py), read as
wire.messages.Commit, and judged against git itself (cases/kit/gitfacts.py):
parents, message, date (author or committer), the first-parent change list (root: against
the empty tree), git's numstat, and git's bytes of each changed path on both
sides (each patch applied to the parent's must give the commit's:
cases/kit/patchfacts.py). Each case reads the capabilities first and
skips, saying why, when `commit` is false or absent (the host never sends
repo/commit then) or when git is missing. FC-099 keeps capability honesty;
the reply belongs to these cases, its shape to FC-100 (every other case
reads around a malformed member).

"""

import re

from cases.kit.api import case, fc_assert, listing, need, owner, show, warn
from cases.kit.commit_ids import refs_round_trips
from cases.kit.commitfacts import (abbreviated, ask, canonical, need_files, patch_counts,
                               patch_problem, require_commit, resolves_to)
from cases.kit.formats import instant
from cases.kit.gitfacts import (git_all_commits, git_commit, git_ref_commit, git_refs, git_text,
                                git_tip, unknown_commit_id)
from cases.kit.patchfacts import patch_content_problem
from cases.kit.replies import try_request
from fixture.catalog import (VCS, VCS_BINARY_CHANGED, VCS_DEFAULT_BRANCH, VCS_MODE_CHANGED,
                             VCS_RENAMED, VCS_THREE_COMMITS)
from wire.messages import COMMIT_STATUSES, Commit, read

SPEC = "§Methods repo/commit (v1.6)"
BASIC_ISO = re.compile(r"^\d{8}T\d{4}(\d{2})?([.,]\d+)?(Z|[+-]\d{2}:?\d{2})?$")


def short(sha):
    return sha[:12]


def asked(fx, spelled: str, sha: str, named: str = "") -> str:
    """The request as a failure names it, so an author can send it again:
    ``repo/commit {"repo": "local/vcs", "sha": "<as asked>"}``, then which
    commit that is when it was not asked by its full id."""
    request = f"repo/commit {show({'repo': fx.repo(VCS), 'sha': spelled})}"
    if spelled == sha:
        return request
    return f"{request} ({named + ', ' if named else ''}commit {short(sha)})"


def each_commit(adapter, fx):
    """(sha, how it was asked, git facts, the reply read as a Commit, the
    result as sent) for every commit the adapter served, asked by its full
    id, then by git's abbreviated id (a commit-ish: refusing it is allowed,
    a reply to it is judged like any other); a commit it did not serve is
    FC-100's business."""
    served = [(sha, ask(adapter, fx, sha)) for sha in git_all_commits(fx)]
    served = [(sha, reply) for sha, reply in served if reply.commit is not None]
    need(served, "repo/commit answered no commit of vcs with a result object",
         owner("commit replies are"))
    for sha, reply in served:
        yield sha, asked(fx, sha, sha), git_commit(fx, sha), reply.commit, reply.result
    for spelled, sha in abbreviated(fx):
        reply = ask(adapter, fx, spelled)
        if reply.commit is not None:
            yield sha, asked(fx, spelled, sha), git_commit(fx, sha), reply.commit, reply.result


def files_of(commit, sha, result, git):
    """The commit's files by path (a rename split in two folded), and the folded paths."""
    return canonical(need_files(commit, sha, result), git)


@case("FC-100")
def test_commit_shape(adapter, fx):
    """repo/commit of every commit of vcs (by full id, and by abbreviated id
    when that is answered) answers a result with the required
    members typed (sha, author, date, message strings; files an array of
    objects with string path and status) and the optional ones typed when
    present (parents strings, truncated boolean, web_url string, counts
    0..2^32-1, patch string, binary boolean, previous_path string); date is
    ISO-8601 (the basic format warns).

    Falsified by: commit-truncated-string: Every commit but a merge answers truncated as the string
    "false".
    """
    require_commit(adapter, fx)
    tip = ask(adapter, fx, git_tip(fx))
    need(tip.error is None, f"repo/commit of {VCS_DEFAULT_BRANCH}'s tip answered an error "
         f"({tip.error.message if tip.error else ''!r})", owner("serving repo/commit at all is"))
    problems, refused, judged = [], [], 0
    full = set(git_all_commits(fx))
    asks = [(sha, asked(fx, sha, sha)) for sha in git_all_commits(fx)]
    asks += [(spelled, asked(fx, spelled, sha)) for spelled, sha in abbreviated(fx)]
    for sha, what in asks:
        reply = ask(adapter, fx, sha)
        if reply.error is not None:   # not served: FC-099's (a declared capability is served)
            if sha in full:   # an abbreviated id may be refused (SHOULD accept commit-ish)
                refused.append(f"{what}: an error ({reply.error.message!r})")
            continue
        judged += 1
        if reply.reading.problems:
            problems.append(f"{what}: " + "; ".join(
                f"{p or '(top level)'}: {m}" for p, m in reply.reading.problems[:3]))
            continue
        date = reply.commit.date
        if instant(date) is None:
            if BASIC_ISO.match(date.strip()):
                warn(f"{what}: date {date!r} is ISO-8601's basic format (the host shows "
                     f"dates verbatim)")
            else:
                problems.append(f"{what}: date {date!r} is not ISO-8601")
    fc_assert(not problems, expected="a well-formed commit for each of the repository's "
              f"{len(git_all_commits(fx))} commits", got=listing(problems, 3),
              why="repo/commit answers the protocol's commit shape")
    # a commit refused is left out (serving it is FC-099's); the rest is judged
    need(judged, f"repo/commit refused commits git has: {listing(refused, 3)}",
         owner("serving repo/commit at all is"))


@case("FC-101")
def test_commit_identity(adapter, fx):
    """Each commit reply names that commit: sha is its full id (a shorter
    spelling that resolves warns; another string must resolve to it),
    parents (when given) are git's parents in order, first parent first, []
    for the root, and date is an instant of that commit (git's author or
    committer date: §3.12 asks ISO-8601 only). Asked by a branch or
    tag name, or by a sha repo/refs lists (commit-ish: refusing one warns),
    the reply's sha names the commit git resolves that to.

    Falsified by: merge-parents-reversed: A merge's parents are listed second parent first.
    """
    require_commit(adapter, fx)
    for sha, what, git, commit, result in each_commit(adapter, fx):
        judge_identity(adapter, fx, what, sha, git, commit, result)

    # Names and the ids repo/refs lists: commit-ish a host may ask (§3.12 SHOULD
    # accept); refusing one warns, a reply names the commit git resolves it to.
    refused = []
    for spelled, (sha, named) in commit_ish(adapter, fx).items():
        reply = ask(adapter, fx, spelled)
        if reply.commit is None:
            refused.append(spelled)
            continue
        judge_reply_sha(adapter, fx, asked(fx, spelled, sha, named), reply.commit.sha, sha)
    if refused:
        warn(f"repo/commit refused the commit-ish {listing(refused)} (SHOULD accept any "
             f"commit-ish the backend resolves)")


def judge_identity(adapter, fx, what: str, sha: str, git, commit, result) -> None:
    """FC-101 on one reply about git's commit ``sha`` (however it was asked):
    its sha names it, its parents (when given) are git's in order, its date
    is one of the commit's instants."""
    judge_reply_sha(adapter, fx, what, commit.sha, sha)
    if isinstance(result.get("parents"), list):   # parents are optional: judged when given
        parents = commit.parents
        ok = len(parents) == len(git.parents) and all(
            resolves_to(adapter, fx, p, want) for p, want in zip(parents, git.parents))
        fc_assert(ok, expected=f"parents {[short(p) for p in git.parents]} (git's, first "
                  f"parent first)", got=f"parents {show(result['parents'])} for {what}",
                  why="parents are the commit's parents in order ([] for a root commit)")
    when = instant(commit.date)
    if when is not None:
        fc_assert(when in git.dates, expected=" or ".join(
                      dict.fromkeys(d.isoformat() for d in git.dates)) + f" for {what}",
                  got=f"date {commit.date!r}",
                  why="date is an instant of that commit (its author or committer date)")


def commit_ish(adapter, fx) -> dict[str, tuple[str, str]]:
    """Spelling -> (git's commit it names, what it is): every branch and tag
    name of vcs, and every sha repo/refs lists (when refs is declared), but
    no spelling of a commit id (those are each_commit's)."""
    out = {name: (commit, f"the {label} {name}")
           for kind, label in (("heads", "branch"), ("tags", "tag"))
           for name in git_refs(fx, kind)
           if (commit := git_ref_commit(fx, kind, name))}
    if adapter.caps.refs:
        out.update({s: v for s, v in refs_round_trips(adapter, fx).items() if s not in out})
    return {s: v for s, v in out.items() if not v[0].startswith(s)}


def judge_reply_sha(adapter, fx, what: str, spelled, sha: str) -> None:
    """A commit reply's sha is the full id of ``sha`` (a shorter spelling of it
    warns; another string must resolve to it)."""
    if not isinstance(spelled, str) or spelled == sha:
        return   # a sha that is no string is FC-100's
    if len(spelled) >= 4 and sha.startswith(spelled):
        warn(f"{what}: sha {spelled!r} is a shorter spelling of the full id")
        return
    fc_assert(resolves_to(adapter, fx, spelled, sha), expected=f"sha {sha}",
              got=f"sha {show(spelled)}, which does not resolve to that commit",
              why=f"{what}: a commit reply's sha names the commit asked for")


@case("FC-102")
def test_commit_message(adapter, fx):
    """Each commit's message is the complete message, subject and body, as git
    stores it, without the terminating newline.

    Falsified by: message-subject-only: repo/commit's message is the subject line only.
    """
    require_commit(adapter, fx)
    bodies = 0
    for sha, what, git, commit, _ in each_commit(adapter, fx):
        bodies += isinstance(commit.message, str) and "\n" in git.message
        judge_message(what, git, commit)
    need(bodies, "no commit with a body was answered", owner("commit replies are"))


def judge_message(what: str, git, commit) -> None:
    """FC-102 on one reply: the message is git's complete message, subject and
    body, without the terminating newline."""
    message = commit.message
    if not isinstance(message, str) or message == git.message:
        return   # not a string: FC-100's
    if message.rstrip("\n") == git.message:
        why = "the message carries a trailing newline"
    elif message == git.subject and git.subject != git.message:
        why = "the message is the subject only: the body is missing"
    else:
        why = "the message is the commit's complete message"
    fc_assert(False, expected=show(git.message, 120), got=show(message, 120),
              why=f"{what}: {why}")


@case("FC-103")
def test_first_parent_changes(adapter, fx):
    """Each commit's files are git's first-parent diff: the same changed paths
    (a subset when truncated is true) and, for the four known statuses,
    git's status; the root commit lists everything as added (against the
    empty tree) and the merge lists what it brought in from the first
    parent's view. Each file's patch, when sent, is that change: applied to
    the first parent's text of the path (a rename's source; nothing for an
    added file or on the root commit) its hunks give exactly the commit's
    text of the path (nothing for a removed file), every context and removed
    line being the parent's line where its hunk header puts it, exactly (no
    offset: §3.12 defines none). The patch text is never compared with
    git's: another diff algorithm, context size or hunk split is the same
    change (cases/kit/patchfacts.py). Binary and type changes are not read; a
    malformed patch is FC-105's, counts are FC-107's.

    Falsified by: merge-last-parent-diff: A merge's files are its diff against the last parent
    (statuses only, no patches).
    """
    require_commit(adapter, fx)
    wrong_patches, malformed, judged = [], [], 0
    for sha, what, git, commit, result in each_commit(adapter, fx):
        wrong_patches += judge_first_parent(fx, what, sha, git, commit, result, malformed)
        judged += 1
    judge_patches(fx, wrong_patches)
    need(judged, f"patches that are not well-formed hunks were left out: "
         f"{listing(malformed, 3)}", owner("patch formats are"))


def judge_first_parent(fx, what: str, sha: str, git, commit, result,
                       malformed: list | None = None) -> list[str]:
    """FC-103 on one reply: its files are git's first-parent change list (a
    subset when truncated is true) with git's statuses. Returns its patches
    that are not that change (``judge_patches`` judges them); a patch that is
    not well-formed hunks is left out (added to ``malformed``)."""
    by_path, _ = files_of(commit, sha, result, git)
    wrong_patches = []
    for f in need_files(commit, sha, result):
        if not isinstance(f.patch, str):
            continue   # absent: unavailable (§3.12)
        if patch_problem(f.patch):   # not well-formed hunks: left out
            if malformed is not None:
                malformed.append(f"{what} {f.path}")
            continue
        problem = patch_content_problem(fx, git, f)
        if problem:
            wrong_patches.append(f"{what} {f.path} ({f.status}): {problem}")
    want = {c.path: c.status for c in git.changes}
    got = set(by_path)
    kind = ("the root commit, against the empty tree" if not git.parents else
            "a merge, against its first parent" if len(git.parents) > 1 else "a commit")
    if commit.truncated is True:
        fc_assert(got <= set(want), expected=f"a subset of git's {len(want)} changed paths",
                  got=f"also {listing(got - set(want))}",
                  why=f"{what} ({kind}): files are the first-parent diff")
    else:
        fc_assert(got == set(want), expected=f"git's changed paths {listing(want)}",
                  got=f"missing {listing(set(want) - got) or 'none'}; extra "
                  f"{listing(got - set(want)) or 'none'}",
                  why=f"{what} ({kind}): files are the first-parent diff")
    wrong = [f"{p}: {by_path[p].status!r} (git: {want[p]})" for p in sorted(got)
             if p in want and by_path[p].status in COMMIT_STATUSES
             and by_path[p].status != want[p]]
    fc_assert(not wrong, expected="git's status for every changed path",
              got=listing(wrong, 3), why=f"{what} ({kind}): each file's status is "
              f"the change git sees")
    return wrong_patches


def judge_patches(fx, wrong_patches: list[str]) -> None:
    """FC-103's verdict on the patches ``judge_first_parent`` found wrong."""
    fc_assert(not wrong_patches, expected="each patch applied to the first parent's text of "
              "its path gives the commit's text of it (repo/commit of every commit of "
              f"{fx.repo(VCS)}, by {{repo, sha}})", got=listing(wrong_patches, 3),
              why="each file's patch is its first-parent change (a patch of another commit, "
              "or one computed child -> parent, shows another change)")


def judge_first_parent_patches(fx, what: str, sha: str, git, commit, result) -> None:
    """FC-103 on one reply, its patches included."""
    judge_patches(fx, judge_first_parent(fx, what, sha, git, commit, result))


@case("FC-104")
def test_statuses(adapter, fx):
    """Statuses are the lower-case added/removed/modified/renamed (any other
    string warns: the host reads it as modified), and every renamed file
    carries previous_path, naming the path git renamed it from.

    Falsified by: rename-without-previous-path: Renamed files carry no previous_path.
    """
    require_commit(adapter, fx)
    renamed, unknown = 0, []
    for sha, what, git, commit, result in each_commit(adapter, fx):
        renamed += judge_renames(what, sha, git, commit, result, unknown)
    if unknown:
        warn(f"{len(unknown)} file(s) with a status other than {', '.join(COMMIT_STATUSES)} "
             f"(the host reads it as modified): {listing(unknown, 3)}")
    need(renamed or not any(c.letter == "R" for s in git_all_commits(fx)
                            for c in git_commit(fx, s).changes),
         f"no commit listed {VCS_RENAMED[1]} as renamed", None)


def judge_renames(what: str, sha: str, git, commit, result, unknown: list | None = None
                  ) -> int:
    """FC-104 on one reply: every renamed file carries previous_path, the path
    git renamed it from. Returns how many renamed files it judged; a status
    that is none of the four words is added to ``unknown`` (a warning)."""
    renamed = 0
    by_path, folded = files_of(commit, sha, result, git)
    for path, f in sorted(by_path.items()):
        status = f.status
        if isinstance(status, str) and status not in COMMIT_STATUSES and unknown is not None:
            unknown.append(f"{what} {path}: {status!r}")
        if status != "renamed" or path in folded:
            continue
        renamed += 1
        change = git.change_of(path)
        prev = f.previous_path
        want = change.previous_path if change is not None else None
        fc_assert(isinstance(prev, str) and (want is None or prev == want),
                  expected=f"previous_path {show(want) if want else 'a string'}",
                  got=f"previous_path {show(prev)}" if prev is not None
                  else "no previous_path",
                  why=f"{what} {path}: a renamed file carries previous_path")
    return renamed


@case("FC-105")
def test_patch_format(adapter, fx):
    """Every patch is hunks only: each hunk starts with an `@@ -a,b +c,d @@`
    header whose counts its body matches, body lines start with ' ', '+',
    '-' or '\\', no file headers (diff --git, index, ---, +++, mode lines),
    lines joined with \\n and no newline after the last one.

    Falsified by: patch-file-headers: Patches keep git's ---/+++ file headers before their hunks.
    """
    require_commit(adapter, fx)
    problems, seen = [], 0
    for sha, what, git, commit, result in each_commit(adapter, fx):
        seen += patch_format_problems(what, sha, commit, result, problems)
    judge_patch_format(problems)
    need(seen, "no commit of vcs carried a non-empty patch", None)


def patch_format_problems(what: str, sha: str, commit, result, problems: list) -> int:
    """FC-105's reading of one reply: adds each non-empty patch that is not
    hunks only to ``problems``; returns how many non-empty patches it read."""
    seen = 0
    for f in need_files(commit, sha, result):
        patch = f.patch
        if not isinstance(patch, str) or patch == "":
            continue
        seen += 1
        problem = patch_problem(patch)
        if problem:
            problems.append(f"{what} {f.path}: {problem}")
    return seen


def judge_patch_format(problems: list[str]) -> None:
    """FC-105's verdict: no patch that is not hunks only."""
    fc_assert(not problems, expected="hunks only", got=listing(problems, 3),
              why="a patch contains only well-formed hunks")


def judge_one_patch_format(what: str, sha: str, commit, result) -> None:
    """FC-105 on one reply."""
    problems: list[str] = []
    patch_format_problems(what, sha, commit, result, problems)
    judge_patch_format(problems)


@case("FC-106")
def test_metadata_only_and_binary(adapter, fx):
    """A change whose bytes are the same on both sides (the mode-only change of
    tools/build.sh, the pure rename) has patch "" (or none); the binary
    change of assets/logo.bin carries no text patch: binary true (a patch or
    counts beside it warn), or no patch at all (unmarked: the patch is
    unavailable, which §3.12 allows; no warning).

    Falsified by: rename-full-patch: A pure rename carries a patch removing and re-adding every line
    (counts to match).
    """
    require_commit(adapter, fx)
    looked: set[str] = set()
    for sha, what, git, commit, result in each_commit(adapter, fx):
        judge_metadata_only(what, sha, git, commit, result, looked)
    wanted = {VCS_MODE_CHANGED, VCS_RENAMED[1], VCS_BINARY_CHANGED}
    need(wanted & looked, f"no reply listed {listing(wanted)} as git sees them",
         owner("commit files are"))


def judge_metadata_only(what: str, sha: str, git, commit, result,
                        looked: set | None = None) -> None:
    """FC-106 on one reply: a change that leaves the bytes alone has patch ""
    (or none), a binary change no text patch. Adds each path it judged to
    ``looked``."""
    by_path, folded = files_of(commit, sha, result, git)
    for change in git.changes:
        f = by_path.get(change.path)
        if f is None or change.path in folded:
            continue
        patch = f.patch
        if change.same_bytes:
            if looked is not None:
                looked.add(change.path)
            fc_assert(patch in (None, ""), expected='patch "" (a metadata-only change)',
                      got=f"patch {show(patch, 80)}",
                      why=f"{what} {change.path}: a change that leaves the bytes "
                      f"alone has an empty patch")
        elif change.binary:
            if looked is not None:
                looked.add(change.path)
            if f.binary is True:
                extra = [k for k in ("patch", "additions", "deletions")
                         if getattr(f, k) is not None]
                if extra:
                    warn(f"{what} {change.path}: binary true beside "
                         f"{', '.join(extra)} (should be left out)")
                continue
            # Unmarked and without a patch is legal and not warned: §3.12 makes
            # binary true "only when the backend positively knows" (no SHOULD to
            # mark it), and an absent patch means unavailable.
            fc_assert(not isinstance(patch, str) or patch == "",
                      expected="binary true and no patch",
                      got=f"binary {show(f.binary)}, patch {show(patch, 60)}",
                      why=f"{what} {change.path}: a binary change has no text patch")


@case("FC-107")
def test_counts(adapter, fx):
    """additions/deletions, when given beside a patch, equal its '+' and '-'
    lines; counts never stand in for unknown ones: no zeros for the binary
    change, nor for a change git counts lines in whose patch is not given;
    both given without a patch differ by the change in the file's line count
    (what any line diff of it gives).

    Falsified by: binary-zero-counts: Binary files report additions 0 and deletions 0 (counts
    unknown, reported as zero).
    """
    require_commit(adapter, fx)
    judged = 0
    for sha, what, git, commit, result in each_commit(adapter, fx):
        judged += judge_counts(what, sha, git, commit, result)
    need(judged, "no file of any commit carried counts", None)


def judge_counts(what: str, sha: str, git, commit, result) -> int:
    """FC-107 on one reply: counts beside a patch are its lines; counts never
    stand in for unknown ones. Returns how many files carried counts."""
    judged = 0
    by_path, folded = files_of(commit, sha, result, git)
    for path, f in sorted(by_path.items()):
        adds, dels = f.additions, f.deletions   # None: absent (or malformed: FC-100's)
        if adds is None and dels is None:
            continue
        judged += 1
        patch = f.patch
        change = git.change_of(path)
        if isinstance(patch, str):
            plus, minus = patch_counts(patch)
            got = {k: v for k, v in (("additions", adds), ("deletions", dels))
                   if v is not None}
            want = {k: v for k, v in (("additions", plus), ("deletions", minus)) if k in got}
            fc_assert(got == want, expected=f"{show(want)} (the patch's lines)",
                      got=show(got), why=f"{what} {path}: counts match the patch")
        elif change is not None and path not in folded:
            # a binary change's line counts are unknown, unless its bytes are
            # unchanged (a pure rename, a mode change): then 0 and 0 are known
            unknown = (change.binary and not change.same_bytes) \
                or (change.additions or 0) + (change.deletions or 0) > 0
            zeros = (adds in (0, None) and dels in (0, None))
            fc_assert(not (unknown and zeros),
                      expected="no counts (unknown)" if change.binary else
                      f"additions {change.additions}, deletions {change.deletions}, or none",
                      got=f"additions {show(adds)}, deletions {show(dels)}",
                      why=f"{what} {path}: unknown counts are left out, never zero")
            # Any line diff of the change adds and removes lines that differ
            # by the change in the file's line count (git's numstat gives it),
            # whatever diff algorithm chose the lines.
            if not change.binary and isinstance(adds, int) and isinstance(dels, int) \
                    and change.additions is not None and change.deletions is not None:
                delta = change.additions - change.deletions
                fc_assert(adds - dels == delta,
                          expected=f"additions - deletions = {delta} (git: +{change.additions} "
                          f"-{change.deletions})",
                          got=f"additions {adds}, deletions {dels} (no patch given)",
                          why=f"{what} {path}: counts are the change's lines (a zero standing "
                              f"in for an unknown count?)")
    return judged


@case("FC-108")
def test_unknown_commit(adapter, fx):
    """repo/commit is answered, preferably with an error of kind not_found,
    for: a 40-hex id naming no object; its abbreviations no object starts
    with, at git's 7-digit short length and at 12; a name that is no ref;
    the id of an object that is not a commit (a blob and a tree of the
    tip); and a real commit id of vcs asked of a repository that does not
    exist (commits looked up by id alone answer it). §3.12 has no MUST on
    an id that names no commit: a result warns, so does an error of another
    or no kind (RULINGS "Content and revisions"); an adapter that never
    answers fails at the deadline.

    Falsified by: unknown-commit-wedge: repo/commit of an id that names no commit of vcs is never
    answered.
    """
    require_commit(adapter, fx)
    unknown = unknown_commit_id(fx)
    vcs, tip = fx.repo(VCS), git_tip(fx)
    asks = [(vcs, unknown, "an id naming no object"),
            (vcs, "forge-conformance-no-such-commit", "a name that is no ref")]
    # abbreviated spellings no object starts with (git's %h length, and longer)
    asks += [(vcs, unknown[:n], f"a {n}-hex abbreviation no object starts with")
             for n in (7, 12)
             if not git_text(fx, "rev-parse", f"--disambiguate={unknown[:n]}").strip()]
    # objects that exist but are no commit: what answers them checked existence only
    asks += [(vcs, git_text(fx, "rev-parse", spec).strip(), what) for spec, what in
             ((f"{tip}:{VCS_THREE_COMMITS}", f"the blob id of {VCS_THREE_COMMITS} (no commit)"),
              (f"{tip}^{{tree}}", "the tip's tree id (no commit)"))]
    asks.append((f"{fx.org}/no-such-repo-fc108", tip,
                 "the tip's commit id asked of a repository that does not exist"))
    unreadable = []
    for repo, sha, why in asks:
        params = {"repo": repo, "sha": sha}
        what = f"repo/commit {show(params)} ({why})"
        result, err = try_request(adapter, "repo/commit", params)   # the deadline is the MUST
        if err is None and read(result, Commit).model is None:
            unreadable.append(f"{what}: {show(result, 60)}")   # a malformed reply: FC-100's
        elif err is None:
            warn(f"{what}: a result ({show(result, 80)}) where an error (not_found) is "
                 f"expected: the host shows a commit that does not exist")
        elif err.raw_kind != "not_found":
            warn(f"{what}: kind {show(err.raw_kind)} (not_found preferred); message "
                 f"{err.message!r}")
    need(len(unreadable) < len(asks), f"every answer was a reply that is no commit object "
         f"({listing(unreadable, 2)})", owner("commit replies are"))


@case("FC-109")
def test_truncated_honest(adapter, fx):
    """truncated true means the file list is incomplete: a commit whose every
    changed file (git's first-parent diff) is listed says false (or nothing),
    asked by its full id, by git's abbreviated id, and by every branch and
    tag name (and every sha repo/refs lists) that names it.

    Falsified by: root-truncated: The root commit's reply says truncated true over its full file
    list.
    """
    require_commit(adapter, fx)
    asks = list(each_commit(adapter, fx))
    for spelled, (sha, named) in commit_ish(adapter, fx).items():
        reply = ask(adapter, fx, spelled)   # refusing a commit-ish is FC-101's warning
        if reply.commit is not None:
            asks.append((sha, asked(fx, spelled, sha, named), git_commit(fx, sha),
                         reply.commit, reply.result))
    for sha, what, git, commit, result in asks:
        judge_truncated(what, sha, git, commit, result)


def judge_truncated(what: str, sha: str, git, commit, result) -> None:
    """FC-109 on one reply: truncated true only beside a file list that leaves
    some of git's first-parent changes out."""
    if commit.truncated is not True:
        return
    listed = set(files_of(commit, sha, result, git)[0])
    fc_assert(listed != {c.path for c in git.changes},
              expected="truncated false: all of git's changed paths are listed",
              got=f"truncated true beside all {len(listed)} of them",
              why=f"{what}: truncated says the file list is incomplete")
