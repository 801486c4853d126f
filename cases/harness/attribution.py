"""Which case's defect ended a generation a case needed (RULINGS
"Attribution": when a case's evidence is another case's defect, the case
skips naming that case; one defect, one red).

Two defects end a generation under a case's feet, whatever the case asks:

* a frame the host treats as the end of the output (invalid UTF-8, PROTOCOL
  §1.2, §7.2): every request in flight on it dies; the owner is the one the
  protocol monitor's rule has (cases/judges/monitoring.py ``owner_of``);
* a respawn whose initialize failed (an error, a refused protocol, a reply
  that is not a handshake): the generation the case needed never served.
  The owner is that of a handshake rule the monitor saw broken on that
  reply (judged on every generation), else the registry's owner of
  "answering initialize after a respawn".

A case that fails while one of its processes lost a generation that way
during the case is reported skipped, not evaluated, naming the owner; the
owner itself still fails (its own judgement, or the monitor's verdict at the
end of the run). When the owner is not in the run (`--case` chose others),
the failure stays: nobody else would report the defect. The pytest hook below turns the failure into that skip
before the plugin (cases/harness/plugin.py) records the outcome.
"""

from __future__ import annotations

import pytest

from cases.kit import api
from cases.judges import monitoring
from cases import registry
from wire import monitor as m


def judged_here(owner: str) -> bool:
    """Whether ``owner`` is judged in this run (selected, collected, not
    deselected): only then can a case leave the defect to it. A run of other
    cases alone keeps their failures, or a broken adapter would be green."""
    session = api.session()
    if session is None:
        return False
    chosen = session.select or session.collected
    return owner in chosen and owner not in session.deselected


def ended_by(run) -> str | None:
    """The not-evaluated reason for ``run`` (cases.harness.session.CaseRun) when one of
    its processes lost a generation during it to a defect another case owns
    and this run judges; None when none did (or the running case owns every
    such defect, or its owner is not in this run)."""
    if run is None:
        return None
    for provider, mark in run.attached:
        label = getattr(provider, "label", "adapter")
        for finding in provider.findings:
            if finding.rule not in m.ENDS_GENERATION or (finding.seq or 0) < mark:
                continue
            owner = monitoring.owner_of(finding)
            if owner is not None and owner != run.case.id and judged_here(owner):
                return (f"not evaluated: generation {finding.generation} of {label} was ended by "
                        f"{owner}'s defect ({finding.detail}); what this case asked of it died "
                        f"with it")
        for start in getattr(provider, "failed_starts", ()):
            if start.initial or start.seq < mark:
                continue
            owner, why = respawn_owner(provider, start.generation)
            if owner != run.case.id and judged_here(owner):
                return (f"not evaluated: the respawned generation {start.generation} of {label} "
                        f"never served ({start.reason}), by {owner}'s defect ({why})")
    return None


def respawn_owner(provider, generation: int) -> tuple[str, str]:
    """(owner, what it owns) of a failed respawn of ``generation``: a MUST
    handshake rule the monitor saw broken on its initialize reply, else the
    registry's owner of answering initialize after a respawn."""
    for finding in provider.findings:
        if (finding.generation == generation and finding.method == "initialize"
                and finding.strength == "must"):
            owner = monitoring.owner_of(finding)
            if owner is not None:
                return owner, finding.detail
    return registry.owner_of("answering initialize after a respawn is"), \
        "a respawned generation answers initialize"


@pytest.hookimpl(hookwrapper=True, trylast=True)
def pytest_runtest_makereport(item, call):
    """A case's failure in setup or call, while a generation it needed was
    ended by another case's defect, becomes that not-evaluated skip."""
    outcome = yield
    rep = outcome.get_result()
    if not rep.failed or call.when not in ("setup", "call"):
        return
    reason = ended_by(api.running())
    if reason is None:
        return
    rep.outcome = "skipped"
    rep.longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {reason}")
