"""The run-wide protocol monitor's verdicts: which case owns each frame rule.

Every adapter process the suite starts carries a ``wire.monitor.Monitor``;
each frame both ways is judged as it passes (``Provider.findings``). After
each case the harness ``harvest``s what the case's processes produced,
tagged with the case it was seen in; at the end of the session ``verdicts``
hands every finding to the case that owns its rule (RULINGS "Attribution":
"A rule the run-wide monitor checks on every frame is owned by one case;
that case's verdict lists where in the run the violation was seen").

Ordering never decides a verdict: an owner is judged on every frame of the
run, whether its traffic came before or after the owner ran. With
``--case X`` alone, X is judged on the traffic of the run, i.e. its own.
A MUST finding fails its owner; a SHOULD finding is a warning on it.
"""

from __future__ import annotations

import attrs

from cases import api, claims, null_params, registry
from wire import monitor as m
from wire.monitor import Finding

# Not a frame rule: what a process left in its host cache root (harness.scan_cache_roots)
CACHE_ROOT = "cache-root"

# rule -> the case that owns it everywhere in the run
RULE_OWNERS: dict[str, str] = {
    CACHE_ROOT: "FC-055",
    m.STDOUT_UTF8: "FC-123",
    m.STDOUT_JSON: "FC-123",
    m.JSONRPC: "FC-124",
    m.REPLY_MEMBERS: "FC-124",
    m.REQUEST_TO_HOST: "FC-124",
    m.REPLY_ID: "FC-120",
    m.REPLY_UNKNOWN: "FC-120",
    m.REPLY_TWICE: "FC-120",
    m.PARTIAL_OPT_IN: "FC-046",
    m.PARTIAL_AFTER_REPLY: "FC-041",
    m.PARTIAL_ID: "FC-040",
    m.PARTIAL_ITEMS: "FC-044",
    m.BASE64: "FC-024",
    m.ERROR_SHAPE: "FC-063",
    # every initialize result of the run: each generation of every process,
    # a second initialize on one process too (RULINGS "Attribution")
    m.HANDSHAKE_PROTOCOL: "FC-001",
    m.HANDSHAKE_NAME: "FC-002",
    m.HANDSHAKE_CAPABILITIES: "FC-003",
    m.HANDSHAKE_ICON: "FC-004",
    m.HANDSHAKE_REVISION_CAPABILITIES: "FC-099",   # RULINGS: the revision keys are FC-099's
    m.HANDSHAKE_CACHE: "FC-005",   # the cache budget's reply member (§2.3)
    # truncated claims on every reply of the run that can be judged (cases/claims.py)
    claims.TREE_TRUNCATED: "FC-022",
    claims.LOG_TRUNCATED: "FC-095",
    claims.SEARCH_TRUNCATED: "FC-070",
    claims.STREAM_TRUNCATED: "FC-042",
    claims.ICON_DISPLAY: "FC-080",   # a one-code-point icon displayable, every handshake
    claims.COMMIT_TRUNCATED: "FC-109",   # a commit's complete file list said truncated
    claims.SEARCH_LINE: "FC-031",   # a hit's line holds a match, on every search of the run
    # §3.0 null like absent, on the first request of each method the run sends
    null_params.NULL_LIKE_ABSENT: "FC-053",   # reader tolerance of params (RULINGS)
    # an adapter process ending unasked (RULINGS "Process behaviour"), by what it followed:
    m.EXIT_AFTER_CANCEL: "FC-122",         # §5.4 "no error, no crash", whichever id it names
    m.EXIT_AFTER_NOTIFICATION: "FC-054",   # §7.2, §7.7 unsolicited notifications are ignored
    m.EXIT_IDLE: "FC-050",                 # a warning: the host restarts it (§7.10's backoff)
}

