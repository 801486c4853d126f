"""The deep mutants and controls are documented and kept out of the matrix.

No suite run here (tests/deep_verdicts.py is the report that runs them):
each deep mutant names one owner (a registry id, or the PENDING / UNOWNED
markers), the MUST it breaks and where it hides; each deep control says what
makes it legal; none of their switches collides with the matrix's, so the
matrix stays green while the cases cannot yet catch them.
"""

from __future__ import annotations

from cases.registry import REGISTRY
from tests.adapters.controls import CONTROLS
from tests.adapters.controls_deep import DEEP_CONTROLS
from tests.adapters.mutants import MUTANTS
from tests.adapters.mutants_deep import DEEP, PENDING, UNOWNED, hides_on


def test_each_deep_mutant_has_one_owner():
    known = {c.id for c in REGISTRY} | {PENDING, UNOWNED}
    bad = {m.switch: sorted(m.expected) for m in DEEP.values()
           if len(m.expected) != 1 or not m.expected <= known}
    assert not bad, f"a deep mutant names exactly one owner case: {bad}"


def test_each_deep_mutant_says_what_it_breaks_and_where():
    terse = [m.switch for m in DEEP.values()
             if not getattr(m.hooks, "rule", "") or not hides_on(m) or not m.description]
    assert not terse, f"deep mutants without a rule, a description or a 'Hides on:' line: {terse}"
    weak = [m.switch for m in DEEP.values() if "MUST" not in m.hooks.rule and "RULINGS" not in m.hooks.rule]
    assert not weak, f"a deep mutant breaks a MUST (or a RULINGS reading of one): {weak}"


def test_each_deep_control_says_why_it_is_legal():
    silent = [c.switch for c in DEEP_CONTROLS.values() if not getattr(c.hooks, "legal", "")]
    assert not silent, f"deep controls without a `legal` citation: {silent}"


def test_deep_switches_stay_out_of_the_matrix():
    """A promoted deep mutant left DEEP for the matrix; names never collide."""
    clash = set(DEEP) & set(MUTANTS) | set(DEEP_CONTROLS) & set(CONTROLS) | set(DEEP) & set(DEEP_CONTROLS)
    assert not clash, f"switch names shared with the matrix: {sorted(clash)}"
    pending = [s for s, v in MUTANTS.items() if v.expected & {PENDING, UNOWNED}]
    assert not pending, f"in the matrix without a registry owner: {pending}"


def test_deep_adapter_starts_and_lists_every_switch():
    """tests/mutant_deep.py, the adapter deep_verdicts.py and deep_monitor.py
    start, loads its tables in a fresh interpreter (it once failed at every
    start on an import cycle between the deep modules and the matrix)."""
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parent / "mutant_deep.py"
    done = subprocess.run([sys.executable, "-S", str(script), "--list"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    listed = {line.split()[0] for line in done.stdout.splitlines() if line.strip()}
    assert listed == set(DEEP) | set(DEEP_CONTROLS), sorted(listed ^ (set(DEEP) | set(DEEP_CONTROLS)))
