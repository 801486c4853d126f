"""Self-tests of wire/process.py, the generic subprocess driver."""

from __future__ import annotations

import json
import os
import select
import socket
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from wire import process
from wire.errors import SpawnError
from wire.process import (MARKER_VAR, STDERR_JOIN_S, STDERR_KEEP_HEAD, STDERR_KEEP_TAIL,
                          Child, scrub_env)

PROGRAM = Path(__file__).parent / "programs" / "proc_child.py"
EVENT_TIMEOUT_S = 5.0  # upper bound for something that normally takes milliseconds
EOF_BOUND_S = 2.0  # after stop()/kill(), EOF on stdout must come within this
FAST_GRACE_S = 0.1  # stop() grace values used where the child ignores them anyway


def child_argv(*mode: str) -> list[str]:
    return [sys.executable, str(PROGRAM), *mode]


def read_until(fd: int, needle: bytes, timeout: float = EVENT_TIMEOUT_S) -> bytes:
    """Read from fd until ``needle`` has arrived; fail on EOF or timeout."""
    buf = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    while needle not in buf:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {needle!r} within {timeout}s; got {buf[-200:]!r}"
        if poller.poll(remaining * 1000):
            chunk = os.read(fd, 65536)
            assert chunk, f"EOF before {needle!r}; got {buf[-200:]!r}"
            buf += chunk
    return buf


def read_to_eof(fd: int, timeout: float) -> bytes:
    """Everything up to EOF; fail if EOF does not come within ``timeout``."""
    buf = b""
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no EOF on stdout within {timeout}s"
        if poller.poll(remaining * 1000):
            chunk = os.read(fd, 65536)
            if not chunk:
                return buf
            buf += chunk


def is_gone(proc: psutil.Process) -> bool:
    """Dead by pid: no such process, a reused pid, or an unreaped zombie."""
    try:
        return not proc.is_running() or proc.status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def marked_alive(tags: set[str]) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["environ"], ad_value=None):
        environ = proc.info.get("environ") or {}
        if environ.get(MARKER_VAR) in tags and not is_gone(proc):
            found.append(proc)
    return found


@pytest.fixture(autouse=True)
def spawned(monkeypatch):
    """Records every Child spawned by the test; at the end asserts no process
    carrying any of their markers is still alive (then cleans up anyway)."""
    children: list[Child] = []
    real_spawn = Child.spawn.__func__

    def recording_spawn(cls, *args, **kwargs):
        child = real_spawn(cls, *args, **kwargs)
        children.append(child)
        return child

    monkeypatch.setattr(Child, "spawn", classmethod(recording_spawn))
    yield children
    leftovers = marked_alive({c.tag for c in children})
    for child in children:
        child.close()
    for proc in leftovers:  # found by marker but not by close(): still never left behind
        try:
            proc.kill()
        except psutil.Error:
            pass
    assert not leftovers, f"processes left behind: {leftovers}"


# ------------------------------------------------------------------ basics


def test_echo_round_trip():
    with Child.spawn(child_argv("echo"), env=os.environ) as child:
        assert child.exit_description() is None
        child.write(b'{"hello": 1}\n')
        assert read_until(child.stdout_fd, b"\n") == b'{"hello": 1}\n'
        child.write(b"second\n")
        assert read_until(child.stdout_fd, b"second\n") == b"second\n"
        child.close_stdin()
        assert read_to_eof(child.stdout_fd, EVENT_TIMEOUT_S) == b""
        assert child.wait(EVENT_TIMEOUT_S) == 0
        assert child.exit_description() == "exited with code 0"


def test_child_environment_is_scrubbed_and_marked():
    env = dict(os.environ, GITHUB_TOKEN="g", FOO_TOKEN="f", FORGE_TOKEN="x",
               BITBUCKET_APP_PASSWORD="p", MY_SECRET="s", SOME_API_KEY="k",
               KEEP_ME="kept", FORGE_ORG="acme")
    with Child.spawn(child_argv("env"), env=env) as child:
        seen = json.loads(read_to_eof(child.stdout_fd, EVENT_TIMEOUT_S))
    for gone in ("GITHUB_TOKEN", "FOO_TOKEN", "FORGE_TOKEN", "BITBUCKET_APP_PASSWORD",
                 "MY_SECRET", "SOME_API_KEY"):
        assert gone not in seen
    assert seen["KEEP_ME"] == "kept"
    assert seen["FORGE_ORG"] == "acme"
    assert seen[MARKER_VAR] == child.tag
    assert seen["PATH"] == os.environ["PATH"]


