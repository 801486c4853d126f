"""The pytest plugin: the plumbing between the case modules and a live adapter.

Case modules see only the API below (contract.md, last section): the ``case``
decorator, ``fc_assert`` / ``fail`` / ``warn`` / ``skip``, the fixtures
``adapter``, ``spawn``, ``fx`` and ``fx_mutable``, and the constants
``DEADLINE_S``, ``INACTIVITY_S``, ``SILENCE_S``.

What the plugin owns:
- settings: the adapter command and the knobs (FORGE_PROVIDER / PROVIDER,
  FORGE_ORG, FORGE_DEADLINE_S, FORGE_INACTIVITY_S, FORGE_NO_APPEND,
  FORGE_NO_FAULTS, the ``{fixture}`` placeholder), read once (``Settings``);
- one materialized fixture per session (re-materialized when an adapter
  changed it), private copies for cases that write;
- one adapter process per case group, replaced before the next case when a
  case leaves it dead, timed out, with calls in flight or mid-stream;
- turning adapter misbehaviour that escapes a case (ProviderError, ShapeError,
  CaseFailed) into a one-sentence failure with the case's transcript, the
  adapter's stderr tail and the command that reruns just that case; anything
  else escaping a case is a bug in the suite and keeps its traceback;
- collecting outcomes for cases/report.py (JSON, JUnit, terminal summary).
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from cases import registry, report
from cases.registry import Case

REPO_ROOT = Path(__file__).resolve().parent.parent
REFERENCE_ADAPTER = REPO_ROOT / "vendor" / "fs_provider.py"

# What a configured host sends (the cases' group adapters): PROTOCOL §2.2.
CACHE_BYTES = 268435456
CACHE_PROVIDER = "forge"   # <name> of the cache_dir handed over: <root>/rootle/providers/<name>
# The named window for rules about absence (FC-041, FC-054): the only wait
# that is not an event (RULINGS "Timing").
SILENCE_S = 0.5
PLACEHOLDER = "{fixture}"
STDERR_TAIL_LINES = 20
TRANSCRIPT_FRAMES = 12


class UsageError(Exception):
    """A knob or option that makes the run impossible; one line for the user."""


# ----------------------------------------------------------------- settings

def _seconds(environ, name: str, default: float, *, strict: bool) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        if strict:
            raise UsageError(f"{name} must be a positive number of seconds, got {text!r}")
        return default
    return value


def _flag(environ, name: str) -> bool:
    return environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


# Module constants for the case modules; the CLI has validated the same
# variables strictly before anything imports a case module.
DEADLINE_S = _seconds(os.environ, "FORGE_DEADLINE_S", 30.0, strict=False)
INACTIVITY_S = _seconds(os.environ, "FORGE_INACTIVITY_S", 2.0, strict=False)
NO_FAULTS = _flag(os.environ, "FORGE_NO_FAULTS")


class Settings:
    """The adapter command and the knobs, read from the environment once."""

    def __init__(self, adapter: list[str] | None, environ=None):
        env = os.environ if environ is None else environ
        self.reference = not adapter
        self.adapter = list(adapter) if adapter else [sys.executable, str(REFERENCE_ADAPTER)]
        self.org = env.get("FORGE_ORG", "").strip() or "local"
        self.deadline_s = _seconds(env, "FORGE_DEADLINE_S", 30.0, strict=True)
        self.inactivity_s = _seconds(env, "FORGE_INACTIVITY_S", 2.0, strict=True)
        self.no_append = _flag(env, "FORGE_NO_APPEND")
        self.no_faults = _flag(env, "FORGE_NO_FAULTS")
        self.fixture_root = Path(env["FORGE_FIXTURE_ROOT"]) if env.get("FORGE_FIXTURE_ROOT") \
            else None   # tests only: a copy of fixture/ to verify and copy instead
        self._environ = env

    @classmethod
    def from_env(cls, adapter: list[str] | None = None, environ=None) -> "Settings":
        """``adapter`` (argv after ``--``) wins; else FORGE_PROVIDER, else PROVIDER,
        else the reference adapter. Raises UsageError for a bad knob."""
        env = os.environ if environ is None else environ
        if not adapter:
            for name in ("FORGE_PROVIDER", "PROVIDER"):
                text = env.get(name, "").strip()
                if text:
                    try:
                        adapter = shlex.split(text)
                    except ValueError as exc:
                        raise UsageError(f"{name} is not a valid command line ({exc}): {text!r}")
                    break
        return cls(adapter, env)

    def argv_for(self, fixture_dir: Path) -> list[str]:
        """The adapter argv for one spawn: the placeholder substituted, or the
        fixture dir appended unless FORGE_NO_APPEND."""
        used = any(PLACEHOLDER in a for a in self.adapter)
        argv = [a.replace(PLACEHOLDER, str(fixture_dir)) for a in self.adapter]
        if not used and not self.no_append:
            argv.append(str(fixture_dir))
        return argv

    def adapter_env(self, fixture_dir: Path, *, minimal: bool = False,
                    extra: dict[str, str] | None = None) -> dict[str, str]:
        """The adapter's environment: credentials scrubbed, the contract
        variables always set, ``extra`` on top."""
        from wire.process import scrub_env
        if minimal:
            base = {k: self._environ[k] for k in ("PATH", "HOME", "LANG") if k in self._environ}
        else:
            base = dict(self._environ)
        base.update({"FORGE_FIXTURE_DIR": str(fixture_dir), "FORGE_ORG": self.org})
        if extra:
            base.update(extra)
        return scrub_env(base)

    def knob_prefix(self) -> str:
        """The non-default knobs as ``NAME=value`` words for a rerun command."""
        words = []
        for name in ("FORGE_ORG", "FORGE_DEADLINE_S", "FORGE_INACTIVITY_S",
                     "FORGE_NO_APPEND", "FORGE_NO_FAULTS", "FORGE_FIXTURE_ROOT"):
            value = self._environ.get(name, "").strip()
            if value:
                words.append(f"{name}={shlex.quote(value)}")
        return " ".join(words)

    def rerun_command(self, case_id: str | None = None) -> str:
        """The exact command that reruns ``case_id`` (or everything) against this adapter."""
        run = REPO_ROOT / "run"
        try:
            shown = "run" if Path.cwd().resolve() == REPO_ROOT else str(run)
        except OSError:
            shown = str(run)
        parts = [self.knob_prefix(), f"python3 {shlex.quote(shown)}"]
        if case_id:
            parts.append(f"--case {case_id}")
        if not self.reference:
            parts.append("-- " + shlex.join(self.adapter))
        return " ".join(p for p in parts if p)


# ------------------------------------------------------------- the case API

class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


_UNSET: Any = _Unset()


class CaseFailed(AssertionError):
    """A case's check failed: ``[FC-010] title — why: expected …, got …``."""

    def __init__(self, why: str, expected: Any = _UNSET, got: Any = _UNSET,
                 case: Case | None = None):
        self.why = why or "check failed"
        self.expected = expected
        self.got = got
        self.case = case
        super().__init__(str(self))

    @property
    def sentence(self) -> str:
        """``why: expected …, got …`` (no case prefix)."""
        bits = []
        if self.expected is not _UNSET:
            bits.append(f"expected {report.show(self.expected)}")
        if self.got is not _UNSET:
            bits.append(f"got {report.show(self.got)}")
        return self.why + (": " + ", ".join(bits) if bits else "")

    def __str__(self) -> str:
        if self.case is None:
            return self.sentence
        return f"[{self.case.id}] {self.case.title} — {self.sentence}"


