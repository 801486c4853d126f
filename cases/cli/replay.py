"""Replay: ``python3 run --replay TRANSCRIPT.jsonl [-- adapter argv...]``.

Re-sends the host side of a saved case transcript (``--transcripts DIR`` or a
failing case's kept file) to an adapter, without the suite, and says where the
adapter's frames now differ from the recorded ones, or that they match. This
is the reproduction an adapter author attaches to a bug report, or runs with
the adapter under a debugger (give the debugger's command after ``--``).

What is sent. Each process of the transcript (the group adapter, a case's
``spawn#n``), one after another, against a freshly materialized fixture (for
an explore finding's transcript, a private copy of the drawn set written
beside it, ``drawn/``), with
the adapter's environment and argv built as the suite builds them. Every
recorded host frame is written as recorded (same ids, same bytes; the
recorded fixture and cache paths are swapped for the new ones). A new
generation in the recording starts a new process; a recorded "harness kills
generation" kills it at that point. When a process's record starts after its
handshake (a group adapter serving a later case), an ``initialize`` like the
suite's is sent first, with the id just below the first recorded one.

Timing. Before each host frame the replay waits for what the host had been
waiting for: when adapter frames arrived between the previous host frame and
this one in the recording, it waits (up to the deadline, FORGE_DEADLINE_S) for
the same frame now (the reply to the same id, the same partial, ...) and then
the recorded gap after it; otherwise it waits the recorded gap after the
previous host frame. So a cancel sent 14 ms after its request, or a request
sent 1.2 s into a stream, keeps its timing. Gaps are capped at ``MAX_GAP_S``.
At the end of a process its stdin is closed and its frames are read to EOF
(the adapter must exit on EOF), bounded by the deadline.

What "differ" means. Adapter frames are paired by what they are, not by
position: the reply to id N; the items of all ``$/partial`` batches of id N,
concatenated (batch boundaries are timing, not behaviour), and whether any came
after the reply; the k-th notification of a method; the k-th framing
violation. Then:

- a recorded frame that did not come, or a new frame with no recorded
  counterpart, differs;
- values are compared member by member; a member present on one side only
  differs when the protocol defines it (wire/messages.py's models) - an
  unknown member is never a difference;
- volatile values are not compared: ``error.message`` text, ``index.as_of``,
  the fixture and cache paths (normalised to ``{fixture}`` / ``{cache}``);
- content ids (``sha``) are opaque: they need not equal the recorded ones, but
  must be consistent - the same recorded id must map to one new id everywhere
  in the replay (all processes and generations), and two recorded ids to two;
- a frame the recording cut (over 2 KiB) is compared by its recorded head:
  the new frame must start the same way (content ids masked, checked for
  consistency as above);
- the items of a stream the host cancelled are not compared (how far it got
  before the cancel is timing), nor a cancelled request's reply items and
  ``truncated``; only the rest of its reply and that no batch follows it.

Exit: 0 the frames match, 1 they differ, 2 the transcript or adapter cannot
be used.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

from cases.kit.settings import CACHE_PROVIDER

MAX_GAP_S = 10.0
# Absolute paths of a run's fixture copy and cache dirs (volatile: new every run).
_SEGMENTS = r"(?:/[^\s\"'/]+)*?"
_FIXTURE_RE = re.compile(_SEGMENTS + r"/forge-fixture-[A-Za-z0-9_]+")
_CACHE_RE = re.compile(_SEGMENTS + r"/forge-(?:run|preflight|replay|explore)-[A-Za-z0-9_]+"
                       r"/cache-[^\s\"'/]+")
_SHA_RE = re.compile(r'"sha":"([^"\\]*)"')
VOLATILE = {"as_of"}            # members whose value is never compared
VOLATILE_IN_ERROR = {"message"}
ENVELOPE = {"jsonrpc", "id", "result", "error", "method", "params", "code", "message", "data",
            "kind", "items", "partial"}


class ReplayError(Exception):
    """The transcript or the adapter cannot be used (exit 2)."""


def _say(text: str) -> None:
    print(f"forge-conformance: {text}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ the recording

def load(path: Path) -> dict[str, list[dict]]:
    """Rows by process label, in file order."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise ReplayError(f"--replay: cannot read {str(path)!r}: {exc.strerror or exc}") from None
    by_process: dict[str, list[dict]] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            row["direction"], row["t"], row["generation"]   # noqa: B018 (shape check)
        except (ValueError, KeyError, TypeError):
            raise ReplayError(f"--replay: {path} line {number} is not a forge-conformance "
                              f"transcript row (write them with --transcripts DIR)") from None
        by_process.setdefault(str(row.get("process") or "adapter"), []).append(row)
    if not any(r["direction"] == "out" for rows in by_process.values() for r in rows):
        raise ReplayError(f"--replay: {path} holds no host frame to send")
    return by_process


