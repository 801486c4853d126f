"""The wire client against the host's fake-provider scenarios (PROTOCOL §9) and framing abuse.

Each test drives tests/mock_peer.py in one mode and asserts the outcome the
host reaches in the §9 table. Deadlines are small; the only real waits are
the host's own 1 s backoff rung in the respawn scenarios. Synchronisation is
by events (calls, transcript listeners), never by sleeping.
"""

from __future__ import annotations

import json
import os
import select
import stat
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import gate
from wire import (Provider, ProviderClosed, ProviderError, ProviderTimeout, SpawnError,
                  Transcript)
from wire.framing import FrameReader, LineSplitter

PEER = [sys.executable, str(Path(__file__).with_name("mock_peer.py"))]
SEARCH = {"q": "hit", "limit": 500, "partial": True}


def _live_children() -> set[int]:
    """This process's live descendants, but for the gate pool's suite runs
    that go on beside the other self-tests (tests/gate.py)."""
    return gate.own_descendants()


@pytest.fixture(autouse=True)
def nothing_left_behind():
    before = _live_children()
    yield
    left = _live_children() - before
    assert not left, f"processes left behind: {sorted(left)}"
    threads = [t.name for t in threading.enumerate() if t.name.startswith("provider-")]
    assert not threads, f"threads left behind: {threads}"


@pytest.fixture
def provider(tmp_path):
    """make(mode, **kw) -> an unstarted Provider on the mock peer; all closed at teardown."""
    made: list[Provider] = []

    def make(mode: str, *, deadline_s: float = 5.0, state: bool = False, argv=None, **kw):
        if argv is None:
            argv = PEER + ["--mode", mode]
            if state:
                argv += ["--state-file", str(tmp_path / "state.json")]
        p = Provider(argv, deadline_s=deadline_s, **kw)
        made.append(p)
        return p

    yield make
    for p in made:
        p.close()
        assert p.child is None or not p.child.survivors()


def started(p: Provider) -> Provider:
    p.start()
    return p


def outcomes(p: Provider, *, kind=None, outcome=None):
    return [e for e in p.transcript.entries() if e.direction == "in"
            and (kind is None or e.kind == kind) and (outcome is None or e.outcome == outcome)]


def on_event(text: str) -> tuple[Transcript, threading.Event]:
    """A transcript whose listener sets an Event when an event entry contains ``text``."""
    seen = threading.Event()

    def listener(entry):
        if entry.direction == "event" and text in entry.raw:
            seen.set()

    return Transcript(listener=listener), seen


def raises(fn, *args, **kw) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        fn(*args, **kw)
    return info.value


# ============================================================== §9 fake-provider modes


def test_default_first_request_is_id_2_and_one_line_on_the_wire(provider):
    p = started(provider("trace-bytes"))
    assert p.init_results == [{"protocol": 1, "name": "fake"}]
    assert p.request("repo/tree", {"repo": "o/r", "ref": None}) == {}
    wire = b'{"jsonrpc":"2.0","id":2,"method":"repo/tree","params":{"repo":"o/r","ref":null}}\n'
    assert f"received {wire!r}" in p.stderr_tail()
    out = [e for e in p.transcript.entries() if e.direction == "out"]
    assert [e.id for e in out] == [1, 2]
    assert out[1].raw.encode() + b"\n" == wire


def test_hang_on_2_times_out_and_the_transport_stays_usable(provider):
    p = started(provider("hang-on-2", deadline_s=0.3))
    t0 = time.monotonic()
    err = raises(p.request, "repo/tree", {"repo": "o/r", "ref": None})
    elapsed = time.monotonic() - t0
    assert isinstance(err, ProviderTimeout) and err.kind == "timeout" and err.origin == "host"
    assert err.message == "provider timeout after 0.3s" and err.request_id == 2
    assert 0.29 <= elapsed < 5
    assert p.request("repo/tree", {"repo": "o/r", "ref": None}) == {}   # id 3
    assert p.generation == 1 and p.alive


def test_die_on_2_fails_fast_with_closed_output(provider):
    p = started(provider("die-on-2", deadline_s=30))
    t0 = time.monotonic()
    err = raises(p.request, "x", {})
    assert time.monotonic() - t0 < 5
    assert isinstance(err, ProviderClosed) and err.kind == "provider"
    assert err.message.startswith("provider closed its output")
    assert "exited with code 0" in err.message
    assert not p.alive and p.lifecycle == "dead" and p.in_flight == 0


