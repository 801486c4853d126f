"""Negative controls: legal variations of the reference the suite must pass.

``CONTROLS`` maps a switch to its Variant: the hook set, a one-line
description (the hook class's first docstring line), and the case ids that
must carry a warning (``warns``). A control is fully green: exit 0 and no
failed case. An over-fitted suite, one that fails an adapter for something
the protocol allows, shows up here.

The controls are filed by the kind of legal variation they exercise, each
module a table (``TABLE``): ``legal`` (what the protocol leaves to the
adapter: matching, id grammar, pacing of replies, optional members),
``wire`` (what a real backend may vary on the wire), ``backend`` (a real
backend's habits: dates, commit ids, authors, its own test doubles),
``pace`` (slow paced streams) and ``process`` (the adapter process's life).
A new control goes into the module of its kind; a new module is added to
``MODULES``.

Run one: ``python3 tests/mutant.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

from tests.adapters.hooks import Variant, gather

MODULES = ("legal", "wire", "backend", "pace", "process")

CONTROLS: dict[str, Variant]   # built on first use (below)


def __getattr__(name: str):
    """``CONTROLS``, gathered on first use (as MUTANTS: tests/adapters/mutants/__init__.py)."""
    if name == "CONTROLS":
        global CONTROLS
        CONTROLS = gather(__name__, MODULES)
        return CONTROLS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
