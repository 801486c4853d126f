"""Hostile: reads every request and never answers anything, not even
initialize; exits on stdin EOF.

Expected: the suite cannot run (exit 2): initialize timed out.
"""
import _common

_common.options()
for _ in _common.requests():
    pass
