"""Hostile: ignores SIGTERM and stdin EOF and never exits by itself; serves
the reference normally until stdin closes.

RULINGS ("Process behaviour"): an adapter need not exit when its stdin
closes; the suite must stop it (and its tree) itself, within its stop bound.
Expected: exit 0, every case passes, no process survives the run.
"""
import _common
from tests.adapters.proxy import Hooks

opts, rest = _common.options()
_common.serve(Hooks(), rest, stay=True)
