"""The case API: what a case module calls to judge an adapter.

``case`` binds a test function to its registry row; ``fc_assert`` / ``fail``
fail the running case with its evidence (expected vs got), ``warn`` attaches
a warning, ``skip`` skips it citing its id. ``show`` / ``shown`` / ``cut`` put evidence into
a sentence (the reports use them too); ``case_text`` is the one shape of a
case's failure text, for the plugin, the reports and the run-wide monitor's
verdicts alike. ``need`` skips a case as not
evaluated when its evidence is missing because of a defect another case
owns, and ``owner(topic)`` names that case from the registry's OWNERS
(RULINGS "Attribution": one defect, one case).

The harness tells this module its session (``attach`` / ``detach``), whose
``current`` is the running case; the module keeps no run state of its own (the
session lives on its pytest config). Nothing here knows about processes or pytest hooks.
"""

from __future__ import annotations

import contextvars
from typing import Any, Callable, Iterable

from cases import registry
from cases.registry import Case


class _Unset:
    def __repr__(self) -> str:
        return "<unset>"


UNSET: Any = _Unset()


class CaseFailed(AssertionError):
    """A case's check failed: ``[FC-010] title — why: expected …, got …``."""

    def __init__(self, why: str, expected: Any = UNSET, got: Any = UNSET,
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
        if self.expected is not UNSET:
            bits.append(f"expected {shown(self.expected)}")
        if self.got is not UNSET:
            bits.append(f"got {shown(self.got)}")
        return self.why + (": " + ", ".join(bits) if bits else "")

    def __str__(self) -> str:
        if self.case is None:
            return self.sentence
        return f"[{self.case.id}] {self.case.title} — {self.sentence}"


# The pytest session whose case code runs in this context (cases.harness.session.Harness),
# or None: its ``settings`` (the knobs, cases/kit/settings.py ``active``) and ``current``
# (the running case's record, a CaseRun: .case, .warnings, .attached). Case code (fail,
# warn, the knob windows, faults_disabled) and the run-wide judges reach it with no
# handle. The session itself is kept on its pytest config; this variable only points at
# it, per execution context: the plugin sets it when a session is configured and resets
# it to what it was when that session ends, so a second session in the process (one run
# inside another, or one per thread) never sees or clears another's.
_SESSION: contextvars.ContextVar[Any] = contextvars.ContextVar("forge_session", default=None)


def attach(session: Any) -> contextvars.Token:
    """The harness, as a session is configured: ``session`` is the one case code
    reaches from here on; returns the token that ``detach`` takes when it ends."""
    return _SESSION.set(session)


def detach(token: contextvars.Token) -> None:
    """The harness, as a session ends: the session before it (None: none) again."""
    _SESSION.reset(token)


def session() -> Any:
    return _SESSION.get()


def running() -> Any:
    """The running case's record, or None between cases and outside a session."""
    active = _SESSION.get()
    return active.current if active is not None else None


def _current_case() -> Case | None:
    run = running()
    return run.case if run is not None else None


def case(case_id: str) -> Callable:
    """Bind a test function to its registry entry (one function per id)."""
    entry = registry.by_id(case_id)

    def bind(fn):
        fn.forge_case = entry
        return fn
    return bind


def fail(why: str, expected: Any = UNSET, got: Any = UNSET) -> None:
    """Fail the running case: why, and the evidence (expected vs got)."""
    raise CaseFailed(why, expected, got, _current_case())


def fc_assert(cond: Any, expected: Any = UNSET, got: Any = UNSET, why: str = "") -> None:
    """Fail the running case unless ``cond`` holds."""
    if not cond:
        raise CaseFailed(why, expected, got, _current_case())


def warn(text: str) -> None:
    """Attach a warning to the running case (reported, never fails)."""
    run = running()
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
    import pytest   # (here: the CLI's pre-flight uses this module's failures without pytest)
    pytest.skip(reason)


def owner(topic: str) -> str:
    """"<topic> FC-nnn's" (``owner("tree replies are")`` -> "tree replies are
    FC-020's"): the owner looked up in registry.OWNERS, for the tail of a
    not-evaluated skip reason. KeyError for a topic nobody owns."""
    return f"{topic} {registry.owner_of(topic)}'s"


def need(evidence: Any, what: str, whose: str | None = None) -> None:
    """Skip the running case as not evaluated unless ``evidence`` is truthy.

    ``what`` says what is missing, ``whose`` whose rule that is (an
    ``owner(...)`` sentence, or None when no case's defect explains it), e.g.
    "[FC-021] not evaluated: repo/tree {"repo": "local/alpha", "ref": null}
    listed none of the 25 paths on disk (coverage is FC-020's)"."""
    if not evidence:
        skip(f"not evaluated: {what}" + (f" ({whose})" if whose else ""))


def show(value: Any, limit: int = 160) -> str:
    """A value as evidence inside a case's sentence: compact JSON, strings quoted."""
    return shown(value, limit, quote=True)


def case_text(case: Case, body: list[str], rerun: str) -> str:
    """A case's failure text: ``[FC-nnn] title``, ``spec: ...``, ``body``,
    ``rerun: <command>``."""
    return "\n".join([f"[{case.id}] {case.title}", f"spec: {case.spec}", *body,
                      f"rerun: {rerun}"])


def cut(text: Any, limit: int) -> str:
    """``text`` cut to ``limit`` characters, an ellipsis marking the cut."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def shown(value: Any, limit: int = 200, *, quote: bool = False) -> str:
    """Evidence for a message (a case's, a report's): compact JSON, strings as
    written unless ``quote`` (a case telling "1" from 1 quotes them)."""
    if isinstance(value, str) and not quote:
        return cut(value, limit)
    import json
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=repr)
    except (TypeError, ValueError):
        text = repr(value)
    return cut(text, limit)


def listing(items: Iterable[Any], limit: int = 6) -> str:
    """'a, b, c (and 4 more)' for a collection of evidence items."""
    items = sorted(str(i) for i in items)
    head = ", ".join(items[:limit])
    return head + (f" (and {len(items) - limit} more)" if len(items) > limit else "")
