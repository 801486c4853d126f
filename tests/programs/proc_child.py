"""A small child program for tests/test_process.py; behaviour picked by argv.

    echo                 copy stdin lines to stdout until EOF
    env                  print the environment as one JSON object, exit 0
    exit N               exit with code N
    hang                 print "ready", then wait for signals forever
    chatty MIB           write MIB MiB to stderr (plus a tail marker), print "done", echo until EOF
    stderr-lines N       write N numbered 64-byte lines to stderr (stderr_lines() in the
                         tests computes the same bytes), print "wrote <bytes>", echo until EOF
    forker exits|stays   fork a grandchild that calls setsid(), ignores SIGTERM and
                         keeps stdout open; print its pid; then exit, or stay
                         (also ignoring SIGTERM and stdin EOF)
    connect PORT         connect to 127.0.0.1:PORT, print "connected", wait for stdin EOF
    unmarked-kid         start a kid with an empty environment (no spawn marker:
                         only its parentage finds it), print "kid <pid>", wait for signals
"""

import json
import os
import signal
import socket
import sys


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def pause_forever() -> None:
    while True:
        signal.pause()


def echo() -> None:
    for line in sys.stdin.buffer:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()


def stderr_lines(count: int) -> int:
    """Line i is b"%09d " % i padded with "s" to 63 bytes, then "\\n"."""
    written = 0
    for first in range(0, count, 1024):
        block = b"".join(b"%09d " % i + b"s" * 53 + b"\n"
                         for i in range(first, min(count, first + 1024)))
        sys.stderr.buffer.write(block)
        written += len(block)
    sys.stderr.buffer.flush()
    return written


def forker(stays: bool) -> None:
    ready_r, ready_w = os.pipe()
    sys.stdout.flush()
    if os.fork() == 0:
        os.close(ready_r)
        os.setsid()
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        say(f"grandchild {os.getpid()}")
        os.write(ready_w, b"x")
        os.close(ready_w)
        pause_forever()
    os.close(ready_w)
    os.read(ready_r, 1)
    os.close(ready_r)
    say("ready")
    if not stays:
        os._exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    pause_forever()


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "echo":
        echo()
    elif mode == "env":
        say(json.dumps(dict(os.environ)))
    elif mode == "exit":
        sys.exit(int(argv[1]))
    elif mode == "hang":
        say("ready")
        pause_forever()
    elif mode == "chatty":
        chunk = b"e" * 65536 + b"\n"
        for _ in range(int(argv[1]) * 16):
            sys.stderr.buffer.write(chunk)
        sys.stderr.buffer.write(b"tail \xff end\n")
        sys.stderr.buffer.flush()
        say("done")
        echo()
    elif mode == "stderr-lines":
        say(f"wrote {stderr_lines(int(argv[1]))}")
        echo()
    elif mode == "forker":
        forker(argv[1] == "stays")
    elif mode == "connect":
        sock = socket.create_connection(("127.0.0.1", int(argv[1])))
        say("connected")
        sys.stdin.buffer.read()
        sock.close()
    elif mode == "unmarked-kid":
        import subprocess
        kid = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"], env={})
        say(f"kid {kid.pid}")
        pause_forever()
    else:
        sys.exit(f"proc_child: unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