class GroupUnavailable(Exception):
    """The group's adapter could not be (re)started earlier in this group."""


class FixtureTampered(Exception):
    """An adapter wrote into the fixture copy it serves (found after a group)."""


def case(case_id: str) -> Callable:
    """Bind a test function to its registry entry (one function per id)."""
    entry = registry.by_id(case_id)

    def bind(fn):
        fn.forge_case = entry
        return fn
    return bind


def _current_case() -> Case | None:
    run = _HARNESS.current if _HARNESS is not None else None
    return run.case if run is not None else None


def fail(why: str, expected: Any = _UNSET, got: Any = _UNSET) -> None:
    """Fail the running case: why, and the evidence (expected vs got)."""
    raise CaseFailed(why, expected, got, _current_case())


def fc_assert(cond: Any, expected: Any = _UNSET, got: Any = _UNSET, why: str = "") -> None:
    """Fail the running case unless ``cond`` holds."""
    if not cond:
        raise CaseFailed(why, expected, got, _current_case())


def warn(text: str) -> None:
    """Attach a warning to the running case (reported, never fails)."""
    run = _HARNESS.current if _HARNESS is not None else None
    if run is not None:
        run.warnings.append(str(text))
    else:
        import warnings
        warnings.warn(str(text), stacklevel=2)


