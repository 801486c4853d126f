"""Deep controls: legal adapters, each a variation a real backend produces, the suite must pass.

``DEEP_CONTROLS`` maps a switch to its Variant (``warns``: cases that may or
must carry a warning, never a failure). Each hook class has ``legal``: the
PROTOCOL.md / RULINGS.md text that makes the variation legal. They are not
in CONTROLS (tests/test_controls.py) because today's suite fails them;
``python3 tests/deep_verdicts.py`` reports where. One the suite passes moves
to a controls table (tests/adapters/controls/<topic>.py, ``@kept`` there
keeps its ``legal``) and leaves DEEP_CONTROLS: today every deep control has.

Run one: ``python3 tests/mutant_deep.py <switch> <fixture-dir>``.
"""

from __future__ import annotations

from tests.adapters.hooks import Variant, registrar

DEEP_CONTROLS: dict[str, Variant] = {}
_register = registrar(DEEP_CONTROLS)


def control(switch: str, legal: str, warns: tuple[str, ...] = ()):
    """Register a deep control carrying ``legal``."""
    def add(cls):
        cls.legal = legal
        return _register(switch, warns=warns)(cls)
    return add