def test_die_on_2_restart_pays_rung_1_and_posts_a_one_shot_notice(provider):
    p = started(provider("die-on-2", respawn="host"))
    raises(p.request, "x", {})
    t0 = time.monotonic()
    assert p.request("y", {}) == {}
    assert time.monotonic() - t0 >= 1.0
    notice = p.take_notice()
    assert "provider restarted" in notice
    assert p.take_notice() == ""
    assert p.generation == 2
    ids = [(e.id, e.msg["method"]) for e in p.transcript.entries() if e.direction == "out"]
    assert ids == [(1, "initialize"), (2, "x"), (3, "initialize"), (4, "y")]


def test_die_on_2_waiter_reuses_the_rebuilders_outcome(provider):
    transcript, sleeping = on_event("respawn attempt")
    p = started(provider("die-on-2", respawn="host", transcript=transcript))
    raises(p.request, "x", {})
    got: dict = {}
    t0 = time.monotonic()
    a = threading.Thread(target=lambda: got.setdefault("a", p.request("a", {})))
    a.start()
    assert sleeping.wait(5)          # A is the rebuilder, in its backoff now
    assert p.lifecycle == "respawning"
    got["b"] = p.request("b", {})    # B parks on A's attempt
    a.join(10)
    assert got == {"a": {}, "b": {}}
    assert time.monotonic() - t0 < 4
    assert p.generation == 2
    attempts = [e for e in p.transcript.entries() if "respawn attempt" in e.raw]
    assert len(attempts) == 1


def test_die_on_2_failed_rebuild_fails_the_waiter_at_once_and_stays_recoverable(
        provider, tmp_path):
    wrapper = tmp_path / "adapter.sh"
    script = f"#!/bin/sh\nexec {sys.executable} {PEER[1]} --mode die-on-2\n"

    def install():
        wrapper.write_text(script)
        wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)

    install()
    transcript, sleeping = on_event("respawn attempt")
    p = started(provider("", argv=[str(wrapper)], respawn="host", transcript=transcript))
    raises(p.request, "x", {})
    wrapper.unlink()                 # the rebuild's spawn will fail
    errors: dict = {}

    def rebuilder():
        try:
            p.request("a", {})
        except ProviderError as exc:
            errors["a"] = exc

    a = threading.Thread(target=rebuilder)
    a.start()
    assert sleeping.wait(5)
    t0 = time.monotonic()
    err_b = raises(p.request, "b", {})
    assert time.monotonic() - t0 < 2
    a.join(10)
    assert err_b.message.startswith("provider restart failed: ")
    assert "cannot start adapter" in err_b.message and err_b.kind == "provider"
    assert "cannot start adapter" in errors["a"].message
    assert p.lifecycle == "dead"     # recoverable, never stuck respawning
    assert "keeps failing to restart" in p.take_notice()
    install()
    assert p.request("c", {}) == {}  # a fresh request rebuilds (same rung) and succeeds
    assert "provider restarted" in p.take_notice()


def test_die_on_2_progressive_search_shares_the_recovery_gate(provider):
    p = started(provider("die-on-2", respawn="host"))
    err = raises(p.request, "search/code", SEARCH)
    assert err.kind == "provider"
    call = p.call("search/code", SEARCH)
    assert call.result() == {} and call.streaming
    assert p.generation == 2


def test_die_now_fails_the_first_request(provider):
    p = started(provider("die-now", deadline_s=30))
    err = raises(p.request, "search/repos", {"query": ""})
    assert isinstance(err, ProviderClosed)


def _spawn_then(monkeypatch, settle):
    """Child.spawn as the transport sees it, but ``settle(child)`` runs before
    the handshake is written: the write then meets what the child did first."""
    import wire.transport as T
    real = T.Child.spawn

    def spawn(*args, **kw):
        child = real(*args, **kw)
        settle(child)
        return child

    monkeypatch.setattr(T.Child, "spawn", spawn)