# result-shape: the owner by method, refined by the member the problem is at
SHAPE_OWNERS: dict[str, str] = {
    "repo/tree": "FC-021",
    "repo/blob": "FC-024",
    "repo/blob_at": "FC-096",
    "repo/refs": "FC-090",
    "repo/log": "FC-094",
    "repo/blame": "FC-098",
    "repo/commit": "FC-100",
    "search/repos": "FC-110",
    "org/repos": "FC-111",
    "repo/clone_url": "FC-113",
    "repo/web_url": "FC-114",
    "org/url": "FC-115",
    "search/code": "FC-070",    # one-shot search replies (registry OWNERS)
}
# a streamed search's final reply (metadata only): registry OWNERS "streamed replies are"
STREAMED_SEARCH_OWNER = "FC-042"
# (method, member path prefix) -> owner, most specific first
SHAPE_MEMBER_OWNERS: tuple[tuple[str, str, str], ...] = (
    ("repo/tree", "truncated", "FC-022"),
    ("repo/log", "truncated", "FC-095"),   # R-3.7-limit: the log's truncated is FC-095's
    ("search/code", "index", "FC-033"),
    ("search/code", "truncated", "FC-070"),
)
SHAPE_ITEM_MEMBER_OWNERS: dict[tuple[str, str], str] = {
    ("search/code", "line"): "FC-031",
    ("search/code", "located"): "FC-032",
    ("org/repos", "description"): "FC-112",
    ("org/repos", "private"): "FC-112",
    ("org/repos", "archived"): "FC-112",
    ("org/repos", "pushed_at"): "FC-112",
    ("org/repos", "name"): "FC-112",
}
# An exit with requests in flight fails each of them, as in the host: the
# case waiting on one fails on its closed output (cases/explain.py names the
# exit status), so m.EXIT_IN_FLIGHT has no run-wide owner (one defect, one
# case); the harness's own requests judge it themselves (cases/null_params.py).
# A reply to a notification: to a $/cancelRequest it is FC-122's (cancel
# edges), to any other notification FC-054's (unsolicited notifications).
CANCEL_ANSWERED, NOTIFICATION_ANSWERED = "FC-122", "FC-054"
SHOWN = 3
EXITS = (m.EXIT_AFTER_CANCEL, m.EXIT_AFTER_NOTIFICATION, m.EXIT_IN_FLIGHT, m.EXIT_IDLE)


@attrs.frozen
class Seen:
    """A finding and where in the run it was seen."""
    finding: Finding
    case_id: str | None      # the case running when the frame passed (None: between cases)
    process: str             # the process's label ("adapter", "spawn#1", ...)

    def where(self) -> str:
        during = f"during {self.case_id}" if self.case_id else "between cases"
        if self.finding.generation < 1:   # not a frame's (a cache root's): no generation
            return f"{during}, {self.process}"
        return f"{during}, {self.process}, {self.finding.where()}"


def owner_of(finding: Finding) -> str | None:
    """The case id that owns ``finding``'s rule (None: no case owns it)."""
    rule = finding.rule
    if rule == m.NOTIFICATION_ANSWERED:
        return CANCEL_ANSWERED if finding.method == "$/cancelRequest" else NOTIFICATION_ANSWERED
    if rule == m.PARTIAL_ITEMS and _first_member(finding.detail) == "located":
        return SHAPE_ITEM_MEMBER_OWNERS[("search/code", "located")]   # located is FC-032's
    if rule != m.RESULT_SHAPE:
        return RULE_OWNERS.get(rule)
    method = finding.method or ""
    path = _shape_path(finding.detail, method)
    if method == "search/code" and finding.streaming and not path.startswith("index"):
        return STREAMED_SEARCH_OWNER   # the final reply of a stream carries metadata only
    for meth, prefix, owner in SHAPE_MEMBER_OWNERS:
        if meth == method and (path == prefix or path.startswith(prefix + ".")):
            return owner
    member = path.rsplit(".", 1)[-1] if "[" in path else ""
    return SHAPE_ITEM_MEMBER_OWNERS.get((method, member), SHAPE_OWNERS.get(method))


def _first_member(detail: str) -> str:
    """The last member name of a detail's first problem path
    (``$/partial params: items[0].located: expected ...`` -> ``located``)."""
    parts = [p.strip() for p in detail.split(":")]
    path = parts[1] if len(parts) > 2 else ""
    return path.rsplit(".", 1)[-1] if "[" in path else path


def _shape_path(detail: str, method: str) -> str:
    """The member path of the first problem in a result-shape detail
    (``repo/tree result: entries[3].sha: missing ...`` -> ``entries[3].sha``)."""
    head = detail.removeprefix(f"{method} result: ")
    return head.split(":", 1)[0].strip() if ":" in head else ""


def cache_root_seen(root, stray: list[str], label: str, case_id: str | None) -> Seen:
    """A finding for FC-055: a process wrote ``stray`` into its host cache root."""
    shown = ", ".join(stray[:SHOWN]) + (f" and {len(stray) - SHOWN} more" if len(stray) > SHOWN
                                         else "")
    detail = (f"wrote {shown} into the host's cache root {root} outside providers/ "
              f"(§10.2: use cache_dir)")
    return Seen(Finding(CACHE_ROOT, detail, 0), case_id, label)


def harvest(provider, case_id: str | None) -> list[Seen]:
    """The findings ``provider`` produced since the last harvest, tagged."""
    taken = getattr(provider, "_findings_taken", 0)
    found = provider.findings[taken:]
    provider._findings_taken = taken + len(found)
    return tagged(found, provider, case_id)


def tagged(found: list[Finding], provider, case_id: str | None) -> list[Seen]:
    return [Seen(f, case_id, getattr(provider, "label", "adapter")) for f in found]


@attrs.frozen
class Verdict:
    """What the monitor says about one owner case."""
    case_id: str
    failure: str | None          # one sentence when a MUST was broken
    warnings: tuple[str, ...]    # SHOULD findings


