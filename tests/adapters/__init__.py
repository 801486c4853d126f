"""Adapters the self-tests run the suite against.

Every one is the reference adapter (vendor/fs_provider.py) behind a proxy
(``proxy.py``) with a small set of hooks that change one behaviour:

- ``mutants/``: one defect per switch, each with the exact set of cases it
  must fail (the mutant matrix, tests/test_mutants.py), filed by the case
  group it breaks: ``mutants/<group>.py`` beside cases/test_<group>.py;
- ``controls/``: legal variations that must stay fully green
  (tests/test_controls.py), filed by the kind of variation;
- ``mutants_deep.py`` / ``controls_deep.py``: deep variants outside the
  matrix (tests/deep_verdicts.py); ``mutants_explore.py``: the explorer's
  mutants (tests/test_explore.py);
- ``common.py``: hook helpers several tables share (the general ones are
  in ``hooks.py`` and ``proxy.py``);
- ``gates.py``: the nonconforming and incapable adapters (tests/test_gate.py,
  tests/test_capability_gating.py).

Run one with ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""