def skip(reason: str) -> None:
    """Skip the running case; the reason is prefixed with the case id."""
    c = _current_case()
    if c is not None and not reason.startswith(f"[{c.id}]"):
        reason = f"[{c.id}] {reason}"
    pytest.skip(reason)


# ------------------------------------------------------------------ fixture

class FixtureView:
    """The materialized fixture as the cases see it (``fx`` / ``fx_mutable``)."""

    def __init__(self, path: Path, org: str, vcs_built: bool, vcs_skip_reason: str | None,
                 home: Path):
        self.path = Path(path)
        self.org = org
        self.vcs_built = vcs_built
        self.vcs_skip_reason = vcs_skip_reason
        self._home = home   # an empty HOME for git, so no user config leaks in

    def __repr__(self) -> str:
        return f"<fixture {self.path} vcs={'built' if self.vcs_built else 'absent'}>"

    def repo(self, name: str) -> str:
        return f"{self.org}/{name}"

    def read(self, repo_name: str, relpath: str) -> bytes:
        return (self.path / repo_name / relpath).read_bytes()

    def walk(self, repo_name: str) -> dict[str, str]:
        """Every file ("blob") and directory ("tree") of a repo on disk, by
        ``/``-separated relative path; a git repo's ``.git`` is left out."""
        top = self.path / repo_name
        found: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(top):
            rel_dir = os.path.relpath(dirpath, top)
            prefix = "" if rel_dir == "." else rel_dir.replace(os.sep, "/") + "/"
            if not prefix:
                dirnames[:] = [d for d in dirnames if d != ".git"]
            for d in dirnames:
                found[prefix + d] = "tree"
            for f in filenames:
                found[prefix + f] = "blob"
        return dict(sorted(found.items()))

    def git_bytes(self, *args: str) -> bytes:
        """``git <args>`` in the vcs repo with an isolated environment; raises on error."""
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(self._home),
               "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat"}
        proc = subprocess.run(["git", "-C", str(self.path / "vcs"), *args], env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        if proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)} failed ({proc.returncode}): "
                               f"{proc.stderr.decode('utf-8', 'replace').strip()}")
        return proc.stdout

    def git(self, *args: str) -> str:
        return self.git_bytes(*args).decode("utf-8", "replace")


def _snapshot(top: Path) -> dict[str, tuple]:
    """Cheap fingerprint of a materialized copy (size, mtime, mode per path;
    git's own .git internals left out)."""
    seen: dict[str, tuple] = {}
    stack = [str(top)]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for e in entries:
            if e.name == ".git":
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            seen[e.path] = (st.st_size, st.st_mtime_ns, st.st_mode)
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
    return seen


def _temp_parent() -> str | None:
    """Where the session's temp area goes: FORGE_TMPDIR, else a RAM-backed
    /dev/shm when it has room (materializing thousands of small files on a
    disk-backed /tmp costs seconds), else the platform default."""
    chosen = os.environ.get("FORGE_TMPDIR")
    if chosen:
        return chosen
    shm = "/dev/shm"
    try:
        if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) \
                and shutil.disk_usage(shm).free > 512 * 2**20:
            return shm
    except OSError:
        pass
    return None


def make_temp_area(prefix: str = "forge-run-") -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_temp_parent()))


# ------------------------------------------------------------- providers