def verdicts(seen: list[Seen], ran: set[str]) -> dict[str, Verdict]:
    """One Verdict per owner case that ran and has findings."""
    by_owner: dict[str, list[Seen]] = {}
    for s in seen:
        owner = owner_of(s.finding)
        if owner is not None and owner in ran:
            by_owner.setdefault(owner, []).append(s)
    out = {}
    for owner, items in by_owner.items():
        musts = [s for s in items if s.finding.strength == "must"]
        shoulds = [s for s in items if s.finding.strength != "must"]
        failure = _sentence(musts) if musts else None
        warnings = tuple(_warning(s) for s in _distinct(shoulds)[:SHOWN])
        out[owner] = Verdict(owner, failure, warnings)
    return out


def judge_own_traffic() -> None:
    """For a case that owns monitor rules: fail it now on the MUST findings of
    its own traffic (warn for SHOULDs). The rest of the run's traffic is
    judged at the end of the run, whatever the order the cases ran in."""
    run = api.running()
    mine = []
    for p, mark in run.attached:
        for f in p.findings[getattr(p, "_findings_taken", 0):]:
            if (f.seq is None or f.seq >= mark) and owner_of(f) == run.case.id:
                mine.append(Seen(f, run.case.id, getattr(p, "label", "adapter")))
    for s in _distinct([s for s in mine if s.finding.strength != "must"])[:SHOWN]:
        api.warn(_warning(s))
    musts = [s for s in mine if s.finding.strength == "must"]
    if musts:
        api.fail(_sentence(musts))


def _warning(s: Seen) -> str:
    return f"{s.finding.detail} ({s.where()})"


def _distinct(items: list[Seen]) -> list[Seen]:
    """One per (rule, detail, method): a defect repeated on every reply is
    shown once, with the first place it was seen."""
    keep, seen = [], set()
    for s in items:
        key = (s.finding.rule, s.finding.detail, s.finding.method)
        if key not in seen:
            seen.add(key)
            keep.append(s)
    return keep


def _sentence(musts: list[Seen]) -> str:
    shown = _distinct(musts)
    parts = []
    for s in shown[:SHOWN]:
        raw = f": {s.finding.raw[:100]!r}" if s.finding.raw else ""
        parts.append(f"{s.finding.detail} ({s.where()}){raw}")
    more = len(musts) - min(len(shown), SHOWN)
    rest = [s for s in musts if s not in shown[:SHOWN]]
    places = "; ".join(s.where() for s in rest[:SHOWN]) + ("; ..." if len(rest) > SHOWN else "")
    if all(s.finding.rule == CACHE_ROOT for s in musts):
        tail = f"; {more} more like these in the run ({places})" if more > 0 else ""
        return (f"{len(musts)} process(es) of the run broke this rule: "
                + "; ".join(parts) + tail)
    if all(s.finding.rule == null_params.NULL_LIKE_ABSENT for s in musts):
        tail = f"; {more} more like these in the run ({places})" if more > 0 else ""
        return (f"{len(musts)} request(s) of the run, asked again with an optional param null "
                f"and left out, were answered otherwise: " + "; ".join(parts) + tail)
    if all(s.finding.rule in EXITS for s in musts):
        tail = f"; {more} more like these in the run ({places})" if more > 0 else ""
        return (f"{len(musts)} adapter process(es) ended unasked: " + "; ".join(parts) + tail)
    tail = f"; {more} more frame(s) like these in the run ({places})" if more > 0 else ""
    return (f"the protocol monitor saw {len(musts)} frame(s) breaking this rule: "
            + "; ".join(parts) + tail)


def apply_findings(results: dict, seen: list, settings, notes: list[str]) -> None:
    """Hand every finding of the run (``seen``, tagged) to the case that owns
    its rule: a MUST fails the owner (whatever it found itself), a SHOULD
    warns. ``results`` are changed in place; used at the end of a run, and by
    the parent of a run in several processes (cases/jobs.py) on all of them."""
    for cid, verdict in verdicts(seen, set(results)).items():
        result = results[cid]
        result.warnings = list(result.warnings) + [
            w for w in verdict.warnings if w not in result.warnings]
        if verdict.failure is None:
            continue
        case_ = registry.by_id(cid)
        text = (f"[{cid}] {case_.title}\nspec: {case_.spec}\n{verdict.failure}\n"
                f"rerun: {settings.rerun_command(cid)}")
        if result.outcome == "failed":
            result.details = f"{result.details}\n{text}" if result.details else text
            continue
        result.outcome, result.message, result.details = "failed", verdict.failure, text
        result.monitor_failure = True
        notes.append(f"{cid} failed on the run's traffic after it ran "
                     f"(protocol monitor): see its entry in the report")
