"""cases/harness/attribution.py: which case's defect ended a generation a case needed.

The owners come from the registry and the monitor's table, never spelled
here; the one-defect mutants (``respawn-*``, ``latin1-*``, ``log-drops-root``...
in tests/adapters/mutants/) run the whole path.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from cases.harness import attribution
from cases.kit import api
from cases.judges import monitoring
from cases import registry
from wire import monitor as m
from wire.monitor import Finding
from wire.transport import FailedStart

MARK = 10


def session_of(selected) -> SimpleNamespace:
    return SimpleNamespace(select=list(selected), collected=[], deselected=set())


@pytest.fixture(autouse=True)
def every_case_in_the_run(monkeypatch):
    """A run of the whole matrix (the owner of every defect is judged)."""
    monkeypatch.setattr(api, "session", lambda: session_of(c.id for c in registry.REGISTRY))


def run_of(case_id: str, *, findings=(), failed_starts=()):
    provider = SimpleNamespace(label="adapter", findings=list(findings),
                               failed_starts=list(failed_starts))
    return SimpleNamespace(case=registry.by_id(case_id), attached=[(provider, MARK)])


def utf8(seq: int) -> Finding:
    return Finding(m.STDOUT_UTF8, "a line on stdout is not valid UTF-8", 2, seq=seq)


def other_case(owner: str) -> str:
    return next(c.id for c in registry.REGISTRY if c.id != owner)


def test_a_fatal_frame_during_the_case_names_its_owner():
    owner = monitoring.owner_of(utf8(MARK))
    reason = attribution.ended_by(run_of(other_case(owner), findings=[utf8(MARK)]))
    assert reason is not None and f"{owner}'s defect" in reason and "generation 2" in reason


def test_an_owner_outside_the_run_leaves_the_failure_standing(monkeypatch):
    """`--case` chose others: the case keeps its failure, or nobody would
    report the defect (a broken adapter green)."""
    owner = monitoring.owner_of(utf8(MARK))
    case = other_case(owner)
    monkeypatch.setattr(api, "session", lambda: session_of([case]))
    assert attribution.ended_by(run_of(case, findings=[utf8(MARK)])) is None
    start = FailedStart(3, "initialize answered an error", MARK + 1, False)
    respawn_owner = registry.owner_of("answering initialize after a respawn is")
    case = other_case(respawn_owner)
    monkeypatch.setattr(api, "session", lambda: session_of([case]))
    assert attribution.ended_by(run_of(case, failed_starts=[start])) is None


def test_the_owner_itself_is_not_skipped():
    owner = monitoring.owner_of(utf8(MARK))
    assert attribution.ended_by(run_of(owner, findings=[utf8(MARK)])) is None


def test_a_fatal_frame_before_the_case_is_not_its_evidence():
    owner = monitoring.owner_of(utf8(MARK))
    assert attribution.ended_by(run_of(other_case(owner), findings=[utf8(MARK - 1)])) is None


def test_a_failed_respawn_names_the_registry_owner():
    owner = registry.owner_of("answering initialize after a respawn is")
    start = FailedStart(3, "initialize answered an error", MARK + 1, False)
    reason = attribution.ended_by(run_of(other_case(owner), failed_starts=[start]))
    assert reason is not None and f"{owner}'s defect" in reason and "generation 3" in reason
    assert attribution.ended_by(run_of(owner, failed_starts=[start])) is None


def test_a_failed_respawn_with_a_broken_handshake_names_that_rule_owner():
    broken = Finding(m.HANDSHAKE_PROTOCOL, "initialize result: protocol 2, not 1", 3,
                     method="initialize", seq=MARK + 1)
    owner = monitoring.owner_of(broken)
    start = FailedStart(3, "unsupported provider protocol 2", MARK + 2, False)
    reason = attribution.ended_by(run_of(other_case(owner), findings=[broken],
                                         failed_starts=[start]))
    assert reason is not None and f"{owner}'s defect" in reason


def test_a_failed_first_start_is_not_a_respawn():
    owner = registry.owner_of("answering initialize after a respawn is")
    start = FailedStart(1, "initialize answered an error", MARK + 1, True)
    assert attribution.ended_by(run_of(other_case(owner), failed_starts=[start])) is None


def test_no_running_case():
    assert attribution.ended_by(None) is None
