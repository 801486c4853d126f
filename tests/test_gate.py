"""The gate proves the gate: the nonconforming adapter fails exactly FC-013 and FC-043.

tests/nonconforming.py is the reference with two violations (per-process
salted blob ids; a 4 s silence after the first batch of every stream). A
suite that missed either is under-fitted; one that failed anything else is
over-fitted. The reference itself must be fully green, or the comparison
means nothing.
"""

from __future__ import annotations

import pytest

from fixture import git_available
from tests import gate

NONCONFORMING_FAILS = {"FC-013", "FC-043"}


JOBS = {"gate:nonconforming": {"adapter": gate.script("nonconforming.py")},
        "gate:reference": {"adapter": gate.reference()}}
gate.plan(__name__, lambda items: JOBS, sleepy=("gate:nonconforming",))


@pytest.fixture
def verdicts(request):
    return {n.split(":", 1)[1]: v for n, v in gate.verdicts(request, list(JOBS)).items()}


def test_nonconforming_fails_exactly_fc013_and_fc043(verdicts):
    verdict = verdicts["nonconforming"]
    assert verdict.report is not None, verdict.explain()
    assert verdict.failed == NONCONFORMING_FAILS, (
        f"expected exactly {sorted(NONCONFORMING_FAILS)}, failed {sorted(verdict.failed)}\n"
        f"{verdict.explain()}")
    assert verdict.code == 1, verdict.explain()


def test_nonconforming_failures_say_what_happened(verdicts):
    """Each failure names what went wrong: ids moved across a respawn; the stream went silent."""
    verdict = verdicts["nonconforming"]
    assert "respawn" in verdict.message("FC-013"), verdict.explain()
    assert "timeout" in verdict.message("FC-043"), verdict.explain()


def test_reference_is_green(verdicts):
    verdict = verdicts["reference"]
    assert verdict.code == 0 and not verdict.failed, verdict.explain()
    if git_available():
        assert not verdict.skipped, f"the reference skips nothing when git is present\n{verdict.explain()}"
    # the reference refuses blobs over 1 MiB with kind provider: the preferred outcome, no warning
    # (tests/test_controls.py covers serving them whole)
    assert not verdict.cases["FC-023"].get("warnings"), verdict.explain()