def test_exit_before_the_handshake_write_names_the_exit(provider, monkeypatch):
    # the child is gone and its reader is held until the handshake's write is
    # over, so that write meets a broken pipe first (the race a loaded machine
    # sometimes runs): the error still names the exit and its code
    import wire.transport as T
    written = threading.Event()
    real_reader, real_write = T.Provider._reader, T.Provider._write

    def reader(self, gen):
        written.wait(10)
        real_reader(self, gen)

    def write(self, child, data):
        try:
            real_write(self, child, data)
        finally:
            written.set()

    monkeypatch.setattr(T.Provider, "_reader", reader)
    monkeypatch.setattr(T.Provider, "_write", write)
    _spawn_then(monkeypatch, lambda child: child.wait(10))
    p = provider("x", argv=[sys.executable, "-c", "import sys; sys.exit(3)"])
    err = raises(p.start)
    assert isinstance(err, ProviderClosed), err.message
    assert "exited with code 3" in err.message and err.method == "initialize"


def test_input_closed_by_a_live_child_keeps_the_write_reason(provider, monkeypatch, tmp_path):
    fifo = tmp_path / "closed"
    os.mkfifo(fifo)
    code = ("import os, sys, time; os.close(0); "
            f"open({str(fifo)!r}, 'w').close(); time.sleep(60)")

    def until_its_input_is_closed(child):
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        try:
            ready, _, _ = select.select([fd], [], [], 10)
            assert ready, "the child did not close its input"
            while os.read(fd, 1):   # EOF: the child has closed its end, so fd 0 first
                pass
        finally:
            os.close(fd)

    _spawn_then(monkeypatch, until_its_input_is_closed)
    p = provider("x", argv=[sys.executable, "-c", code])
    err = raises(p.start)
    assert not isinstance(err, ProviderClosed), err.message
    assert "write" in err.message and "Broken pipe" in err.message


def test_die_on_reinit_posts_one_notice_per_failing_streak(provider):
    p = started(provider("die-on-reinit", deadline_s=1, state=True, respawn="host"))
    assert isinstance(raises(p.request, "x", {}), ProviderClosed)
    notices = []
    for _ in range(2):
        err = raises(p.request, "x", {})
        assert err.kind == "provider" and "closed its output" in err.message
        notices.append(p.take_notice())
    assert sum("keeps failing to restart" in n for n in notices) == 1
    rungs = [e.raw for e in p.transcript.entries() if "respawn attempt" in e.raw]
    assert len(rungs) == 2 and all("(rung 1)" in r for r in rungs)   # failures do not climb
    assert p.lifecycle == "dead"


def test_slow_succeeds(provider):
    p = started(provider("slow", deadline_s=2))
    assert p.request("x", {}) == {}


def test_error_kinds_map_like_the_host(provider):
    p = started(provider("error-kinds", deadline_s=2))
    errs = [raises(p.request, "x", {}) for _ in range(4)]
    assert [e.kind for e in errs] == ["auth", "rate_limited", "other", "other"]
    assert [e.retry_after_s for e in errs] == [None, 37, None, None]
    assert [e.raw_kind for e in errs] == ["auth", "rate_limited", "bogus-kind", None]
    assert errs[0].message == "auth happened" and errs[3].message == "plain"
    assert all(e.origin == "adapter" and e.code == 1 for e in errs)
    assert errs[1].raw == {"code": 1, "message": "slow down",
                           "data": {"kind": "rate_limited", "retry_after_s": 37}}


def test_stream_search_delivers_batches_in_order(provider):
    p = started(provider("stream-search"))
    seen = []
    call = p.call("search/code", SEARCH, on_partial=seen.append)
    assert call.result() == {"items": [], "truncated": True}
    assert [[(h["path"], h["line"]) for h in b] for b in call.partials] == [[("f1.rs", 1)],
                                                                            [("f2.rs", 2)]]
    assert seen == call.partials and call.partial_count == 2


def test_a_failing_on_partial_callback_does_not_kill_the_reader(provider):
    p = started(provider("stream-search"))

    def boom(items):
        raise ValueError("bug in a case")

    call = p.call("search/code", SEARCH, on_partial=boom)
    with pytest.raises(ValueError, match="bug in a case"):
        call.result()
    assert call.outcome == "result" and len(call.partials) == 2
    assert p.alive and p.request("ping", {}) == {}


