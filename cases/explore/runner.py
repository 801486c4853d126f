"""``run --explore``: drive the exploring state machine within a budget, shrink,
report.

``explore(settings, seed=..., budget_s=..., examples=..., folder=...)`` runs
hypothesis over ``cases.explore.machine.Explore`` from a fixed seed, with the
example database in ``folder/examples`` (a failure found once is tried first
next time). It stops drawing new examples when the budget is spent (drawing
rounds of ROUND_EXAMPLES from seeds ``seed``, ``seed + 1``, ...) or after
``examples``; a violation stops the drawing, and hypothesis shrinks the
drawn set and the program until the budget is spent, for ``SHRINK_S`` at
least (with ``examples``: until hypothesis stops, for ``SHRINK_EXAMPLES_S``
at most, so a count of examples shrinks to the same end on a loaded machine),
and either way ends once ``SHRINK_STALL`` candidates in a row found nothing
smaller (a count, so where it ends does not hang on the load). The smallest failing
example of the first owner found is the finding: its program, the drawn set
(written again, byte for byte, into ``folder/drawn``), the wire transcript
(``folder/transcript.jsonl``) and the command that reproduces it.

``main(settings, ...)`` is the CLI's side: it prints the verdict, writes the
JSON report (the cases' run report, cases/report/model.py; one row per case explore judges)
and, when asked (``junit_path``, ``html_path``), JUnit XML and HTML by the
cases' writers, and returns the exit code (0 nothing found, 1 a violation,
2 cannot run).
"""

from __future__ import annotations

import itertools
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from cases.explore import judges as J

DEFAULT_SEED = 20260601
DEFAULT_BUDGET_S = 60.0
SHRINK_S = 10.0          # shrinking runs to the end of the budget, and at least this long
SHRINK_EXAMPLES_S = 60.0  # with --examples: shrinking runs until hypothesis stops, at most this long
SHRINK_STALL = 30        # shrinking ends after this many candidates in a row found nothing smaller
STEPS = 10               # requests per example at most
BUILT_KEPT = 4           # drawn sets kept built for the examples that draw them again
# Examples per hypothesis run within a budget: hypothesis spends the first tenth
# of max_examples (at most 50) on minimal draws, so a budget runs rounds of this
# many instead of one endless run.
ROUND_EXAMPLES = 100
EXIT_OK, EXIT_FAILED, EXIT_CANNOT_RUN = 0, 1, 2

# The cases explore judges (a row each in its JSON report).
JUDGED = tuple(sorted({J.COVERAGE, J.TYPING, J.CUT, J.BLOB, J.BIG_BLOB, J.SAME_ID, J.SHARED_ID,
                       J.RESPAWN_ID, J.LINE, J.ONE_SHOT, J.STREAMED, J.REFS, J.LOG, J.LOG_CUT,
                       J.BLOB_AT, J.WEB_URL, J.RESPAWN, J.IN_FLIGHT, J.CANCELLED, J.BLAME,
                       J.CLONE_URL, J.SEARCH_REPOS, J.ORG_REPOS, J.ORG_URL, *J.FAULT.values(),
                       J.COMMIT_SHAPE, J.COMMIT_ID, J.COMMIT_MESSAGE, J.COMMIT_FILES,
                       J.COMMIT_RENAMES, J.COMMIT_PATCHES, J.COMMIT_METADATA, J.COMMIT_COUNTS,
                       J.COMMIT_CUT}))


@dataclass
class Failure:
    violation: J.Violation
    program: list[str]
    drawn: object
    transcript: Path
    size: tuple[int, int, int]


@dataclass
class Context:
    """What one run's examples share: settings, temp area, clock, findings."""
    settings: object
    temp: Path
    budget_end: float | None
    max_examples: int | None
    shrink_s: float = 30.0
    examples: int = 0
    requests: int = 0
    started: float = field(default_factory=time.monotonic)
    first_found_at: float | None = None
    first_owner: str | None = None
    failures: dict = field(default_factory=dict)     # owner -> Failure (smallest seen)
    first_failure_example: int | None = None
    smaller_at: int = 0          # the example that last made a finding smaller
    built: dict = field(default_factory=dict)        # DrawnSet -> (folder, commit ids, git memos), newest last
    budget_spent: bool = False

    def before_example(self) -> None:
        from hypothesis import reject

        from cases.explore.machine import BudgetSpent
        now = time.monotonic()
        if self.first_found_at is None:
            if self.budget_end is not None and now >= self.budget_end:
                self.budget_spent = True
                raise BudgetSpent()
        elif (now >= max(self.first_found_at + self.shrink_s, self.budget_end or 0.0)
              or self.examples - self.smaller_at >= SHRINK_STALL):
            reject()               # shrinking is over: no new candidate runs
        self.examples += 1

    def materialize(self, drawn, dest: Path) -> dict:
        """A private copy of ``drawn`` at ``dest``: built once (git included)
        and copied for every example that draws it again, as shrinking does."""
        from fixture import drawn as D
        built = self.built.pop(drawn, None)
        if built is None:
            where = Path(tempfile.mkdtemp(prefix="built-", dir=self.temp)) / "fixture"
            built = (where, D.write(drawn, where), {})
        self.built[drawn] = built
        while len(self.built) > BUILT_KEPT:
            old, _, _ = self.built.pop(next(iter(self.built)))
            shutil.rmtree(old.parent, ignore_errors=True)
        shutil.copytree(built[0], dest, symlinks=True)
        return built[1]

    def git_memo(self, drawn, name: str) -> dict:
        """git's answers about repository ``name`` of ``drawn`` (materialized
        last), kept with its build: every copy of one build holds the same
        commits, so the examples that draw the set again (shrinking, mostly)
        do not ask git again what an earlier one asked."""
        return self.built[drawn][2].setdefault(name, {})

    def record(self, violation: J.Violation, machine) -> None:
        if self.first_owner is None:
            self.first_owner = violation.case_id
            self.first_found_at = time.monotonic()
            self.first_failure_example = self.examples
        files, size = machine.drawn.size()
        key = (files, len(machine.program), size)
        best = self.failures.get(violation.case_id)
        if best is not None and best.size <= key:
            return
        self.smaller_at = self.examples
        where = self.temp / f"transcript-{violation.case_id}.jsonl"
        machine.p.transcript.dump_jsonl(where)
        self.failures[violation.case_id] = Failure(violation, list(machine.program),
                                                   machine.drawn, where, key)


