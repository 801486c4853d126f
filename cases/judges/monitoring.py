"""The run-wide verdicts: every finding of the run handed to the case that owns its rule.

Every adapter process the suite starts carries a ``wire.monitor.Monitor``;
each frame both ways is judged as it passes (``Provider.findings``). After
each case the harness ``harvest``s what the case's processes produced,
tagged with the case it was seen in; at the end of the session ``verdicts``
hands every finding to the case that owns its rule in the registry's table
(``cases.registry.OWNERS``; RULINGS "Attribution":
"A rule the run-wide monitor checks on every frame is owned by one case;
that case's verdict lists where in the run the violation was seen").

Ordering never decides a verdict: an owner is judged on every frame of the
run, whether its traffic came before or after the owner ran. With
``--case X`` alone, X is judged on the traffic of the run, i.e. its own.
A MUST finding fails its owner; a SHOULD finding is a warning on it.
"""

from __future__ import annotations

import re

import attrs

from cases.kit import api
from cases.judges import null_params
from cases import registry
from wire import monitor as m
from wire.monitor import Finding

# Not a frame rule: what a process left in its host cache root (harness.scan_cache_roots)
CACHE_ROOT = "cache-root"
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
    """The case id that owns ``finding``'s rule (None: no case owns it), from
    the registry's table: the rule key, refined by what the finding is about."""
    return registry.rule_owner(*key_of(finding))


def key_of(finding: Finding) -> tuple[str, ...]:
    """The parts of ``finding``'s key in registry.OWNERS, most general first:
    ``("notification-answered", "$/cancelRequest")``, ``("partial-items",
    "items[]", "located")``, ``("result-shape", "search/code", "streamed",
    "index", "as_of")``, or the rule key alone."""
    rule = finding.rule
    if rule == m.NOTIFICATION_ANSWERED:
        return rule, finding.method or ""
    if rule == m.PARTIAL_ITEMS:
        return rule, *member_path(_partial_path(finding.detail))
    if rule == m.RESULT_SHAPE:
        method = finding.method or ""
        streamed = ("streamed",) if finding.streaming else ()
        return rule, method, *streamed, *member_path(_shape_path(finding.detail, method))
    return (rule,)


def member_path(path: str) -> tuple[str, ...]:
    """A problem's member path as key parts, any item index as ``[]``
    (``entries[3].sha`` -> ``("entries[]", "sha")``)."""
    return tuple(re.sub(r"\[\d+\]", "[]", part) for part in path.split(".") if part)


def _partial_path(detail: str) -> str:
    """The member path of a $/partial params detail's first problem
    (``$/partial params: items[0].located: expected ...`` -> ``items[0].located``)."""
    parts = [p.strip() for p in detail.split(":")]
    return parts[1] if len(parts) > 2 else ""


def _shape_path(detail: str, method: str) -> str:
    """The member path of the first problem in a result-shape detail
    (``repo/tree result: entries[3].sha: missing ...`` -> ``entries[3].sha``)."""
    head = detail.removeprefix(f"{method} result: ")
    return head.split(":", 1)[0].strip() if ":" in head else ""


def cache_root_seen(root, stray: list[str], label: str, case_id: str | None) -> Seen:
    """A finding of the cache-root rule: a process wrote ``stray`` into its host cache root."""
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
    the parent of a run in several processes (cases/cli/jobs.py) on all of them."""
    for cid, verdict in verdicts(seen, set(results)).items():
        result = results[cid]
        result.warnings = list(result.warnings) + [
            w for w in verdict.warnings if w not in result.warnings]
        if verdict.failure is None:
            continue
        text = api.case_text(registry.by_id(cid), [verdict.failure],
                             settings.rerun_command(cid))
        if result.outcome == "failed":
            result.details = f"{result.details}\n{text}" if result.details else text
            continue
        result.outcome, result.message, result.details = "failed", verdict.failure, text
        result.monitor_failure = True
        notes.append(f"{cid} failed on the run's traffic after it ran "
                     f"(protocol monitor): see its entry in the report")