def test_die_mid_stream_keeps_the_batch_and_fails(provider):
    p = started(provider("die-mid-stream"))
    call = p.call("search/code", SEARCH)
    call.wait()
    assert call.outcome == "closed" and call.error.kind == "provider"
    assert [[h["path"] for h in b] for b in call.partials] == [["only.rs"]]


def test_stream_slow_each_partial_resets_the_inactivity_window(provider):
    p = started(provider("stream-slow", deadline_s=0.4))
    call = p.call("search/code", SEARCH)
    assert call.result() == {"items": [], "truncated": False}
    assert len(call.partials) == 3


def test_stream_slow_unsolicited_partials_do_not_extend_a_round_trip(provider):
    p = started(provider("stream-slow", deadline_s=0.25))
    call = p.call("search/code", {"q": "hit", "limit": 500})
    call.wait()
    assert call.outcome == "timeout" and call.partials == [] and call.partial_count == 0
    assert outcomes(p, kind="partial", outcome="not_streaming")


def test_swap_2_3_routes_out_of_order_replies(provider):
    p = started(provider("swap-2-3"))
    a = p.call("x", {})              # id 2, on the wire when call() returns
    b = p.call("y", {})              # id 3
    assert b.result() == {"for": 3}
    assert a.result() == {"for": 2}
    assert b.finished_at < a.finished_at


def test_double_final_first_reply_wins(provider):
    p = started(provider("double-final"))
    assert p.request("x", {}) == {"which": 1}
    assert p.request("y", {}) == {}
    dup = outcomes(p, kind="reply", outcome="retired_id")
    assert [e.id for e in dup] == [2]


def test_partial_after_final_is_dropped(provider):
    p = started(provider("partial-after-final"))
    calls = []
    for _ in range(2):
        call = p.call("search/code", SEARCH, on_partial=calls.append)
        assert call.result() == {"items": [], "truncated": False}
        assert call.partials == []
    assert p.request("ping", {}) == {}   # the reader is past the second stray partial
    assert calls == []
    assert [e.id for e in outcomes(p, kind="partial", outcome="retired_id")] == [2, 3]


def test_unknown_id_is_dropped(provider):
    p = started(provider("unknown-id"))
    assert p.request("x", {}) == {"real": True}
    assert p.request("y", {}) == {"real": True}
    assert len(outcomes(p, kind="reply", outcome="unknown_id")) == 3   # incl. initialize's


def test_late_then_next_late_reply_cannot_satisfy_the_next(provider):
    p = started(provider("late-then-next", deadline_s=0.3))
    assert isinstance(raises(p.request, "x", {}), ProviderTimeout)
    assert p.request("y", {}) == {"fresh": True}
    late = outcomes(p, kind="reply", outcome="retired_id")
    assert [e.id for e in late] == [2] and late[0].msg["result"] == {"late": True}


def test_hang_2_die_3_fails_both_callers_at_once(provider):
    p = started(provider("hang-2-die-3", deadline_s=30))
    t0 = time.monotonic()
    a = p.call("x", {})
    b = p.call("y", {})
    a.wait()
    b.wait()
    assert time.monotonic() - t0 < 5
    assert (a.outcome, b.outcome) == ("closed", "closed")
    assert all(c.error.message.startswith("provider closed its output") for c in (a, b))


def test_chatty_stderr_goes_to_a_file_and_never_blocks(provider):
    p = started(provider("chatty-stderr"))
    for _ in range(5):   # ~350 KiB of stderr: would wedge an undrained pipe
        assert p.request("x", {}) == {}
    assert "rootle-fake-stderr-marker id=6" in p.stderr_tail(200_000)
    t0 = time.monotonic()
    p.close()
    assert time.monotonic() - t0 < 10
    assert "rootle-fake-stderr-marker" in p.stderr_tail(200_000)   # kept after close
    assert any(e.direction == "stderr" for e in p.transcript.entries())


def test_rich_repos_carries_metadata(provider):
    p = started(provider("rich-repos", deadline_s=2))
    repos = p.request("org/repos", {"org": "o"})["repos"]
    assert repos == ["plain", {"name": "meta", "description": "d", "private": True,
                               "archived": True, "pushed_at": "2026-08-20T10:11:12Z"}]


