"""Path mutants, part a: for a case that had only its first-sample mutant, a
mutant that breaks the same MUST where the case does not look first (another
repository, ref, commit, file, batch, method, generation or moment), promoted
into the matrix (``@promoted``), each failing exactly its owner.

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

from tests.adapters.mutants_deep import promoted  # noqa: F401
from tests.adapters.proxy import Hooks  # noqa: F401