@pytest.mark.parametrize(
    "name, dropped",
    [
        ("GITHUB_TOKEN", True), ("GH_TOKEN", True), ("GITLAB_TOKEN", True), ("GL_TOKEN", True),
        ("CI_JOB_TOKEN", True), ("GITEA_TOKEN", True), ("BITBUCKET_TOKEN", True),
        ("BITBUCKET_APP_PASSWORD", True), ("FORGE_TOKEN", True), ("foo_token", True),
        ("DB_PASSWORD", True), ("APP_SECRET", True), ("OPENAI_API_KEY", True),
        ("SSH_AUTH_SOCK", True), ("GITHUB_PAT", True),
        ("PATH", False), ("HOME", False), ("FORGE_ORG", False), ("FORGE_FIXTURE_DIR", False),
        ("TOKENIZER", False), ("SECRETARY", False), ("MY_KEY", False),
    ],
)
def test_scrub_rule(name, dropped):
    assert (name not in scrub_env({name: "v"})) is dropped


# ------------------------------------------------------------ spawn errors


def assert_one_clear_line(exc: SpawnError, command: str) -> str:
    text = str(exc)
    assert "\n" not in text and "Traceback" not in text
    assert text.startswith(f"cannot start adapter {command!r}: ")
    assert exc.__cause__ is None and exc.__suppress_context__
    return text


@pytest.mark.parametrize("command", ["/nonexistent/forge-adapter", "forge-no-such-command-9f3"])
def test_spawn_error_missing_command(command):
    with pytest.raises(SpawnError) as info:
        Child.spawn([command, "--flag"], env=os.environ)
    assert "no such file or directory" in assert_one_clear_line(info.value, command)


def test_spawn_error_directory(tmp_path):
    with pytest.raises(SpawnError) as info:
        Child.spawn([str(tmp_path)], env=os.environ)
    assert assert_one_clear_line(info.value, str(tmp_path)).endswith(": is a directory")


def test_spawn_error_not_executable(tmp_path):
    script = tmp_path / "adapter.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    with pytest.raises(SpawnError) as info:
        Child.spawn([str(script)], env=os.environ)
    assert "permission denied" in assert_one_clear_line(info.value, str(script))