def _provider_class():
    from wire.transport import Provider

    class CaseProvider(Provider):
        """A Provider that remembers the calls of the running case (so the
        plugin can see a timeout a case caught) and exposes the handshake."""

        label = "adapter"

        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.case_calls: list = []

        def call(self, method, params, **kw):
            c = super().call(method, params, **kw)
            self.case_calls.append(c)
            return c

        @property
        def init_result(self) -> dict | None:
            return self.init_results[0] if self.init_results else None

        @property
        def caps(self):
            from wire.messages import Capabilities
            init = self.init_result
            return Capabilities.from_raw(init.get("capabilities") if isinstance(init, dict)
                                         else None)

        def dirty(self) -> str | None:
            """Why this process must not serve the next case, or None."""
            if not self.alive:
                return "the adapter is dead"
            if self.in_flight:
                return f"{self.in_flight} call(s) still in flight"
            if any(c.outcome == "timeout" for c in self.case_calls):
                return "a call timed out"
            return None

    return CaseProvider


_CLASS = None


def new_provider(settings: Settings, fixture_dir: Path, temp: Path, *, label: str,
                 env: dict | None = None, minimal_env: bool = False,
                 init_params: dict | None = None):
    """One adapter spawn (not started) with its own transcript, stderr file and
    private cache dir; init params default to a configured host's."""
    global _CLASS
    if _CLASS is None:
        _CLASS = _provider_class()
    # The host's layout (RULINGS "Process behaviour"): <root>/rootle/providers/<name>
    cache = Path(tempfile.mkdtemp(prefix=f"cache-{label}-", dir=temp)) / "rootle" / "providers" \
        / CACHE_PROVIDER
    cache.mkdir(parents=True)
    if init_params is None:
        init_params = {"protocol": 1, "cache_bytes": CACHE_BYTES, "cache_dir": str(cache)}
    stderr_dir = Path(tempfile.mkdtemp(prefix=f"stderr-{label}-", dir=temp))
    p = _CLASS(settings.argv_for(fixture_dir),
               env=settings.adapter_env(fixture_dir, minimal=minimal_env, extra=env),
               deadline_s=settings.deadline_s, init_params=init_params, stderr_dir=stderr_dir)
    p.label = label
    return p


def describe_error(exc: BaseException, run: "CaseRun | None" = None) -> str:
    """One sentence for something the adapter did that escaped a case; with
    the case's ``run``, a failed call also names what the wire saw meanwhile
    (framing violations, an adapter that had already exited)."""
    sentence = _describe(exc)
    if run is None:
        return sentence
    if isinstance(exc, CaseFailed):   # the case judged; the wire may still explain why
        for p, _ in run.attached:
            extra = violations(p, run.mark_of(p))
            if extra:
                return sentence + extra
        return sentence
    provider = run.provider_of(exc)
    if provider is not None:
        sentence += _wire_evidence(provider, run, exc)
    return sentence


def violations(provider, since: int = 0) -> str:
    """"; framing violation (...): <first offending bytes>" for the first
    framing violation the process sent since ``since``, or ""."""
    bad = [e for e in provider.transcript.since(since)
           if e.direction == "in" and e.kind == "violation"]
    if not bad:
        return ""
    more = f" (+{len(bad) - 1} more)" if len(bad) > 1 else ""
    return (f"; framing violation ({bad[0].outcome}, {bad[0].size} bytes): "
            f"\"{report.cut(bad[0].raw, 80)}\"{more}")


def _wire_evidence(provider, run: "CaseRun", exc: BaseException) -> str:
    from wire.errors import ProviderClosed, ProviderTimeout
    extra = violations(provider, run.mark_of(provider))
    if isinstance(exc, ProviderTimeout):
        exited = provider.exit_description()
        if exited:
            extra += (f"; the adapter had {exited} (a process it left behind kept its "
                      f"output open)")
    elif isinstance(exc, ProviderClosed) and not exc.detail:
        exited = provider.exit_description()
        if exited:
            extra += f"; the adapter {exited}"
    return extra


