"""The conformance suite: cases, and the harness that runs them against an adapter.

Where things go. A new case is its row in ``registry.REGISTRY`` plus one
``@case("FC-nnn")`` function in ``cases/test_<group>.py`` (reading replies
through ``cases.kit.replies`` / ``wire.messages.read`` and naming other cases'
rules with ``owner(...)`` from ``registry.OWNERS``) plus its line under "Cases
added" of CHANGELOG.md's newest section (a case that fails more or less than
before gets its line there too). A new mutant is one
hook class in ``tests/adapters/`` registered with ``@mutant(switch, "FC-nnn")``
(its docstring's first paragraph is its only description; then run
``python3 tests/mutant.py --update-wording``). A new fixture fact is a name in
``fixture/catalog.py`` (with its bytes under ``fixture/`` and its line in
FIXTURES.md) and, when it is computed from the bytes or from git, a function
in ``cases/kit/facts.py`` or ``cases/kit/gitfacts.py``.

Modules: ``api`` (case, fc_assert, fail, warn, skip, need, owner, show,
listing), ``settings`` (the knobs, read once), ``replies`` (requests and
their replies through the models), ``facts`` / ``gitfacts`` (expectations),
``formats`` (base64, ISO-8601), ``netwatch`` (FC-052's instruments),
``null_params`` (optional params asked null and absent, run-wide),
``explain`` (failure sentences), ``fixture_view``, ``providers``, ``harness``
and ``plugin`` (the pytest side; ``worker``: a --jobs worker's), ``finish``
(the end of a run), ``report``, ``cli`` (``jobs``: the --jobs parent),
``stopping`` (the stop path), ``entry`` and ``exits`` (entry points, exit
codes), ``registry``.
"""