def explore(settings, *, seed: int, budget_s: float | None, examples: int | None,
            folder: Path, temp: Path, shrink_s: float = None) -> Context:
    """Run the exploration; the returned Context holds what was found.
    ``shrink_s`` bounds shrinking (default SHRINK_S)."""
    from hypothesis import HealthCheck, Phase, Verbosity
    from hypothesis import seed as seeded
    from hypothesis import settings as hsettings
    from hypothesis.database import DirectoryBasedExampleDatabase
    from hypothesis.stateful import run_state_machine_as_test

    from cases.explore.machine import BudgetSpent, Explore

    start = time.monotonic()
    ctx = Context(settings, temp, None if examples else start + budget_s, examples,
                  shrink_s if shrink_s is not None else SHRINK_EXAMPLES_S if examples else SHRINK_S)
    hs = hsettings(max_examples=examples or ROUND_EXAMPLES, deadline=None,
                   stateful_step_count=STEPS, suppress_health_check=list(HealthCheck),
                   database=DirectoryBasedExampleDatabase(str(folder / "examples")),
                   phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
                   report_multiple_bugs=False, verbosity=Verbosity.quiet, print_blob=False)
    # Within a budget: rounds of ROUND_EXAMPLES (seeds seed, seed + 1, ...)
    # until it is spent or a round finds something.
    for round_ in itertools.count():
        machine = seeded(seed + round_)(type("Explore", (Explore,), {"ctx": ctx}))
        try:
            run_state_machine_as_test(machine, settings=hs)
        except BudgetSpent:
            break
        except Exception:   # noqa: BLE001  hypothesis re-raising what the context recorded
            # ... or noticing that the example the budget cut short drew less than
            # the same example did before (FlakyStrategyDefinition): not a finding
            if not ctx.failures and not ctx.budget_spent:
                raise
            break
        if examples or ctx.failures or ctx.budget_spent:
            break
    return ctx


def main(settings, *, seed: str, budget_s: float | None, examples: int | None,
         json_path: str | None, junit_path: str | None = None,
         html_path: str | None = None) -> int:
    """The CLI's --explore (options checked there): prints the verdict, writes
    the JSON report, returns the exit code. ``seed``: digits, "default" or
    "random"."""
    from cases.kit import invocation
    from cases.explore.machine import CannotRun
    from cases.kit.settings import make_temp_area

    if seed == "random":
        number = int.from_bytes(os.urandom(4), "big")
        print(f"forge-conformance explore: --seed random drew seed {number}", flush=True)
    else:
        number = DEFAULT_SEED if seed == "default" else int(seed)
    budget = budget_s if budget_s is not None else DEFAULT_BUDGET_S
    folder = explore_folder(json_path)
    folder.mkdir(parents=True, exist_ok=True)
    temp = make_temp_area("forge-explore-")
    began = time.monotonic()
    try:
        try:
            ctx = explore(settings, seed=number, budget_s=budget, examples=examples,
                          folder=folder, temp=temp)
        except CannotRun as exc:
            print(f"forge-conformance: {exc}", file=sys.stderr, flush=True)
            return EXIT_CANNOT_RUN
        took = time.monotonic() - began
        again = [invocation.command(), "--explore", "--seed", str(number)]
        again += ["--examples", str(examples)] if examples else ["--budget", f"{budget:g}"]
        if json_path:
            again += ["--json", json_path]
        if not settings.reference:
            again += ["--", shlex.join(settings.adapter)]
        command = " ".join(again)
        found = ctx.failures.get(ctx.first_owner) if ctx.first_owner else None
        evidence = write_evidence(found, folder) if found else None
        if evidence is not None:
            replay = [invocation.command(), "--replay", shlex.quote(evidence["transcript"])]
            if not settings.reference:
                replay += ["--", shlex.join(settings.adapter)]
            evidence["replay"] = " ".join(replay)
        print(summary(ctx, found, evidence, number, took, command, folder), flush=True)
        if json_path or junit_path or html_path:
            rep = build_report(ctx, found, evidence, number, budget, examples, took, command,
                               folder, settings)
            write_reports(rep, json_path=json_path, junit_path=junit_path, html_path=html_path)
        return EXIT_FAILED if found else EXIT_OK
    finally:
        shutil.rmtree(temp, ignore_errors=True)


