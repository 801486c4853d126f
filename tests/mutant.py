#!/usr/bin/env python3
"""A mutant or control adapter: the reference adapter behind one hook set.

    python3 tests/mutant.py <switch> <fixture-dir>
    python3 tests/mutant.py --list
    python3 tests/mutant.py --update-wording   # MUTANTS.txt and "Falsified by:" from the code

The switches and what each one changes are in tests/adapters/mutants/ (the
mutant matrix, each with the cases it must fail, one module per case group)
and tests/adapters/controls/ (legal variations that must pass). The suite appends the fixture directory.
"""

import os
import sys

# os.path, not pathlib: started about 30 times a run (tests/adapters/proxy.py)
HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from cases.kit.invocation import keep_bytecode  # noqa: E402  (os and sys only)

keep_bytecode()   # started dozens of times a run: its modules compile once

INDEX = os.path.join(HERE, "adapters", "INDEX.txt")


def _tables():
    from tests.adapters.controls import CONTROLS
    from tests.adapters.mutants import MUTANTS
    return MUTANTS, CONTROLS


def load(switch: str, *, fall_back: bool = True):
    """The Variant of ``switch``, importing only the table module that defines
    it (tests/adapters/INDEX.txt) when the index knows it, else
    (``fall_back``) every table module."""
    import importlib

    module = None
    try:
        with open(INDEX, encoding="utf-8") as index:
            text = index.read()
        for line in text.splitlines():
            words = line.split()
            if len(words) == 2 and words[0] == switch:
                module = words[1]
    except OSError:
        pass
    if module is not None:
        try:
            entry = importlib.import_module(module).TABLE.get(switch)
        except (ImportError, AttributeError):
            entry = None
        if entry is not None and entry.hooks.__module__ == module:
            return entry
    if not fall_back:
        return None
    mutants, controls = _tables()
    return mutants.get(switch) or controls.get(switch)


def usage() -> int:
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--list"]:
        MUTANTS, CONTROLS = _tables()
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
    entry = load(args[0]) if args and not args[0].startswith("-") else None
    if entry is None:
        sys.exit(usage())
    from tests.adapters.proxy import main
    main(entry.hooks(), args[1:])