def _describe(exc: BaseException) -> str:
    from fixture import FixtureError
    from wire.errors import ProviderClosed, ProviderError, ProviderTimeout, SpawnError
    from wire.messages import ShapeError
    if isinstance(exc, CaseFailed):
        return exc.sentence
    if isinstance(exc, (GroupUnavailable, FixtureTampered)):
        return str(exc)
    if isinstance(exc, ShapeError):
        return f"reply shape: {exc}"
    if isinstance(exc, (SpawnError, FixtureError)):
        return str(exc)
    if isinstance(exc, ProviderError):
        what = (f"{exc.method} (id {exc.request_id})" if exc.request_id is not None
                else exc.method or "a request")
        if isinstance(exc, ProviderTimeout):
            return f"timed out after {exc.window_s:g} s waiting for the reply to {what}"
        if isinstance(exc, ProviderClosed):
            detail = f" ({exc.detail})" if exc.detail else ""
            return f"the adapter closed its output{detail} while {what} was in flight"
        if exc.origin == "adapter":
            kind = exc.raw_kind if isinstance(exc.raw_kind, str) else "no kind"
            return f"{exc.method or 'a request'} answered an error: {kind}: " \
                   f"{report.cut(exc.message, 300)}"
        return f"{what}: {report.cut(exc.message, 300)}"
    return f"{type(exc).__name__}: {report.cut(str(exc), 300)}"


def _is_adapter_fault(exc: BaseException) -> bool:
    """Failures explained in one sentence (no traceback): the adapter's doing,
    or a fixture that cannot be used."""
    from fixture import FixtureError
    from wire.errors import ProviderError, SpawnError
    from wire.messages import ShapeError
    return isinstance(exc, (CaseFailed, GroupUnavailable, FixtureTampered, ProviderError,
                            ShapeError, SpawnError, FixtureError))


# ------------------------------------------------------------- the session

class CaseRun:
    """What the plugin knows about the case running now."""

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
            h.providers.append(p)
            run.attach(p)
            try:
                p.start()
            except BaseException as exc:
                if _is_adapter_fault(exc):
                    self.failure = (f"the group adapter could not be started in {run.case.id}: "
                                    f"{describe_error(exc, run)}")
                h.dispose(p, wait=True)
                raise
            self.provider = p
        else:
            run.attach(self.provider)
        return self.provider

    def retire(self, *, wait: bool = True) -> None:
        p, self.provider = self.provider, None
        if p is not None:
            self.harness.dispose(p, wait=wait)