def explore_folder(json_path: str | None) -> Path:
    """Where the example database and a finding's evidence live: beside the
    JSON report when there is one, else a per-user folder in the temp dir."""
    if json_path:
        p = Path(json_path)
        return p.parent / f"{p.stem}.explore"
    return Path(tempfile.gettempdir()) / f"forge-explore-{os.getuid()}"


def write_evidence(found: Failure, folder: Path) -> dict:
    from fixture import drawn as D
    target = folder / "drawn"
    D.remove(target)
    D.write(found.drawn, target)
    transcript = folder / "transcript.jsonl"
    shutil.copyfile(found.transcript, transcript)
    program = folder / "program.txt"
    program.write_text("\n".join(found.program) + "\n", encoding="utf-8")
    (folder / "drawn.json").write_text(json.dumps(found.drawn.describe(), ensure_ascii=False,
                                                  indent=1) + "\n", encoding="utf-8")
    return {"drawn": str(target), "transcript": str(transcript), "program_file": str(program),
            "files": [f"{r.name}/{p}" for r in found.drawn.listed() for p, _ in r.files]}


def summary(ctx: Context, found: Failure | None, evidence, seed, took, command, folder) -> str:
    head = (f"forge-conformance explore: seed {seed}, {ctx.examples} examples, "
            f"{ctx.requests} requests in {took:.1f} s")
    if found is None:
        return f"{head}: no violation found (judged: {', '.join(JUDGED)})"
    v = found.violation
    files, size = found.drawn.size()
    lines = [f"{head}: FAILED", "", v.sentence(), "",
             f"shrunk program ({len(found.program)} requests, on {len(found.drawn.listed())} "
             f"repositories, {files} files, {size} bytes):"]
    lines += [f"  {i + 1}. {s}" for i, s in enumerate(found.program)]
    lines += ["", f"the drawn repositories: {evidence['drawn']} (what each holds: "
              f"{folder / 'drawn.json'})",
              f"the wire transcript: {evidence['transcript']}",
              f"the example database: {folder / 'examples'} (tried first next time)",
              f"first failure at example {ctx.first_failure_example}, after "
              f"{ctx.first_found_at - ctx.started:.1f} s",
              f"reproduce: {command}",
              f"replay the transcript on the drawn set: {evidence['replay']}"]
    return "\n".join(lines)


def write_reports(rep, *, json_path=None, junit_path=None, html_path=None) -> None:
    """The report (cases.report.model.RunReport) as JSON, JUnit XML and
    single-file HTML, written by the cases' own writers (cases/report/writers.py)."""
    from cases.report import writers as report
    report.write_reports(rep, {}, json_path=json_path, junit_path=junit_path,
                         html_path=html_path, json_indent=1)


def build_report(ctx: Context, found, evidence, seed, budget, examples, took, command,
                 folder, settings):
    """The cases' report (cases.report.model.RunReport): one row per case
    (judged ones passed, the finding's owner failed, the rest skipped) and an
    explore member."""
    from cases.kit import invocation
    from cases import registry
    from cases.report import model as M
    from cases.report.writers import PROTOCOL
    rows = []
    for c in registry.REGISTRY:
        row = M.CaseRow(id=c.id, group=c.group, title=c.title, spec=c.spec, since=c.since,
                        outcome="passed" if c.id in JUDGED else "skipped",
                        message="" if c.id in JUDGED else "not judged by --explore",
                        transcript=None)
        if found is not None and c.id == found.violation.case_id:
            v = found.violation
            row.outcome = "failed"
            row.message = f"{v.why}: expected {v.expected}; got {v.got}"
            row.details = v.sentence()
            row.transcript = evidence["transcript"]
            row.rerun = command
            row.evidence = M.Evidence(**{**evidence, "files": tuple(evidence["files"])},
                                      program=tuple(found.program))
        rows.append(row)
    return M.RunReport(
        suite="forge-conformance", version=invocation.version(), protocol=PROTOCOL,
        adapter=M.Adapter(tuple(settings.adapter)), summary=M.Summary.of(rows, took),
        interrupted=False,
        explore=M.Explore(seed=seed, budget_s=None if examples else budget,
                          max_examples=examples, examples=ctx.examples, requests=ctx.requests,
                          first_failure_example=ctx.first_failure_example,
                          first_failure_s=None if ctx.first_found_at is None else
                          round(ctx.first_found_at - ctx.started, 2),
                          database=str(folder / "examples"), reproduce=command),
        cases=tuple(rows))
