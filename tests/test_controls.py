"""Negative controls: legal adapters the suite must pass (exit 0, no failure).

Each control (tests/adapters/controls/) varies the reference in a way the
protocol allows: slow but steady streaming, serving big blobs whole (the reference refuses them), ignoring
limit or cancel, commit-keyed ids, out-of-order replies, a noisy stderr,
unknown members everywhere, git-style ids; and the deep controls the
lifecycle and revision cases pass (unknown members whose values change,
abbreviated commit ids, login authors, annotated tag objects, UTC and
basic-format dates, no tree branch, a loopback test double, a
proxy-honouring client); and the false-red hunt's (tests/adapters/controls/wire.py:
respelled JSON, progress and log notifications, one hit per batch, reversed
lists, null optionals, null error data, a null icon and cache, kindless
errors, a cold backend, handshake extras,
GitHub-style search pages, millisecond dates, whole-hour offsets, upper-case ids, a 3-commit
default log page, commits without patches, default values left out, an
on-disk blob cache, a cancel cutting a search at once, matches as whole
lines, a 2-file commit budget, log declared alone, merkle directory ids,
lines written in pieces, a hosted forge's https URLs); and what the protocol
leaves to the adapter (tests/adapters/controls/legal.py: org-only
search/repos, path: as a content term, nested ids with the rest refused, an
honest small cut, a shared clone URL, opaque commit ids with
git's refused); paced streams, one
hit a batch 0.3 s apart with cancels ignored or honoured
(tests/adapters/controls/pace.py: their run time is `tests/bench.py pace`'s
to report, not a test's to assert); and
tests/adapters/controls/process.py's (a kept-alive backend connection through
FC-052's proxy, an exit when idle: FC-050 warns). A failure here means
the suite is over-fitted to the reference. Controls that must surface a warning (the
commit-keyed adapter's FC-093) say which cases, and no other case may warn.
"""

from __future__ import annotations

import pytest

from tests import gate
from tests.adapters.controls import CONTROLS

SLEEPY = ("slow-streamer",    # 1.5 s pauses in every stream
          "cold-backend",     # initialize 0.8 s, the first answer 2.5 s late, every process
          "paced-stream", "paced-stream-cancellable")   # 0.3 s before every streamed hit
gate.plan(__name__, lambda items: {f"control:{s}": {"adapter": gate.mutant(s)} for s in CONTROLS},
          sleepy=tuple(f"control:{s}" for s in SLEEPY))


@pytest.fixture
def verdicts(request):
    names = [f"control:{s}" for s in CONTROLS]
    return {n.split(":", 1)[1]: v for n, v in gate.verdicts(request, names).items()}


@pytest.mark.parametrize("switch", sorted(CONTROLS))
def test_control_is_green(verdicts, switch):
    control, verdict = CONTROLS[switch], verdicts[switch]
    assert verdict.code == 0 and verdict.report is not None and not verdict.failed, (
        f"{switch} ({control.description}) must pass\n{verdict.explain()}")
    missing = sorted(control.warns - verdict.warned)
    assert not missing, f"{switch}: expected a warning on {missing}\n{verdict.explain()}"
    # A warning is a verdict too: one no SHOULD of the control's variation
    # explains is a false alarm (FC-050's and FC-031's went unnoticed so).
    unexpected = sorted(verdict.warned - control.warns)
    assert not unexpected, (f"{switch}: warnings on {unexpected}, which the control does not "
                            f"declare (a SHOULD it breaks, or a false alarm)\n{verdict.explain()}")


def test_commit_keyed_warning_names_it(verdicts):
    """FC-093 reports a commit-keyed adapter informationally, never as a failure."""
    verdict = verdicts["commit-keyed"]
    case = verdict.cases.get("FC-093", {})
    assert case.get("outcome") == "passed", verdict.explain()
    assert any("commit-keyed" in str(w) for w in case.get("warnings") or []), verdict.explain()


def test_big_blob_served_whole_passes(verdicts):
    """Serving a >1 MiB blob whole is as legal as refusing it (the reference refuses)."""
    verdict = verdicts["serve-big-blobs"]
    case = verdict.cases.get("FC-023", {})
    assert case.get("outcome") == "passed" and not case.get("warnings"), verdict.explain()
