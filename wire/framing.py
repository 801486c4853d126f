"""Framing: raw stdout chunks -> lines -> classified inbound frames (PROTOCOL §1.2, §7.2, §7.6).

``LineSplitter`` turns the chunks a reader gets from ``os.read`` into complete
lines without ever buffering more than ``max_line_bytes`` of one line: a longer
line is cut, the rest is discarded up to the next newline, and the line comes
out as an ``oversize`` violation carrying its first bytes. A trailing CR is
tolerated and blank lines are skipped.

``classify`` applies the host's inbound rules in order: invalid UTF-8 (fatal,
like EOF), not one JSON value (``malformed``), an ``id`` member (a reply when
it is an integer in 1..2^64-1, else ``invalid_id``), ``$/partial`` with a
usable ``params.id`` (a partial), anything else (``ignored``).

Hot path: one ``decode`` and one ``json.loads`` per line, nothing per item.

Outbound, ``encode_request`` / ``encode_notification`` are the one encoder of
every frame the client writes (compact JSON like the host's, NaN refused),
deliberately unusual envelopes included: extra top-level members of a
request (``envelope``) and params that are not an object.
"""

from __future__ import annotations

import json
import json.scanner
from json.encoder import c_make_encoder, encode_basestring
from typing import Any

MAX_ID = 2**64 - 1
DEFAULT_MAX_LINE_BYTES = 16 * 2**20
EVIDENCE_BYTES = 256   # how much of an offending line a violation keeps

# Frame kinds
REPLY, PARTIAL, IGNORED, VIOLATION = "reply", "partial", "ignored", "violation"
# Violation labels (also the transcript outcome of such a frame)
MALFORMED, INVALID_ID, OVERSIZE, INVALID_UTF8 = "malformed", "invalid_id", "oversize", "invalid_utf8"


class Frame:
    """One classified inbound line.

    kind: "reply" | "partial" | "ignored" | "violation"
    id: the reply id or the partial's params.id (usable ids only), else None
    msg: the parsed JSON value (None when it did not parse or was cut)
    line: the raw bytes of the line (for ``oversize``, its first bytes only)
    text: the line decoded, when it was valid UTF-8 and whole (saves a second decode)
    violation: "malformed" | "invalid_id" | "oversize" | "invalid_utf8" | None
    fatal: True when the line ends the generation (invalid UTF-8, like the host)
    size: the full length of the line in bytes
    """

    __slots__ = ("kind", "id", "msg", "line", "violation", "fatal", "size", "text")

    def __init__(self, kind, id=None, msg=None, line=b"", violation=None, fatal=False, size=0,
                 text=None):
        self.text = text   # the line decoded (None when it is not valid UTF-8 or was cut)
        self.kind = kind
        self.id = id
        self.msg = msg
        self.line = line
        self.violation = violation
        self.fatal = fatal
        self.size = size

    @property
    def outcome(self) -> str | None:
        """The transcript outcome this frame gets before routing (None: routing decides)."""
        if self.kind == VIOLATION:
            return self.violation
        if self.kind == IGNORED:
            return "ignored"
        return None

    def __repr__(self) -> str:
        return (f"Frame({self.kind}, id={self.id!r}, violation={self.violation!r}, "
                f"size={self.size}, line={self.line[:60]!r})")


def usable_id(value: object) -> bool:
    """A JSON integer in 1..2^64-1 (never a bool, never a float)."""
    return type(value) is int and 0 < value <= MAX_ID


