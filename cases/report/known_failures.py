"""The run's verdict policy: known failures (``--known-failures FILE``) and ``--strict``.

The file lists the cases an adapter is known to fail, one a line::

    # a line starting with # is a comment; blank lines are ignored
    FC-043  our streams pause while the index warms up (tracked as #812)
    FC-061  the mock cannot send Retry-After yet

Applied to the report rows after the cases ran (cases/report/writers.py ``build``):

- listed and failed: outcome ``known`` (the row keeps its message); the run
  does not fail because of it;
- listed and passed: outcome ``failed``, message "FC-nnn is listed in FILE
  as a known failure but passed: remove FC-nnn from FILE" (a stale entry);
- listed and skipped or not run: unchanged (nothing was learnt);
- with ``strict``, a case that passed with warnings is ``failed``, its message
  naming the first warning (a known failure may be listed for it too).

Every row of a listed case gets ``known_failure: {"reason", "file"}``. An id
that is not in the registry (a case a release removed is "no longer a case"),
a duplicate, or a line that is not ``FC-nnn  reason`` makes the file unusable:
``KnownFailuresError`` (the CLI's exit 2).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from cases import registry
from cases.report.model import CaseRow, KnownFailure, KnownFailures

KNOWN = "known"
_LINE = re.compile(r"^(FC-\d{3})(?:\s+(.*))?$", re.I)


class KnownFailuresError(Exception):
    """The file cannot be used; the message is the one line the user sees."""


def parse(path: str | Path) -> dict[str, str]:
    """``{case id: reason}`` in file order (see module doc)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise KnownFailuresError(f"--known-failures: cannot read {str(path)!r}: "
                                 f"{getattr(exc, 'strerror', None) or exc}") from None
    known: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = "" if raw.lstrip().startswith("#") else raw.strip()   # "#812" in a reason stays
        if not line:
            continue
        m = _LINE.match(line)
        if not m:
            raise KnownFailuresError(f"{path} line {number}: expected 'FC-nnn  reason', "
                                     f"got {raw.strip()!r}")
        cid = m.group(1).upper()
        try:
            registry.by_id(cid)
        except KeyError:
            # A case is never renamed; a removed one is named in CHANGELOG.md.
            raise KnownFailuresError(f"{path} line {number}: unknown case id {cid}: no longer "
                                     f"a case of this release (CHANGELOG.md lists the removed "
                                     f"ones), or never one; remove the line (`--list` shows "
                                     f"the cases)") from None
        if cid in known:
            raise KnownFailuresError(f"{path} line {number}: {cid} is listed twice")
        known[cid] = (m.group(2) or "").strip()
    return known


@dataclass
class Policy:
    known: dict[str, str] = field(default_factory=dict)
    file: str | None = None
    strict: bool = False

    @classmethod
    def load(cls, path: str | None, strict: bool = False) -> "Policy":
        return cls(parse(path) if path else {}, str(path) if path else None, strict)

    @property
    def active(self) -> bool:
        return bool(self.known) or self.file is not None or self.strict

    def apply(self, row: CaseRow) -> None:
        """Rewrite one report row in place (see module doc)."""
        cid = row.id
        if self.strict and row.outcome == "passed" and row.warnings:
            row.outcome = "failed"
            row.message = f"--strict: a warning fails the case: {row.warnings[0]}"
            row.strict_failure = True
        if cid not in self.known:
            return
        row.known_failure = KnownFailure(reason=self.known[cid], file=self.file)
        if row.outcome == "failed":
            row.outcome = KNOWN
        elif row.outcome == "passed":
            row.outcome = "failed"
            row.stale_known_failure = True
            row.message = (f"{cid} is listed in {self.file} as a known failure but passed: "
                           f"remove {cid} from {self.file}")

    def header(self, rows: list[CaseRow]) -> KnownFailures:
        """The report's top-level ``known_failures`` member."""
        return KnownFailures(file=self.file, listed=tuple(self.known),
                             known=tuple(r.id for r in rows if r.outcome == KNOWN),
                             stale=tuple(r.id for r in rows if r.stale_known_failure))
