"""The run's settings: the adapter command and the knobs, read from the
environment once and strictly.

``Settings.from_env`` reads FORGE_PROVIDER / PROVIDER (or the argv after
``--``), FORGE_ORG, FORGE_DEADLINE_S, FORGE_INACTIVITY_S, FORGE_NO_APPEND,
FORGE_NO_FAULTS and FORGE_FIXTURE_ROOT, and raises UsageError for a bad one.
Case code reads the session's knobs through ``active()`` (the Settings the
harness built, so there is no second parse): ``active().inactivity_s``.
"""

from __future__ import annotations

import math
import os
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from cases.kit.exits import UsageError  # noqa: F401  (a bad knob: the run cannot start, exit 2)
from cases.kit.invocation import ROOT

REPO_ROOT = Path(ROOT)   # the checkout or the installed package (cases/kit/invocation.py)
REFERENCE_ADAPTER = REPO_ROOT / "vendor" / "fs_provider.py"

# What a configured host sends (the cases' group adapters): PROTOCOL §2.2.
CACHE_BYTES = 268435456
# <name> of the cache_dir handed to adapters: <root>/rootle/providers/<name>,
# the host's layout (RULINGS "Process behaviour"; FC-055 judges the root).
CACHE_PROVIDER = "forge"
# The named window for rules about absence (FC-054, FC-122: an answer to a
# notification must come before the next request to be theirs): the only
# wait in a case that is not an event (RULINGS "Timing"). FC-041 keeps none:
# a late $/partial names its request, so the monitor's TAIL_S finds it.
SILENCE_S = 0.5
# The second window about absence: before a group's adapter is retired, the
# run-wide monitor watches it this long after its last streamed reply or
# notification, so a $/partial after a reply (FC-041) or an answer to a
# notification (FC-054, FC-122) that comes late is still seen. Waited only
# for what is left of it when the group's own cases did not already fill it.
TAIL_S = 1.5
PLACEHOLDER = "{fixture}"
KNOBS = ("FORGE_ORG", "FORGE_DEADLINE_S", "FORGE_INACTIVITY_S", "FORGE_NO_APPEND",
         "FORGE_NO_FAULTS", "FORGE_FIXTURE_ROOT")


# A compiled reference nobody started for this long is pruned when another is written.
STALE_REFERENCE_BYTECODE_S = 7 * 86400


def reference_argv() -> list[str]:
    """The argv that starts the reference, fixture dir not yet appended.

    A run starts the reference about 30 times, and Python never caches a
    script's bytecode: compiling its 1,600 lines was 14 ms of each ~34 ms
    start. So when the suite has a bytecode folder of its own
    (cases.kit.invocation.private_bytecode_folder), the script is compiled once
    into ``<folder>/reference/fs_provider.<tag>.<digest>.pyc``, keyed by its
    bytes and the interpreter, and that file is what Python runs (a .pyc given
    as the script runs as the script would: ``__main__``, the same argv after
    it, tracebacks naming the .py's lines). Reports and rerun lines still name
    vendor/fs_provider.py; FORGE_FIXTURE_CACHE=off, or no private folder,
    starts the .py itself."""
    plain = [sys.executable, "-S", str(REFERENCE_ADAPTER)]
    from cases.kit.invocation import private_bytecode_folder
    where = private_bytecode_folder()
    if where is None:
        return plain
    try:
        compiled = _compiled(REFERENCE_ADAPTER, os.path.join(where, "reference"))
        return [sys.executable, "-S", compiled]
    except (OSError, SyntaxError, ValueError):
        return plain


