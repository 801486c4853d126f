"""The claims judges: `truncated` claims, icons and search lines judged on every reply of the run.

The cases that own these rules (``cases.registry.OWNERS`` names them) judge
the replies they ask for. A claim that lies anywhere else (in a respawned
generation, at a ref or id another case asked, in a process started without
cache params) broke the same rule, so every process of the run carries a
``ClaimsMonitor``: the protocol monitor, plus a compact record of each reply
whose claims can be judged from the fixture's bytes and from git. After each
case the harness ``harvest``s the records into findings under each judge's
rule key, with where in the run they were seen, like any monitor rule. Each
judge is registered under its rule key with ``@judge``: one judge a rule, and
a rule no case owns is refused at import.

Judged only where the answer is certain, both ways (a claim of truncation
that is false, and a cut without truncated: true):

* ``tree-truncated``: repo/tree of alpha, beta and vcs (at ref null, or at
  a ref git resolves) is never cut; wide at ref null says truncated true iff
  it leaves a path out;
* ``log-truncated``: repo/log of vcs, when every item resolves through git to
  a commit and the items are a newest-first leading part of git's log there:
  fewer than git has say truncated true and all of them never do;
* ``search-truncated`` (one-shot replies) and ``stream-truncated`` (the
  batches of a stream): search/code of one of the fixture's search terms,
  unscoped or scoped with repo: to a fixture repository: truncated true with
  every file holding the term listed is false, and a file left out without
  truncated true is a cut;
* ``commit-truncated``: repo/commit of vcs, by any spelling git resolves:
  truncated true beside every path of git's first-parent diff is false (only
  that direction: a file left out is the file list's rule, judged on the
  commit cases' replies);
* ``search-line``: every hit's `line` of those searches, one-shot or
  streamed, is >= 1 and a line of the file holding the term in any case of
  letters, unless the reply shared the wire with another request (a
  misrouted reply carries another term's hits: the routing rule's). That
  holds on a cancelled stream too, and on one the suite stopped reading and
  retired (``abandon``: its hits so far are judged; being cut, it claims
  nothing about completeness);
* ``log-order``: repo/log of vcs (any ref, path or limit), when every item
  resolves through git to a commit: no commit is listed after one of its
  descendants (newest first, read as children before parents; which
  commits are listed is the log replies' rule);
* ``log-date``: every item date of repo/log of vcs (any ref, path or
  limit) is ISO-8601 (the extended or the basic format) and, when the item's
  id resolves through git to a commit of the history asked, an instant of
  that commit (its author or committer date);
* ``icon-display``: every initialize result's `icon` of one code point is a
  character any terminal shows (its shape is the monitor's handshake-icon
  rule), on every process, generation and repeated initialize.

Left out, as another rule's business: the cut direction of a reply whose
request shared the wire with another request in flight (misrouting is the
routing rule's, and cannot turn an honest reply into a false claim of
truncation), the truncated of a stream with a malformed batch (partial-items)
or that was cancelled (any truncated is allowed), a truncated that is not a
boolean (result-shape), other queries (path: queries and matching semantics
are the adapter's, RULINGS "Search"), every process serving another directory
than the session's fixture copy, and a batch naming no request in flight
(partial-id, partial-after-reply).
"""

from __future__ import annotations

import re
from typing import Any, Callable

import attrs

from cases import registry
from cases.kit.memo import remembered
from fixture.catalog import (ALPHA, BETA, TERM_LINE, TERM_MANY_ALPHA, TERM_SEVERAL, TERM_WIDE, VCS,
                             VCS_DEFAULT_BRANCH, WIDE)
from wire.framing import REPLY, usable_id
from wire.monitor import Finding, Monitor

TREE_TRUNCATED = "tree-truncated"
LOG_TRUNCATED = "log-truncated"
SEARCH_TRUNCATED = "search-truncated"
STREAM_TRUNCATED = "stream-truncated"
ICON_DISPLAY = "icon-display"
COMMIT_TRUNCATED = "commit-truncated"
SEARCH_LINE = "search-line"
LOG_DATE = "log-date"
LOG_ORDER = "log-order"

