"""Session state: the harness behind the pytest hooks.

``Harness`` holds what one pytest session owns: the settings, the temp area,
one materialized fixture (re-materialized when an adapter changed it),
private copies for cases that write, every provider it opened (all closed at
the end), the results it hands the end of the run (cases/harness/finish.py). It is
kept on the pytest config (``of(config)``), not in a module global.
``GroupSlot`` is a group's adapter process, started on first use and
replaced when a case leaves it dirty; ``CaseRun`` is what is known about the
case running now. The run order of the groups (``run_order``,
``TAILED_GROUPS``) is written here and nowhere else. One owner of everything
a session opens and must close (processes, copies, their watch, the cache
roots judged once they are closed), so the order of the end of a
session is written in one place.
"""
from __future__ import annotations

import contextvars
import os
import shlex
import shutil
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cases.judges import claims, monitoring, null_params
from cases import registry
from cases.report import writers as report
from cases.harness.finish import Ending
from cases.report.explain import FixtureTampered, GroupUnavailable, describe_start, is_adapter_fault
from cases.harness.copy_watch import Baseline
from cases.harness.fixture_view import FixtureView
from cases.harness.providers import new_provider
from cases.registry import Case
from cases.kit.settings import TAIL_S, Settings, UsageError, make_temp_area

# How many frames of a process's transcript a failure shows when the process
# exchanged nothing during the case.
TRANSCRIPT_FRAMES = 12

# Groups whose cases stream or send notifications. Each group's adapter is
# watched for one TAIL_S after its last such frame, in the background while
# later groups run (``Harness.tail``); running them together, before the quiet
# groups that follow the first of them (transport moves up), lets those
# cover the window instead of the run's end waiting for it. The groups before
# the first tailed one keep their place. Among themselves they run in this
# order: transport, whose last case (FC-122) ends on a stream, before
# lifecycle, whose second second covers that window (lifecycle streams and
# notifies first: its own window is mostly over when it ends). Only the
# order of execution changes; reports list cases by id.
TAILED_GROUPS = ("search", "streaming", "transport", "lifecycle")


def run_order(group: str) -> tuple[int, int]:
    """Where ``group`` runs in one process (the sort key of its module); a run
    in several processes starts the tailed groups first (cases/cli/jobs.py queue)."""
    index = registry.GROUPS.index(group)
    first = min(registry.GROUPS.index(g) for g in TAILED_GROUPS)
    if group in TAILED_GROUPS:
        return (1, TAILED_GROUPS.index(group))
    return (0 if index < first else 2, index)


def of(config: pytest.Config) -> "Harness | None":
    """The session's Harness (kept on the pytest config), or None outside the suite's session."""
    return config.stash.get(HARNESS, None)


class CaseRun:
    """What the harness knows about the case running now."""

    def __init__(self, case_: Case):
        self.case = case_
        self.started = time.monotonic()
        self.warnings: list[str] = []
        self.attached: list[tuple[Any, int]] = []   # (provider, transcript mark)
        self.outcome = "passed"
        self.message = ""
        self.longrepr = ""

    def attach(self, provider) -> None:
        if all(p is not provider for p, _ in self.attached):
            provider.case_calls = []
            self.attached.append((provider, provider.transcript.mark()))

    def mark_of(self, provider) -> int:
        return next((mark for p, mark in self.attached if p is provider), 0)

    def provider_of(self, exc: BaseException):
        """The process whose call failed with ``exc`` (None if not a call's error)."""
        for p, _ in self.attached:
            if any(c.error is exc for c in getattr(p, "case_calls", ())):
                return p
        if getattr(exc, "method", None) == "initialize" and self.attached:
            return self.attached[-1][0]   # a start that failed: the process just attached
        return None

    def entries(self) -> list[tuple[str, list]]:
        """Each process's transcript entries of this case; for a process that
        exchanged nothing during the case (a handshake case judging the reply
        of an earlier one), its last frames before the case instead."""
        out = []
        for p, mark in self.attached:
            mine = p.transcript.since(mark)
            if not mine and mark:
                out.append((f"{p.label}, before this case",
                            p.transcript.entries()[-TRANSCRIPT_FRAMES:]))
            else:
                out.append((p.label, mine))
        return out


