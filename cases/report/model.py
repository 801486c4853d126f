"""The run report as attrs models: what one run (or one ``--explore``) found,
built once at the end of the run and read by every writer (terminal, JSON,
JUnit, HTML), the known-failures policy, the verdict and ``--diff``.

The JSON report is the unstructured ``RunReport`` (cases/report/convert.py):
the members are written in the order of the fields below, those marked
"omitted" only when they carry something. A report read from disk
(``--diff``, ``--rerun-failed``) is structured back into these models; a member
an older release did not write takes the default given here.
"""

from __future__ import annotations

import attrs

from wire.messages import NonNegNumber

OUTCOMES = ("passed", "failed", "skipped", "known")
FAILING = ("failed", "known")   # the adapter did not meet the case (known: by the author's policy)


@attrs.define
class KnownFailure:
    """A row's ``known_failure``: why the author listed the case, and where."""
    reason: str
    file: str | None


@attrs.define
class Evidence:
    """An explore finding's evidence (cases/explore/runner.py)."""
    drawn: str
    transcript: str
    program_file: str
    files: tuple[str, ...]
    replay: str
    program: tuple[str, ...]


@attrs.define(kw_only=True)
class CaseRow:
    """One case of the registry, once per report, in id order."""
    id: str
    group: str = ""
    title: str = ""
    spec: str = ""
    since: str = ""
    outcome: str                      # passed | failed | skipped | known
    message: str = ""
    warnings: tuple[str, ...] = ()
    duration_s: NonNegNumber = 0.0
    transcript: str | None = None
    details: str = ""                 # omitted: the full failure text
    rerun: str = ""                   # omitted: the command that reruns just this case
    evidence: Evidence | None = None  # omitted: explore's finding
    monitor_failure: bool = False     # omitted: failed by the run-wide monitor after it ran
    stderr_tail: dict[str, str] = attrs.field(factory=dict)   # omitted (--html)
    strict_failure: bool = False      # omitted: --strict failed it for a warning
    known_failure: KnownFailure | None = None   # omitted: listed in --known-failures
    stale_known_failure: bool = False           # omitted: listed, but passed

    @property
    def failing(self) -> bool:
        return self.outcome in FAILING



@attrs.define
class Summary:
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    known: int = 0
    warnings: int = 0
    duration_s: NonNegNumber = 0.0

    @classmethod
    def of(cls, rows, duration_s: float) -> "Summary":
        counts = {k: sum(1 for r in rows if r.outcome == k) for k in OUTCOMES}
        return cls(**counts, warnings=sum(len(r.warnings) for r in rows),
                   duration_s=round(duration_s, 3))


@attrs.define
class Adapter:
    argv: tuple[str, ...] = ()


@attrs.define
class KnownFailures:
    """The top-level ``known_failures``: the file, what it lists, what failed as
    known, what passed (stale)."""
    file: str | None
    listed: tuple[str, ...] = ()
    known: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()


@attrs.define
class Explore:
    """The top-level ``explore`` of a ``--explore`` report."""
    seed: int
    budget_s: NonNegNumber | None
    max_examples: int | None
    examples: int
    requests: int
    first_failure_example: int | None
    first_failure_s: NonNegNumber | None
    database: str
    reproduce: str


@attrs.define
class RunReport:
    suite: str
    version: str = "unknown"
    protocol: str = "unknown"
    matrix: str | None = None          # omitted (explore's report names no matrix)
    adapter: Adapter = attrs.field(factory=Adapter)
    summary: Summary = attrs.field(factory=Summary)
    interrupted: bool = False
    explore: Explore | None = None     # omitted
    cases: tuple[CaseRow, ...] = ()
    strict: bool | None = None         # omitted: written when a policy is active
    known_failures: KnownFailures | None = None   # omitted

    def row(self, cid: str) -> CaseRow | None:
        return next((r for r in self.cases if r.id == cid), None)
