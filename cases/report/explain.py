"""Failure explanation: one sentence for what an adapter did wrong.

Used by the plugin for anything that escapes a case and by the CLI's
pre-flight (``start_failure``), so a start failure reads the same in both.
An adapter's misbehaviour (ProviderError, SpawnError, ShapeError,
CaseFailed, a tampered fixture) is explained in one sentence with what the
wire saw meanwhile (framing violations, an adapter that had already
exited); anything else is a bug in the suite and keeps its traceback.
"""

from __future__ import annotations

from cases.kit.api import UNSET, CaseFailed
from cases.kit.api import cut, shown as show


class GroupUnavailable(Exception):
    """The group's adapter could not be (re)started earlier in this group."""


class FixtureTampered(Exception):
    """An adapter wrote into the fixture copy it serves (found after a group)."""


def is_adapter_fault(exc: BaseException) -> bool:
    """Failures explained in one sentence (no traceback): the adapter's doing,
    or a fixture that cannot be used."""
    from fixture import FixtureError
    from wire.errors import ProviderError, SpawnError
    from wire.messages import ShapeError
    return isinstance(exc, (CaseFailed, GroupUnavailable, FixtureTampered, ProviderError,
                            ShapeError, SpawnError, FixtureError))


def is_start_failure(exc: BaseException) -> bool:
    from wire.errors import ProviderError, SpawnError
    return isinstance(exc, (ProviderError, SpawnError))


def start_failure(exc: BaseException) -> str:
    """Why an adapter could not be started and initialized, in one sentence
    (the pre-flight's exit-2 line and a case's setup failure)."""
    from wire.errors import ProviderClosed, ProviderError, ProviderTimeout
    if not isinstance(exc, ProviderError):
        return describe(exc)
    if isinstance(exc, ProviderTimeout):
        return f"the adapter never answered initialize within {exc.window_s:g} s"
    if isinstance(exc, ProviderClosed):
        return ("the adapter closed its output before answering initialize"
                + (f" ({exc.detail})" if exc.detail else ""))
    if exc.origin == "adapter":
        kind = exc.raw_kind if isinstance(exc.raw_kind, str) else "no kind"
        return f"the adapter answered initialize with an error ({kind}): {exc.message}"
    return f"the adapter's initialize failed: {exc.message}"


def describe_start(exc: BaseException, run) -> str:
    """``start_failure`` plus what the wire saw from the process that failed."""
    sentence = start_failure(exc)
    provider = run.provider_of(exc) if run is not None else None
    if provider is not None:
        sentence += wire_evidence(provider, run.mark_of(provider), exc)
    return sentence


def describe_error(exc: BaseException, run=None) -> str:
    """One sentence for something the adapter did that escaped a case; with
    the case's ``run`` (cases.harness.session.CaseRun), a failed call also names what
    the wire saw meanwhile (framing violations, an adapter that had already
    exited)."""
    sentence = describe(exc)
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
        sentence += wire_evidence(provider, run.mark_of(provider), exc)
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
            f"\"{cut(bad[0].raw, 80)}\"{more}")


def wire_evidence(provider, since: int, exc: BaseException) -> str:
    """What the wire adds to a failed call: violations, the adapter's exit."""
    from wire.errors import ProviderClosed, ProviderTimeout
    extra = violations(provider, since)
    exited = adapter_exit(provider)
    if isinstance(exc, ProviderTimeout):
        if exited:
            extra += (f"; the adapter had {exited} (a process it left behind kept its "
                      f"output open)")
        elif exc.method == "initialize":   # alive, or killed by the harness after the wait
            extra += "; the adapter was still running: stdout not flushed after each line?"
    elif isinstance(exc, ProviderClosed) and not exc.detail:
        if exited:
            extra += f"; the adapter {exited}"
    return extra


def adapter_exit(provider) -> str | None:
    """How the adapter's process ended when the harness did not end it
    (its own exit or crash), else None (still running, or killed by us)."""
    child = getattr(provider, "child", None)
    if child is not None and getattr(child, "stopped_by_host", False):
        return None
    return provider.exit_description()


def describe(exc: BaseException) -> str:
    """The sentence for ``exc`` alone (no wire evidence)."""
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
                   f"{cut(exc.message, 300)}"
        return f"{what}: {cut(exc.message, 300)}"
    return f"{type(exc).__name__}: {cut(str(exc), 300)}"


def evidence_lines(exc: BaseException, sentence: str) -> list[str]:
    """The evidence block of a failure text: why, expected, got, wire."""
    if isinstance(exc, CaseFailed):
        lines = [exc.why]
        if exc.expected is not UNSET:
            lines.append(f"  expected: {show(exc.expected, 400)}")
        if exc.got is not UNSET:
            lines.append(f"  got:      {show(exc.got, 400)}")
        extra = sentence[len(exc.sentence):].lstrip("; ")
        if extra:
            lines.append(f"  wire:     {extra}")
        return lines
    return [sentence]
