"""Loads the suite's pytest plugin, so `python3 -m pytest cases` works like `python3 run`
(adapter from FORGE_PROVIDER / PROVIDER, the reference adapter otherwise)."""

pytest_plugins = [f"{__package__}.plugin"]   # cases.plugin, or its installed name