def _reject_constant(name: str):
    # Python's json accepts NaN/Infinity; the host's JSON parser does not.
    raise ValueError(f"not JSON: {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_decode = _DECODER.decode
_scan = getattr(json.scanner, "c_make_scanner", json.scanner.py_make_scanner)(_DECODER)
_TRAILING_WS = " \t\r\n"


def _loads(text: str):
    """Exactly one JSON value, surrounding whitespace allowed (the host trims).
    The C scanner straight away for the common case; json's own path otherwise."""
    try:
        value, end = _scan(text, 0)
    except StopIteration:    # leading whitespace, empty, or not JSON at all
        return _decode(text)
    if end != len(text) and text[end:].strip(_TRAILING_WS):
        raise ValueError("extra data after the JSON value")
    return value


def classify(line: bytes) -> Frame | None:
    """Classify one complete line (without its LF). None for a blank line."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return Frame(VIOLATION, line=line[:EVIDENCE_BYTES], violation=INVALID_UTF8,
                     fatal=True, size=len(line))
    try:
        msg = _loads(text)
    except ValueError:   # JSONDecodeError, NaN/Infinity, extra data...
        if not text.strip():
            return None
        return Frame(VIOLATION, line=line, violation=MALFORMED, size=len(line), text=text)
    except RecursionError:
        return Frame(VIOLATION, line=line[:EVIDENCE_BYTES], violation=MALFORMED, size=len(line))
    size = len(line)
    if type(msg) is not dict:
        return Frame(IGNORED, None, msg, line, size=size, text=text)
    if "id" in msg:
        rid = msg["id"]
        if usable_id(rid):
            return Frame(REPLY, rid, msg, line, size=size, text=text)
        return Frame(VIOLATION, None, msg, line, INVALID_ID, size=size, text=text)
    if msg.get("method") == "$/partial":
        params = msg.get("params")
        if type(params) is dict and usable_id(params.get("id")):
            return Frame(PARTIAL, params["id"], msg, line, size=size, text=text)
    return Frame(IGNORED, None, msg, line, size=size, text=text)


class LineSplitter:
    """Incremental splitter of raw chunks into lines, with a line-length cap.

    ``feed(chunk)`` returns the complete lines it finished (LF removed, one
    trailing CR removed, blank lines dropped) and oversize markers: an
    over-long line comes out as ``Frame(violation="oversize")`` holding its first
    ``EVIDENCE_BYTES`` bytes, and everything up to its newline is discarded
    without being buffered.
    """

    __slots__ = ("max_line_bytes", "_parts", "_pending", "_discarding", "_head", "_dropped")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
        if max_line_bytes < 1:
            raise ValueError("max_line_bytes must be positive")
        self.max_line_bytes = max_line_bytes
        self._parts: list[bytes] = []   # pieces of the unfinished line
        self._pending = 0               # their total length
        self._discarding = False        # inside an oversize line, skipping to its LF
        self._head = b""                # first bytes of the oversize line
        self._dropped = 0               # its length so far

    def feed(self, chunk: bytes) -> list:
        """Lines (bytes) and oversize Frames finished by this chunk, in order."""
        out: list = []
        pieces = chunk.split(b"\n")
        last = pieces.pop()           # the unfinished tail (b"" when chunk ended with LF)
        cap = self.max_line_bytes
        for piece in pieces:
            if self._discarding:
                out.append(self._oversize(len(piece)))
                continue
            if self._parts:
                self._parts.append(piece)
                if self._pending + len(piece) > cap + 1:
                    self._start_discard(self._parts)
                    self._parts = []
                    self._pending = 0
                    out.append(self._oversize(0))
                    continue
                piece = b"".join(self._parts)
                self._parts = []
                self._pending = 0
            if len(piece) > cap + 1 or (len(piece) == cap + 1 and not piece.endswith(b"\r")):
                self._start_discard([piece])
                out.append(self._oversize(0))
                continue
            if piece.endswith(b"\r"):
                piece = piece[:-1]
            if piece:
                out.append(piece)
        if last:
            if self._discarding:
                self._dropped += len(last)
            elif self._pending + len(last) > cap + 1:
                self._parts.append(last)
                self._start_discard(self._parts)
                self._parts = []
                self._pending = 0
            else:
                self._parts.append(last)
                self._pending += len(last)
        return out

    def pending(self) -> int:
        """Bytes of the unfinished line held (never more than max_line_bytes + 1)."""
        return self._pending

    def flush(self) -> list:
        """At EOF: an unterminated last line is still a line (or an oversize marker)."""
        out: list = []
        if self._discarding:
            out.append(self._oversize(0))
        elif self._parts:
            piece = b"".join(self._parts)
            self._parts = []
            self._pending = 0
            if piece.endswith(b"\r"):
                piece = piece[:-1]
            if piece:
                out.append(piece)
        return out

    def _start_discard(self, parts: list[bytes]) -> None:
        """Begin skipping an over-long line; keep only its first bytes (no join)."""
        self._discarding = True
        head = b""
        for part in parts:
            head += part[:EVIDENCE_BYTES - len(head)]
            if len(head) >= EVIDENCE_BYTES:
                break
        self._head = head
        self._dropped = sum(len(part) for part in parts)

    def _oversize(self, more: int) -> Frame:
        size = self._dropped + more
        frame = Frame(VIOLATION, line=self._head, violation=OVERSIZE, size=size)
        self._discarding = False
        self._head = b""
        self._dropped = 0
        return frame


class FrameReader:
    """Splitter + classifier: ``feed(chunk)`` -> classified Frames.

    After a fatal frame (invalid UTF-8) the generation is over for the host:
    ``ended`` becomes True and further input is ignored.
    """

    __slots__ = ("splitter", "ended")

    def __init__(self, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES):
        self.splitter = LineSplitter(max_line_bytes)
        self.ended = False

    def feed(self, chunk: bytes) -> list[Frame]:
        if self.ended:
            return []
        splitter = self.splitter
        # Fast path: exactly one whole line (a typical reply).
        if (not splitter._parts and not splitter._discarding and chunk.endswith(b"\n")
                and chunk.count(b"\n") == 1 and len(chunk) <= splitter.max_line_bytes):
            line = chunk[:-2] if chunk.endswith(b"\r\n") else chunk[:-1]
            frame = classify(line) if line else None
            if frame is None:
                return []
            if frame.fatal:
                self.ended = True
            return [frame]
        return self._classify(splitter.feed(chunk))

    def flush(self) -> list[Frame]:
        if self.ended:
            return []
        return self._classify(self.splitter.flush())

    def _classify(self, items: list) -> list[Frame]:
        frames = []
        for item in items:
            frame = item if type(item) is Frame else classify(item)
            if frame is None:
                continue
            frames.append(frame)
            if frame.fatal:
                self.ended = True
                break
        return frames


# ---------------------------------------------------------------- outbound

# Compact JSON like the host writes it (no spaces, UTF-8 as is, NaN refused),
# through the C encoder directly: this is on every request's path.
_encode = c_make_encoder(None, json.JSONEncoder().default, encode_basestring, None, ":", ",",
                         False, False, False) if c_make_encoder is not None else None


def dumps(obj: Any) -> str:
    """One JSON value, compact, as the client writes it."""
    if _encode is None:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "".join(_encode(obj, 0))


def request_message(rid: int, method: str, params: Any, envelope: dict | None = None) -> dict:
    """The request object: jsonrpc, id, method, params, then any ``envelope``
    members (which never replace the four)."""
    msg = {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
    if envelope:
        msg.update({k: v for k, v in envelope.items() if k not in msg})
    return msg


def notification_message(method: str, params: Any) -> dict:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode_request(rid: int, method: str, params: Any, envelope: dict | None = None
                   ) -> tuple[str, dict]:
    """(the line without its newline, the message) of one request."""
    msg = request_message(rid, method, params, envelope)
    return dumps(msg), msg


def encode_notification(method: str, params: Any) -> tuple[str, dict]:
    """(the line without its newline, the message) of one notification."""
    msg = notification_message(method, params)
    return dumps(msg), msg
