"""The adapter-side rules of PROTOCOL.md: ``cases/judges/rules.json`` read, checked and counted.

``cases/judges/rules.json`` holds one object per rule: what PROTOCOL.md says; the
cases that judge it are the registry's (``cases.registry.SPEC_RULES``). Its
members:

- ``id``: stable, ``R-<section>-<slug>`` (e.g. ``R-3.3-recursive``); never
  reused for another rule.
- ``section``: the PROTOCOL.md section the rule is stated in; ``also``: the
  sections that restate it (one rule, not one per restatement).
- ``strength``: the keyword as written (MUST, MUST NOT, SHOULD, SHOULD NOT,
  MAY). The shape tables of §3 count as one MUST per method (§3.0: "a sender
  MUST produce the members marked required with the stated JSON types").
- ``quote``: a few words of the rule as PROTOCOL.md words them (``**``
  dropped), enough to find it.
- ``status`` (host-side, not-observable, out-of-scope) with a ``reason``, for
  a rule no case judges (``cases`` comes from ``cases.registry.SPEC_RULES``).
- ``planned``: the case range that is to judge it (or judge more of it);
  ``note``: what the mapping does and does not cover.

Only adapter obligations are listed: HOST, REF and SUITE sentences are not,
unless a MUST is paired with them. Every MUST needs a case or a status
(tests/test_coverage_map.py); a SHOULD or MAY without one is reported as not
judged. COVERAGE.md and the README's counts are rendered from here by
cases/judges/coverage.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cases.registry import REGISTRY, SPEC_RULES

__all__ = ["Rule", "RulesError", "RULES_PATH", "LEVELS", "STRENGTHS", "STATUSES", "SECTIONS",
           "load", "problems", "unlisted_spec_rules", "unmapped_musts", "uncited_cases", "by_case",
           "tally"]

RULES_PATH = Path(__file__).resolve().with_name("rules.json")

# strength as written -> the level it counts under
STRENGTHS = {"MUST": "MUST", "MUST NOT": "MUST", "SHOULD": "SHOULD", "SHOULD NOT": "SHOULD",
             "MAY": "MAY"}
LEVELS = ("MUST", "SHOULD", "MAY")

# status -> how COVERAGE.md words it
STATUSES = {"host-side": "host-side",
            "not-observable": "not observable over stdio",
            "out-of-scope": "out of scope"}

# The PROTOCOL.md sections that hold adapter rules, in document order.
SECTIONS = {
    "1.1": "Roles", "1.2": "Framing", "1.3": "Version axes",
    "2.1": "Handshake sequence", "2.2": "initialize params", "2.3": "initialize reply",
    "2.4": "Capabilities", "2.5": "Icon",
    "3.0": "Methods: common rules", "3.1": "search/repos", "3.2": "org/repos",
    "3.3": "repo/tree", "3.4": "repo/blob", "3.5": "repo/blob_at", "3.6": "repo/refs",
    "3.7": "repo/log", "3.8": "repo/blame", "3.9": "repo/clone_url", "3.10": "repo/web_url",
    "3.11": "org/url", "3.12": "repo/commit", "3.13": "search/code",
    "4": "Content ids",
    "5.1": "Streaming opt-in", "5.2": "$/partial", "5.3": "Streaming semantics",
    "5.4": "Cancellation",
    "6.1": "Error shape", "6.2": "Error kinds", "6.3": "retry_after_s",
    "7.1": "Process and pipes", "7.2": "Framing in both directions", "7.3": "Request ids",
    "7.4": "Concurrency", "7.6": "Inbound classification", "7.7": "Outbound notifications",
    "7.8": "stderr", "7.11": "Restart obligations", "7.12": "Configuration and credentials",
    "10.1": "Reserved shapes", "10.2": "Disk caches",
}

_ID = re.compile(r"R-(\d+(?:\.\d+)?)-[a-z0-9]+(?:-[a-z0-9]+)*")
_REQUIRED = ("id", "section", "strength", "quote")
_OPTIONAL = ("also", "status", "reason", "planned", "note")


class RulesError(ValueError):
    """rules.json cannot be read as a list of rules (a member missing or mistyped)."""


@dataclass(frozen=True)
class Rule:
    id: str
    section: str
    strength: str
    quote: str
    cases: tuple[str, ...] = ()
    also: tuple[str, ...] = ()
    status: str | None = None
    reason: str = ""
    planned: str = ""
    note: str = ""

    @property
    def level(self) -> str:
        return STRENGTHS.get(self.strength, self.strength)

    @property
    def judged(self) -> bool:
        return bool(self.cases)

    @property
    def settled(self) -> bool:
        """Judged by a case, or given a status with a reason."""
        return self.judged or (self.status in STATUSES and bool(self.reason.strip()))


def load(path: Path | str = RULES_PATH) -> tuple[Rule, ...]:
    """The rules of ``path`` in file order; RulesError names the first bad entry."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    raw = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(raw, list):
        raise RulesError(f"{path}: no 'rules' list")
    return tuple(_rule(n, entry) for n, entry in enumerate(raw))


