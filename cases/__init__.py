"""The conformance suite: cases, and the harness that runs them against an adapter.

Where things go. A new case is its row in ``registry.REGISTRY`` plus one
``@case("FC-nnn")`` function in ``cases/test_<group>.py`` (reading replies
through ``cases.kit.replies`` / ``wire.messages.read`` and naming other cases'
rules with ``owner(...)`` from ``registry.OWNERS``) plus its line under "Cases
added" of CHANGELOG.md's newest section (a case that fails more or less than
before gets its line there too). A new mutant is one
hook class in ``tests/adapters/mutants/<group>.py`` (the group of its case)
registered with ``@mutant(switch, "FC-nnn")`` (its docstring's first paragraph is its only description; then run
``python3 tests/mutant.py --update-wording``). A new fixture fact is a name in
``fixture/catalog.py`` (with its bytes under ``fixture/`` and its line in
FIXTURES.md) and, when it is computed from the bytes or from git, a function
in ``cases/kit/facts.py`` or ``cases/kit/gitfacts.py``.

The house, every arrow pointing down (tests/test_house.py keeps it so):
``cli/`` (options, entry points, the --jobs parent, --replay) over
``explore/`` (--explore, which may reuse the cases' judges), over ``harness/``
(the pytest plugin, the session and its run order, adapter slots, a --jobs
worker, the stop path, the end of a run) and the case modules, over
``judges/`` (run-wide verdicts) and ``report/`` (reports, failure sentences,
the known-failures policy, the matrix digest), over ``kit/`` (what a case
imports: the case API, replies, facts, formats; and the settings, the
launcher, the exit codes), over ``registry`` (the matrix and the one
ownership table), wire/ and fixture/. The case modules ``test_<group>.py``
sit beside the harness that runs them (it loads them by name, never imports them).
No module keeps a run's state: a session keeps it on its pytest config, and
the case API points at it per execution context (tests/test_run_state.py).
"""
