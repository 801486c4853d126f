"""The mutant matrix: one small, documented defect per switch.

``MUTANTS`` maps a switch to its Variant: the hook set, the exact set of case
ids the suite must fail against it (``expected``) and a one-line description
(the first docstring line of its hook class). Every id of cases.registry.REGISTRY
needs at least one mutant whose expected set is exactly that id
(tests/test_mutants.py enforces it). Where one defect honestly breaks two
related cases the expectation names both and the hook's docstring says why.

The mutants are filed by what they break: ``mutants/<group>.py`` holds those
whose expected case is in cases/test_<group>.py, each module a table
(``TABLE``, filled by its ``@mutant`` / ``@promoted`` decorators). A new
mutant goes into the module of its case's group; a new group's module is
added to ``MODULES``.

A test adapter process imports its switch's table module alone
(tests/adapters/INDEX.txt): what few hooks need (datetime, socket,
subprocess, pathlib) they import where used (see tests/adapters/proxy.py).

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

from tests.adapters.hooks import Variant, gather

MUTANTS: dict[str, Variant]   # built on first use (below)

# the table modules, one per case group (cases/test_<group>.py)
MODULES = ("handshake", "content_ids", "trees", "search", "streaming", "lifecycle", "errors",
           "bounded", "revisions", "commits", "roundtrips", "listings", "icons", "transport")


def __getattr__(name: str):
    """``MUTANTS``, gathered on first use: tests/mutant.py imports one table
    module alone (a test adapter starts dozens of times a run)."""
    if name == "MUTANTS":
        global MUTANTS
        MUTANTS = gather(__name__, MODULES)
        return MUTANTS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