def _rule(n: int, entry: object) -> Rule:
    where = f"rule #{n}" + (f" ({entry.get('id')})" if isinstance(entry, dict) else "")
    if not isinstance(entry, dict):
        raise RulesError(f"{where} is not an object")
    unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
    missing = [k for k in _REQUIRED if k not in entry]
    if unknown or missing:
        raise RulesError(f"{where}: unknown members {sorted(unknown)}, missing {missing}")
    also = entry.get("also", [])
    if not (isinstance(also, list) and all(isinstance(v, str) for v in also)):
        raise RulesError(f"{where}: also must be a list of strings")
    for key in ("id", "section", "strength", "quote", "reason", "planned", "note"):
        if not isinstance(entry.get(key, ""), str):
            raise RulesError(f"{where}: {key} must be a string")
    if entry.get("status") is not None and not isinstance(entry["status"], str):
        raise RulesError(f"{where}: status must be a string")
    return Rule(id=entry["id"], section=entry["section"], strength=entry["strength"],
                quote=entry["quote"], cases=SPEC_RULES.get(entry["id"], ()),
                also=tuple(entry.get("also", ())), status=entry.get("status"),
                reason=entry.get("reason", ""), planned=entry.get("planned", ""),
                note=entry.get("note", ""))


def problems(rules: tuple[Rule, ...], registry=REGISTRY) -> list[str]:
    """Everything inconsistent in the data itself (not coverage): ids, sections,
    strengths, statuses and case ids that do not exist."""
    known = {c.id for c in registry}
    out: list[str] = []
    seen: Counter = Counter(r.id for r in rules)
    out += [f"{rid}: id used {n} times" for rid, n in seen.items() if n > 1]
    for r in rules:
        m = _ID.fullmatch(r.id)
        if not m:
            out.append(f"{r.id}: id is not R-<section>-<slug>")
        elif m.group(1) != r.section:
            out.append(f"{r.id}: id names section {m.group(1)}, the rule says {r.section}")
        for section in (r.section, *r.also):
            if section not in SECTIONS:
                out.append(f"{r.id}: unknown section {section!r}")
        if r.strength not in STRENGTHS:
            out.append(f"{r.id}: strength {r.strength!r} is not one of {', '.join(STRENGTHS)}")
        if not r.quote.strip():
            out.append(f"{r.id}: empty quote")
        if r.status is not None:
            if r.status not in STATUSES:
                out.append(f"{r.id}: status {r.status!r} is not one of {', '.join(STATUSES)}")
            if not r.reason.strip():
                out.append(f"{r.id}: status {r.status} without a reason")
            if r.cases:
                out.append(f"{r.id}: both cases and status {r.status}: pick one")
        elif r.reason:
            out.append(f"{r.id}: a reason without a status")
        out += [f"{r.id}: {c} is not in cases/registry.py" for c in r.cases if c not in known]
        if len(set(r.cases)) != len(r.cases):
            out.append(f"{r.id}: a case listed twice")
    return out


def unlisted_spec_rules(rules: tuple[Rule, ...], spec_rules=SPEC_RULES) -> list[str]:
    """Keys of the registry's SPEC_RULES that are no rule of ``rules``."""
    ids = {r.id for r in rules}
    return [f"{key}: in cases.registry.SPEC_RULES, not a rule of cases/judges/rules.json"
            for key in spec_rules if key not in ids]


def unmapped_musts(rules: tuple[Rule, ...]) -> list[Rule]:
    """MUST / MUST NOT rules with neither a case nor a status and reason."""
    return [r for r in rules if r.level == "MUST" and not r.settled]


def by_case(rules: tuple[Rule, ...]) -> dict[str, list[str]]:
    """case id -> the ids of the rules it judges, for every case that judges one."""
    out: dict[str, list[str]] = {}
    for r in rules:
        for c in r.cases:
            out.setdefault(c, []).append(r.id)
    return out


def uncited_cases(rules: tuple[Rule, ...], registry=REGISTRY) -> list[str]:
    """Registry ids that judge no rule."""
    cited = by_case(rules)
    return [c.id for c in registry if c.id not in cited]


def tally(rules: tuple[Rule, ...]) -> dict[str, Counter]:
    """level -> Counter of "total", "judged", each status, and "open" (none of those)."""
    out = {level: Counter() for level in LEVELS}
    for r in rules:
        count = out[r.level]
        count["total"] += 1
        if r.judged:
            count["judged"] += 1
        elif r.settled:
            count[r.status] += 1
        else:
            count["open"] += 1
    return out
