"""The provider factory: one adapter spawn as the cases drive it.

``new_provider`` builds a CaseProvider (not started) with its own
transcript, stderr file and private cache dir, initialized like a configured
host unless a case asks otherwise. A CaseProvider remembers the calls of the
running case, so the harness can see a timeout a case caught and replace a
process that must not serve the next case.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cases.judges.claims import ClaimsMonitor
from cases.kit.settings import CACHE_BYTES, CACHE_PROVIDER, Settings
from wire.messages import Capabilities, InitializeResult, structure
from wire.transport import Provider


class CaseProvider(Provider):
    """A Provider that remembers the calls of the running case and exposes
    the handshake."""

    label = "adapter"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.case_calls: list = []
        # The generations the suite itself retired, and why (``retire_stream``):
        # exits it asked for, never an adapter's crash; the harness notes them.
        self.retired: list[tuple[int, str]] = []

    def call(self, method, params, **kw):
        c = super().call(method, params, **kw)
        self.case_calls.append(c)
        return c

    @property
    def init_result(self) -> dict | None:
        """Generation 1's initialize result as sent (FC-001..004 judge it raw)."""
        return self.init_results[0] if self.init_results else None

    @property
    def caps(self) -> Capabilities:
        """The effective capabilities, read like the host reads them."""
        init = self.init_result
        if not isinstance(init, dict):
            return Capabilities()
        return structure(init, InitializeResult).capabilities

    def retire_stream(self, call, why: str) -> None:
        """A case stopped waiting for ``call``'s stream, which the adapter may
        go on sending (a cancel is advisory, PROTOCOL §5.4): stop this process
        and start a fresh generation for whatever comes next. The stream's
        frames seen so far stay with the run-wide judges (a cut stream is no
        missing reply and claims no truncation: cases.judges.claims ``abandon``)."""
        generation = self.generation
        self.retired.append((generation, f"search/code #{call.id}: {why}"))
        self.transcript.event(f"harness retires generation {generation} (a stream it stopped "
                              f"reading)", generation=generation)
        try:
            if self.alive:
                self.respawn()
        finally:   # the old generation's reader is done: every frame it saw is recorded
            if isinstance(self.monitor, ClaimsMonitor):
                self.monitor.abandon(call.generation, call.id)

    def dirty(self) -> str | None:
        """Why this process must not serve the next case, or None."""
        if not self.alive:
            return "the adapter is dead"
        if self.in_flight:
            return f"{self.in_flight} call(s) still in flight"
        if any(c.outcome == "timeout" for c in self.case_calls):
            return "a call timed out"
        return None


def new_provider(settings: Settings, fixture_dir: Path, temp: Path, *, label: str,
                 env: dict | None = None,
                 init_params: dict | None = None) -> CaseProvider:
    """One adapter spawn (not started) with its own transcript, stderr file and
    private cache dir (in the host's layout); init params default to a configured host's."""
    # The host's layout (RULINGS "Process behaviour"): <root>/rootle/providers/<name>
    cache = Path(tempfile.mkdtemp(prefix=f"cache-{label}-", dir=temp)) / "rootle" / "providers" \
        / CACHE_PROVIDER
    cache.mkdir(parents=True)
    if init_params is None:
        init_params = {"protocol": 1, "cache_bytes": CACHE_BYTES, "cache_dir": str(cache)}
    # XDG_CACHE_HOME is that same <root>: an adapter that finds its cache
    # there (a process started without cache_dir, a fallback) writes where the
    # run looks (FC-055), never into the user's own cache.
    extra = {"XDG_CACHE_HOME": str(cache.parents[2]), **(env or {})}
    stderr_dir = Path(tempfile.mkdtemp(prefix=f"stderr-{label}-", dir=temp))
    p = CaseProvider(settings.argv_for(fixture_dir),
                     env=settings.adapter_env(fixture_dir, extra=extra),
                     deadline_s=settings.deadline_s, init_params=init_params,
                     stderr_dir=stderr_dir, monitor=ClaimsMonitor(fixture_dir))
    p.label = label
    p.cache_root = cache.parents[1]   # <root>/rootle: the host's cache root
    return p
