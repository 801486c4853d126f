"""The protocol monitor: the frame-level MUST rules, judged on every frame.

Sans-IO, like ``session``: feed it what the host wrote (``outbound``) and
every classified line the adapter wrote (``inbound``), per generation; it
returns ``Finding``s, one per broken rule per frame. It keeps its own small
table of issued ids (method, opted into streaming, answered or not) so it
needs nothing from the session, and it never raises on hostile input.

What it judges (PROTOCOL section, the rule key a Finding carries):

* ``stdout-utf8``      §1.2, §7.2  stdout is valid UTF-8
* ``stdout-json``      §1.2, §7.2  each line is exactly one JSON object (no
  banners, debug prints, two values on a line, batch arrays)
* ``jsonrpc``          §1.2, §5.2  replies and notifications carry
  ``"jsonrpc": "2.0"``
* ``reply-id``         §7.3        a reply echoes the request's id as the same
  JSON integer (``null``, ``0``, strings and floats are not ids)
* ``reply-unknown``    §1.2        a reply names an id issued to this process
* ``reply-twice``      §1.2        a request is answered once
* ``notification-answered`` §1.2, §5.4  notifications are never answered: a
  reply without a usable id, or for an id already answered, that arrives after
  a notification and before the next request, answers that notification
* ``reply-members``    §1.2, §6.1  exactly one of ``result`` / ``error``
* ``request-to-host``  §7.6, §5.2  no message carries both ``id`` and
  ``method`` (a ``$/partial`` has no top-level id)
* ``partial-opt-in``   §5.1        no ``$/partial`` for a request that did not
  send ``partial: true``
* ``partial-after-reply`` §5.3     no ``$/partial`` after its request's reply
* ``partial-id``       §5.2        ``params.id`` names a request of this process
* ``partial-items``    §5.2        ``params.items`` is an array of hit objects
* ``result-shape``     §3          a result has its method's required members
  with their JSON types (``wire.messages`` models); §5.3: the final reply of a
  streamed ``search/code`` is metadata only (no hits in ``items``)
* ``base64``           §3.4, §3.5  every ``bytes_b64`` is strict standard base64
* ``error-shape``      §6.1, §6.3  an error's code, message and data
* ``handshake-protocol`` §2.3     every initialize result (every generation,
  a second initialize on one process too) carries ``protocol``, the JSON
  integer 1
* ``handshake-name``   §2.3        ``name``, when present, is a string (an empty
  one is a "should" finding: the host would show a bare ``stdio:``)
* ``handshake-capabilities`` §2.4 ``capabilities``, when present, is an object
  whose base keys (orgs, code_search, file_search) are JSON booleans
* ``handshake-icon``   §2.5        ``icon``, when present, is a builtin name
  (exact spelling) or exactly one code point (``null`` is no icon, §3.0)
* ``handshake-cache``  §2.3        ``cache``, when present, is an object whose
  ``bytes``, when present, is an unsigned JSON integer (``null`` is no cache)

And every end of a generation the host did not ask for (``exited``: the
process exited or closed its output while its stdin was open), judged by
what it followed (RULINGS "Process behaviour"):

* ``exit-after-cancel``  §5.4       right after a ``$/cancelRequest``: "no
  error, no crash"
* ``exit-after-notification`` §7.2, §7.7  right after any other
  notification: unsolicited notifications are ignored
* ``exit-in-flight``     §7.9       with requests in flight: each of them
  fails, as the host fails it ("provider closed its output"), in whatever
  waits on it
* ``exit-idle``          §7.10      after a reply, nothing in flight: a
  "should" finding (the host restarts it at the next request, with a
  backoff the user waits out)

Which case owns which rule is the suite's business (``cases/registry.py``), not this
module's. A late reply to a request the host gave up on (timed out) is not a
violation: the adapter cannot know the host stopped waiting.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import attrs

from wire.framing import (INVALID_ID, INVALID_UTF8, MALFORMED, OVERSIZE, PARTIAL, REPLY, Frame,
                          usable_id)
from wire.messages import (RESULT_TYPES, ErrorObject, PartialParams, ShapeError, shape_error,
                           structure)

STDOUT_UTF8 = "stdout-utf8"
STDOUT_JSON = "stdout-json"
JSONRPC = "jsonrpc"
REPLY_ID = "reply-id"
REPLY_UNKNOWN = "reply-unknown"
REPLY_TWICE = "reply-twice"
NOTIFICATION_ANSWERED = "notification-answered"
REPLY_MEMBERS = "reply-members"
REQUEST_TO_HOST = "request-to-host"
PARTIAL_OPT_IN = "partial-opt-in"
PARTIAL_AFTER_REPLY = "partial-after-reply"
PARTIAL_ID = "partial-id"
PARTIAL_ITEMS = "partial-items"
RESULT_SHAPE = "result-shape"
BASE64 = "base64"
ERROR_SHAPE = "error-shape"
HANDSHAKE_PROTOCOL = "handshake-protocol"
HANDSHAKE_NAME = "handshake-name"
HANDSHAKE_CAPABILITIES = "handshake-capabilities"
HANDSHAKE_ICON = "handshake-icon"
HANDSHAKE_CACHE = "handshake-cache"
HANDSHAKE_REVISION_CAPABILITIES = "handshake-revision-capabilities"
EXIT_AFTER_CANCEL = "exit-after-cancel"
EXIT_AFTER_NOTIFICATION = "exit-after-notification"
EXIT_IN_FLIGHT = "exit-in-flight"
EXIT_IDLE = "exit-idle"
# the rules whose frame the host reads as the end of the generation's output
# (wire.framing ``Frame.fatal``): every request in flight on it dies with it
ENDS_GENERATION = frozenset({STDOUT_UTF8})

RULES: dict[str, str] = {
    STDOUT_UTF8: "§1.2, §7.2",
    STDOUT_JSON: "§1.2, §7.2",
    JSONRPC: "§1.2, §5.2",
    REPLY_ID: "§7.3",
    REPLY_UNKNOWN: "§1.2",
    REPLY_TWICE: "§1.2",
    NOTIFICATION_ANSWERED: "§1.2, §5.4",
    REPLY_MEMBERS: "§1.2, §6.1",
    REQUEST_TO_HOST: "§7.6, §5.2",
    PARTIAL_OPT_IN: "§5.1",
    PARTIAL_AFTER_REPLY: "§5.3",
    PARTIAL_ID: "§5.2",
    PARTIAL_ITEMS: "§5.2",
    RESULT_SHAPE: "§3",
    BASE64: "§3.4, §3.5",
    ERROR_SHAPE: "§6.1, §6.3",
    HANDSHAKE_PROTOCOL: "§2.3",
    HANDSHAKE_NAME: "§2.3",
    HANDSHAKE_CAPABILITIES: "§2.4",
    HANDSHAKE_ICON: "§2.5",
    HANDSHAKE_CACHE: "§2.3",
    HANDSHAKE_REVISION_CAPABILITIES: "§2.4",
    EXIT_AFTER_CANCEL: "§5.4",
    EXIT_AFTER_NOTIFICATION: "§7.2, §7.7",
    EXIT_IN_FLIGHT: "§7.9",
    EXIT_IDLE: "§7.10",
}

# §2.4's base capability keys, and the revision keys (their types are another rule's)
BASE_CAPABILITIES = ("orgs", "code_search", "file_search")
REVISION_CAPABILITIES = ("refs", "log", "blame", "commit")
# §2.5's builtin icon names, spelled exactly
BUILTIN_ICONS = ("github", "gitlab", "bitbucket", "folder")

# notifications remembered per generation since its last request (for an exit's message)
_NOTES_KEPT = 6
# JSON-RPC's reserved range, for protocol-level failures (§6.1).
RESERVED_CODES = range(-32768, -32000 + 1)
_EVIDENCE_CHARS = 160


@attrs.frozen
class Finding:
    """One broken rule on one frame.

    ``strength`` is "must" (the owner fails) or "should" (the owner warns).
    ``request_id``/``method`` name the request the frame belongs to, when it
    names one the host issued; ``seq`` is the frame's transcript seq if given.
    """
    rule: str
    detail: str
    generation: int
    strength: str = "must"
    request_id: int | None = None
    method: str | None = None
    seq: int | None = None
    raw: str = ""
    streaming: bool = False    # the request opted into $/partial

    def where(self) -> str:
        """'repo/tree (id 7), generation 2' or 'generation 2'."""
        what = ""
        if self.method is not None:
            what = f"{self.method} (id {self.request_id}), "
        elif self.request_id is not None:
            what = f"id {self.request_id}, "
        return f"{what}generation {self.generation}"


@attrs.define
class _Issued:
    method: str
    generation: int
    streaming: bool
    params: Any = None
    answered: bool = False


def strict_base64_problem(text: Any) -> str | None:
    """None when ``text`` is strict standard base64 (RFC 4648 alphabet,
    ``=`` padding, no whitespace, canonical), else what is wrong with it."""
    if not isinstance(text, str):
        return "is not a string"
    if re.search(r"\s", text):
        return "contains whitespace or line breaks"
    if re.search(r"[-_]", text):
        return "uses the URL-safe alphabet ('-' or '_')"
    if len(text) % 4:
        return f"is not padded to a multiple of 4 characters (length {len(text)})"
    try:
        decoded = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as exc:
        return f"does not decode ({exc})"
    if base64.b64encode(decoded).decode("ascii") != text:
        return "is not canonical (re-encoding the decoded bytes gives other text)"
    return None


def error_shape_problems(error: Any) -> list[tuple[str, str]]:
    """(strength, problem) pairs for an ``error`` member (§6.1, §6.3, RULINGS
    "Attribution"): code an integer (positive, or in the reserved range for
    protocol-level failures: a SHOULD), message a non-empty string, data an
    object, kind a non-empty string, retry_after_s a non-negative integer
    (data, kind and retry_after_s null: no value, like absent)."""
    if not isinstance(error, dict):
        return [("must", f"error is not an object ({_short(error)})")]
    out: list[tuple[str, str]] = []
    code = error.get("code")
    if type(code) is not int:
        out.append(("must", f"error.code is not an integer ({_short(code)})"))
    elif code <= 0 and code not in RESERVED_CODES:
        out.append(("should", f"error.code {code} is neither positive nor a reserved "
                              f"JSON-RPC code"))
    message = error.get("message")
    if not isinstance(message, str) or not message.strip():
        out.append(("must", f"error.message is not a non-empty string ({_short(message)})"))
    if "data" in error and error["data"] is not None:
        data = error["data"]
        if not isinstance(data, dict):
            out.append(("must", f"error.data is not an object ({_short(data)})"))
        else:
            # null is no value (§3.0: genuinely optional members accept null)
            kind = data.get("kind")
            if kind is not None and (not isinstance(kind, str) or not kind):
                out.append(("must", f"error.data.kind is not a non-empty string "
                                    f"({_short(kind)})"))
            if data.get("retry_after_s") is not None:
                value = data["retry_after_s"]
                if type(value) is not int or value < 0:
                    out.append(("must", f"error.data.retry_after_s is not a non-negative "
                                        f"integer ({_short(value)})"))
    return out


def handshake_problems(result: Any) -> list[tuple[str, str, str]]:
    """(rule, strength, problem) for each handshake rule an initialize
    ``result`` (as sent) breaks; only the members a rule is about are read,
    and unknown members never matter. A result that is not an object carries
    no ``protocol``: that is the protocol rule's."""
    if not isinstance(result, dict):
        return [(HANDSHAKE_PROTOCOL, "must", f"the result is not an object ({_short(result)}), "
                                             f"so it carries no protocol")]
    out: list[tuple[str, str, str]] = []
    if "protocol" not in result:
        out.append((HANDSHAKE_PROTOCOL, "must", "no protocol member"))
    elif type(result["protocol"]) is not int or result["protocol"] != 1:
        out.append((HANDSHAKE_PROTOCOL, "must", f"protocol {_short(result['protocol'])}, not "
                                                f"the JSON integer 1"))
    if "name" in result:
        name = result["name"]
        if not isinstance(name, str):
            out.append((HANDSHAKE_NAME, "must", f"name {_short(name)}, not a string"))
        elif name == "":
            out.append((HANDSHAKE_NAME, "should", "name is the empty string; leave it out to "
                                                  "be shown as \"stdio\""))
    if "capabilities" in result:
        caps = result["capabilities"]
        if not isinstance(caps, dict):
            out.append((HANDSHAKE_CAPABILITIES, "must",
                        f"capabilities {_short(caps)}, not an object of booleans"))
        else:
            bad = {k: caps[k] for k in BASE_CAPABILITIES if k in caps
                   and not isinstance(caps[k], bool)}
            if bad:
                out.append((HANDSHAKE_CAPABILITIES, "must",
                            f"capabilities {_short(bad)}: not JSON booleans"))
            bad = {k: caps[k] for k in REVISION_CAPABILITIES if k in caps
                   and not isinstance(caps[k], bool)}
            if bad:
                out.append((HANDSHAKE_REVISION_CAPABILITIES, "must",
                            f"capabilities {_short(bad)}: not JSON booleans"))
    # icon and cache are genuinely optional (no default): null is no value (§3.0)
    if result.get("icon") is not None:
        icon = result["icon"]
        if not (isinstance(icon, str) and (icon in BUILTIN_ICONS or len(icon) == 1)):
            out.append((HANDSHAKE_ICON, "must", f"icon {_short(icon)}: neither a builtin name "
                                                f"({', '.join(BUILTIN_ICONS)}) nor one code point"))
    if result.get("cache") is not None:
        cache = result["cache"]
        if not isinstance(cache, dict):
            out.append((HANDSHAKE_CACHE, "must", f"cache {_short(cache)}, not an object "
                                                 f"{{\"bytes\": <unsigned integer>}}"))
        elif "bytes" in cache and not (type(cache["bytes"]) is int and cache["bytes"] >= 0):
            out.append((HANDSHAKE_CACHE, "must", f"cache.bytes {_short(cache['bytes'])}, not an "
                                                 f"unsigned JSON integer"))
    return out