ABSENT = "absent"                  # a truncated member left out (false by default)
TERMS = (TERM_LINE, TERM_MANY_ALPHA, TERM_SEVERAL, TERM_WIDE)
QUERY = re.compile(r"(?:repo:(\S+)\s+)?(\w+)")
SHOWN = 3


@attrs.frozen
class Claim:
    """One reply whose truncated may be judged."""
    generation: int
    rid: int
    method: str
    params: dict
    truncated: Any               # as sent (ABSENT when left out)
    listed: tuple                # tree: paths; log: item ids; search: (repo, path) pairs;
                                 # commit: the files' paths (and previous paths)
    streaming: bool
    judgeable: bool              # not cancelled, batches well-formed
    seq: int | None
    crowded: bool = False        # shared the wire with another request: lies only
    lines: tuple = ()            # search: (repo, path, line) of each hit that has a line
    dates: tuple = ()            # log: each item's date as sent, in the order of listed


class ClaimsMonitor(Monitor):
    """The protocol monitor, also recording the replies ``judge`` reads."""

    def __init__(self, fixture_dir: Any) -> None:
        super().__init__()
        self.fixture_dir = str(fixture_dir)
        self.claims: list[Claim] = []
        self._open: dict[int, set[int]] = {}      # generation -> ids not yet answered
        self._crowded: set[int] = set()           # ids that shared the wire with another
        self._cancelled: set[int] = set()
        self._bad_batch: set[int] = set()
        self._streamed: dict[int, list] = {}      # id -> (repo, path) of its batches' hits
        self._streamed_lines: dict[int, list] = {}  # id -> (repo, path, line) of those
        self._seq: int | None = None

    def outbound(self, generation: int, msg: Any) -> None:
        super().outbound(generation, msg)
        if not isinstance(msg, dict):
            return
        rid, method = msg.get("id"), msg.get("method")
        if usable_id(rid) and isinstance(method, str):
            open_ = self._open.setdefault(generation, set())
            if open_:
                self._crowded |= open_ | {rid}
            open_.add(rid)
        elif method == "$/cancelRequest" and isinstance(msg.get("params"), dict):
            target = msg["params"].get("id")
            if usable_id(target):
                self._cancelled.add(target)

    def inbound(self, generation, frame, seq=None):
        self._seq = seq
        found = super().inbound(generation, frame, seq)
        msg = frame.msg
        if frame.kind == REPLY and isinstance(msg, dict) and usable_id(msg.get("id")):
            self._open.get(generation, set()).discard(msg["id"])
        return found

    def _partial(self, generation, msg, found):
        super()._partial(generation, msg, found)
        params = msg.get("params")
        rid = params.get("id") if isinstance(params, dict) else None
        if not usable_id(rid) or rid not in self._open.get(generation, ()):
            return   # a batch for no request in flight (partial-id's) joins no claim
        items = params.get("items")
        hits = _hits(items)
        if hits is None:
            self._bad_batch.add(rid)
        else:
            self._streamed.setdefault(rid, []).extend(hits)
            self._streamed_lines.setdefault(rid, []).extend(_lines(items))

    def abandon(self, generation: int, rid: int) -> None:
        """The suite stopped reading stream ``rid`` before its reply and
        retired its process (cases.kit.replies ``read_as_needed``): what it
        streamed is recorded as a cancelled claim, so the lines of its hits
        are judged and its completeness is not (a cut stream claims nothing;
        no reply was missed, none was waited for)."""
        open_ = self._open.get(generation, set())
        if rid not in open_:
            return
        open_.discard(rid)
        self._cancelled.add(rid)
        params = self.params_of(rid)
        if not isinstance(params, dict) or self.method_of(rid) != "search/code":
            return
        self.claims.append(Claim(generation, rid, "search/code", dict(params), ABSENT,
                                 tuple(self._streamed.pop(rid, [])), True, False, self._seq,
                                 rid in self._crowded, tuple(self._streamed_lines.pop(rid, []))))

    def _result(self, rid, issued, result, found):
        super()._result(rid, issued, result, found)
        method, params = issued.method, issued.params
        if method == "initialize" and isinstance(result, dict) and "icon" in result:
            self.claims.append(Claim(issued.generation, rid, method, {}, ABSENT,
                                     (result["icon"],), False, True, self._seq))
            return
        if method not in ("repo/tree", "repo/log", "search/code", "repo/commit") \
                or not isinstance(result, dict) or not isinstance(params, dict):
            return
        streamed = self._streamed.pop(rid, [])
        streamed_lines = self._streamed_lines.pop(rid, [])
        lines: tuple = ()
        dates: tuple = ()
        if method == "repo/commit":
            listed = tuple(p for f in _list(result.get("files")) if isinstance(f, dict)
                           for p in (f.get("path"), f.get("previous_path")) if isinstance(p, str))
        elif method == "repo/tree":
            listed = tuple(e.get("path") for e in _list(result.get("entries"))
                           if isinstance(e, dict))
        elif method == "repo/log":
            items = [i for i in _list(result.get("items")) if isinstance(i, dict)]
            listed = tuple(i.get("sha") for i in items)
            dates = tuple(i.get("date") for i in items)
        else:
            hits = streamed if issued.streaming else _hits(result.get("items"))
            listed = tuple(hits or ())
            lines = tuple(streamed_lines if issued.streaming else _lines(result.get("items")))
        judgeable = (rid not in self._cancelled and rid not in self._bad_batch
                     and not (issued.streaming and result.get("items")))
        self.claims.append(Claim(issued.generation, rid, method, dict(params),
                                 result.get("truncated", ABSENT), listed, issued.streaming,
                                 judgeable, self._seq, rid in self._crowded, lines, dates))