class GroupSlot:
    """The group's adapter process: started on first use, replaced when dirty."""

    def __init__(self, harness: "Harness", group: str):
        self.harness = harness
        self.group = group
        self.provider = None
        self.failure: str | None = None

    def get(self, run: CaseRun):
        if self.failure:
            raise GroupUnavailable(self.failure)
        if self.provider is None:
            h = self.harness
            p = new_provider(h.settings, h.fx().path, h.temp, label="adapter")
            h.add_provider(p)
            run.attach(p)
            try:
                p.start()
            except BaseException as exc:
                if is_adapter_fault(exc):
                    self.failure = (f"the group adapter could not be started in {run.case.id}: "
                                    f"{describe_start(exc, run)}")
                h.dispose(p, wait=True)
                raise
            self.provider = p
        else:
            run.attach(self.provider)
        return self.provider

    def retire_after_tail(self) -> None:
        """End the group: its adapter is stopped once the end-of-group silence
        window (settings.TAIL_S) is over, what is left of it after the
        process's last streamed reply or notification. The window is watched
        in the background (``Harness.tail``) while the next group runs: late
        frames are the monitor's to judge, and its findings are handed out
        after the last case, so nothing waits for the window but the run's end."""
        p = self.provider
        since = last_quiet_start(p) if p is not None and p.alive else None
        left = TAIL_S - (time.monotonic() - since) if since is not None else 0.0
        if left <= 0:
            self.retire()
            return
        self.provider = None
        self.harness.tail(p, left, self.group)

    def retire(self, *, wait: bool = True) -> None:
        p, self.provider = self.provider, None
        if p is not None:
            self.harness.dispose(p, wait=wait)


def last_quiet_start(provider) -> float | None:
    """When ``provider`` last answered a streamed request or was sent a
    notification (monotonic), or None: where late frames would start."""
    streaming: set = set()
    last = None
    for e in provider.transcript.entries():
        params = e.msg.get("params") if isinstance(e.msg, dict) else None
        if e.direction == "out" and e.kind == "request" and isinstance(params, dict) \
                and params.get("partial") is True:
            streaming.add(e.id)
        elif (e.direction == "out" and e.kind == "notification") or \
                (e.direction == "in" and e.kind == "reply" and e.id in streaming):
            last = e.t
    return last


class GivenSettings:
    """A pytest plugin carrying the Settings the command line built (cases/cli/command.py):
    the session uses them as they are, so a process reads its knobs and keeps
    the adapter's argv, a list, once. Plain pytest has none and reads them
    from --forge-adapter and the environment."""

    def __init__(self, settings: Settings):
        self.settings = settings


