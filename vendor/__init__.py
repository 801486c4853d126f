"""The reference adapter (fs_provider.py, stdlib only), run as a program."""

import sys
from pathlib import Path

REFERENCE_ADAPTER = Path(__file__).resolve().parent / "fs_provider.py"


def reference_argv(fixture_dir) -> list:
    """The command that runs the reference adapter over ``fixture_dir``."""
    return [sys.executable, str(REFERENCE_ADAPTER), str(fixture_dir)]
