#!/usr/bin/env python3
"""The incapable adapter: the reference declaring no revision capability.

initialize declares refs, log, blame and commit false. Any revision request
(repo/refs, repo/log, repo/blame, repo/blob_at, repo/commit, or repo/tree with
a non-null ref) fails loudly: an error reply of kind provider and a line
starting INCAPABLE-ADAPTER-ASKED on stderr.

    python3 tests/incapable.py <fixture-dir>

tests/test_capability_gating.py asserts the suite never asks it one.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cases.kit.invocation import keep_bytecode  # noqa: E402  (os and sys only)

keep_bytecode()   # started dozens of times a run: its modules compile once

from tests.adapters.gates import incapable  # noqa: E402
from tests.adapters.proxy import main  # noqa: E402

if __name__ == "__main__":
    main(incapable())