class Harness:
    """Session state: settings, temp area, fixture, providers, results."""

    def __init__(self, config: pytest.Config):
        opt = config.getoption
        adapter = shlex.split(opt("forge_adapter")) if opt("forge_adapter") else None
        try:
            self.settings = Settings.from_env(adapter)
        except UsageError as exc:
            raise pytest.UsageError(str(exc)) from None
        self.config = config
        self.temp = make_temp_area()
        self.home = self.temp / "home"
        self.home.mkdir()
        self.select = [s for s in (opt("forge_select") or "").split(",") if s]
        self.json_path = opt("forge_json")
        self.junit_path = opt("forge_junit")
        self.transcripts_dir = Path(opt("forge_transcripts")) if opt("forge_transcripts") else None
        self.kept_dir: Path | None = None     # failing cases' transcripts when no dir was asked
        self.given_fixture = Path(opt("forge_fixture_dir")) if opt("forge_fixture_dir") else None
        self._fx: FixtureView | None = None
        self._fx_snapshot: dict | None = None
        self.owned: list = []                 # Materialized copies to remove at the end
        self.providers: list = []             # open providers, closed at the end for sure
        self._closing: list[threading.Thread] = []
        self.current: CaseRun | None = None
        self.results: dict[str, report.CaseResult] = {}
        self.collected: list[str] = []
        self.interrupted = False
        self.notes: list[str] = []
        self.report: dict | None = None
        self.started = time.monotonic()

    # --- fixture

    def fx(self) -> FixtureView:
        if self._fx is None:
            if self.given_fixture is not None:
                path = self.given_fixture
                vcs = (path / "vcs" / ".git").exists()
                from fixture import GIT_MISSING_REASON
                self._fx = FixtureView(path, self.settings.org, vcs,
                                       None if vcs else GIT_MISSING_REASON, self.home)
            else:
                self._fx = self._materialize()
            self._fx_snapshot = _snapshot(self._fx.path)
        return self._fx

    def _materialize(self) -> FixtureView:
        import fixture
        m = fixture.materialize(self.temp, root=self.settings.fixture_root)
        self.owned.append(m)
        return FixtureView(m.path, self.settings.org, m.vcs_built, m.vcs_skip_reason, self.home)

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
        if self._fx is None or self._fx_snapshot is None:
            return
        now = _snapshot(self._fx.path)
        if now == self._fx_snapshot:
            return
        before, top = self._fx_snapshot, str(self._fx.path) + os.sep
        changes = ([f"{p.removeprefix(top)} added" for p in sorted(set(now) - set(before))]
                   + [f"{p.removeprefix(top)} removed" for p in sorted(set(before) - set(now))]
                   + [f"{p.removeprefix(top)} changed" for p in sorted(set(now) & set(before))
                      if now[p] != before[p] and not stat.S_ISDIR(now[p][2])])
        shown = ", ".join(changes[:3]) + (f" (and {len(changes) - 3} more)"
                                          if len(changes) > 3 else "")
        text = (f"the adapter modified the fixture copy it serves during the {group} group: "
                f"{shown}; the next group gets a fresh copy")
        self.notes.append(text)
        stale = [m for m in self.owned if Path(m.path) == self._fx.path]
        fresh = self._materialize()
        for m in stale:
            m.cleanup()
            self.owned.remove(m)
        self._fx.path = fresh.path   # cases hold the same fx object
        self._fx.vcs_built, self._fx.vcs_skip_reason = fresh.vcs_built, fresh.vcs_skip_reason
        self._fx_snapshot = _snapshot(fresh.path)
        raise FixtureTampered(text)

    def forget(self, provider) -> None:
        """A closed provider: drop it (its transcript can be megabytes)."""
        if provider in self.providers:
            self.providers.remove(provider)

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

    # --- end of session

    def close(self) -> None:
        for p in self.providers:
            _close_quietly(p)
        self.providers.clear()
        self.drain()
        for m in self.owned:
            m.cleanup()
        self.owned.clear()
        shutil.rmtree(self.temp, ignore_errors=True)

    def transcript_path(self, run: CaseRun) -> Path | None:
        if self.transcripts_dir is not None:
            self.transcripts_dir.mkdir(parents=True, exist_ok=True)
            folder = self.transcripts_dir
        elif run.outcome == "failed":
            if self.kept_dir is None:
                self.kept_dir = Path(tempfile.mkdtemp(prefix="forge-transcripts-"))
            folder = self.kept_dir
        else:
            return None
        path = folder / f"{run.case.id}.jsonl"
        report.write_transcript(path, run.entries())
        return path


def _close_quietly(provider) -> None:
    try:
        provider.close()
    except Exception:   # closing is best effort; never mask the run's outcome
        pass


_HARNESS: Harness | None = None


# ------------------------------------------------------------------ hooks

def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("forge-conformance")
    g.addoption("--forge-adapter", default=None,
                help="adapter command (shell words); default FORGE_PROVIDER/PROVIDER or the reference")
    g.addoption("--forge-select", default=None, help="comma-separated case ids to run")
    g.addoption("--forge-json", default=None, help="write the JSON report here")
    g.addoption("--forge-junit", default=None, help="write JUnit XML here")
    g.addoption("--forge-transcripts", default=None, help="one JSONL transcript per case here")
    g.addoption("--forge-fixture-dir", default=None,
                help="an already materialized fixture copy to use (the CLI's pre-flight)")