def test_spawn_error_missing_working_directory(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(SpawnError) as info:
        Child.spawn(child_argv("echo"), env=os.environ, cwd=missing)
    assert f"working directory {str(missing)!r}" in assert_one_clear_line(info.value, sys.executable)


# ------------------------------------------- the escaped grandchild (the key test)


@pytest.fixture(params=["proc", "psutil"])
def scan(request, monkeypatch):
    """Each test of the tree runs with tree()'s two scans: one reading of
    /proc (Linux), and psutil's process list (elsewhere)."""
    if request.param == "psutil":
        monkeypatch.setattr(process, "_proc_table", lambda **_: None)
    elif process._proc_table() is None:
        pytest.skip("no /proc here: only the psutil scan exists")
    return request.param


@pytest.mark.parametrize("child_fate", ["exits", "stays"])
@pytest.mark.parametrize("how", ["stop", "kill"])
def test_escaped_grandchild_is_reaped(child_fate, how, scan):
    """A grandchild that left the group (setsid), ignores SIGTERM and holds
    stdout open is found and killed; EOF follows; nothing survives."""
    child = Child.spawn(child_argv("forker", child_fate), env=os.environ)
    out = read_until(child.stdout_fd, b"ready\n")
    grandchild_pid = int(out.split(b"grandchild ")[1].split()[0])
    grandchild = psutil.Process(grandchild_pid)
    assert os.getsid(grandchild_pid) == grandchild_pid != child.pid
    assert os.getpgid(grandchild_pid) != child.pid
    if child_fate == "exits":
        assert child.wait(EVENT_TIMEOUT_S) == 0
        assert grandchild.ppid() != child.pid  # reparented: only the marker finds it
    assert grandchild_pid in [p.pid for p in child.tree()]

    started = time.monotonic()
    if how == "stop":
        child.stop(grace_s=FAST_GRACE_S, term_grace_s=FAST_GRACE_S)
    else:
        child.kill()
    elapsed = time.monotonic() - started

    assert is_gone(grandchild), "the escaped grandchild survived"
    assert child.survivors() == []
    assert child.poll() is not None
    assert read_to_eof(child.stdout_fd, EOF_BOUND_S) == b""
    assert elapsed < 2 * FAST_GRACE_S + 1.0
    if child_fate == "stays":
        assert child.exit_description() == "killed by signal SIGKILL"
    child.close()


@pytest.mark.parametrize("mode,found_by", [(("forker", "stays"), b"grandchild "),
                                            (("unmarked-kid",), b"kid ")])
def test_both_scans_find_the_same_tree(monkeypatch, mode, found_by):
    """The /proc scan and the psutil scan name the same processes: the child
    and the escaped, reparented grandchild only the marker finds, or the kid
    without the marker only its parentage finds."""
    if process._proc_table() is None:
        pytest.skip("no /proc here: only the psutil scan exists")
    child = Child.spawn(child_argv(*mode), env=os.environ)
    try:
        out = read_until(child.stdout_fd, b"\n")
        other = int(out.split(found_by)[1].split()[0])
        by_proc = [p.pid for p in child.tree()]
        child._seen = {}   # forget what the first scan found
        monkeypatch.setattr(process, "_proc_table", lambda **_: None)
        by_psutil = [p.pid for p in child.tree()]
        assert by_proc == by_psutil == [child.pid, other]
    finally:
        child.kill()
        child.close()


def test_descendants_follow_parents_from_one_reading(scan):
    """descendants(): a child, a grandchild that left the group (setsid),
    each listed; a pid named in ``through`` hides itself and its tree; an
    exited child waiting to be reaped (a zombie) is not listed."""
    child = Child.spawn(child_argv("forker", "stays"), env=os.environ)
    try:
        out = read_until(child.stdout_fd, b"ready\n")
        grandchild = int(out.split(b"grandchild ")[1].split()[0])
        me = os.getpid()
        found = process.descendants(me)
        assert {child.pid, grandchild} <= found
        assert me not in found
        assert not {child.pid, grandchild} & process.descendants(me, through={child.pid})
        assert process.descendants(child.pid) >= {grandchild}
    finally:
        child.kill()
    zombie = Child.spawn([sys.executable, "-c", "pass"], env=os.environ)
    try:
        os.waitid(os.P_PID, zombie.pid, os.WEXITED | os.WNOWAIT)   # exited, not reaped
        assert psutil.Process(zombie.pid).status() == psutil.STATUS_ZOMBIE
        assert zombie.pid not in process.descendants(os.getpid())
    finally:
        zombie.kill()
        zombie.close()
    child.close()


def test_stop_lets_a_well_behaved_child_exit_on_eof():
    child = Child.spawn(child_argv("echo"), env=os.environ)
    started = time.monotonic()
    child.stop(grace_s=EVENT_TIMEOUT_S)
    assert time.monotonic() - started < EVENT_TIMEOUT_S / 2  # it did not use the grace up
    assert child.exit_description() == "exited with code 0"
    child.close()


def test_stop_kill_close_are_idempotent():
    child = Child.spawn(child_argv("exit", "0"), env=os.environ)
    assert child.wait(EVENT_TIMEOUT_S) == 0
    for _ in range(2):
        child.kill()
        child.stop(grace_s=FAST_GRACE_S)
        child.close()
    assert child.survivors() == [] and child.tree() == []


def test_writes_fail_cleanly_once_stdin_is_gone():
    with Child.spawn(child_argv("exit", "0"), env=os.environ) as child:
        assert child.wait(EVENT_TIMEOUT_S) == 0
        with pytest.raises(BrokenPipeError):
            child.write(b"x" * 100_000)
    with Child.spawn(child_argv("echo"), env=os.environ) as child:
        child.close_stdin()
        with pytest.raises(OSError):
            child.write(b"late\n")


def test_kill_releases_a_writer_blocked_on_a_full_pipe():
    with Child.spawn(child_argv("hang"), env=os.environ) as child:
        read_until(child.stdout_fd, b"ready\n")
        outcome: list[BaseException | None] = []

        def writer():
            try:
                child.write(b"x" * 4 * 2**20)  # far more than a pipe holds; nobody reads
                outcome.append(None)
            except OSError as exc:
                outcome.append(exc)

        thread = threading.Thread(target=writer)
        thread.start()
        child.close_stdin()  # deferred: the blocked write still owns the fd
        child.kill()
        thread.join(EVENT_TIMEOUT_S)
        assert not thread.is_alive()
        assert isinstance(outcome[0], BrokenPipeError)
        assert child._proc.stdin.closed


# The fd checks look at /proc/self/fd, which is process-wide: in a self-test
# the gate pool's threads open and close files beside them (one such pair
# once failed test_no_fd_leak). So each runs in a pytest of its own.
ALONE = "FORGE_TEST_ALONE"


def ran_alone(name: str) -> bool:
    """True when test ``name`` was just run (and passed) in a pytest process
    of its own; False in that process, which runs the body."""
    if os.environ.get(ALONE) == name:
        return False
    import subprocess

    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"{Path(__file__).resolve()}::{name}"],
                          env={**os.environ, ALONE: name}, capture_output=True, text=True,
                          timeout=120, cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    return True


