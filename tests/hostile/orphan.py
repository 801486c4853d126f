"""Hostile: leaves a grandchild that called setsid, ignores SIGTERM and holds
stdout open, then serves the reference normally.

Nothing on the wire is wrong: the grandchild only matters when the adapter
dies (then no EOF ever comes; see orphan_crash.py) and when the suite stops
the tree (it is in no process group of the adapter's and survives SIGTERM).
Expected: exit 0, every case passes, and no process survives the run.
"""
import _common
from tests.adapters.proxy import Hooks

opts, rest = _common.options()
_common.log(f"left grandchild {_common.orphan()} holding stdout")
_common.serve(Hooks(), rest)