def pytest_configure(config: pytest.Config) -> None:
    global _HARNESS
    if _HARNESS is None:
        _HARNESS = Harness(config)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session, config, items) -> None:
    h = _HARNESS
    if h is None:
        return
    for item in items:   # `pytest cases -k FC-043` selects by case id
        c = _case_of(item)
        if c is not None:
            item.extra_keyword_matches.add(c.id)
    if h.select:
        wanted = set(h.select)
        keep = [i for i in items if _case_of(i) is None or _case_of(i).id in wanted]
        dropped = [i for i in items if i not in keep]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
            items[:] = keep


def pytest_collection_finish(session) -> None:
    h = _HARNESS
    if h is not None:   # after every deselection (--forge-select, -k, -m)
        h.collected = [c.id for c in (_case_of(i) for i in session.items) if c is not None]


def _case_of(item) -> Case | None:
    fn = getattr(item, "function", None)
    return getattr(fn, "forge_case", None)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    h, c = _HARNESS, _case_of(item)
    if h is None or c is None:
        yield
        return
    run = h.current = CaseRun(c)
    outcome = yield
    h.current = None
    if outcome.excinfo is not None:   # KeyboardInterrupt mid-case: it did not run
        return
    result = report.CaseResult(
        id=c.id, outcome=run.outcome, message=run.message, warnings=list(run.warnings),
        duration_s=round(time.monotonic() - run.started, 3))
    try:
        path = h.transcript_path(run)
    except OSError as exc:
        path = None
        h.notes.append(f"could not write the transcript of {c.id}: {exc}")
    result.transcript = str(path) if path else None
    result.details = run.longrepr
    prior = h.results.get(c.id)
    h.results[c.id] = result if prior is None else report.merge(prior, result)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    h = _HARNESS
    c = _case_of(item)
    if h is None or c is None or h.current is None:
        return
    rep = outcome.get_result()
    run = h.current
    if rep.skipped and run.outcome == "passed":
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        reason = reason.removeprefix("Skipped: ")
        if not reason.startswith(f"[{c.id}]"):
            reason = f"[{c.id}] {reason}"
        run.outcome, run.message = "skipped", reason
        return
    if not rep.failed:
        return
    exc = call.excinfo.value if call.excinfo is not None else None
    first = run.outcome != "failed"
    if exc is not None and _is_adapter_fault(exc):
        sentence = describe_error(exc, run)
        if call.when == "setup" and _is_start_failure(exc):
            sentence = f"the adapter could not be started: {sentence}"
        text = report.failure_text(
            c, _evidence_lines(exc, sentence), run.entries(),
            [(p.label, p.stderr_tail(4000)) for p, _ in run.attached],
            h.settings.rerun_command(c.id), frames=TRANSCRIPT_FRAMES,
            stderr_lines=STDERR_TAIL_LINES)
        rep.longrepr = text
    elif exc is not None and isinstance(exc, pytest.fail.Exception):
        sentence = str(exc.msg) if getattr(exc, "msg", None) else "failed"
        text = str(rep.longrepr)
    else:
        where = ""
        if call.excinfo is not None:
            tb = call.excinfo.traceback
            if len(tb):
                where = f" at {Path(str(tb[-1].path)).name}:{tb[-1].lineno + 1}"
        what = describe_error(exc) if exc is not None else "unknown error"
        if isinstance(exc, AssertionError):   # a bare assert in a case
            first_line = str(exc).splitlines()[0] if str(exc) else "assert"
            sentence = f"assertion failed{where}: {report.cut(first_line, 200)}"
            label = "failure"
        else:
            sentence = f"suite bug{where}: {what}"
            label = "suite bug"
        rep.sections.append((f"forge-conformance: {label} in [{c.id}]",
                             f"[{c.id}] {c.title}\nspec: {c.spec}\n{sentence}\n"
                             + ("this is a bug in the suite, not in the adapter; please report it\n"
                                if label == "suite bug" else "")
                             + f"rerun: {h.settings.rerun_command(c.id)}"))
        text = f"{sentence}\n{rep.longrepr}"
    if call.when == "teardown" and not first:
        return   # the case already failed; a teardown failure adds nothing
    if first:
        run.outcome = "failed"
        run.message = sentence
        run.longrepr = text if isinstance(text, str) else str(text)


