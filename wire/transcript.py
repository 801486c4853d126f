"""The transcript: a bounded record of every frame both ways, stderr and events.

What a failure report shows. Each entry has a sequence number, a monotonic
timestamp, the generation, a direction ("out", "in", "stderr", "event"), a
kind, the line as text (cut to ``max_frame_chars``), the parsed message when
it is small, and for inbound frames the routing outcome.

Memory stays bounded however long a run is (a 200,000-item stream, an endless
flood of junk): the ring keeps at most ``max_entries`` entries and at most
``max_total_chars`` characters of raw text, dropping the oldest first; a
frame longer than ``max_frame_chars`` keeps only its head and no parsed
message. An optional ``listener`` is called with each new entry (tests use
it to wait for an event).
"""

from __future__ import annotations

import collections
import json
import threading
import time
from pathlib import Path
from typing import Any, Callable

import attrs

_monotonic = time.monotonic

DEFAULT_MAX_ENTRIES = 4000
DEFAULT_MAX_FRAME_CHARS = 2048
DEFAULT_MAX_TOTAL_CHARS = 2**20


@attrs.define(slots=True)
class Entry:
    seq: int
    t: float                 # time.monotonic()
    generation: int
    direction: str           # "out" | "in" | "stderr" | "event"
    kind: str                # "request" | "notification" | "reply" | "partial" | "violation" | "note"
    raw: str                 # the line as text (invalid UTF-8 as backslash escapes), cut
    msg: Any = None          # parsed JSON for in/out frames (None for violations / cut frames)
    outcome: str | None = None   # inbound routing outcome, see module doc
    id: int | None = None    # reply id or partial params.id when usable
    size: int = 0            # full length of the frame in bytes (raw may be cut)

    def to_dict(self) -> dict:
        return {"seq": self.seq, "t": self.t, "generation": self.generation,
                "direction": self.direction, "kind": self.kind, "raw": self.raw,
                "msg": self.msg, "outcome": self.outcome, "id": self.id, "size": self.size}

    def render(self, t0: float | None = None) -> str:
        arrow = {"out": "->", "in": "<-", "stderr": "!!", "event": "**"}.get(self.direction, "  ")
        when = f"{self.t - t0:8.3f}s " if t0 is not None else ""
        tag = f" [{self.outcome}]" if self.outcome and self.outcome != "delivered" else ""
        text = self.raw if len(self.raw) <= 300 else self.raw[:300] + f"... ({self.size} bytes)"
        return f"{when}g{self.generation} {arrow} {self.kind}{tag}: {text}"


def text_of(line: bytes | str, limit: int) -> str:
    """A line as text cut to ``limit`` chars; invalid UTF-8 shown as backslash escapes."""
    if isinstance(line, str):
        return line if len(line) <= limit else line[:limit]
    head = line[: limit * 4] if len(line) > limit else line
    text = head.decode("utf-8", "backslashreplace")
    return text if len(text) <= limit else text[:limit]


class Transcript:
    """Thread-safe bounded ring of entries (see module doc)."""

    def __init__(self, max_entries: int = DEFAULT_MAX_ENTRIES,
                 max_frame_chars: int = DEFAULT_MAX_FRAME_CHARS,
                 max_total_chars: int = DEFAULT_MAX_TOTAL_CHARS,
                 listener: Callable[[Entry], None] | None = None):
        self.max_entries = max_entries
        self.max_frame_chars = max_frame_chars
        self.max_total_chars = max_total_chars
        self._ring: collections.deque[tuple] = collections.deque()
        self._chars = 0
        self._next = 0
        self._lock = threading.Lock()
        self.listener = listener   # called with each new entry (tests use it to sync on events)

    # ------------------------------------------------------------------ recording

    def record(self, direction: str, kind: str, raw: bytes | str, *, generation: int = 0,
               msg: Any = None, outcome: str | None = None, id: int | None = None,
               size: int | None = None) -> int:
        """Append one entry; returns its seq. (Rows are stored as tuples and
        become Entry objects when read: recording is on the hot path.)"""
        limit = self.max_frame_chars
        n = len(raw)
        if size is None:
            size = n
        text = raw if n <= limit and type(raw) is str else text_of(raw, limit)
        if size > limit:
            msg = None   # a big frame keeps only its head: the ring must stay small
        with self._lock:
            seq = self._next
            self._next = seq + 1
            row = (seq, _monotonic(), generation, direction, kind, text, msg, outcome, id, size)
            ring = self._ring
            ring.append(row)
            chars = self._chars + len(text)
            if chars > self.max_total_chars or seq - ring[0][0] >= self.max_entries:
                while len(ring) > 1 and (len(ring) > self.max_entries
                                         or chars > self.max_total_chars):
                    chars -= len(ring.popleft()[5])
            self._chars = chars
        if self.listener is not None:
            self.listener(Entry(*row))
        return seq

    def event(self, text: str, *, generation: int = 0) -> int:
        """A host-side event (timeout, death, respawn, notice...)."""
        return self.record("event", "note", text, generation=generation)

    # ------------------------------------------------------------------ reading

    def mark(self) -> int:
        """The seq the next entry will get."""
        with self._lock:
            return self._next

    def since(self, mark: int) -> list[Entry]:
        with self._lock:
            rows = [r for r in self._ring if r[0] >= mark]
        return [Entry(*r) for r in rows]

    def entries(self) -> list[Entry]:
        with self._lock:
            rows = list(self._ring)
        return [Entry(*r) for r in rows]

    def render(self, last: int = 20) -> str:
        """The last ``last`` entries as text, for a failure message."""
        with self._lock:
            rows = list(self._ring)[-last:] if last else []
        if not rows:
            return "(transcript empty)"
        tail = [Entry(*r) for r in rows]
        t0 = tail[0].t
        lines = [e.render(t0) for e in tail]
        if tail[0].seq > 0:
            lines.insert(0, f"... ({tail[0].seq} earlier entries not shown)")
        return "\n".join(lines)

    def dump_jsonl(self, path: str | Path, since: int = 0) -> None:
        with open(path, "w", encoding="utf-8") as out:
            for entry in self.since(since):
                out.write(json.dumps(entry.to_dict(), default=repr) + "\n")

    def __len__(self) -> int:
        with self._lock:
            return len(self._ring)
