"""A fork server for the gate's suite runs (tests/gate.py, FORGE_GATE_FORK).

``python3 tests/forkserver.py`` imports what a run of ``python3 run`` imports
(pytest, the plugin, the case kit) once, then serves one run at a time over
its stdin/stdout: once ready it says ``{"ready": true}``; a request line (JSON: the run's argv after ``run``, its
environment, cwd and the files for its stdout and stderr) is answered by a
forked child that behaves as ``python3 run <argv>`` would (its own session,
stdin /dev/null, the run's environment applied before anything of the run
reads it), then by two lines: ``{"pid": N}`` at once, ``{"status": S,
"cpu": C}`` once the child is reaped (C: user + system CPU of its reaped
tree, as wait4 tells). EOF on stdin (the gate's end, however it came)
ends the server, and stops the run going on then as the gate would.
"""

import gc
import json
import os
import select
import signal
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
RUN = os.path.join(ROOT, "run")


def _warm() -> None:
    # sys.path as `python3 run` has it: the script's folder (the checkout),
    # and the checkout again (run's first insert), not tests/
    if sys.path and os.path.realpath(sys.path[0]) == os.path.dirname(os.path.realpath(__file__)):
        sys.path[0] = ROOT
    sys.path.insert(0, ROOT)
    from cases.kit.invocation import keep_bytecode
    keep_bytecode()
    import cases.cli.command  # noqa: F401
    import cases.cli.entry  # noqa: F401
    import cases.harness.finish  # noqa: F401
    import cases.harness.plugin  # noqa: F401
    import cases.harness.session  # noqa: F401
    import cases.report.writers  # noqa: F401
    import cases.harness.providers  # noqa: F401
    import fixture  # noqa: F401
    import pytest  # noqa: F401


def _child(req: dict, ready: int) -> "NoReturn":
    code = 1
    try:
        os.setsid()
        os.close(ready)   # the gate may stop the run's group from here on
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        signal.signal(signal.SIGINT, signal.default_int_handler)
        null = os.open(os.devnull, os.O_RDONLY)
        out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        for fd, to in ((null, 0), (out, 1), (err, 2)):
            os.dup2(fd, to)
            os.close(fd)
        os.closerange(3, 256)
        os.chdir(req["cwd"])
        os.environ.clear()
        os.environ.update(req["env"])
        import tempfile
        tempfile.tempdir = None
        sys.argv = [RUN, *req["argv"]]
        from cases.harness import stopping
        stopping.quiet()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        from cases.kit.invocation import keep_bytecode
        keep_bytecode()
        from cases.cli.entry import run_main
        run_main(req["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        import traceback
        traceback.print_exc()
    finally:
        from cases.cli.entry import exit_now
        exit_now(code)


class _Reaped:
    """What tests/gate.py's stop waits on: the run's pidfd turning readable."""

    def __init__(self, pidfd: int):
        self.pidfd = pidfd

    def wait(self, timeout_s: float) -> None:
        select.select([self.pidfd], [], [], timeout_s)


def serve() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)   # the gate stops the runs; EOF stops this
    reader = os.fdopen(os.dup(0), "rb", buffering=0)
    writer = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)   # nothing but protocol lines on the protocol pipe
    _warm()
    # What the warm-up made lives as long as the server: out of the collector's
    # sight, a run's full collections do not walk the suite's modules again.
    gc.collect()
    gc.freeze()
    writer.write(b'{"ready": true}\n')
    while True:
        line = reader.readline()
        if not line:
            return 0
        req = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        ready_r, ready_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            reader.close()
            writer.close()
            os.close(ready_r)
            _child(req, ready_w)
        os.close(ready_w)
        os.read(ready_r, 1)   # EOF once the child leads its own session (or died)
        os.close(ready_r)
        pidfd = os.pidfd_open(pid)
        writer.write(json.dumps({"pid": pid}).encode() + b"\n")
        gone = False
        # Between a request and its answer the gate writes nothing: stdin
        # readable meanwhile is its end (EOF), and the run goes with it.
        if reader in select.select([reader, pidfd], [], [])[0] and pidfd not in \
                select.select([pidfd], [], [], 0)[0]:
            gone = True
            from tests.gate import _kill_group   # the gate is gone: stop the run as it would
            _kill_group(pid, _Reaped(pidfd))
        os.close(pidfd)
        _pid, status, usage = os.wait4(pid, 0)
        if gone:
            return 0
        writer.write(json.dumps({"status": status,
                                 "cpu": usage.ru_utime + usage.ru_stime}).encode() + b"\n")


if __name__ == "__main__":
    sys.exit(serve())