def _compiled(source: Path, folder: str) -> str:
    import hashlib
    import importlib.util
    import py_compile
    import time

    data = source.read_bytes()
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER + data).hexdigest()[:24]
    tag = sys.implementation.cache_tag or "python"
    target = os.path.join(folder, f"{source.stem}.{tag}.{digest}.pyc")
    try:
        os.utime(target)          # in use: not stale for another run's pruning
        return target
    except FileNotFoundError:
        pass
    os.makedirs(folder, mode=0o700, exist_ok=True)
    st = os.stat(folder)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise ValueError(f"{folder} is not ours alone")
    fd, tmp = tempfile.mkstemp(prefix=".compiling-", suffix=".pyc", dir=folder)
    os.close(fd)
    try:
        py_compile.compile(str(source), cfile=tmp, dfile=str(source), doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)
        if source.read_bytes() != data:    # the digest must name what was compiled
            raise ValueError(f"{source} changed while it was compiled")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    now = time.time()
    for name in os.listdir(folder):
        path = os.path.join(folder, name)
        try:
            if path != target and now - os.stat(path).st_mtime > STALE_REFERENCE_BYTECODE_S:
                os.unlink(path)
        except OSError:
            pass
    return target




def _seconds(environ, name: str, default: float) -> float:
    text = environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(f"{name} must be a positive number of seconds, got {text!r}")
    return value


def _flag(environ, name: str) -> bool:
    return environ.get(name, "").strip().lower() not in ("", "0", "false", "no", "off")


class Settings:
    """The adapter command and the knobs, read from the environment once."""

    def __init__(self, adapter: list[str] | None, environ=None):
        env = os.environ if environ is None else environ
        self.reference = not adapter
        # The reference is stdlib-only, so it starts without site (-S): a run
        # starts it about 30 times, and site costs 2-3 ms of CPU of each ~40 ms start.
        self.adapter = list(adapter) if adapter \
            else [sys.executable, "-S", str(REFERENCE_ADAPTER)]
        self._spawn: list[str] | None = None   # the reference's: reference_argv(), on first use
        self.org = env.get("FORGE_ORG", "").strip() or "local"
        self.deadline_s = _seconds(env, "FORGE_DEADLINE_S", 30.0)
        self.inactivity_s = _seconds(env, "FORGE_INACTIVITY_S", 2.0)
        self.no_append = _flag(env, "FORGE_NO_APPEND")
        self.no_faults = _flag(env, "FORGE_NO_FAULTS")
        self.fixture_root = Path(env["FORGE_FIXTURE_ROOT"]) if env.get("FORGE_FIXTURE_ROOT") \
            else None   # tests only: a copy of fixture/ to verify and copy instead
        self._environ = env
        self.rerun_options: list[str] = []   # run options a rerun must repeat (--strict)

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
        if self._spawn is None:
            self._spawn = reference_argv() if self.reference else self.adapter
        used = any(PLACEHOLDER in a for a in self._spawn)
        argv = [a.replace(PLACEHOLDER, str(fixture_dir)) for a in self._spawn]
        if not used and not self.no_append:
            argv.append(str(fixture_dir))
        return argv

    def adapter_env(self, fixture_dir: Path, *,
                    extra: dict[str, str] | None = None) -> dict[str, str]:
        """The adapter's environment: the suite's own, credentials scrubbed
        (all the protocol removes), the contract variables always set,
        ``extra`` on top."""
        from wire.process import scrub_env
        base = dict(self._environ)
        base.update({"FORGE_FIXTURE_DIR": str(fixture_dir), "FORGE_ORG": self.org})
        if extra:
            base.update(extra)
        return scrub_env(base)

    def knob_prefix(self) -> str:
        """The non-default knobs as ``NAME=value`` words for a rerun command."""
        words = []
        for name in KNOBS:
            value = self._environ.get(name, "").strip()
            if value:
                words.append(f"{name}={shlex.quote(value)}")
        return " ".join(words)

    def rerun_command(self, case_id: str | None = None) -> str:
        """The exact command that reruns ``case_id`` (or everything) against this adapter."""
        from cases.kit import invocation
        parts = [self.knob_prefix(), invocation.command(), *self.rerun_options]
        if case_id:
            parts.append(f"--case {case_id}")
        if not self.reference:
            parts.append("-- " + shlex.join(self.adapter))
        return " ".join(p for p in parts if p)


def active() -> Settings:
    """The session's Settings (the harness attaches its session to the case
    API, cases/kit/api.py); outside a session, the environment's, read anew."""
    from cases.kit import api
    session = api.session()
    return session.settings if session is not None else Settings.from_env()


# ------------------------------------------------------------------ temp area

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
