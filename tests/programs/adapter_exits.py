"""A tiny adapter for tests/test_cli.py: says why on stderr and exits 3 at start."""
import sys

print("adapter_exits: no backend configured", file=sys.stderr)
sys.exit(3)