def open_fds() -> set[str]:
    """This process's open file descriptors, by number."""
    return set(os.listdir("/proc/self/fd"))


def test_no_fd_leak():
    if ran_alone("test_no_fd_leak"):
        return

    before = open_fds()
    for _ in range(3):
        with Child.spawn(child_argv("echo"), env=os.environ, stderr_path=None) as child:
            child.write(b"x\n")
            read_until(child.stdout_fd, b"x\n")
    assert open_fds() == before


# ------------------------------------------------------------------ stderr


NOTE_MAX = 200  # generous bound on the one-line "not kept" note


def stderr_lines(count: int) -> bytes:
    """The bytes proc_child.py's ``stderr-lines count`` writes."""
    return b"".join(b"%09d " % i + b"s" * 53 + b"\n" for i in range(count))


def drain_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("forge-stderr-")]


def test_chatty_stderr_goes_to_the_file_and_never_blocks(tmp_path):
    path = tmp_path / "logs" / "adapter.stderr"
    with Child.spawn(child_argv("chatty", "8"), env=os.environ, stderr_path=path) as child:
        read_until(child.stdout_fd, b"done\n")  # 8 MiB of stderr went by first
        child.write(b"still responsive\n")
        read_until(child.stdout_fd, b"still responsive\n")
        child.stop()
        kept = path.read_bytes()
        assert kept.startswith(b"e" * 1000)
        assert STDERR_KEEP_HEAD < len(kept) <= STDERR_KEEP_HEAD + NOTE_MAX
        tail = child.stderr_tail(40)
        assert tail.endswith("eee\ntail \\xff end\n") and len(tail) <= 40 + 3


def test_a_50_mb_stderr_flood_is_drained_and_kept_bounded(tmp_path):
    """50 MiB of stderr: the child never blocks, the file keeps the head plus
    one note, stderr_tail is the true tail, and the drop count is exact."""
    count = 50 * 2**20 // 64
    expected = stderr_lines(count)
    path = tmp_path / "flood.stderr"
    with Child.spawn(child_argv("stderr-lines", str(count)), env=os.environ,
                     stderr_path=path) as child:
        # All 50 MiB went out while the test only waited on stdout.
        out = read_until(child.stdout_fd, b"\n", timeout=4 * EVENT_TIMEOUT_S)
        assert out == b"wrote %d\n" % len(expected)
        child.write(b"still responsive\n")
        read_until(child.stdout_fd, b"still responsive\n")

        # Nothing written before the call is missed, with no waiting.
        assert child.stderr_bytes == len(expected)
        assert child.stderr_dropped == len(expected) - STDERR_KEEP_HEAD
        assert child.stderr_tail(1000) == expected[-1000:].decode()
        assert child.stderr_tail(10 * STDERR_KEEP_TAIL) == expected[-STDERR_KEEP_TAIL:].decode()
        assert path.stat().st_size == STDERR_KEEP_HEAD  # no note while it runs

        child.stop()
        kept = path.read_bytes()
        assert kept[:STDERR_KEEP_HEAD] == expected[:STDERR_KEEP_HEAD]
        note = kept[STDERR_KEEP_HEAD:]
        assert len(note) <= NOTE_MAX and note.count(b"\n") == 1 and note.endswith(b"\n")
        dropped = len(expected) - STDERR_KEEP_HEAD
        assert note.startswith(b"[forge-conformance: 49.0 MiB of stderr not kept")
        assert b"(%d bytes after the first 1.0 MiB)" % dropped in note
        assert child.stderr_tail(1000) == expected[-1000:].decode()  # still there after stop
    assert path.read_bytes() == kept  # close() adds nothing more


def test_stderr_tail_spans_the_file_and_the_memory_tail(tmp_path):
    count = (STDERR_KEEP_HEAD + 1000) // 64 + 1  # just past the head
    expected = stderr_lines(count)
    path = tmp_path / "edge.stderr"
    path.write_bytes(b"earlier generation\n")
    with Child.spawn(child_argv("stderr-lines", str(count)), env=os.environ,
                     stderr_path=path) as child:
        read_until(child.stdout_fd, b"\n")
        over = len(expected) - STDERR_KEEP_HEAD
        assert 0 < over < STDERR_KEEP_TAIL
        assert child.stderr_tail(over + 5000) == expected[-(over + 5000):].decode()
        assert child.stderr_tail(len(expected) + 99) == expected.decode()
        assert child.stderr_dropped == over
    assert path.read_bytes().startswith(b"earlier generation\n" + expected[:STDERR_KEEP_HEAD])


