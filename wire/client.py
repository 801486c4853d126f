"""The wire client for an adapter author's own tests: a short, stable API.

Installed: ``from forge_conformance.wire import client`` (checkout: ``from wire
import client``). It drives an adapter exactly as the suite and the host do,
and needs no pytest.

    spawn(argv, ...)            -> Provider, started and initialized (a context manager)
    p.request(method, params)   -> the result, or raises ProviderError (ProviderTimeout,
                                   ProviderClosed; ``.kind`` is the error kind)
    p.call(method, params)      -> Call (in flight): .result(), .wait(), .outcome, .id
    stream(p, method, params)   -> (items of every $/partial batch, the final reply)
    p.cancel(call)              -> $/cancelRequest for that call (advisory)
    p.respawn()                 -> kill and start the adapter again, re-initialized
    p.kill()                    -> simulated crash; the next call respawns it
    p.transcript                -> every frame both ways: .render(n), .entries(),
                                   .dump_jsonl(path) (replayable with --replay)

The fixture and the reference adapter are the suite's, not the wire's:
``fixture.materialize(dir)`` (a context manager with ``.path``) and
``vendor.REFERENCE_ADAPTER`` (``forge_conformance.fixture`` / ``.vendor`` when
installed).

See README.md "The wire client as a library" for an example to paste.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from wire.errors import ProviderClosed, ProviderError, ProviderTimeout, SpawnError
from wire.transcript import Transcript
from wire.transport import Call, Provider

__all__ = ["spawn", "stream", "Provider", "Call", "Transcript", "ProviderError", "ProviderTimeout",
           "ProviderClosed", "SpawnError"]

# What a configured host sends in initialize (PROTOCOL §2.2) minus cache_dir.
CACHE_BYTES = 268435456


def spawn(argv: list[str], *, env: dict[str, str] | None = None, deadline_s: float = 30.0,
          init_params: dict | None = None, cache_dir: str | Path | None = None,
          respawn: str = "immediate") -> Provider:
    """Start ``argv`` and initialize it; returns the live Provider (close it, or
    use ``with``). ``init_params`` default to a configured host's
    (``protocol``, ``cache_bytes`` and ``cache_dir`` when given). ``respawn``:
    "immediate" rebuilds a dead adapter on the next call; "host" also waits the
    host's backoff ladder. Raises SpawnError or ProviderError."""
    if init_params is None:
        init_params = {"protocol": 1, "cache_bytes": CACHE_BYTES}
        if cache_dir is not None:
            init_params["cache_dir"] = str(cache_dir)
    p = Provider(list(argv), env=env, deadline_s=deadline_s, init_params=init_params,
                 respawn=respawn)
    try:
        p.start()
    except BaseException:
        p.close()
        raise
    return p


def stream(provider: Provider, method: str, params: dict, *,
           on_batch: Callable[[list], None] | None = None,
           inactivity_s: float | None = None) -> tuple[list, Any]:
    """Call ``method`` with ``"partial": true``: returns (every streamed item in
    arrival order, the final reply). ``on_batch`` sees each batch as it comes;
    ``inactivity_s`` is the window each batch re-arms (default: the deadline)."""
    call = provider.call(method, {**params, "partial": True}, inactivity_s=inactivity_s,
                         on_partial=on_batch)
    reply = call.result()
    items = [item for batch in call.partials if isinstance(batch, list) for item in batch]
    return items, reply
