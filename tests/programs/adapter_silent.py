"""A tiny adapter for tests/test_cli.py: reads requests and never answers,
not even initialize (the suite must exit 2 once FORGE_DEADLINE_S has passed)."""
import sys

for _line in sys.stdin:
    pass
