#!/usr/bin/env python3
"""A mutant or control adapter: the reference adapter behind one hook set.

    python3 tests/mutant.py <switch> <fixture-dir>
    python3 tests/mutant.py --list
    python3 tests/mutant.py --update-wording   # MUTANTS.txt and "Falsified by:" from the code

The switches and what each one changes are in tests/adapters/mutants.py (the
mutant matrix, each with the cases it must fail) and tests/adapters/controls.py
(legal variations that must pass). The suite appends the fixture directory.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cases.invocation import keep_bytecode  # noqa: E402  (os and sys only)

keep_bytecode()   # started dozens of times a run: its modules compile once

from tests.adapters.controls import CONTROLS  # noqa: E402
from tests.adapters.mutants import MUTANTS  # noqa: E402
from tests.adapters.proxy import main  # noqa: E402


def usage() -> int:
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--list"]:
        for m in MUTANTS.values():
            print(f"{m.switch:28} fails {', '.join(sorted(m.expected)):18} {m.description}")
        for c in CONTROLS.values():
            print(f"{c.switch:28} {'control (green)':24} {c.description}")
        sys.exit(0)
    if args[:1] == ["--update-wording"]:
        from tests.adapters.wording import update
        for path in update():
            print(f"updated {path}")
        sys.exit(0)
    if not args or args[0] not in {**MUTANTS, **CONTROLS}:
        sys.exit(usage())
    entry = MUTANTS.get(args[0]) or CONTROLS[args[0]]
    main(entry.hooks(), args[1:])