def _is_start_failure(exc: BaseException) -> bool:
    from wire.errors import ProviderError, SpawnError
    return isinstance(exc, (ProviderError, SpawnError))


def _evidence_lines(exc: BaseException, sentence: str) -> list[str]:
    if isinstance(exc, CaseFailed):
        lines = [exc.why]
        if exc.expected is not _UNSET:
            lines.append(f"  expected: {report.show(exc.expected, 400)}")
        if exc.got is not _UNSET:
            lines.append(f"  got:      {report.show(exc.got, 400)}")
        extra = sentence[len(exc.sentence):].lstrip("; ")
        if extra:
            lines.append(f"  wire:     {extra}")
        return lines
    return [sentence]


def pytest_keyboard_interrupt(excinfo) -> None:
    if _HARNESS is not None:
        _HARNESS.interrupted = True


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    h = _HARNESS
    if h is None:
        return
    h.close()
    rep = report.build(h.results, selected=h.select or h.collected, collected=h.collected,
                       adapter_argv=h.settings.adapter, interrupted=h.interrupted,
                       duration_s=time.monotonic() - h.started)
    h.report = rep
    for path, writer in ((h.json_path, report.write_json), (h.junit_path, report.write_junit)):
        if path:
            try:
                writer(Path(path), rep)
            except OSError as exc:
                h.notes.append(f"could not write {path}: {exc}")


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    h = _HARNESS
    rep = h.report if h is not None else None
    if rep is None:
        return
    tr = terminalreporter
    tr.write_sep("=", "forge-conformance")
    for line in report.summary_lines(rep, verbose=config.getoption("verbose") > 0):
        tr.write_line(line)
    if h.kept_dir is not None:
        tr.write_line(f"transcripts of the failing cases: {h.kept_dir}")
    elif h.transcripts_dir is not None:
        tr.write_line(f"transcripts: {h.transcripts_dir}")
    for note in h.notes:
        tr.write_line(f"note: {note}")


def pytest_unconfigure(config) -> None:
    global _HARNESS
    if _HARNESS is not None and _HARNESS.config is config:
        _HARNESS.close()
        _HARNESS = None


# ---------------------------------------------------------------- fixtures

def _harness() -> Harness:
    if _HARNESS is None:
        raise RuntimeError("the forge-conformance plugin is not active (run `python3 run`)")
    return _HARNESS


@pytest.fixture(scope="session")
def fx() -> FixtureView:
    """The session's materialized fixture."""
    return _harness().fx()


@pytest.fixture
def fx_mutable() -> FixtureView:
    """A private copy (alpha, beta, FAULTS.json) for a case that writes files."""
    h = _harness()
    view = h.mutable_copy()
    yield view
    shutil.rmtree(view.path, ignore_errors=True)


@pytest.fixture(scope="module")
def _forge_group(request):
    h = _harness()
    name = Path(str(request.path)).stem.removeprefix("test_")
    slot = GroupSlot(h, name)
    yield slot
    slot.retire()
    h.drain()               # every process of the group is gone before the copy is judged
    h.check_fixture(name)   # fails the group's last case if the copy was changed


@pytest.fixture
def adapter(_forge_group: GroupSlot):
    """The group's live, initialized adapter (replaced after a case that leaves it dirty)."""
    h = _harness()
    p = _forge_group.get(h.current)
    yield p
    if p.dirty() is not None:
        _forge_group.retire(wait=False)
    p.case_calls = []


@pytest.fixture
def spawn(fx: FixtureView):
    """Factory for a case's own adapter process; closed after the case."""
    h = _harness()
    made: list = []

    def factory(*, env: dict | None = None, minimal_env: bool = False,
                init_params: dict | None = None, start: bool = True,
                fixture: FixtureView | None = None):
        n = len(made) + 1
        p = new_provider(h.settings, (fixture or fx).path, h.temp, label=f"spawn#{n}",
                         env=env, minimal_env=minimal_env, init_params=init_params)
        made.append(p)
        h.providers.append(p)
        if h.current is not None:
            h.current.attach(p)
        if start:
            p.start()
        return p

    yield factory
    for p in made:
        h.dispose(p, wait=False)