def test_check_limit_one_shot_and_progressive(provider):
    p = started(provider("check-limit", deadline_s=2))
    assert p.request("search/code", {"q": "x", "limit": 500})["truncated"] is True
    assert p.request("search/code", {"q": "x", "limit": 500, "partial": True})["truncated"] is True


def test_echo_init_and_respawn_resends_the_same_params(provider, tmp_path):
    params = {"protocol": 1, "cache_bytes": 512 * 2**20, "cache_dir": str(tmp_path / "c")}
    p = provider("echo-init", init_params=params)
    assert p.start()["cache"] == {"bytes": 218}
    assert p.request("x", {}) == {}
    assert p.respawn()["cache"] == {"bytes": 218}
    assert p.generation == 2 and len(p.init_results) == 2
    inits = [e for e in p.transcript.entries() if e.direction == "out"
             and e.msg["method"] == "initialize"]
    assert [e.id for e in inits] == [1, 3]
    assert all(e.msg["params"] == params for e in inits)


# ============================================================== framing abuse


def test_garbage_lines_are_recorded_and_never_fatal(provider):
    p = started(provider("garbage"))
    assert p.request("x", {}) == {"ok": 2}
    assert p.request("y", {}) == {"ok": 3}
    malformed = [e.raw for e in outcomes(p, outcome="malformed")]
    assert "hello, this is not JSON" in malformed
    assert '{"a":1}{"b":2}' in malformed
    assert any("NaN" in m for m in malformed)
    ignored = outcomes(p, outcome="ignored")
    assert {e.raw for e in ignored} >= {"[1,2,3]", "42", '"str"', "null"}
    assert any(e.msg and isinstance(e.msg, dict) and e.msg.get("method") == "window/logMessage"
               for e in ignored)
    assert p.alive and p.generation == 1


def test_invalid_utf8_ends_the_generation(provider):
    p = started(provider("invalid-utf8"))
    err = raises(p.request, "x", {})
    assert isinstance(err, ProviderClosed) and "invalid UTF-8" in err.message
    bad = outcomes(p, outcome="invalid_utf8")
    assert len(bad) == 1 and "\\xff\\xfe" in bad[0].raw
    assert not outcomes(p, kind="reply", outcome="delivered")[1:]   # the later reply is unread
    assert p.request("y", {}) == {}                                # immediate respawn
    assert p.generation == 2


def test_huge_line_is_cut_discarded_and_recorded(provider):
    p = started(provider("huge-line", deadline_s=20))
    assert p.request("x", {}) == {"ok": True}
    over = outcomes(p, outcome="oversize")
    assert len(over) == 1 and over[0].size > 40 * 2**20
    assert over[0].raw.startswith('{"jsonrpc":"2.0","id":2,"result":{"blob":"AAAA')
    assert len(over[0].raw) < 4096
    blob = p.request("y", {})["blob"]              # 4 MiB: under the cap, delivered whole
    assert blob == "B" * 4 * 2**20


def test_crlf_line_endings_are_tolerated(provider):
    p = started(provider("crlf"))
    assert p.request("x", {}) == {"crlf": True}


def test_blank_lines_are_skipped(provider):
    p = started(provider("blank-lines"))
    mark = p.transcript.mark()
    assert p.request("x", {}) == {"ok": True}
    assert p.request("y", {}) == {"ok": True}
    assert [e.kind for e in p.transcript.since(mark) if e.direction == "in"] == ["reply", "reply"]


def test_invalid_ids_are_dropped_and_the_request_times_out(provider):
    p = started(provider("invalid-ids", deadline_s=0.5))
    assert isinstance(raises(p.request, "x", {}), ProviderTimeout)
    bad = outcomes(p, outcome="invalid_id")
    assert [e.msg["id"] for e in bad] == ["2", 0, -2, 2.0, None, True, 2**64, {}, [2]]
    assert p.request("y", {}) == {}


def test_partial_for_a_non_streaming_request_is_dropped(provider):
    p = started(provider("partial-non-streaming"))
    call = p.call("repo/tree", {"repo": "o/r", "ref": None})
    assert call.result() == {"ok": True} and call.partials == []
    assert [e.id for e in outcomes(p, kind="partial", outcome="not_streaming")] == [2]


