"""Commit ids in the backend's vocabulary (RULINGS "Content and revisions").

The commit ids an adapter emits (repo/log, repo/blame, repo/refs,
repo/commit) are judged by what they resolve to, never by comparing strings
with git: a full 40-hex id, an abbreviated one, or a backend's own spelling
all pass when the commit they name is the right one.

``resolve`` names git's commit for an adapter's id: first the way a git
backend's ids resolve (git itself resolves the spelling, abbreviated or not,
to exactly one commit); otherwise through the adapter, which must accept its
own ids back as a ``ref`` (PROTOCOL §3.7): the newest item of ``repo/log``
at that ref is matched with git's commits by date (author or committer
instant, in ISO-8601's extended or basic format), and by subject only
among commits of one instant: the subject's text is the backend's (§3.7
asks a string; FC-094 warns when it is not git's), while the date is
judged (an instant of that commit).

``own_spelling`` goes the other way, for a case that asks about a commit git
names: an adapter whose ids git cannot read need not accept git's ids (the
protocol asks it to accept back the ids it emitted), so the case asks
again by the adapter's own id for that commit.
"""

from __future__ import annotations

import re
from typing import Any

from cases.kit.formats import either_instant
from cases.kit.gitfacts import git_log, git_ref_commit, git_refs, git_text
from fixture.catalog import VCS
from wire import ProviderError
from wire.messages import Log, Refs, ShapeError, read, structure

_HEXISH = re.compile(r"[0-9a-fA-F]{4,64}")


def git_commit_of(fx, sha: Any) -> str | None:
    """git's full id of the commit ``sha`` spells (a full or abbreviated
    hex id), or None when git does not resolve it to exactly one commit."""
    if not isinstance(sha, str) or not _HEXISH.fullmatch(sha):
        return None
    try:
        out = git_text(fx, "rev-parse", "--verify", "--quiet", f"{sha}^{{commit}}").strip()
    except RuntimeError:   # unknown or ambiguous
        return None
    return out or None


def can_resolve(adapter, sha: Any) -> bool:
    """Whether ``resolve`` can judge ``sha`` at all: a hex spelling git reads,
    or an adapter that serves repo/log to resolve its own spelling back
    through (one that declares log false is never asked it)."""
    return isinstance(sha, str) and (bool(_HEXISH.fullmatch(sha)) or adapter.caps.log is True)


def resolve(adapter, fx, sha: Any) -> str | None:
    """git's full id of the commit the adapter's id ``sha`` names, or None."""
    found = git_commit_of(fx, sha)
    if found is not None or not isinstance(sha, str) or not sha or not can_resolve(adapter, sha):
        return found
    params = {"repo": fx.repo(VCS), "path": None, "ref": sha, "limit": 1}
    try:
        items = structure(adapter.request("repo/log", params), Log).items
    except (ProviderError, ShapeError):
        return None
    if not items:
        return None
    return commit_by_stamp(git_log(fx, "--all"), items[0].subject, items[0].date)


def commit_by_stamp(commits, subject: Any, date: Any) -> str | None:
    """git's commit (of ``commits``, gitfacts.GitCommit) of a log item whose id
    git cannot read: the commit of that instant (either ISO-8601 format); its
    subject decides only between commits of one instant (a subject other
    than git's is FC-094's warning, not a miss). None when none or several."""
    when = either_instant(date)
    dated = [c for c in commits if when is not None and when in c.dates]
    matches = [c.sha for c in dated if c.subject == subject] or [c.sha for c in dated]
    return matches[0] if len(matches) == 1 else None


def refs_round_trips(adapter, fx) -> dict[str, tuple[str, str]]:
    """Every name and sha repo/refs lists for the vcs repo (PROTOCOL §3.6: each
    is accepted back as a ref), as spelling -> (git's commit it names, what it
    is). A name git has not, or a sha that resolves to no commit, is left
    out (refs replies are FC-090's); a sha is taken at the commit it
    resolves to (whether that is the ref's commit is FC-090's too)."""
    refs = read(adapter.request("repo/refs", {"repo": fx.repo(VCS)}), Refs).model
    out: dict[str, tuple[str, str]] = {}
    for kind, label, rows in (("heads", "branch", refs.branches if refs else ()),
                              ("tags", "tag", refs.tags if refs else ())):
        for row in rows:
            name, sha = row.name, row.sha
            if isinstance(name, str) and name not in out:
                commit = git_ref_commit(fx, kind, name)
                if commit:
                    out[name] = (commit, f"the {label} {name}")
            if isinstance(sha, str) and sha not in out:
                commit = resolve(adapter, fx, sha)
                if commit:
                    out[sha] = (commit, f"the sha repo/refs lists for {name}")
    return out


def own_spelling(adapter, fx, commit: str) -> str | None:
    """The adapter's own id for git's ``commit`` when its ids are not git's:
    the id of an item of its repo/log (limit null) at the default branch, or
    at a branch or tag, that git cannot read and that names ``commit`` (by
    date, as ``resolve`` matches it). None when the adapter does not serve
    repo/log, spells commits as git does (git reads its ids: then git's own
    id is a commit id of its backend, §3.3), or lists no such item."""
    if not adapter.caps.log:
        return None
    every = git_log(fx, "--all")
    for ref in (None, *git_refs(fx, "heads"), *git_refs(fx, "tags")):
        params = {"repo": fx.repo(VCS), "path": None, "ref": ref, "limit": None}
        try:
            items = structure(adapter.request("repo/log", params), Log).items
        except (ProviderError, ShapeError):
            continue
        if any(git_commit_of(fx, i.sha) for i in items):
            return None   # ids git reads: the backend's vocabulary is git's
        for item in items:
            if isinstance(item.sha, str) and item.sha \
                    and commit_by_stamp(every, item.subject, item.date) == commit:
                return item.sha
    return None
