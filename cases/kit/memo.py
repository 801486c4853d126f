"""Answers computed from one fixture copy, kept on that copy's view.

A view (cases.harness.fixture_view.FixtureView, or --explore's GitView) has a
``memo`` dict; ``remembered`` fills it. So what the kit and the judges learn
from a copy (its files, its text, git's answers) lives and ends with the
session that made the view, and no two sessions share it.
"""

from __future__ import annotations

from typing import Any, Callable


def remembered(fx, key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()``, once per view ``fx`` and ``key``: the copy a view shows
    does not change while cases read it (a case that writes gets its own copy,
    and so its own view). A ``compute`` that raises is asked again next time."""
    memo = fx.memo
    if key not in memo:
        memo[key] = compute()
    return memo[key]