def test_partial_with_a_top_level_id_is_routed_as_the_reply(provider):
    p = started(provider("partial-top-id"))
    call = p.call("search/code", SEARCH)
    call.wait()
    assert call.outcome == "error" and call.error.kind == "other"
    assert call.error.message == "provider reply without result" and call.partials == []
    assert p.request("ping", {}) == {}          # the reader is past the real reply for #2
    assert [(e.id, e.outcome) for e in outcomes(p, kind="reply")] == [
        (1, "delivered"), (2, "delivered"), (2, "retired_id"), (3, "delivered")]


def test_line_splitter_never_buffers_more_than_the_cap():
    cap = 1024
    splitter = LineSplitter(cap)
    out = []
    for chunk in [b'{"a":"' + b"x" * 5000] + [b"y" * 4096] * 50 + [b'"}\n{"id":1}\r\n', b"\n"]:
        out += splitter.feed(chunk)
        assert splitter.pending() <= cap + 1
    assert len(out) == 2 and out[0].violation == "oversize" and out[1] == b'{"id":1}'
    assert out[0].size == 6 + 5000 + 4096 * 50 + 2


@settings(max_examples=300, deadline=None, database=None)
@given(data=st.lists(st.sampled_from([b"a", b"bb", b"\r", b"\n", b"\r\n", b"x" * 9, b" "]),
                     max_size=40),
       cuts=st.lists(st.integers(0, 200), max_size=8), cap=st.integers(1, 12))
def test_line_splitter_matches_a_whole_buffer_split(data, cuts, cap):
    stream = b"".join(data)
    want = []
    for raw in stream.split(b"\n")[:-1]:
        if len(raw) > cap + 1 or (len(raw) == cap + 1 and not raw.endswith(b"\r")):
            want.append(("oversize", len(raw)))
        elif raw.removesuffix(b"\r"):
            want.append(raw.removesuffix(b"\r"))
    splitter, got, at = LineSplitter(cap), [], 0
    for cut in sorted(set(cuts)) + [len(stream)]:
        got += splitter.feed(stream[at:cut])
        at = max(at, cut)
        assert splitter.pending() <= cap + 1
    got = [("oversize", g.size) if not isinstance(g, bytes) else g for g in got]
    assert got == want


def test_frame_reader_classifies_per_the_host_rules():
    frames = FrameReader().feed(
        b'{"id":7,"method":"$/partial","params":{"id":3}}\n'      # usable id: a reply
        b'{"method":"$/partial","params":{"id":3,"items":[]}}\n'  # partial for 3
        b'{"method":"$/partial","params":{"id":0}}\n'             # unusable params.id: ignored
        b'{"id":18446744073709551615,"result":{}}\n'              # the largest usable id
        b'{"jsonrpc":"2.0","id":1,"result":{}}  \r\n'             # CR and spaces tolerated
        b'\xc3\x28\n'                                             # invalid UTF-8: fatal
        b'{"id":9,"result":{}}\n')                                # never read
    assert [(f.kind, f.id, f.violation) for f in frames] == [
        ("reply", 7, None), ("partial", 3, None), ("ignored", None, None),
        ("reply", 2**64 - 1, None), ("reply", 1, None), ("violation", None, "invalid_utf8")]


# ============================================================== the client's own API


def test_kill_fails_in_flight_calls_and_ids_continue_across_generations(provider):
    p = started(provider("hang-on-2", deadline_s=30))
    call = p.call("x", {})                      # id 2: never answered
    p.kill()
    assert call.done and call.outcome == "closed"
    assert "killed by signal SIGKILL" in call.error.message
    assert not p.alive
    assert p.request("y", {}) == {}             # immediate mode: respawned at once
    ids = [e.id for e in p.transcript.entries() if e.direction == "out"]
    assert ids == [1, 2, 3, 4] and p.generation == 2


def test_cancel_is_advisory(provider):
    p = started(provider("stream-slow", deadline_s=2))
    call = p.call("search/code", SEARCH, on_partial=lambda items: p.cancel(call))
    assert call.result() == {"items": [], "truncated": False}
    assert len(call.partials) == 3              # cancel did not end the stream
    sent = [e for e in p.transcript.entries() if e.direction == "out"
            and e.msg.get("method") == "$/cancelRequest"]
    assert sent and all(e.msg["params"] == {"id": call.id} for e in sent)
    assert p.request("ping", {}) == {}
    assert outcomes(p, outcome="invalid_id")    # the fake "answers" a cancel with id 0


