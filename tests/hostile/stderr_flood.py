"""Hostile: before its first handshake of the run (``--state=DIR`` holds the
claim) writes 200 MB to stderr, then looks at what its stderr is (fstat of
fd 2) and records it in DIR/stderr-kept as "<kind> <size>", and serves the
reference normally.

stderr is free-form (PROTOCOL 7.8), so the verdict is exit 0; what matters
is that a chatty adapter can neither block nor make the suite keep its
chatter without limit (the suite's temp area may be RAM-backed /dev/shm):
a pipe the suite drains, or a file that stays under a cap.
"""
import os
import stat

import _common
from tests.adapters.proxy import Hooks

TOTAL = 200 * 2**20
CHUNK = b"chatty adapter diagnostics " * 38837 + b"\n"   # about 1 MiB


def chatter(state: str) -> None:
    if not _common.claim_once(state, "claimed"):
        return
    written = 0
    while written < TOTAL:
        written += os.write(2, CHUNK)
    info = os.fstat(2)
    kind = "file" if stat.S_ISREG(info.st_mode) else "fifo" if stat.S_ISFIFO(info.st_mode) \
        else "other"
    with open(os.path.join(state, "stderr-kept"), "w") as f:
        f.write(f"{kind} {info.st_size if kind == 'file' else 0} {os.readlink('/proc/self/fd/2')}\n")


opts, rest = _common.options()
chatter(opts["state"])
_common.serve(Hooks(), rest)
