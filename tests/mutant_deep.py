#!/usr/bin/env python3
"""A deep mutant or deep control adapter: the reference adapter behind one hook set.

    python3 tests/mutant_deep.py <switch> <fixture-dir>
    python3 tests/mutant_deep.py --list

The switches are in tests/adapters/mutants_deep.py (DEEP: one violation
hidden off the cases' first sample, each with the one case that owns it) and
tests/adapters/controls_deep.py (DEEP_CONTROLS: legal variations that must
pass). tests/deep_verdicts.py runs the suite against them all. They are kept
out of the matrix (tests/mutant.py) until the cases catch them.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cases.kit.invocation import keep_bytecode  # noqa: E402  (os and sys only)

keep_bytecode()   # started dozens of times a run: its modules compile once

from tests.adapters.controls_deep import DEEP_CONTROLS  # noqa: E402
from tests.adapters.mutants_deep import DEEP  # noqa: E402
from tests.adapters.proxy import main  # noqa: E402

if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--list"]:
        for m in DEEP.values():
            print(f"{m.switch:36} fails {', '.join(sorted(m.expected)):8} {m.description}")
        for c in DEEP_CONTROLS.values():
            print(f"{c.switch:36} {'control':14} {c.description}")
        sys.exit(0)
    if not args or args[0] not in {**DEEP, **DEEP_CONTROLS}:
        sys.stderr.write(__doc__)
        sys.exit(2)
    main((DEEP.get(args[0]) or DEEP_CONTROLS[args[0]]).hooks(), args[1:])