def _short(value: Any) -> str:
    import json
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class Monitor:
    """The frame rules for one adapter (all its generations; ids are global
    to it, as the host's counter is)."""

    def __init__(self) -> None:
        self._issued: dict[int, _Issued] = {}
        # per generation: the notification written after the last request, if any
        self._last_note: dict[int, str | None] = {}
        self._notes: dict[int, list] = {}          # per generation: (method, params) since
                                                   # the last request (the last few)
        self._last_answered: dict[int, int] = {}   # per generation: the id last answered

    # ------------------------------------------------------------ host side

    def outbound(self, generation: int, msg: Any) -> None:
        """Something the host wrote: requests are remembered by id."""
        if not isinstance(msg, dict):
            return
        rid = msg.get("id")
        method = msg.get("method")
        if usable_id(rid) and isinstance(method, str):
            params = msg.get("params")
            streaming = isinstance(params, dict) and params.get("partial") is True
            self._issued[rid] = _Issued(method, generation, streaming, params)
            self._last_note[generation] = None
            self._notes[generation] = []
        elif "id" not in msg and isinstance(method, str):
            self._last_note[generation] = method
            notes = self._notes.setdefault(generation, [])
            notes.append((method, msg.get("params")))
            del notes[:-_NOTES_KEPT]

    def method_of(self, rid: Any) -> str | None:
        issued = self._issued.get(rid) if usable_id(rid) else None
        return issued.method if issued is not None else None

    def params_of(self, rid: Any) -> Any:
        """The params ``rid`` was sent with (None when it is no request of the run)."""
        issued = self._issued.get(rid) if usable_id(rid) else None
        return issued.params if issued is not None else None

    def stream_ended(self, rid: Any) -> bool:
        """Whether ``rid`` is a request that opted into $/partial and has been
        answered (a partial naming it now is after its reply, section 5.3)."""
        issued = self._issued.get(rid) if usable_id(rid) else None
        return issued is not None and issued.streaming and issued.answered

    # --------------------------------------------------------- adapter side

    def inbound(self, generation: int, frame: Frame, seq: int | None = None) -> list[Finding]:
        """Every rule ``frame`` breaks (an empty list when it breaks none)."""
        out: list[Finding] = []

        def found(rule, detail, *, strength="must", rid=None, method=None, streaming=False):
            out.append(Finding(rule, detail, generation, strength, rid, method, seq,
                               _evidence(frame), streaming))

        if frame.violation == INVALID_UTF8:
            found(STDOUT_UTF8, "a line on stdout is not valid UTF-8 (the host ends the "
                               "generation)")
            return out
        if frame.violation == OVERSIZE:
            return out   # the harness's own cap (the host has none): not a protocol rule
        if frame.violation == MALFORMED:
            found(STDOUT_JSON, "a line on stdout is not one JSON value (a banner, a debug "
                               "print, two values on one line or cut JSON?)")
            return out
        msg = frame.msg
        if not isinstance(msg, dict):
            found(STDOUT_JSON, f"a line on stdout is JSON but not an object "
                               f"({type(msg).__name__}; batch arrays are not supported)")
            return out
        if "id" not in msg and not isinstance(msg.get("method"), str):
            found(STDOUT_JSON, "a JSON object on stdout that is neither a reply (no id) nor a "
                               "notification (no method)")
            return out
        if msg.get("jsonrpc") != "2.0":
            what = "a reply" if "id" in msg else "a notification"
            found(JSONRPC, f"{what} without \"jsonrpc\": \"2.0\" (got "
                           f"{_short(msg.get('jsonrpc')) if 'jsonrpc' in msg else 'none'})",
                  rid=msg.get("id") if usable_id(msg.get("id")) else None,
                  method=self.method_of(msg.get("id")))
        if "id" in msg and "method" in msg:
            method = msg.get("method")
            found(REQUEST_TO_HOST,
                  f"a message with both \"id\" and \"method\" ({_short(method)}): "
                  + ("a $/partial carries no top-level id"
                     if method == "$/partial" else "adapters send no requests to the host"),
                  rid=msg["id"] if usable_id(msg["id"]) else None,
                  method=self.method_of(msg["id"]))
            return out   # the host routes it as a reply; its content is not a reply's
        if frame.kind == REPLY or frame.violation == INVALID_ID:
            self._reply(generation, msg, found)
        elif frame.kind == PARTIAL or msg.get("method") == "$/partial":
            self._partial(generation, msg, found)
        return out

    def exited(self, generation: int, status: str | None, seq: int | None = None
               ) -> list[Finding]:
        """Findings for an end of ``generation`` the host did not ask for
        (``status``: how it ended, e.g. "exited with code 3"), by what it
        followed: the notification written last, else each request still in
        flight, else the reply it gave last (a "should")."""
        status = status or "closed its output while still running"
        ended = f"generation {generation} {status}"
        notes = self._notes.get(generation)
        if notes:   # written after the last request: what the adapter read last
            if all(method == "$/cancelRequest" for method, _ in notes):
                named = "; ".join(self._cancel_target(params) for _, params in notes)
                return [Finding(EXIT_AFTER_CANCEL, f"{ended} right after $/cancelRequest "
                                f"naming {named} (a cancel: no error, no crash)", generation,
                                "must", seq=seq)]
            named = ", ".join(f"{method} {_short(params)}" for method, params in notes)
            return [Finding(EXIT_AFTER_NOTIFICATION, f"{ended} right after the notification(s) "
                            f"{named} (unsolicited notifications are ignored)", generation,
                            "must", seq=seq)]
        live = [(rid, i) for rid, i in self._issued.items()
                if i.generation == generation and not i.answered]
        if live:
            return [Finding(EXIT_IN_FLIGHT, f"{ended} with {i.method} (id {rid}) in flight "
                            f"(the host fails it: provider closed its output)", generation,
                            "must", rid, i.method, seq, streaming=i.streaming)
                    for rid, i in live]
        rid = self._last_answered.get(generation)
        method = self.method_of(rid)
        after = f"after answering {method} (id {rid})" if method else "before any request"
        return [Finding(EXIT_IDLE, f"{ended} {after}, nothing in flight (the host restarts it "
                        f"at the next request, after a backoff the user waits out)", generation,
                        "should", rid, method, seq)]

    def _cancel_target(self, params: Any) -> str:
        """What a cancel's params.id names, for a message."""
        target = params.get("id") if isinstance(params, dict) else None
        issued = self._issued.get(target) if usable_id(target) else None
        if issued is None:
            return f"id {_short(target)}, never issued to it"
        return f"{issued.method} (id {target}), " + ("answered" if issued.answered
                                                      else "in flight")

    def _reply(self, generation: int, msg: dict, found) -> None:
        rid = msg.get("id")
        note = self._last_note.get(generation)
        issued = self._issued.get(rid) if usable_id(rid) else None
        if note is not None and (issued is None or issued.answered):
            found(NOTIFICATION_ANSWERED, f"a reply (id {_short(rid)}) right after the "
                                         f"notification {note}: notifications are never "
                                         f"answered", method=note,
                  rid=rid if usable_id(rid) else None)
            return
        if not usable_id(rid):
            found(REPLY_ID, f"a reply whose id {_short(rid)} is not the request's JSON "
                            f"integer (a reply to a notification, or an id not echoed "
                            f"verbatim?)")
            return
        issued = self._issued.get(rid)
        if issued is None:
            found(REPLY_UNKNOWN, f"a reply for id {rid}, which the host never issued to "
                                 f"this adapter", rid=rid)
            return
        method = issued.method
        if issued.generation != generation:
            found(REPLY_UNKNOWN, f"a reply for id {rid}, which was sent to generation "
                                 f"{issued.generation}, not to this process", rid=rid,
                  method=method)
            return
        if issued.answered:
            found(REPLY_TWICE, f"a second reply for id {rid}, already answered", rid=rid,
                  method=method, streaming=issued.streaming)
            return
        issued.answered = True
        self._last_answered[generation] = rid
        has_result, has_error = "result" in msg, "error" in msg
        if has_result == has_error:
            found(REPLY_MEMBERS, "a reply with both \"result\" and \"error\"" if has_result
                  else "a reply with neither \"result\" nor \"error\"", rid=rid, method=method)
            return
        if has_error:
            for strength, problem in error_shape_problems(msg["error"]):
                found(ERROR_SHAPE, problem, strength=strength, rid=rid, method=method)
            return
        self._result(rid, issued, msg["result"], found)

    def _result(self, rid: int, issued: _Issued, result: Any, found) -> None:
        method = issued.method
        model = RESULT_TYPES.get(method)
        if method == "initialize":
            # every handshake of the run, a respawn's and a repeated one's too
            for rule, strength, problem in handshake_problems(result):
                found(rule, f"initialize result: {problem}", strength=strength, rid=rid,
                      method=method)
            return
        if model is None:
            return
        exc = shape_error(result, model)
        if exc is not None:
            found(RESULT_SHAPE, f"{method} result: {exc}", rid=rid, method=method,
                  streaming=issued.streaming)
            return
        if method == "search/code" and issued.streaming and result.get("items"):
            found(RESULT_SHAPE, f"{method} result: items: {len(result['items'])} hit(s) in the "
                                f"final reply of a streamed search (section 5.3: metadata only; "
                                f"the host ignores them)", rid=rid, method=method, streaming=True)
        if method in ("repo/blob", "repo/blob_at"):
            problem = strict_base64_problem(result.get("bytes_b64"))
            if problem is not None:
                found(BASE64, f"bytes_b64 {problem}", rid=rid, method=method)

    def _partial(self, generation: int, msg: dict, found) -> None:
        params = msg.get("params")
        rid = params.get("id") if isinstance(params, dict) else None
        if not usable_id(rid):
            found(PARTIAL_ID, f"a $/partial whose params.id {_short(rid)} is not a request id")
            return
        issued = self._issued.get(rid)
        if issued is None or issued.generation != generation:
            found(PARTIAL_ID, f"a $/partial for id {rid}, which the host never issued to "
                              f"this process", rid=rid)
            return
        method = issued.method
        other_stream = any(i.streaming and not i.answered and i.generation == generation
                           for r, i in self._issued.items() if r != rid)
        if issued.streaming and issued.answered:
            # it names its own stream, which has ended: that is the after-reply
            # rule (section 5.3), even while another stream is live
            found(PARTIAL_AFTER_REPLY, "a $/partial after its request's reply", rid=rid,
                  method=method)
        elif not issued.streaming and other_stream:
            # another stream is live: a partial naming a request that never
            # streamed names the wrong request (RULINGS: FC-040's)
            found(PARTIAL_ID, f"a $/partial naming id {rid} ({method}) while another streaming "
                              f"request is in flight", rid=rid, method=method)
        elif not issued.streaming:
            found(PARTIAL_OPT_IN, f"a $/partial for a request that did not opt in "
                                  f"(no \"partial\": true)", rid=rid, method=method)
        try:
            structure(params, PartialParams)
        except ShapeError as exc:
            found(PARTIAL_ITEMS, f"$/partial params: {exc}", rid=rid, method=method)


def _evidence(frame: Frame) -> str:
    line = frame.line or b""
    text = line[: _EVIDENCE_CHARS * 4].decode("utf-8", "backslashreplace")
    return text if len(text) <= _EVIDENCE_CHARS else text[:_EVIDENCE_CHARS - 3] + "..."