def _key(kind: str, msg, frame_id, counters: dict) -> tuple:
    """What a frame is, for pairing (see module doc)."""
    if kind == "reply":
        return ("reply", frame_id)
    if kind == "partial":
        n = counters[("partial", frame_id)] = counters.get(("partial", frame_id), 0) + 1
        return ("partial", frame_id, n)
    if kind in ("notification", "ignored"):
        method = msg.get("method") if isinstance(msg, dict) else None
        n = counters[("n", method)] = counters.get(("n", method), 0) + 1
        return ("notification", method, n)
    n = counters[kind] = counters.get(kind, 0) + 1
    return (kind, n)


# ------------------------------------------------------------------ one live process

class _Live:
    """One adapter process: writes lines, a reader thread collects its frames."""

    def __init__(self, argv: list[str], env: dict, stderr_path: Path):
        from wire.framing import DEFAULT_MAX_LINE_BYTES, FrameReader
        from wire.process import Child
        self.child = Child.spawn(argv, env=env, stderr_path=stderr_path)
        self.frames: list[tuple[float, tuple, object]] = []   # (time, key, frame)
        self.cond = threading.Condition()
        self.ended = False
        self._counters: dict = {}
        self._reader = FrameReader(DEFAULT_MAX_LINE_BYTES)
        self._thread = threading.Thread(target=self._read, name="replay-reader", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        fd = self.child.stdout_fd
        try:
            while True:
                chunk = os.read(fd, 65536)
                frames = self._reader.flush() if not chunk else self._reader.feed(chunk)
                now = time.monotonic()
                with self.cond:
                    for f in frames:
                        kind = "notification" if f.kind == "ignored" else f.kind
                        self.frames.append((now, _key(kind, f.msg, f.id, self._counters), f))
                    self.cond.notify_all()
                if not chunk or self._reader.ended:
                    break
        except OSError:
            pass
        finally:
            with self.cond:
                self.ended = True
                self.cond.notify_all()

    def wait_for(self, key: tuple, deadline: float) -> float | None:
        """When the frame with ``key`` arrived (waiting until ``deadline``), or
        None. A stream's batches come before its reply (PROTOCOL §5.3), so a
        batch not here once the reply to its id is has not come in time: the
        wait ends there (a later one is still read, and compared)."""
        reply = ("reply", key[1]) if key[0] == "partial" else None
        with self.cond:
            while True:
                for when, k, _ in self.frames:
                    if k == key:
                        return when
                remaining = deadline - time.monotonic()
                if self.ended or remaining <= 0 or any(k == reply for _, k, _ in self.frames):
                    return None
                self.cond.wait(remaining)

    def write(self, line: bytes) -> bool:
        try:
            self.child.write(line)
            return True
        except OSError:
            return False

    def finish(self, deadline: float, *, kill: bool) -> None:
        if kill:
            self.child.kill()
        else:
            try:
                self.child.close_stdin()
            except OSError:
                pass
        with self.cond:
            while not self.ended and time.monotonic() < deadline:
                self.cond.wait(deadline - time.monotonic())
        self.child.stop()
        self._thread.join(2.0)
        self.child.close()


# ------------------------------------------------------------------ comparing

def _known_members() -> set[str]:
    """Every member name the protocol defines (the models in wire/messages.py)."""
    import attrs
    from wire import messages
    names = set(ENVELOPE)
    for value in vars(messages).values():
        if isinstance(value, type) and attrs.has(value):
            for f in attrs.fields(value):
                names.add(f.name)
                if f.alias:
                    names.add(f.alias)
                names.add(str(f.metadata.get("name", f.name)))
    return names


class Comparer:
    def __init__(self):
        self.known = _known_members()
        self.ids: dict[str, str] = {}      # recorded content id -> new
        self.back: dict[str, str] = {}     # new -> recorded

    def norm(self, text: str) -> str:
        text = _FIXTURE_RE.sub("{fixture}", text)
        return _CACHE_RE.sub("{cache}", text)

    def diff(self, old, new, where: str, out: list[str], *, in_error: bool = False) -> None:
        if isinstance(old, dict) and isinstance(new, dict):
            for k in sorted(set(old) | set(new)):
                here = f"{where}.{k}" if where else k
                if k not in new or k not in old:
                    if k in self.known:
                        side = "now missing" if k not in new else "new"
                        shown = old[k] if k in old else new[k]
                        out.append(f"{here}: {side} (recorded {_show(old.get(k, '<absent>'))}"
                                   + (f", now {_show(shown)}" if k in new else "") + ")")
                    continue
                if k in VOLATILE or (in_error and k in VOLATILE_IN_ERROR):
                    continue
                if k == "sha" and isinstance(old[k], str) and isinstance(new[k], str):
                    self._content_id(old[k], new[k], here, out)
                    continue
                self.diff(old[k], new[k], here, out, in_error=in_error or k == "error")
            return
        if isinstance(old, list) and isinstance(new, list):
            for i, (a, b) in enumerate(zip(old, new)):
                self.diff(a, b, f"{where}[{i}]", out, in_error=in_error)
                if len(out) > 40:
                    return
            if len(old) != len(new):
                out.append(f"{where}: {len(old)} elements recorded, {len(new)} now")
            return
        if isinstance(old, str) and isinstance(new, str):
            if self.norm(old) != self.norm(new):
                out.append(f"{where}: recorded {_show(old)}, now {_show(new)}")
            return
        if type(old) is not type(new) or old != new:
            out.append(f"{where}: recorded {_show(old)}, now {_show(new)}")

    def head(self, old_head: str, new_text: str) -> list[str]:
        """A frame the recording cut: its head against the new frame's text, the
        content ids in it checked for consistency and masked, paths normalised."""
        out: list[str] = []
        old_ids, new_ids = _SHA_RE.findall(old_head), _SHA_RE.findall(new_text)
        for i, (a, b) in enumerate(zip(old_ids, new_ids)):
            self._content_id(a, b, f"(cut frame) sha #{i + 1}", out)
        a = self.norm(_SHA_RE.sub('"sha":_', old_head))
        b = self.norm(_SHA_RE.sub('"sha":_', new_text))
        a = a[: max(a.rfind(","), 0)]   # the recorded head ends mid-value
        if not b.startswith(a):
            at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            out.append(f"(cut frame, compared by its first {len(a)} chars) at char {at}: "
                       f"recorded {_show(a[max(at - 30, 0):at + 40])}, "
                       f"now {_show(b[max(at - 30, 0):at + 40])}")
        return out

    def _content_id(self, old: str, new: str, where: str, out: list[str]) -> None:
        seen_new, seen_old = self.ids.get(old), self.back.get(new)
        if seen_new is None and seen_old is None:
            self.ids[old], self.back[new] = new, old
        elif seen_new is not None and seen_new != new:
            out.append(f"{where}: content id inconsistent: recorded {_show(old)} was answered "
                       f"as {_show(seen_new)} before, now {_show(new)}")
        elif seen_old is not None and seen_old != old:
            out.append(f"{where}: content id {_show(new)} now stands for two recorded ids "
                       f"({_show(seen_old)} and {_show(old)})")


def _show(value, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = json.dumps(text, ensure_ascii=False) if isinstance(value, str) else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ------------------------------------------------------------------ the replay

class Replay:
    def __init__(self, rows_by_process: dict[str, list[dict]], settings, fixture_dir: Path,
                 temp: Path):
        self.rows = rows_by_process
        self.settings = settings
        self.fixture = fixture_dir
        self.temp = temp
        self.sent = 0
        self.compared = 0
        self.notes: list[str] = []
        self.diffs: list[str] = []
        self.comparer = Comparer()
        self.cancelled: set = set()   # ids the host sent $/cancelRequest for
        self.own: set = set()         # keys of the replay's own frames (its initialize)

    def run(self) -> None:
        for label, rows in self.rows.items():
            gens = sorted({r["generation"] for r in rows if r["direction"] in ("out", "in")})
            for g in gens:
                mine = [r for r in rows if r["generation"] == g]
                self._generation(label, g, mine)

    def _generation(self, label: str, g: int, rows: list[dict]) -> None:
        from wire.errors import SpawnError
        deadline_s = self.settings.deadline_s
        cache = Path(tempfile.mkdtemp(prefix=f"cache-{label}-", dir=self.temp))
        # the run's layout (cases.harness.providers): a recorded cache_dir maps onto it
        handed = cache / "rootle" / "providers" / CACHE_PROVIDER
        handed.mkdir(parents=True)
        try:
            live = _Live(self.settings.argv_for(self.fixture),
                         self.settings.adapter_env(self.fixture),
                         self.temp / f"stderr-{label}-g{g}".replace("#", "_"))
        except SpawnError as exc:
            raise ReplayError(str(exc)) from None
        where = f"{label} g{g}"
        counters: dict = {}
        recorded: list[tuple[tuple, dict]] = []
        outs = [r for r in rows if r["direction"] == "out"]
        killed = any(r["direction"] == "event" and "harness kills generation" in r["raw"]
                     for r in rows)
        try:
            if not outs or not _is_initialize(outs[0]):
                first = next((r["id"] for r in outs if isinstance(r.get("id"), int)), 1)
                init_id = max(first - 1, 0)
                params = {"protocol": 1, "cache_bytes": 268435456, "cache_dir": str(handed)}
                line = json.dumps({"jsonrpc": "2.0", "id": init_id, "method": "initialize",
                                   "params": params}, separators=(",", ":"))
                live.write(line.encode() + b"\n")
                self.own.add(("reply", init_id))
                if live.wait_for(("reply", init_id), time.monotonic() + deadline_s) is None:
                    self.diffs.append(f"{where}: no reply to the replay's own initialize "
                                      f"(id {init_id}) within {deadline_s:g} s")
                    return
                self.notes.append(f"{where}: the record starts after the handshake; sent an "
                                  f"initialize (id {init_id}) first")
            prev_out_t = prev_sent = None
            trigger = None
            for r in rows:
                if r["direction"] == "in":
                    kind = "notification" if r["kind"] == "ignored" else r["kind"]
                    key = _key(kind, r.get("msg"), r.get("id"), counters)
                    recorded.append((key, r))
                    trigger = (key, r["t"])
                    continue
                if r["direction"] != "out":
                    continue
                msg = r.get("msg")
                if isinstance(msg, dict) and msg.get("method") == "$/cancelRequest" \
                        and isinstance(msg.get("params"), dict):
                    self.cancelled.add(msg["params"].get("id"))
                if trigger is not None:
                    got = live.wait_for(trigger[0], time.monotonic() + deadline_s)
                    base = got if got is not None else time.monotonic()
                    gap = r["t"] - trigger[1]
                elif prev_out_t is not None:
                    base, gap = prev_sent, r["t"] - prev_out_t
                else:
                    base, gap = time.monotonic(), 0.0
                pause = base + min(max(gap, 0.0), MAX_GAP_S) - time.monotonic()
                if pause > 0:
                    threading.Event().wait(pause)   # the recorded gap is the behaviour replayed
                data = self._outbound(r, cache)
                if data is None:
                    self.notes.append(f"{where}: host frame seq {r['seq']} was cut in the "
                                      f"recording ({r.get('size')} bytes): not sent")
                else:
                    live.write(data)
                    self.sent += 1
                prev_out_t, prev_sent, trigger = r["t"], time.monotonic(), None
            # everything recorded should arrive before the end (or the kill)
            end = time.monotonic() + deadline_s
            for key, _ in recorded:
                if live.wait_for(key, end) is None:
                    break
        finally:
            live.finish(time.monotonic() + deadline_s, kill=killed)
        self._compare(where, recorded, live.frames)

    def _outbound(self, r: dict, cache: Path) -> bytes | None:
        raw = r.get("raw") or ""
        if (r.get("size") or 0) > len(raw.encode("utf-8")):
            return None
        raw = _CACHE_RE.sub(lambda m: str(cache), raw)
        raw = _FIXTURE_RE.sub(lambda m: str(self.fixture), raw)
        return raw.encode("utf-8") + b"\n"

    def _compare(self, where: str, recorded: list, frames: list) -> None:
        now = {key: f for _, key, f in frames}
        order_now = [key for _, key, _ in frames]
        order_then = [key for key, _ in recorded]
        then = dict(recorded)
        partial_ids = {k[1] for k in list(then) + list(now) if k[0] == "partial"}
        for key, row in recorded:
            if key[0] == "partial":
                continue
            label = _label(key, row.get("msg"))
            if key not in now:
                self.diffs.append(f"{where}: {label}: recorded, did not come now")
                continue
            self.compared += 1
            f = now[key]
            if row.get("msg") is None or f.msg is None:
                old_text = row.get("raw", "")
                new_text = f.text or f.line.decode("utf-8", "replace")
                if row.get("msg") is None and f.msg is not None and key[0] != "violation":
                    out = self.comparer.head(old_text, new_text)   # cut in the recording
                    self.diffs.extend(f"{where}: {label}: {d}" for d in out)
                    continue
                if key[0] == "violation" and self.comparer.norm(old_text) != \
                        self.comparer.norm(new_text):
                    self.diffs.append(f"{where}: {label}: recorded {_show(old_text)}, "
                                      f"now {_show(new_text)}")
                continue
            out: list[str] = []
            old_msg, new_msg = row["msg"], f.msg
            if key[0] == "reply" and key[1] in self.cancelled:
                old_msg, new_msg = _without_progress(old_msg), _without_progress(new_msg)
            self.comparer.diff(old_msg, new_msg, "", out)
            self.diffs.extend(f"{where}: {label}: {d}" for d in out)
        for key in order_now:
            if key not in then and key[0] != "partial" and key not in self.own:
                self.diffs.append(f"{where}: {_label(key, getattr(now[key], 'msg', None))}: "
                                  f"new (not in the recording)")
        for pid in sorted(partial_ids, key=str):
            self._compare_stream(where, pid, recorded, frames, order_then, order_now)

    def _compare_stream(self, where, pid, recorded, frames, order_then, order_now) -> None:
        def items(msgs):
            got, cut = [], False
            for m in msgs:
                if m is None:
                    cut = True
                    continue
                batch = m.get("params", {}).get("items") if isinstance(m, dict) else None
                got.extend(batch if isinstance(batch, list) else [batch])
            return got, cut
        old, old_cut = items([r.get("msg") for k, r in recorded if k[0] == "partial"
                              and k[1] == pid])
        new, new_cut = items([f.msg for _, k, f in frames if k[0] == "partial" and k[1] == pid])
        label = f"$/partial items of #{pid}"
        self.compared += 1
        if pid in self.cancelled:
            pass   # how far a cancelled stream got is timing, not behaviour
        elif not old_cut and not new_cut:
            out: list[str] = []
            self.comparer.diff(old, new, "items", out)
            self.diffs.extend(f"{where}: {label}: {d}" for d in out)
        late_then = _partial_after_reply(order_then, pid)
        late_now = _partial_after_reply(order_now, pid)
        if late_then != late_now:
            self.diffs.append(f"{where}: {label}: " + ("a batch now comes after the reply"
                                                       if late_now else
                                                       "no batch comes after the reply now "
                                                       "(the recording had one)"))


def _without_progress(msg):
    """A reply to a request the host cancelled, less what depends on when the
    cancel landed: the hits it had found by then and whether it was cut
    (``result.items``, ``result.truncated``). Its kind (result or error) and
    its other members are still compared."""
    if isinstance(msg, dict) and isinstance(msg.get("result"), dict):
        result = {k: v for k, v in msg["result"].items() if k not in ("items", "truncated")}
        return {**msg, "result": result}
    return msg


def _partial_after_reply(order: list[tuple], pid) -> bool:
    seen_reply = False
    for k in order:
        if k == ("reply", pid):
            seen_reply = True
        elif seen_reply and k[0] == "partial" and k[1] == pid:
            return True
    return False


def _label(key: tuple, msg) -> str:
    if key[0] == "reply":
        return f"reply to #{key[1]}"
    if key[0] == "notification":
        return f"notification {key[1]} #{key[2]}"
    return f"{key[0]} #{key[-1]}"


def _is_initialize(row: dict) -> bool:
    msg = row.get("msg")
    return isinstance(msg, dict) and msg.get("method") == "initialize"


def drawn_beside(path: Path) -> Path | None:
    """The drawn repository set an explore finding wrote beside its
    transcript (``drawn/``, described in ``drawn.json``), or None: the
    transcript is then replayed against the canonical fixture."""
    folder = path.parent
    if (folder / "drawn").is_dir() and (folder / "drawn.json").is_file():
        return folder / "drawn"
    return None


def main(path: Path, adapter: list[str]) -> int:
    """The CLI's ``--replay``; returns the exit code (see module doc)."""
    import fixture
    from cases.kit.settings import Settings, UsageError, make_temp_area
    try:
        rows = load(path)
        try:
            settings = Settings.from_env(adapter)
        except UsageError as exc:
            raise ReplayError(str(exc)) from None
        # (removed even when a stop signal lands in the cleanup)
        from cases.harness.stopping import LEFTOVERS
        temp = make_temp_area("forge-replay-")
        LEFTOVERS.add(lambda: shutil.rmtree(temp, ignore_errors=True))
        try:
            drawn = drawn_beside(path)
            if drawn is not None:   # an explore finding: its drawn set, a private copy
                where = temp / "forge-fixture-drawn"
                shutil.copytree(drawn, where, symlinks=True)
            else:
                materialized = fixture.materialize(temp)
                LEFTOVERS.add(materialized.cleanup, first=True)
                where = Path(materialized.path)
            r = Replay(rows, settings, where, temp)
            r.run()
        finally:
            LEFTOVERS.drop()
    except ReplayError as exc:
        _say(str(exc))
        return 2
    except fixture.FixtureError as exc:
        _say(f"the fixture is not usable: {exc}")
        return 2
    print(f"replayed {path} against: {shlex.join(settings.adapter)}")
    for note in r.notes:
        print(f"note: {note}")
    if r.diffs:
        print(f"the adapter's frames differ from the recording ({len(r.diffs)} difference(s), "
              f"{r.sent} host frames sent):")
        for d in r.diffs[:200]:
            print(f"  {d}")
        return 1
    print(f"the adapter's frames match the recording ({r.sent} host frames sent, "
          f"{r.compared} adapter frames or streams compared)")
    return 0
