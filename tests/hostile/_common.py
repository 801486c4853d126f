"""What the hostile adapter programs share (stdlib only, adapter side).

Each program in this folder is started by the suite as
``python3 tests/hostile/<name>.py --mark=<uuid> [--opt=value ...] <fixture-dir>``.
The ``--name=value`` options are the test's, the rest is the suite's (the
fixture dir it appends). ``--mark`` is a unique marker the test scans for with
psutil: it is on the command line of the program and of every fork of it, and
exported as FORGE_HOSTILE_MARK to every program it executes, so no process of
the adapter's tree can hide from the leak check.

Programs that serve normally wrap the reference adapter with the line proxy
of tests/adapters/proxy.py and change only their one behaviour.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

MARK_VAR = "FORGE_HOSTILE_MARK"

# A canned, valid handshake for the programs that do not run the reference.
INIT_RESULT = {"protocol": 1, "name": "hostile",
               "capabilities": {"orgs": True, "code_search": True}}


def options(argv: list[str] | None = None) -> tuple[dict[str, str], list[str]]:
    """Split the test's ``--name=value`` options from the suite's arguments,
    and export the marker to everything this program will execute."""
    opts: dict[str, str] = {}
    rest: list[str] = []
    for arg in sys.argv[1:] if argv is None else argv:
        if arg.startswith("--") and "=" in arg:
            name, value = arg[2:].split("=", 1)
            opts[name] = value
        else:
            rest.append(arg)
    if "mark" in opts:
        os.environ[MARK_VAR] = opts["mark"]
    return opts, rest


def fixture_dir(rest: list[str]) -> Path:
    """The fixture copy the suite handed over: the appended argument, else
    FORGE_FIXTURE_DIR."""
    return Path(rest[-1] if rest else os.environ.get("FORGE_FIXTURE_DIR", "."))


def claim_once(state: str, name: str) -> bool:
    """True for the first process of a run to claim ``name`` in the state dir:
    a hostile act happens once per run even though the suite respawns us."""
    try:
        os.close(os.open(os.path.join(state, name), os.O_CREAT | os.O_EXCL, 0o644))
    except FileExistsError:
        return False
    return True


def log(text: str) -> None:
    try:
        os.write(2, f"[hostile {Path(sys.argv[0]).stem}] {text}\n".encode())
    except OSError:
        pass


def emit(data: bytes, fd: int = 1) -> None:
    """Write all of ``data`` to ``fd``; a reader that went away ends us."""
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        os._exit(0)


def reply(id_: object, result: object) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id_, "result": result},
                      separators=(",", ":")).encode() + b"\n"


def requests():
    """Each request (an object with an id and a method) read from stdin,
    until EOF; everything else is skipped."""
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict) and "id" in msg and "method" in msg:
            yield msg


def block_forever() -> None:
    while True:
        signal.pause()


def orphan() -> int:
    """Leave behind a grandchild that holds this program's stdout open: it is
    forked through an intermediate that exits at once (so it is reparented),
    calls setsid (so it is in no group of ours), ignores SIGTERM, SIGHUP and SIGINT,
    and waits for nothing, forever. Returns its pid."""
    read_end, write_end = os.pipe()
    first = os.fork()
    if first == 0:
        os.close(read_end)
        second = os.fork()
        if second == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            os.write(write_end, str(os.getpid()).encode())
            os.close(write_end)
            os.close(0)                       # keep stdout (fd 1) and stderr only
            block_forever()
        os._exit(0)
    os.close(write_end)
    pid = int(os.read(read_end, 32) or b"0")
    os.close(read_end)
    os.waitpid(first, 0)
    return pid


def serve(hooks, rest: list[str], *, stay: bool = False, on_eof=None) -> None:
    """Serve the reference adapter through the line proxy with ``hooks``.

    ``stay``: ignore SIGTERM, and when stdin closes (the reference then
    exits) call ``on_eof()`` and stay alive anyway, until SIGKILL."""
    from tests.adapters.proxy import Chain, Hooks, Proxy

    if not stay:
        Proxy(hooks, rest).run()
        return

    class IgnoreTerm(Hooks):
        def start(self, proxy):   # runs after the proxy installed its own SIGTERM handler
            signal.signal(signal.SIGTERM, signal.SIG_IGN)

    class Staying(Proxy):
        def _host_to_child(self):
            super()._host_to_child()     # returns at stdin EOF
            log("stdin closed: staying alive anyway")
            if on_eof is not None:
                on_eof()
            block_forever()

        def _shutdown(self, code):       # where the proxy would exit: stay
            block_forever()

    Staying(Chain(IgnoreTerm(), hooks), rest).run()


def tell(fifo: str | None, word: bytes) -> None:
    """Write ``word`` to the test's FIFO (its reader is open before we start)."""
    if fifo:
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, word + b"\n")
        os.close(fd)