def _settings(config: pytest.Config) -> Settings:
    for given in config.pluginmanager.get_plugins():
        if isinstance(given, GivenSettings):
            return given.settings
    text = config.getoption("forge_adapter")
    try:
        return Settings.from_env(shlex.split(text) if text else None)
    except (UsageError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from None


class Harness:
    """Session state: settings, temp area, fixture, providers, results."""

    def __init__(self, config: pytest.Config):
        opt = config.getoption
        self.settings = _settings(config)
        self.config = config
        self.temp = make_temp_area()
        self.home = self.temp / "home"
        self.home.mkdir()
        self.select = [s for s in (opt("forge_select") or "").split(",") if s]
        self.json_path = opt("forge_json")
        self.junit_path = opt("forge_junit")
        self.transcripts_dir = Path(opt("forge_transcripts")) if opt("forge_transcripts") else None
        self.kept_dir: Path | None = None     # failing cases' transcripts when no dir was asked
        self.given_kept_dir = Path(opt("forge_kept_dir")) if opt("forge_kept_dir") else None
        self.worker_out = opt("forge_worker_out")   # a worker of cases/cli/jobs.py: its part
        self.given_fixture = Path(opt("forge_fixture_dir")) if opt("forge_fixture_dir") else None
        from cases.report.known_failures import KnownFailuresError, Policy
        try:
            self.policy = Policy.load(opt("forge_known_failures"), opt("forge_strict"))
        except KnownFailuresError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.settings.rerun_options = ["--strict"] if self.policy.strict else []
        self.html_path = opt("forge_html")
        self._fx: FixtureView | None = None
        self._answers: Any = False            # fixture.git_answers.GitAnswers | None, once asked
        self._fx_base: Baseline | None = None   # the copy as made, and a watch on it
        self.owned: list = []                 # Materialized copies to remove at the end
        self.providers: list = []             # open providers, closed at the end for sure
        self._closing: list[threading.Thread] = []
        self._tails: list[tuple] = []         # (thread, provider, case id, group) in their window
        self._tails_stop = threading.Event()
        self.current: CaseRun | None = None
        self.results: dict[str, report.CaseResult] = {}
        self.collected: list[str] = []
        self.deselected: set[str] = set()     # by pytest's -k / -m
        self.interrupted = False
        self.notes: list[str] = []
        self.report: dict | None = None
        self.seen: list = []                  # the protocol monitor's findings, tagged
        self._cache_roots: list[tuple] = []   # (root, process label, case id): FC-055's, run-wide
        self.memo: dict = {}                  # run-scoped answers shared by cases (see spawn)
        self.started = time.monotonic()

    # --- fixture

    def fx(self) -> FixtureView:
        if self._fx is None:
            if self.given_fixture is not None:
                path = self.given_fixture
                vcs = (path / "vcs" / ".git").exists()
                from fixture import GIT_MISSING_REASON
                self._fx = FixtureView(path, self.settings.org, vcs,
                                       None if vcs else GIT_MISSING_REASON, self.home,
                                       self._git_answers() if vcs else None)
            else:
                self._fx = self._materialize()
            self._fx_base = Baseline(self._fx.path)
        return self._fx

    def _materialize(self) -> FixtureView:
        import fixture
        m = fixture.materialize(self.temp, root=self.settings.fixture_root)
        self.owned.append(m)
        return FixtureView(m.path, self.settings.org, m.vcs_built, m.vcs_skip_reason, self.home,
                           self._git_answers() if m.vcs_built else None)

    def _git_answers(self):
        """git's remembered answers about this build of the vcs repo (fixture.git_answers)."""
        if self._answers is False:
            from fixture import FIXTURE_ROOT, git_answers
            from fixture.materialize import VCS_INPUTS
            root = Path(self.settings.fixture_root or FIXTURE_ROOT)
            self._answers = git_answers.for_inputs(root / VCS_INPUTS)
        return self._answers

    def mutable_copy(self) -> FixtureView:
        """A private copy of the repos a writing case needs (alpha, beta and
        FAULTS.json, taken from the session's verified copy): copying the
        thousands of files of wide, or rebuilding vcs, would cost more than
        the case itself."""
        from fixture.catalog import ALPHA, BETA
        src = self.fx().path
        dst = Path(tempfile.mkdtemp(prefix="fixture-mutable-", dir=self.temp))
        for name in (ALPHA, BETA):
            shutil.copytree(src / name, dst / name)
        shutil.copyfile(src / "FAULTS.json", dst / "FAULTS.json")
        return FixtureView(dst, self.settings.org, False,
                           "fx_mutable holds alpha, beta and FAULTS.json only", self.home)

    def check_fixture(self, group: str) -> None:
        """After a group: if an adapter changed the session's copy, hand the
        next group a fresh one, and fail (the served data is read-only)."""
        if self._fx is None or self._fx_base is None:
            return
        text = self.fixture_changes(f"during the {group} group")
        if text is None:
            return
        text += "; the next group gets a fresh copy"
        self.notes.append(text)
        stale = [m for m in self.owned if Path(m.path) == self._fx.path]
        fresh = self._materialize()
        for m in stale:
            m.cleanup()
            self.owned.remove(m)
        self._fx.path = fresh.path   # cases hold the same fx object
        self._fx.memo.clear()        # (what was learnt from the tampered copy goes with it)
        self._fx.vcs_built, self._fx.vcs_skip_reason = fresh.vcs_built, fresh.vcs_skip_reason
        self._fx_base.close()
        self._fx_base = Baseline(fresh.path)
        raise FixtureTampered(text)

    def fixture_changes(self, when: str, *, full: bool = False) -> str | None:
        """One sentence naming the first changes to the session's fixture copy
        since it was made (or last replaced), or None (cases.harness.copy_watch)."""
        return self._fx_base.changes(when, full=full)

    def forget(self, provider) -> None:
        """A closed provider: drop it (its transcript can be megabytes), keeping
        what the protocol monitor found on its frames."""
        self.harvest(provider, self.current.case.id if self.current is not None else None)
        if provider in self.providers:
            self.providers.remove(provider)

    # --- the protocol monitor (cases/judges/monitoring.py)

    def harvest(self, provider, case_id: str | None) -> None:
        """Keep the monitor's new findings on ``provider``, tagged with the case,
        and its truncated claims judged against the fixture (cases/judges/claims.py).
        At the end of a case (or a process it leaves), the requests it sent
        are asked again with their optional params null and absent first
        (cases/judges/null_params.py)."""
        run = self.current
        if run is not None and run.case.id == case_id and self._fx is not None:
            null_params.respell(provider, run.mark_of(provider), self._fx,
                                self.memo.setdefault(null_params.MEMO_KEY, set()))
        self.seen += monitoring.harvest(provider, case_id)
        self.seen += monitoring.tagged(claims.harvest(provider, self._fx), provider, case_id)
        retired = getattr(provider, "retired", [])
        for generation, why in retired[getattr(provider, "_retired_noted", 0):]:
            self.notes.append(f"{case_id or 'between cases'}: {provider.label} generation "
                              f"{generation} retired by the suite: {why}")
        provider._retired_noted = len(retired)

    def add_provider(self, provider) -> None:
        """A provider the harness closes at the end for sure; its cache root
        (the host's, handed in cache_dir) is looked at once the run is over."""
        self.providers.append(provider)
        root = getattr(provider, "cache_root", None)
        if root is not None:
            case_id = self.current.case.id if self.current is not None else None
            self._cache_roots.append((root, getattr(provider, "label", "adapter"), case_id))

    def scan_cache_roots(self) -> None:
        """§10.2's MUST NOT on every process of the run, not only on the one
        FC-055 exercises: anything a process wrote into its host cache root
        (<root>/rootle/) outside providers/ is a finding for FC-055, tagged
        with the case and process it was started for (cases/judges/monitoring.py).
        Called by close() once every process is closed."""
        for root, label, case_id in self._cache_roots:
            try:
                stray = sorted(p.name for p in root.iterdir() if p.name != "providers")
            except OSError:   # removed already (an interrupted run): nothing to judge
                continue
            if stray:
                self.seen.append(monitoring.cache_root_seen(root, stray, label, case_id))

    def harvest_all(self) -> None:
        """Keep what the monitor found on the processes still open."""
        for p in list(self.providers):
            self.harvest(p, None)

    def tail(self, provider, left: float, group: str) -> None:
        """Keep ``provider`` (idle, its group over) running for ``left`` more
        seconds, then stop it; ``end_tails`` waits for every such window."""
        case_id = self.current.case.id if self.current is not None else None

        def watch():
            # a rule about absence: the named window, cut short when the run stops
            self._tails_stop.wait(left)
            _close_quietly(provider)

        t = threading.Thread(target=watch, name=f"forge-tail-{group}", daemon=True)
        t.start()   # listed once started: a stop landing inside start() leaves none to join
        self._tails.append((t, provider, case_id, group))

    def end_tails(self) -> None:
        """Wait for the end-of-group windows still open, keep what the monitor
        saw on those processes (tagged with their group's last case), and look
        once more at the whole fixture copy, whatever its watch said: an idle
        adapter must not change it either (that is the last group's case)."""
        tails, self._tails = self._tails, []
        for t, provider, case_id, group in tails:
            t.join()
            self.harvest(provider, case_id)
            if provider in self.providers:
                self.providers.remove(provider)
        if self._fx is None or self._fx_base is None:
            return
        when = f"after the {tails[-1][3]} group, while its adapter was idle" if tails \
            else "by the end of the run"
        text = self.fixture_changes(when, full=True)
        case_id = tails[-1][2] if tails else next(reversed(self.results), None)
        if text is None:
            return
        self.notes.append(text)
        result = self.results.get(case_id) if case_id else None
        if result is not None and result.outcome != "failed":
            result.outcome, result.message = "failed", text
            result.details = f"{result.details}\n{text}" if result.details else text

    def dispose(self, provider, *, wait: bool) -> None:
        """Stop a provider's whole tree: now, or in the background so the next
        case need not wait for it (``drain`` waits for those)."""
        self.forget(provider)
        if wait:
            _close_quietly(provider)
            return
        t = threading.Thread(target=_close_quietly, args=(provider,),
                             name="forge-close", daemon=True)
        t.start()
        self._closing.append(t)

    def drain(self) -> None:
        """Wait until every background close is over (the trees are gone)."""
        while self._closing:
            self._closing.pop().join()

    def ending(self) -> Ending:
        """What this session hands the end of its run (cases/harness/finish.py)."""
        return Ending(results=self.results, settings=self.settings, policy=self.policy,
                      selected=self.select or self.collected, collected=self.collected,
                      started=self.started, seen=self.seen, notes=self.notes,
                      deselected=self.deselected, interrupted=self.interrupted)

    # --- end of session

    def close(self) -> None:
        # Every process still open is stopped at once, each in its own thread:
        # one that leaves a grandchild holding its output costs the stop's
        # bound (wire.process), and several must not cost it one after another.
        self._tails_stop.set()
        closing = [threading.Thread(target=_close_quietly, args=(p,), name="forge-close",
                                    daemon=True) for p in self.providers]
        for t in closing:
            t.start()
        for t in [*closing, *(tail[0] for tail in self._tails)]:
            t.join()
        self.providers.clear()
        self.drain()
        if not self.interrupted:
            self.scan_cache_roots()   # every process is closed: what they wrote is all there
        if self._answers:
            self._answers.save()
        if self._fx_base is not None:
            self._fx_base.close()
        for m in self.owned:
            m.cleanup()
        self.owned.clear()
        shutil.rmtree(self.temp, ignore_errors=True)

    def transcript_path(self, run: CaseRun) -> Path | None:
        if self.transcripts_dir is not None:
            self.transcripts_dir.mkdir(parents=True, exist_ok=True)
            folder = self.transcripts_dir
        elif run.outcome == "failed":
            if self.kept_dir is None and self.given_kept_dir is not None:
                self.given_kept_dir.mkdir(parents=True, exist_ok=True)
                self.kept_dir = self.given_kept_dir
            elif self.kept_dir is None:
                self.kept_dir = Path(tempfile.mkdtemp(prefix="forge-transcripts-"))
            folder = self.kept_dir
        else:
            return None
        path = folder / f"{run.case.id}.jsonl"
        report.write_transcript(path, run.entries())
        return path


HARNESS = pytest.StashKey[Harness]()
ATTACHED = pytest.StashKey[contextvars.Token]()   # the case API's pointer at it (api.attach)


def _close_quietly(provider) -> None:
    try:
        provider.close()
    except Exception:   # closing is best effort; never mask the run's outcome
        pass

