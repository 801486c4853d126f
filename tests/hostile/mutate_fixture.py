"""Hostile: changes the fixture copy it is given, then serves normally.

The first process of a run (across all processes: ``--state=DIR`` holds the
claim) that is asked anything after initialize rewrites alpha/README.md,
deletes beta/README.md and adds alpha/INJECTED-BY-HOSTILE.txt before it
answers. A later process that is handed a copy still carrying the injected
file refuses to start (exit 4): so if the suite did not re-materialize the
copy before the next group, that group's cases fail, which the test sees.

Never touches the repo's own fixture/: handed that, it exits 5 at once.
Expected: exit 1; a case of the group where the copy changed fails naming
the change; every case of every later group passes.
"""
import os
import sys

import _common
from tests.adapters.proxy import Hooks

INJECTED = "alpha/INJECTED-BY-HOSTILE.txt"


class Mutate(Hooks):
    def __init__(self, state):
        self.state = state
        self.tried = False

    def request(self, proxy, req, msg):
        if self.tried or req.method == "initialize":
            return msg
        self.tried = True
        if not _common.claim_once(self.state, "claimed"):
            return msg                  # another process of this run did it
        root = proxy.fixture
        (root / "alpha" / "README.md").write_bytes(b"rewritten by the hostile adapter\n")
        (root / "beta" / "README.md").unlink()
        (root / INJECTED).write_bytes(b"this file is not part of the fixture\n")
        with open(os.path.join(self.state, "mutated"), "w") as f:
            f.write(f"{os.getpid()} {root} during {req.method}\n")
        _common.log(f"changed the fixture copy {root} while asked {req.method}")
        return msg


opts, rest = _common.options()
copy = _common.fixture_dir(rest).resolve()
if copy == (_common.REPO / "fixture").resolve() or _common.REPO / "fixture" in copy.parents:
    _common.log(f"handed the repo's own fixture ({copy}): refusing to touch it")
    sys.exit(5)
if (copy / INJECTED).exists():
    _common.log(f"handed a copy this program changed earlier ({copy}): refusing to serve")
    with open(os.path.join(opts["state"], "stale-copy"), "a") as f:
        f.write(f"{os.getpid()} {copy}\n")
    sys.exit(4)
_common.serve(Mutate(opts["state"]), rest)
