"""Hostile adapters (one program per misbehaviour) and the harness that runs
the suite against them (tests/test_hostile.py, tests/test_cli_edges.py)."""