def _list(value: Any) -> list:
    return value if isinstance(value, list) else []


def _lines(items: Any) -> list:
    """(repo, path, line) of each well-formed hit whose line is an integer."""
    return [(h["repo"], h["path"], h["line"]) for h in _list(items)
            if isinstance(h, dict) and isinstance(h.get("repo"), str)
            and isinstance(h.get("path"), str) and type(h.get("line")) is int]


def _hits(items: Any) -> list | None:
    """(repo, path) of each hit, or None when a hit is not an object with
    string repo and path (the batch is malformed: partial-items')."""
    if not isinstance(items, list):
        return None
    out = []
    for hit in items:
        if not (isinstance(hit, dict) and isinstance(hit.get("repo"), str)
                and isinstance(hit.get("path"), str)):
            return None
        out.append((hit["repo"], hit["path"]))
    return out


# ---------------------------------------------------------------- judging

def harvest(provider, fx) -> list[Finding]:
    """Findings for the claims ``provider`` recorded since the last harvest
    (none when it serves another directory than ``fx``)."""
    monitor = getattr(provider, "monitor", None)
    if not isinstance(monitor, ClaimsMonitor):
        return []
    taken = getattr(provider, "_claims_taken", 0)
    new = monitor.claims[taken:]
    provider._claims_taken = taken + len(new)
    served = fx is not None and monitor.fixture_dir == str(fx.path)
    out = []
    for claim in new:
        if not served and claim.method != "initialize":
            continue   # another directory's replies: the fixture cannot settle them
        # cancelled, cut by the suite, a malformed batch: only the judges that read no truncated
        whole = claim.judgeable and claim.truncated in (True, False, ABSENT)
        for judge_ in JUDGES.values():
            if judge_.method != claim.method or not (whole or judge_.any_claim):
                continue
            try:
                detail = judge_.judge(claim, fx)
            except (RuntimeError, OSError, ValueError):   # git could not answer: nothing judged
                detail = None
            if detail is not None:
                out.append(Finding(judge_.rule, detail, claim.generation, "must", claim.rid,
                                   claim.method, claim.seq, "", claim.streaming))
    return out


@attrs.frozen
class Judge:
    """The one judge of a rule key: what it reads, and whether it holds on any claim."""
    rule: str        # the key its findings carry (cases.registry.OWNERS names the owner)
    method: str      # the replies whose claims it reads
    judge: Callable[[Claim, Any], "str | None"]   # (claim, fixture) -> what is wrong, or None
    any_claim: bool  # reads no truncated: holds on a cancelled or cut stream too


