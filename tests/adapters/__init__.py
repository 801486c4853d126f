"""Adapters the self-tests run the suite against.

Every one is the reference adapter (vendor/fs_provider.py) behind a proxy
(``proxy.py``) with a small set of hooks that change one behaviour:

- ``mutants.py``: one defect per switch, each with the exact set of cases it
  must fail (the mutant matrix, tests/test_mutants.py);
- ``controls.py``: legal variations that must stay fully green
  (tests/test_controls.py);
- ``gates.py``: the nonconforming and incapable adapters (tests/test_gate.py,
  tests/test_capability_gating.py).

Run one with ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

# Whether importing mutants.py or controls.py also imports every module that
# registers into their tables (the default: --list, the matrix, wording).
# tests/mutant.py turns it off to load only the module that defines the
# switch it runs (tests/adapters/INDEX.txt): a test adapter starts dozens of
# times a run, and the other modules' imports were a third of its start.
FULL_TABLES = True