def test_cancel_at_once_sends_the_request_and_its_cancel_in_one_write(provider):
    """call(..., cancel_at_once=True): the request and its $/cancelRequest go
    in one write (the adapter reads the cancel while the request is surely in
    flight), both in the transcript in that order; the call ends as usual."""
    p = started(provider("stream-slow", deadline_s=2))
    writes = []
    real = p.child.write

    def recording(data):
        writes.append(bytes(data))
        return real(data)
    p.child.write = recording
    call = p.call("search/code", SEARCH, cancel_at_once=True)
    assert call.result() == {"items": [], "truncated": False}
    assert len(writes) == 1, writes
    sent = [json.loads(line) for line in writes[0].splitlines()]
    assert [m.get("method") for m in sent] == ["search/code", "$/cancelRequest"]
    assert sent[0]["id"] == call.id and sent[1]["params"] == {"id": call.id}
    logged = [e.msg.get("method") for e in p.transcript.entries() if e.direction == "out"]
    assert logged[-2:] == ["search/code", "$/cancelRequest"]


def test_start_failures_are_one_clear_error(provider):
    with pytest.raises(SpawnError, match="nonexistent-adapter"):
        provider("", argv=["/nonexistent-adapter"]).start()
    err = raises(started, provider("mute", deadline_s=0.3))
    assert isinstance(err, ProviderTimeout) and err.method == "initialize"
    p = provider("protocol-2")
    err = raises(p.start)
    assert err.message == "unsupported provider protocol 2" and err.kind == "provider"
    assert p.init_results == [{"protocol": 2, "name": "fake"}]
    assert raises(p.request, "x", {}).message.startswith("provider is not started")


def test_close_is_idempotent_fails_in_flight_and_leaves_nothing(provider):
    p = started(provider("hang-after-init"))
    call = p.call("x", {})
    child = p.child
    p.close()
    p.close()
    assert call.outcome == "closed"
    assert not child.survivors()
    assert raises(p.request, "y", {}).message == "provider is closed"


def test_a_grandchild_holding_stdout_means_timeout_not_eof_and_close_reaps_it(provider):
    p = started(provider("orphan-holds-stdout", deadline_s=0.5))
    err = raises(p.request, "x", {})
    assert isinstance(err, ProviderTimeout)      # no EOF while the grandchild holds the pipe
    assert p.lifecycle == "alive" and not p.alive
    t0 = time.monotonic()
    p.close()
    assert time.monotonic() - t0 < 10
    assert not p.child.survivors()


def test_a_write_blocked_by_a_peer_that_stops_reading_is_bounded(provider):
    p = started(provider("stop-reading", deadline_s=0.5))
    first = p.call("first", {})                     # the last line the peer reads
    t0 = time.monotonic()
    call = p.call("x", {"blob": "x" * 300_000})     # more than a pipe holds
    assert time.monotonic() - t0 < 5                # the watchdog killed the child
    call.wait()
    first.wait()
    assert first.outcome == "timeout" and call.outcome in ("timeout", "error")
    assert p.lifecycle == "dead" and not p.alive
    assert any("does not read its stdin" in e.raw for e in p.transcript.entries())


def test_transcript_stays_bounded_under_a_long_stream(provider, tmp_path):
    transcript = Transcript(max_entries=50, max_total_chars=20_000)
    p = provider("bench-stream", transcript=transcript)
    p.argv += ["--items", "20000", "--batches", "400"]
    started(p)
    count = 0

    def on_partial(items):
        nonlocal count
        count += len(items)

    p.call("search/code", SEARCH, on_partial=on_partial, keep_partials=False).result()
    assert count == 20000
    kept = transcript.entries()
    assert len(kept) <= 50 and sum(len(e.raw) for e in kept) <= 20_000
    assert all(e.msg is None for e in kept if e.size > transcript.max_frame_chars)
    assert "reply" in transcript.render(5)
    path = tmp_path / "t.jsonl"
    transcript.dump_jsonl(path)
    assert len(path.read_text().splitlines()) == len(kept)
