"""Loads the suite's pytest plugin, so `python3 -m pytest cases` works like `python3 run`
(adapter from FORGE_PROVIDER / PROVIDER, the reference adapter otherwise)."""

# cases.harness.plugin (or its installed name), and the not-evaluated skips of
# cases/harness/attribution.py
pytest_plugins = [f"{__package__}.harness.plugin", f"{__package__}.harness.attribution"]