def test_stderr_below_the_head_is_all_kept_without_a_note(tmp_path):
    expected = stderr_lines(100)
    path = tmp_path / "small.stderr"
    with Child.spawn(child_argv("stderr-lines", "100"), env=os.environ,
                     stderr_path=path) as child:
        read_until(child.stdout_fd, b"\n")
        assert child.stderr_tail(100_000) == expected.decode()
        assert child.stderr_dropped == 0
        child.stop()
    assert path.read_bytes() == expected


def test_close_is_bounded_when_stderr_is_held_open_outside_the_tree(tmp_path):
    """A holder of stderr's write end the tree scan cannot find (here: this
    test, through /proc) keeps EOF away: kill() waits STDERR_JOIN_S once, and
    close() stops the drain thread, which frees its fds."""
    if ran_alone("test_close_is_bounded_when_stderr_is_held_open_outside_the_tree"):
        return
    path = tmp_path / "held.stderr"
    before = open_fds()
    child = Child.spawn(child_argv("hang"), env=os.environ, stderr_path=path)
    try:
        read_until(child.stdout_fd, b"ready\n")
        held = os.open(f"/proc/{child.pid}/fd/2", os.O_WRONLY)
        before.add(str(held))
        started = time.monotonic()
        child.kill()
        child.kill()  # the second call does not wait again
        assert time.monotonic() - started < STDERR_JOIN_S + 1.0
        os.write(held, b"written after the kill\n")
        assert child.stderr_tail(100) == "written after the kill\n"
        started = time.monotonic()
        child.close()
        assert time.monotonic() - started < STDERR_JOIN_S
        assert drain_threads() == []
        with pytest.raises(BrokenPipeError):  # nobody reads the pipe any more
            os.write(held, b"x")
        os.close(held)
    finally:
        child.close()
    assert open_fds() == before - {str(held)}


def test_no_fd_or_thread_leak_with_a_stderr_file(tmp_path):
    if ran_alone("test_no_fd_or_thread_leak_with_a_stderr_file"):
        return

    before = open_fds()
    for i in range(3):
        path = tmp_path / f"gen-{i}.stderr"
        with Child.spawn(child_argv("chatty", "2"), env=os.environ, stderr_path=path) as child:
            read_until(child.stdout_fd, b"done\n")
    assert open_fds() == before
    assert drain_threads() == []


def test_chatty_stderr_without_a_file_is_discarded():
    with Child.spawn(child_argv("chatty", "4"), env=os.environ) as child:
        read_until(child.stdout_fd, b"done\n")
        assert child.stderr_tail() == ""


def test_stderr_tail_is_per_spawn(tmp_path):
    path = tmp_path / "shared.stderr"
    path.write_bytes(b"earlier generation said this\n")
    with Child.spawn(child_argv("chatty", "0"), env=os.environ, stderr_path=path) as child:
        read_until(child.stdout_fd, b"done\n")
        assert child.stderr_tail(10_000) == "tail \\xff end\n"
    assert path.read_bytes().startswith(b"earlier generation")


# ------------------------------------------------------------- exit state


def test_exit_description_for_a_code():
    with Child.spawn(child_argv("exit", "3"), env=os.environ) as child:
        assert child.wait(EVENT_TIMEOUT_S) == 3
        assert child.returncode == 3
        assert child.exit_description() == "exited with code 3"


def test_exit_description_for_a_signal():
    with Child.spawn(child_argv("hang"), env=os.environ) as child:
        read_until(child.stdout_fd, b"ready\n")
        assert child.wait(0) is None and child.exit_description() is None
        child.kill()
        assert child.exit_description() == "killed by signal SIGKILL"


# ----------------------------------------------------------------- sockets


def test_inet_sockets_sees_a_connection_to_a_local_listener():
    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with Child.spawn(child_argv("connect", str(port)), env=os.environ) as child:
            read_until(child.stdout_fd, b"connected\n")
            conn, _ = listener.accept()
            with conn:
                sockets = child.inet_sockets()
                assert any(s.pid == child.pid and s.raddr == ("127.0.0.1", port)
                           for s in sockets), sockets


def test_inet_sockets_empty_when_the_child_opens_none():
    with Child.spawn(child_argv("echo"), env=os.environ) as child:
        child.write(b"x\n")
        read_until(child.stdout_fd, b"x\n")
        assert child.inet_sockets() == []