JUDGES: dict[str, Judge] = {}


def judge(rule: str, method: str, *, any_claim: bool = False):
    """Register the decorated function as the judge of ``rule`` on ``method``'s
    claims. A second judge for one rule, or a rule no case owns in the
    registry, is an error when this module is imported."""
    def register(fn):
        if rule in JUDGES:
            raise ValueError(f"a second judge for {rule!r} ({fn.__name__}; "
                             f"{JUDGES[rule].judge.__name__} judges it): one judge a rule")
        registry.owner_of(rule)
        JUDGES[rule] = Judge(rule, method, fn, any_claim)
        return fn
    return register


def _said(claim: Claim) -> str:
    if claim.truncated == ABSENT:
        return "truncated absent"
    return f"truncated {str(claim.truncated).lower()}"


def _asked(claim: Claim) -> str:
    import json
    return f"{claim.method} {json.dumps(claim.params, ensure_ascii=False)[:120]}"


def _git_rev(fx, ref: Any) -> str | None:
    """git's commit for a ref the adapter was asked (null: the default branch)."""
    from cases.kit.gitfacts import git_text
    if ref is None:
        ref = VCS_DEFAULT_BRANCH
    if not isinstance(ref, str) or not ref or ref.startswith("-"):
        return None

    def compute():
        try:
            return git_text(fx, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip() \
                or None
        except RuntimeError:
            return None
    return remembered(fx, ("rev", ref), compute)


@judge(TREE_TRUNCATED, "repo/tree")
def _tree(claim: Claim, fx):
    names = {fx.repo(n): n for n in (ALPHA, BETA, WIDE, *([VCS] if fx.vcs_built else []))}
    name, ref = names.get(claim.params.get("repo")), claim.params.get("ref")
    if name is None:
        return None
    if name != WIDE:
        at_known_ref = ref is None or (name == VCS and _git_rev(fx, ref) is not None)
        if claim.truncated is True and at_known_ref:
            return (f"{_asked(claim)}: truncated true on a small tree, which no "
                    f"budget cuts ({len(claim.listed)} entries listed)")
        return None
    if ref is not None:
        return None
    disk = remembered(fx, ("walk", WIDE), lambda: frozenset(fx.walk(WIDE)))
    missing = disk - set(claim.listed)
    if claim.truncated is True and not missing:
        return (f"{_asked(claim)}: truncated true with all {len(disk)} paths "
                f"listed (truncated is true only when the budget cut the walk)")
    if claim.truncated is not True and missing and not claim.crowded:
        return (f"{_asked(claim)}: {len(disk) - len(missing)} of {len(disk)} "
                f"paths, {_said(claim)}; missing e.g. {sorted(missing)[0]!r} "
                f"(a cut walk must say truncated true)")
    return None


@judge(LOG_TRUNCATED, "repo/log")
def _log(claim: Claim, fx):
    from cases.kit.commit_ids import git_commit_of
    from cases.kit.gitfacts import (git_log, git_log_touching, log_complete, log_left_out,
                                    not_newest_first)
    if not fx.vcs_built or claim.params.get("repo") != fx.repo(VCS):
        return None
    rev, path = _git_rev(fx, claim.params.get("ref")), claim.params.get("path")
    if rev is None or not (path is None or isinstance(path, str)):
        return None
    want = remembered(fx, ("log", rev, path),
                      lambda: [c.sha for c in git_log(fx, rev, path)])
    got = [remembered(fx, ("commit of", s), lambda s=s: git_commit_of(fx, s))
           for s in claim.listed]
    # a path's log may hold what another reading of "touch" finds across a
    # merge (FIXTURES.md "repo/log of a path across merges")
    may = git_log_touching(fx, rev, path) if path else frozenset()
    if None in got or not_newest_first(fx, got, want, may) is not None:
        return None   # ids git cannot read, or other commits: the log replies' owners
    history = (f"git log {claim.params.get('ref') or VCS_DEFAULT_BRANCH}"
               + (f" -- {path}" if path else ""))
    if log_left_out(got, want) and claim.truncated is not True and not claim.crowded:
        return (f"{_asked(claim)}: {len(got)} of the {len(want)} commits of "
                f"{history}, {_said(claim)} (a log cut short says truncated true)")
    if log_complete(got, want, may) and claim.truncated is True:
        return (f"{_asked(claim)}: all {len(want)} commits of {history} and "
                f"truncated true (no further commit exists)")
    return None


@judge(LOG_ORDER, "repo/log", any_claim=True)
def _log_order(claim: Claim, fx):
    """No item is listed after one of its own descendants (newest first, read
    as children before parents: git's default order, --date-order and
    --topo-order all pass). Only the order of what is listed is judged:
    which commits a log lists, or leaves out, is the log replies' rule (at a
    ref FC-130's, a cut FC-095's). A log listing an id git cannot read is
    left out, and so is a reply that shared the wire with another request
    (a misrouted reply: the routing rule's)."""
    from cases.kit.commit_ids import git_commit_of
    from cases.kit.gitfacts import git_ancestors
    if not fx.vcs_built or claim.params.get("repo") != fx.repo(VCS) or claim.crowded:
        return None
    got = [remembered(fx, ("commit of", s), lambda s=s: git_commit_of(fx, s))
           for s in claim.listed]
    if None in got:
        return None
    ancestors = remembered(fx, ("ancestors",), lambda: git_ancestors(fx))
    for i, older in enumerate(got):
        newer = next((d for d in got[i + 1:] if older in ancestors.get(d, ())), None)
        if newer is not None:
            return (f"{_asked(claim)}: item {i + 1} ({older[:12]}) is listed before its "
                    f"descendant {newer[:12]} (a log lists newest first: each commit "
                    f"before its ancestors)")
    return None


@judge(LOG_DATE, "repo/log", any_claim=True)
def _log_dates(claim: Claim, fx):
    """Every item's date is ISO-8601 and, for an item whose id git resolves to
    a commit of the history asked, one of that commit's instants. A date that
    is not a string is the log's shape rule; an id git cannot resolve, or a
    commit of another history, is the log replies' (or, at a ref, FC-130's)."""
    from cases.kit.commit_ids import git_commit_of
    from cases.kit.formats import either_instant
    from cases.kit.gitfacts import git_log
    if not fx.vcs_built or claim.params.get("repo") != fx.repo(VCS):
        return None
    rev = _git_rev(fx, claim.params.get("ref"))
    history = {} if rev is None else remembered(
        fx, ("log commits", rev), lambda: {c.sha: c for c in git_log(fx, rev)})
    bad = []
    for sha, date in zip(claim.listed, claim.dates):
        if not isinstance(date, str):
            continue
        when = either_instant(date)
        if when is None:
            bad.append(f"{str(sha)[:12]}: date {date!r} is not ISO-8601")
            continue
        commit = history.get(remembered(fx, ("commit of", sha), lambda s=sha: git_commit_of(fx, s)))
        if commit is not None and when not in commit.dates:
            bad.append(f"{str(sha)[:12]}: date {date!r} is neither the author date "
                       f"({commit.date.isoformat()}) nor the committer date of that commit")
    if bad:
        return (f"{_asked(claim)}: {len(bad)} item date(s) wrong: {'; '.join(bad[:SHOWN])} "
                f"(log dates are ISO-8601 instants of their commit)")
    return None


@judge(SEARCH_TRUNCATED, "search/code")
def _search_one_shot(claim: Claim, fx):
    return None if claim.streaming else _search_cut(claim, fx, "returned")


@judge(STREAM_TRUNCATED, "search/code")
def _search_streamed(claim: Claim, fx):
    return _search_cut(claim, fx, "streamed") if claim.streaming else None


def _search_cut(claim: Claim, fx, how: str):
    """A search's truncated against the files holding its term: a claim of
    truncation with all of them listed is false, one left out is a cut."""
    from cases.kit.facts import files_containing
    asked = _term_and_scope(claim, fx)
    if asked is None:
        return None
    term, repos = asked
    expected = frozenset(f for f in files_containing(fx, term) if f[0] in repos)
    missing = expected - set(claim.listed)
    if claim.truncated is True and not missing:
        return (f"{_asked(claim)}: truncated true with every one of the {len(expected)} "
                f"files holding {term!r} {how} (a claim of truncation that is false)")
    if claim.truncated is not True and missing and not claim.crowded:
        shown = ", ".join(f"{r} {p}" for r, p in sorted(missing)[:SHOWN])
        return (f"{_asked(claim)}: {len(expected) - len(missing)} of the {len(expected)} "
                f"files holding {term!r} {how}, {_said(claim)}; missing e.g. {shown} "
                f"(a cut must say truncated true)")
    return None


def _term_and_scope(claim: Claim, fx):
    """(term, the repository ids it is searched in) of a search for one of
    the fixture's terms, unscoped or repo:-scoped to a fixture repository;
    None for any other query."""
    q = claim.params.get("q")
    match = QUERY.fullmatch(q.strip()) if isinstance(q, str) else None
    if match is None or match.group(2) not in TERMS:
        return None
    scope, term = match.groups()
    repos = {fx.repo(n) for n in (ALPHA, BETA, WIDE, *([VCS] if fx.vcs_built else []))}
    if scope is not None and scope not in repos:
        return None
    return term, repos if scope is None else {scope}


@judge(SEARCH_LINE, "search/code", any_claim=True)
def _search_lines(claim: Claim, fx):
    """Every hit's `line`, when present, is >= 1 and a line of the file that
    holds the term (in any case of letters, as matching semantics
    are the adapter's). A reply that shared the wire with another request is
    left out (a misrouted reply, another term's hits: reply-id's), and so is a
    hit naming a file the fixture does not have (which file is its owner's)."""
    from cases.kit.facts import read_or_none
    asked = _term_and_scope(claim, fx)
    if asked is None or claim.crowded or not claim.lines:
        return None
    term, repos = asked
    names = {fx.repo(n): n for n in (ALPHA, BETA, WIDE, *([VCS] if fx.vcs_built else []))}
    needle = term.encode("utf-8").lower()
    bad = []
    for repo, path, line in claim.lines:
        if repo not in repos:
            continue
        name = names[repo]
        data = remembered(fx, ("bytes", name, path),
                          lambda: read_or_none(fx, name, path))
        if data is None:
            continue
        holding = [n for n, text in enumerate(data.split(b"\n"), 1) if needle in text.lower()]
        if line < 1 or line not in holding:
            bad.append(f"{repo} {path} line {line} (the term is on line(s) "
                       f"{', '.join(map(str, holding[:SHOWN])) or 'none'})")
    if bad:
        return (f"{_asked(claim)}: {len(bad)} hit(s) whose line holds no {term!r}: "
                f"{'; '.join(bad[:SHOWN])} (line is the 1-based line of a match)")
    return None


@judge(COMMIT_TRUNCATED, "repo/commit")
def _commit(claim: Claim, fx):
    """truncated true beside every path of git's first-parent diff of the
    commit asked (by any spelling git resolves) is false. The
    other direction, a file left out without it, is the file list's
    (registry topic "commit files are"), judged on the commit cases' own
    replies."""
    from cases.kit.gitfacts import git_commit
    if claim.truncated is not True or not fx.vcs_built or claim.params.get("repo") != fx.repo(VCS):
        return None
    sha = claim.params.get("sha")
    rev = _git_rev(fx, sha) if isinstance(sha, str) and sha else None
    if rev is None:
        return None
    changed = remembered(fx, ("changes", rev),
                         lambda: frozenset(c.path for c in git_commit(fx, rev).changes))
    if changed <= set(claim.listed):
        return (f"{_asked(claim)}: truncated true beside all {len(changed)} "
                f"paths git's diff of {rev[:12]} changes (truncated says the "
                f"file list is incomplete)")
    return None


@judge(ICON_DISPLAY, "initialize")
def _icon(claim: Claim, fx):
    from cases.kit.formats import undisplayable_icon
    problem = undisplayable_icon(claim.listed[0])
    return None if problem is None else (f"initialize result: icon {problem}, "
                                         f"not a character any terminal shows")
