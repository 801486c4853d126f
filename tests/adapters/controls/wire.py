"""Controls of what a real backend may legally vary on the wire, kept green.

``TABLE`` maps each switch to its Variant (tests/adapters/controls/__init__.py
gathers the tables into CONTROLS).
"""

from __future__ import annotations

import itertools
import json
import os
import re
import threading

from tests.adapters.hooks import HitsEdit, OwnWrites, Variant, cited, fixture_repos, repo_name
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
control = cited(TABLE)


_ESCAPE = re.compile(r"\\\\|\\u([0-9a-f]{4})")


def _reversed_keys(value):
    if isinstance(value, dict):
        return {k: _reversed_keys(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reversed_keys(v) for v in value]
    return value


def respell(msg) -> bytes:
    """The same JSON value spelled another way: members in reverse order,
    spaces around every ``:`` and after every ``,``, non-ASCII as upper-case
    ``\\uXXXX`` escapes (surrogate pairs beyond the BMP), every ``/`` as
    ``\\/``, and whitespace before and after the value (a CR before the LF
    among it: JSON whitespace, so still one JSON value on one line)."""
    text = json.dumps(_reversed_keys(msg), ensure_ascii=True, separators=(" , ", " : "))
    text = _ESCAPE.sub(lambda m: m.group(0) if m.group(1) is None else "\\u" + m.group(1).upper(),
                       text)
    text = text.replace("/", "\\/")    # "/" occurs only inside strings in JSON text
    return (" \t" + text + " \t\r\n").encode("ascii")


@control("json-respelled",
         'PROTOCOL §1.2 "one JSON value serialised on a single line"; "Member order within an object '
         'is not significant; neither side may rely on it"; RFC 8259 JSON text (ws around values and '
         'tokens, \\uXXXX and \\/ escapes) spells the same value')
class JsonRespelled(OwnWrites):
    """Every line to the host is the same JSON spelled differently: members reversed, spaces around : and ,, \\uXXXX escapes (upper-case hex) for non-ASCII, \\/ for /, blanks around the value (CR LF at its end).

    A regression guard: the suite reads values, never bytes, of a frame.
    """

    def write(self, proxy, msg):
        proxy.send_host(respell(msg))


@control("progress-notifications",
         'PROTOCOL §10.1 "$/progress ... MAY Adapters emit them early ... A suite must not fail an '
         'adapter for emitting them"; §7.2 "unsolicited notifications are ignored" (both sides, '
         'normative); §7.6 rule 6 ($/progress, window/logMessage: ignored)')
class ProgressNotifications(Hooks):
    """$/progress and window/logMessage notifications everywhere: at start, before every reply, between the batches of a stream and on every notification received.

    None of them has an id; their params never name a request by ``id``
    (an LSP-like progress token instead), so nothing can route them.
    """

    def __init__(self):
        self.counter = itertools.count(1)

    def _notify(self, proxy, what):
        n = next(self.counter)
        proxy.send_host({"jsonrpc": "2.0", "method": "$/progress",
                         "params": {"token": f"work-{n}", "value": {"kind": "report",
                                                                     "message": what, "seq": n}}})
        proxy.send_host({"jsonrpc": "2.0", "method": "window/logMessage",
                         "params": {"type": 4, "message": f"[{n}] {what}"}})

    def start(self, proxy):
        self._notify(proxy, "adapter starting")

    def notification(self, proxy, msg):
        # a log line for every notification it gets (cancels of finished or
        # unknown requests, notifications it does not know): still no reply
        self._notify(proxy, f"got notification {msg.get('method')!r}")
        return msg

    def partial(self, proxy, req, msg):
        self._notify(proxy, f"batch {req.partials + 1 if req else '?'}")
        return msg

    def reply(self, proxy, req, msg):
        self._notify(proxy, f"answering {req.method if req else msg.get('id')}")
        return msg


@control("one-hit-per-batch",
         'PROTOCOL §5.2 "HOST Batches may be any size"; §5.3 append-only batches; RULINGS: one batch '
         'carrying every hit is a legal stream, and so is one hit per batch')
class OneHitPerBatch(Hooks):
    """Every $/partial is split into batches of one hit each (a backend that streams hit by hit), in the order the reference found them.

    The batches of one request go out back to back, so the inactivity
    window is never at stake.
    """

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if not isinstance(items, list) or len(items) < 2:
            return msg
        for item in items[:-1]:
            proxy.send_host({**msg, "params": {**params, "items": [item]}})
            if req is not None:
                req.partials += 1
        return {**msg, "params": {**params, "items": items[-1:]}}


@control("reordered-listings",
         'PROTOCOL §3.3 (tree), §3.1 (search/repos), §3.2 (org/repos), §3.6 (refs), §3.12 (files), '
         '§3.13 (hits; "Items are folded by file identity") fix no order; RULINGS "Never compare '
         'whole objects"; only repo/log (newest first) and blame ranges (ascending) are ordered')
class ReorderedListings(Hooks):
    """Lists whose order the protocol leaves open come reversed: tree entries (files before their directories), search/repos and org/repos items, branches and tags (the default branch last), commit files, search hits in replies and in each batch.

    search/repos also lists the organisation as an ``{"org": ...}`` item
    after the repositories it found (§3.1 items are repositories or
    organisations), and every repository item carries its ``org`` beside
    ``full_name`` (§3.1: full_name wins when both are present).
    """

    LISTS = {"repo/tree": ("entries",), "search/repos": ("items",), "org/repos": ("repos",),
             "repo/refs": ("branches", "tags"), "repo/commit": ("files",), "search/code": ("items",)}

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        for key in self.LISTS.get(req.method, ()):
            if isinstance(result.get(key), list):
                result[key].reverse()
        if req.method == "search/repos" and isinstance(result.get("items"), list):
            orgs = {item["full_name"].rsplit("/", 1)[0] for item in result["items"]
                    if isinstance(item, dict) and isinstance(item.get("full_name"), str)
                    and "/" in item["full_name"]}
            result["items"] += [{"org": org} for org in sorted(orgs)
                                if {"org": org} not in result["items"]]
            for item in result["items"]:
                if isinstance(item, dict) and isinstance(item.get("full_name"), str):
                    item["org"] = item["full_name"].rsplit("/", 1)[0]   # full_name wins
        return msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        if isinstance(params, dict) and isinstance(params.get("items"), list):
            params["items"].reverse()
        return msg


@control("null-optionals",
         'PROTOCOL §3.0 "members that are genuinely optional (e.g. size, line, pushed_at, as_of, '
         'web_url, patch, additions) accept null" (SHOULD omit instead: a warning at most); RULINGS '
         '"null only where PROTOCOL §3.0 says the host accepts it"')
class NullOptionals(Hooks):
    """Optional members the reference leaves out are sent as null where §3.0 allows it: size on directory entries, line on one-shot hits, pushed_at and description on org/repos objects, web_url on commits.

    org/repos answers v1.4 objects (``{"name": n, "pushed_at": null,
    "description": null}``) instead of bare names to carry the nulls
    (description has no default: genuinely optional, as §3.0 puts it).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "repo/tree":
            for entry in result.get("entries") or []:
                if isinstance(entry, dict) and entry.get("type") == "tree":
                    entry.setdefault("size", None)
        elif req.method == "search/code" and not req.streaming:
            for hit in result.get("items") or []:
                if isinstance(hit, dict):
                    hit.setdefault("line", None)
        elif req.method == "org/repos" and isinstance(result.get("repos"), list):
            result["repos"] = [{"name": n, "pushed_at": None, "description": None}
                               if isinstance(n, str) else n
                               for n in result["repos"]]
        elif req.method == "repo/commit":
            result.setdefault("web_url", None)
        return msg


@control("kindless-errors",
         'PROTOCOL §6.1 error.data optional, data.kind optional; Appendix A: the upstream reference '
         'answers every failure {"code":1,"message":...} with no data.kind; RULINGS "Strength": an '
         'absent kind warns where the title names a kind, passes where a kind is only "preferred"',
         warns=("FC-023", "FC-025", "FC-060", "FC-061", "FC-062", "FC-064", "FC-092", "FC-097",
                "FC-108"))
class KindlessErrors(Hooks):
    """Every error is {"code": 1, "message": ...} with no data (the upstream reference's errors, PROTOCOL Appendix A), unknown methods included.

    Every case that asks for a kind warns (a SHOULD: §3.3, §3.4, §3.5,
    §3.12, §6.2), those whose title names it and those where it is only
    preferred (FC-023, FC-092, FC-108); nothing fails.
    """

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if isinstance(err, dict):
            msg["error"] = {"code": 1, "message": err.get("message")}
        return msg


COLD_S = 2.5


@control("cold-backend",
         'PROTOCOL §7.5 the read deadline (default 30 s) covers the whole wait; §2.1 "SHOULD answer '
         '[initialize] in well under a second"; RULINGS "Timing": '
         'startup and lifecycle are measured against FORGE_DEADLINE_S, not a stricter private number')
class ColdBackend(Hooks):
    """In every process initialize is answered 0.8 s late (still under the second §2.1 advises), the first answer after it 2.5 s late (a cold backend: token fetch, connection, cache fill), and the first streamed batch 1.5 s late.

    Later answers go out as the reference sends them (a held reply holds
    nothing else back, so the order of replies changes: §7.4 MAY). A held
    batch holds the rest of its stream behind it, which then follows at
    once; streams stay within the inactivity window (§5.3: a batch at least
    every couple of seconds). A regression guard: no case may judge time
    against less than FORGE_DEADLINE_S.
    """

    STREAM_S, INIT_S = 1.5, 0.8

    def __init__(self):
        self.warm: set[str] = set()
        self.lock = threading.Lock()

    def _first(self, method) -> bool:
        first = method not in self.warm
        self.warm.add(method)
        return first

    def _held(self, req, msg) -> bool:
        """Queue ``msg`` behind a held first batch of ``req`` (True), else False."""
        held = req.state.get("held")
        if held is not None:
            held.append(msg)
        return held is not None

    def _flush(self, proxy, req):
        with self.lock:
            for msg in req.state.pop("held"):
                proxy.send_host(msg)
                if msg.get("method") == "$/partial":
                    req.partials += 1

    def partial(self, proxy, req, msg):
        if req is None:
            return msg
        with self.lock:
            if self._held(req, msg):
                return None
            if req.partials == 0 and self._first("$/partial"):
                req.state["held"] = [msg]
                proxy.later(self.STREAM_S, lambda: self._flush(proxy, req))
                return None
        return msg

    def reply(self, proxy, req, msg):
        if req is None:
            return msg
        if req.method == "initialize":
            proxy.later(self.INIT_S, lambda: proxy.send_host(msg))
            return None
        with self.lock:
            if self._held(req, msg):
                return None
            if not req.streaming and self._first("reply"):
                proxy.later(COLD_S, lambda: proxy.send_host(msg))
                return None
        return msg


@control("init-extras",
         'PROTOCOL §2.3 "MAY Report the subtree\'s current size as cache.bytes"; §10.1 the reserved '
         '"notifications" capability (MAY emit); §2.4 "SHOULD Declare every capability explicitly"; '
         'RULINGS: FC-051 compares the handshake "except cache (the cache\'s current size may grow '
         'between generations)"')
class InitExtras(Hooks):
    """initialize declares every capability explicitly (file_search too), the reserved notifications capability, and cache.bytes that grows on every initialize.

    cache.bytes is reported whether or not the host sent a cache budget.
    """

    grown = itertools.count(4096, 4096)

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "initialize" or result is None:
            return msg
        caps = result.setdefault("capabilities", {})
        if isinstance(caps, dict):
            caps.setdefault("file_search", caps.get("code_search", True))
            for key in ("refs", "log", "blame", "commit"):
                caps.setdefault(key, False)
            caps["notifications"] = True
        # grows within a process and differs between processes (pid)
        result["cache"] = {"bytes": next(self.grown) + os.getpid() % 1000}
        return msg


@control("handshake-nulls",
         'PROTOCOL §2.3 icon and cache optional, §2.5 "MAY Omit icon"; §3.0 "members that are '
         'genuinely optional ... accept null" (SHOULD omit instead: a warning at most): neither '
         'has a default, so null is no icon and no cache size')
class HandshakeNulls(Hooks):
    """initialize answers icon null and, where the reference reports no cache, cache null (a serializer writing every field: no icon configured, no cache size known).
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "initialize" and result is not None:
            result["icon"] = None
            result.setdefault("cache", None)
        return msg


@control("github-search-pages",
         'PROTOCOL §5.3 "HOST The host\'s built-in GitHub provider streams one batch per REST page '
         '(100 per page, 3 pages, truncated beyond that)"; §3.13 truncated: "the adapter can prove '
         'the returned set is smaller than everything the query matches"; §5.2 batches of any size')
class GithubSearchPages(Hooks):
    """search/code stops at a budget of 300 hits (truncated true when more match) and streams batches of at most 100 hits (REST pages), like the host's own GitHub provider.

    A smaller limit still wins (the reference honours it at item
    granularity); a larger one is cut at 300.
    """

    BUDGET, PAGE = 300, 100

    def request(self, proxy, req, msg):
        limit = req.params.get("limit")
        if req.method == "search/code" and (type(limit) is not int or limit > self.BUDGET):
            req.params["limit"] = self.BUDGET
        return msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        items = params.get("items") if isinstance(params, dict) else None
        if not isinstance(items, list) or len(items) <= self.PAGE:
            return msg
        pages = [items[i:i + self.PAGE] for i in range(0, len(items), self.PAGE)]
        for page in pages[:-1]:
            proxy.send_host({**msg, "params": {**params, "items": page}})
            if req is not None:
                req.partials += 1
        return {**msg, "params": {**params, "items": pages[-1]}}


@control("dates-millis",
         'PROTOCOL §3.7 "date is ISO-8601"; RULINGS "Dates are ISO-8601; compare instants, never '
         'strings ... any offset is fine" (ISO-8601 allows a decimal fraction of the second)')
class DatesMillis(Hooks):
    """Dates carry milliseconds and a numeric offset, as GitLab's API spells them (2026-01-17T10:00:00.000+01:00): log, blame, commit and org/repos pushed_at.

    org/repos answers v1.4 objects to carry a pushed_at.
    """

    @staticmethod
    def parsed(text):
        """The date-time ``text`` names, with its offset; None without one."""
        import datetime as _dt
        try:
            when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
        except (ValueError, AttributeError):
            return None
        return when if when.tzinfo is not None else None

    @classmethod
    def spell(cls, text):
        when = cls.parsed(text)
        return text if when is None else when.isoformat(timespec="milliseconds")

    PUSHED_AT = "2026-03-02T09:30:00.123+01:00"

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        rows = {"repo/log": result.get("items"), "repo/blame": result.get("ranges"),
                "repo/commit": [result]}.get(req.method) or []
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get("date"), str):
                row["date"] = self.spell(row["date"])
        if req.method == "org/repos" and isinstance(result.get("repos"), list):
            result["repos"] = [{"name": n, "pushed_at": self.PUSHED_AT}
                               if isinstance(n, str) else n for n in result["repos"]]
        return msg


@control("dates-hour-offsets",
         'PROTOCOL §3.7 "date is ISO-8601"; RULINGS "Dates are ISO-8601; compare instants, never '
         'strings ... any offset is fine" (ISO 8601 writes a whole-hour offset as +hh, the '
         'minutes left out)')
class DatesHourOffsets(DatesMillis):
    """Dates whose UTC offset is whole hours spell it with the hours alone (2026-01-17T10:00:00+01, UTC as +00), as PostgreSQL prints a timestamptz: log, blame, commit and org/repos pushed_at.

    An offset with minutes keeps them (+05:30). org/repos answers v1.4
    objects to carry a pushed_at.
    """

    PUSHED_AT = "2026-03-02T09:30:00+01"

    @classmethod
    def spell(cls, text):
        when = cls.parsed(text)
        minutes = int(when.utcoffset().total_seconds()) // 60 if when is not None else 1
        if minutes % 60:   # no date-time, or an offset with minutes: as it is
            return text
        sign = "-" if minutes < 0 else "+"
        return f"{when.replace(tzinfo=None).isoformat()}{sign}{abs(minutes) // 60:02d}"


@control("error-data-nulls",
         'PROTOCOL §6.1 error.data.kind "optional string", error.data.retry_after_s "optional '
         'non-negative integer seconds"; §3.0 "members that are genuinely optional ... accept null" '
         '(SHOULD omit instead: a warning at most); §6.3 HOST-QUIRK anything but a non-negative '
         'integer is ignored')
class ErrorDataNulls(Hooks):
    """Every error's data carries kind and retry_after_s, null where the reference gives none (a serializer writing every field of its error type).

    A null kind is no kind and a null retry_after_s no delay, as their
    absence is: the throttled fault's retry_after_s (37) is still sent.
    """

    def reply(self, proxy, req, msg):
        err = msg.get("error")
        if isinstance(err, dict):
            data = err.setdefault("data", {})
            if isinstance(data, dict):
                data.setdefault("kind", None)
                data.setdefault("retry_after_s", None)
        return msg


@control("upper-hex-blob-ids",
         'PROTOCOL §4 "Each blob sha is an opaque identifier of the content"; "MUST Treat ids as '
         'opaque strings on the client side; compare for equality only"; "SUITE Never assume a '
         'particular id algorithm"')
class UpperHexBlobIds(Hooks):
    """Blob ids are spelled in upper-case hex (and accepted back only so); directory ids too.

    The suite compares ids for equality only, so an id's spelling is the
    adapter's.
    """

    def __init__(self):
        from tests.adapters.hooks import BlobIds

        class Upper(BlobIds):
            def fake(self, proxy, req, sha, repo, path, ref, where):
                return sha.upper()

        self.ids = Upper()

    def request(self, proxy, req, msg):
        if req.method == "repo/blob":
            sha = req.params.get("sha")
            # (a fault repository fails as its fault says, whatever the id)
            if isinstance(sha, str) and sha != sha.upper() \
                    and repo_name(req.params.get("repo")) in fixture_repos(proxy):
                proxy.error(req, f"no blob {sha} (ids are upper-case hex)", kind="not_found")
                return None
            if isinstance(sha, str):
                # read back by spelling, not from this process's memory: an id an
                # earlier process listed holds after a respawn (content ids do)
                req.params["sha"] = sha.lower()
                return msg
        return self.ids.request(proxy, req, msg)

    def reply(self, proxy, req, msg):
        msg = self.ids.reply(proxy, req, msg)
        result = result_of(msg)
        if req is not None and req.method == "repo/tree" and result is not None:
            for entry in result.get("entries") or []:
                if isinstance(entry, dict) and entry.get("type") == "tree" \
                        and isinstance(entry.get("sha"), str):
                    entry["sha"] = entry["sha"].upper()
        return msg

    def partial(self, proxy, req, msg):
        return self.ids.partial(proxy, req, msg)


@control("log-default-page-3",
         'PROTOCOL §3.7 "MAY Choose a default when limit is null"; "cut the list off near N items '
         'and flag truncated: true whenever further matching commits are known to exist"')
class LogDefaultPage3(Hooks):
    """repo/log without a limit (null) serves a default page of 3 commits, truncated true when more exist.

    An explicit limit is honoured as the reference does.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/log" and req.params.get("limit") is None:
            req.params["limit"] = 3
        return msg


@control("commit-patches-unavailable",
         'PROTOCOL §3.12 patch optional: "absent -> patch unavailable (too large, not supplied...) -- '
         'not proof of binary content"; binary "true only when the backend positively knows"; '
         'counts optional')
class CommitPatchesUnavailable(Hooks):
    """repo/commit supplies no patch and no binary flag for any file (a files API without diffs); counts stay where the reference gives them.

    Binary files then carry nothing but path and status (the reference gives
    them no counts), as a backend that does not know binary-ness would.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/commit" and result is not None:
            for f in result.get("files") or []:
                if isinstance(f, dict):
                    f.pop("patch", None)
                    f.pop("binary", None)
        return msg


DEFAULTS = {"repo/tree": {"entries": [], "truncated": False, "branch": "main"},
            "search/code": {"items": [], "truncated": False},
            "search/repos": {"items": []}, "org/repos": {"repos": []},
            "repo/refs": {"branches": [], "tags": []},
            "repo/log": {"items": [], "truncated": False}, "repo/blame": {"ranges": []},
            "repo/commit": {"parents": [], "truncated": False}}


HIT_DEFAULTS = {"matches": [], "branch": "main", "located": True, "sha": ""}


def _drop_defaults(obj: dict, defaults: dict) -> None:
    for key, value in defaults.items():
        if key in obj and obj[key] == value and type(obj[key]) is type(value):
            del obj[key]


@control("default-values-absent",
         'PROTOCOL §3.0 "a receiver MUST accept every member marked optional being absent"; RULINGS '
         '"Optional fields take the host\'s defaults when absent: ... matches [] (a path-only hit); '
         'tree entries [], truncated false, branch "main"; refs arrays []"')
class DefaultValuesAbsent(HitsEdit):
    """Every optional member whose value is its default is left out: empty items/entries/repos/branches/tags/ranges/parents, truncated false, tree branch "main", and on hits matches [], branch "main", located true; binary false and default false too.

    A streamed search's final reply is then ``{}`` unless it was cut; a
    path-only hit has no matches member. Required members (commit files,
    blob bytes) stay.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "search/code":
            self._hits(result.get("items"))
        elif req.method == "repo/refs":
            for branch in result.get("branches") or []:
                if isinstance(branch, dict) and branch.get("default") is False:
                    del branch["default"]
        elif req.method == "repo/commit":
            for f in result.get("files") or []:
                if isinstance(f, dict) and f.get("binary") is False:
                    del f["binary"]
        _drop_defaults(result, DEFAULTS.get(req.method, {}))
        return msg

    def hit(self, hit):
        _drop_defaults(hit, HIT_DEFAULTS)


@control("content-cache",
         'PROTOCOL §10.2 "SHOULD Use the provider-scoped subtree the host passes as cache_dir"; '
         'blobs/<first two chars of id>/<rest of id>, atomic writes, LRU eviction past cache_bytes; '
         '§2.3 "MAY Report the subtree\'s current size as cache.bytes"; §4 ids key content')
class ContentCache(Hooks):
    """Blobs served are cached in cache_dir/blobs/<2>/<rest> (temp file + rename, least recently used evicted past cache_bytes), later served from there; initialize reports the cache's size as cache.bytes.

    Only a repository the fixture serves is answered from the cache (a real
    adapter checks the repository first); without cache_dir nothing is
    cached.
    """

    def _dir(self, proxy):
        cache_dir = proxy.init_params.get("cache_dir")
        return None if not isinstance(cache_dir, str) else os.path.join(cache_dir, "blobs")

    def _path(self, proxy, sha):
        root = self._dir(proxy)
        if root is None or not isinstance(sha, str) or not re.fullmatch(r"[0-9A-Za-z]{3,128}", sha):
            return None
        return os.path.join(root, sha[:2], sha[2:])

    @staticmethod
    def _size(root) -> int:
        total = 0
        for base, _dirs, files in os.walk(root):
            for name in files:
                try:
                    total += os.path.getsize(os.path.join(base, name))
                except OSError:
                    pass
        return total

    def request(self, proxy, req, msg):
        if req.method != "repo/blob" or repo_name(req.params.get("repo")) not in fixture_repos(proxy):
            return msg
        path = self._path(proxy, req.params.get("sha"))
        try:
            with open(path, "rb") as f:
                data = f.read()
        except (OSError, TypeError):
            return msg
        os.utime(path)    # recently used
        import base64
        proxy.reply(req, {"bytes_b64": base64.b64encode(data).decode("ascii")})
        return None

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        if req.method == "initialize":
            root = self._dir(proxy)
            if root is not None:
                result["cache"] = {"bytes": self._size(root)}
        elif req.method == "repo/blob" and isinstance(result.get("bytes_b64"), str):
            self._store(proxy, req.params.get("sha"), result["bytes_b64"])
        return msg

    def _store(self, proxy, sha, text):
        import base64
        path = self._path(proxy, sha)
        if path is None:
            return
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(base64.b64decode(text, validate=True))
            os.replace(tmp, path)
        except (OSError, ValueError):
            return
        self._evict(proxy)

    def _evict(self, proxy):
        budget = proxy.init_params.get("cache_bytes")
        root = self._dir(proxy)
        if type(budget) is not int or root is None:
            return
        entries = []
        for base, _dirs, files in os.walk(root):
            for name in files:
                full = os.path.join(base, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                entries.append((st.st_mtime, st.st_size, full))
        total = sum(size for _, size, _ in entries)
        for _, size, full in sorted(entries):
            if total <= budget:
                break
            try:
                os.remove(full)
                total -= size
            except OSError:
                pass


@control("cancel-cuts-at-once",
         'PROTOCOL §5.4 "SHOULD Adapters paying per call or running long scans use it to stop work"; '
         '"SHOULD ... finish a cancelled request promptly with a normal terminal reply (for a stream, '
         'the metadata-only reply -- truncated: true is the honest value if the scan was cut)"')
class CancelCutsAtOnce(Hooks):
    """A $/cancelRequest for a search still running is answered at once with {"items": [], "truncated": true}; nothing more of that search reaches the host.

    The cancel still reaches the adapter, which stops its scan; whatever it
    sends for that id afterwards is dropped.
    """

    def __init__(self):
        self.cut: set = set()
        self.lock = threading.Lock()

    def notification(self, proxy, msg):
        if msg.get("method") == "$/cancelRequest":
            params = msg.get("params")
            rid = params.get("id") if isinstance(params, dict) else None
            with self.lock:
                req = proxy.requests.get(rid)
                if req is not None and req.method == "search/code" and rid not in self.cut:
                    self.cut.add(rid)
                    proxy.reply(req, {"items": [], "truncated": True})
        return msg

    def reply(self, proxy, req, msg):
        with self.lock:
            return None if msg.get("id") in self.cut else msg

    def partial(self, proxy, req, msg):
        params = msg.get("params")
        with self.lock:
            return None if isinstance(params, dict) and params.get("id") in self.cut else msg


@control("matches-whole-lines",
         'PROTOCOL §3.13 matches: "matched substrings; HOST searches for them inside the blob"; '
         '"SHOULD matches are literal substrings of the stored file" (a whole line is one); RULINGS '
         '"The protocol fixes the wire shape ..., not matching semantics"')
class MatchesWholeLines(Hooks):
    """Each hit's matches are the whole first line holding a match (GitLab's search returns line fragments, not the term), when that line is found in the file on disk.

    A hit whose file or match cannot be read back is left as it came.
    """

    def _hits(self, proxy, items):
        from tests.adapters.hooks import read_worktree
        for hit in items or []:
            if not isinstance(hit, dict) or not hit.get("matches"):
                continue
            data = read_worktree(proxy, hit.get("repo"), hit.get("path"))
            if data is None:
                continue
            terms = [m.lower() for m in hit["matches"] if isinstance(m, str) and m]
            for raw in data.split(b"\n"):
                line = raw.decode("utf-8", "replace")
                if line and "\ufffd" not in line and any(t in line.lower() for t in terms):
                    hit["matches"] = [line]
                    break

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "search/code" and result is not None:
            self._hits(proxy, result.get("items"))
        return msg

    def partial(self, proxy, req, msg):
        self._hits(proxy, (msg.get("params") or {}).get("items"))
        return msg


@control("commit-budget-2",
         'PROTOCOL §3.12 "SHOULD Cap very large commits at a display budget and set truncated: true" '
         '(the budget is the adapter\'s; truncated: "true = the file list is incomplete (budget '
         'reached)")')
class CommitBudget2(Hooks):
    """repo/commit lists at most 2 files (the first two the reference lists), truncated true when the commit changed more.

    A display budget an adapter chooses; the cases judge a cut list as part
    of the commit's changes, never as all of them.
    """

    BUDGET = 2

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "repo/commit" and result is not None:
            files = result.get("files")
            if isinstance(files, list) and len(files) > self.BUDGET:
                del files[self.BUDGET:]
                result["truncated"] = True
        return msg


GATED = {"refs": ("repo/refs",), "log": ("repo/log", "repo/blob_at"), "blame": ("repo/blame",),
         "commit": ("repo/commit",)}


class SomeRevisionCaps(Hooks):
    """initialize declares the capabilities in ``off`` false; their methods
    (§2.4's table: blob_at rides log) answer an error should the suite ask."""

    off: tuple[str, ...] = ()

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "initialize" and result is not None:
            caps = result.setdefault("capabilities", {})
            for key in self.off:
                caps[key] = False
        return msg

    def request(self, proxy, req, msg):
        if any(req.method in GATED[key] for key in self.off):
            proxy.log(f"asked {req.method} although its capability is declared false")
            proxy.error(req, f"{req.method} is not supported by this backend", kind="provider")
            return None
        return msg


@control("log-only",
         'PROTOCOL §2.4 each key is read independently ("If only some ... support a feature" '
         'applies per capability); refs/blame/commit default false')
class LogOnly(SomeRevisionCaps):
    """initialize declares log true and refs, blame and commit false (a backend listing commits but no branches); their methods answer an error if asked."""

    off = ("refs", "blame", "commit")


@control("merkle-dir-ids",
         'PROTOCOL §3.3 directories need a sha ("content id (§4)"); §4 "a suite must apply the change '
         'rule to blob ids only"; REF derives them from the path, a git backend gives tree ids (a hash '
         'of the directory\'s entries)')
class MerkleDirIds(Hooks):
    """Directory ids are hashes of their entries (name, type, id of each child, as git's tree ids are): identical directories share one, and a directory's id changes with anything below it.

    Computed from the listing itself, bottom up, on every repo/tree reply.
    """

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or req.method != "repo/tree" or result is None:
            return msg
        entries = [e for e in result.get("entries") or [] if isinstance(e, dict)
                   and isinstance(e.get("path"), str)]
        children: dict[str, list] = {}
        for e in entries:
            parent, _, name = e["path"].rpartition("/")
            children.setdefault(parent, []).append((name, e))
        dirs = sorted((e for e in entries if e.get("type") == "tree"),
                      key=lambda e: -e["path"].count("/"))
        import hashlib
        for d in dirs:   # deepest first: a child directory's id is ready before its parent's
            listing = sorted(f"{name}\0{c.get('type')}\0{c.get('sha')}"
                             for name, c in children.get(d["path"], []))
            d["sha"] = hashlib.sha1("\n".join(listing).encode("utf-8")).hexdigest()
        return msg


@control("split-writes",
         'PROTOCOL §1.2 a message is one line terminated by "\\n" (nothing says in one write); §7.2 '
         '"There is no maximum line length"; a buffered writer flushes lines in pieces')
class SplitWrites(OwnWrites):
    """Every line reaches the host in pieces: three writes 2 ms apart (a line over 64 KiB in 64 KiB pieces), as a block-buffered writer flushes them.

    A regression guard of the harness's line reader.
    """

    PAUSE_S, PIECE = 0.002, 1 << 16

    def write(self, proxy, msg):
        import time
        from tests.adapters.proxy import dumps
        data = dumps(msg)
        if len(data) > self.PIECE:
            pieces = [data[i:i + self.PIECE] for i in range(0, len(data), self.PIECE)]
        else:
            third = max(1, len(data) // 3)
            pieces = [data[:third], data[third:2 * third], data[2 * third:]]
        with proxy._host_lock:
            for n, piece in enumerate(p for p in pieces if p):
                if n:
                    time.sleep(self.PAUSE_S)   # the adapter is slow, not the test
                try:
                    proxy._out.write(piece)
                except OSError:
                    return


@control("https-urls",
         'PROTOCOL §3.9 clone_url: "MUST A URL (or path) that git clone accepts"; §3.10/§3.11 "URL '
         'grammar is the adapter\'s"; a hosted forge answers https URLs the suite cannot fetch offline')
class HttpsUrls(Hooks):
    """repo/clone_url, repo/web_url and org/url answer the https URLs of a hosted forge (https://forge.example/<org>/<name>.git, .../-/blob/<branch>/<path>#L3-5, ...), as a real HTTP adapter does.

    Nothing is fetched: the suite runs offline.
    """

    BASE = "https://forge.example"

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is None or result is None:
            return msg
        import urllib.parse
        p = req.params
        repo = urllib.parse.quote(str(p.get("repo")))   # a name may hold a blank or a '#'
        if req.method == "repo/clone_url":
            result["clone_url"] = f"{self.BASE}/{repo}.git"
        elif req.method == "org/url":
            result["url"] = f"{self.BASE}/{p.get('org')}"
        elif req.method == "repo/web_url":
            path = urllib.parse.quote(str(p.get("path") or ""))
            branch = urllib.parse.quote(str(p.get("branch") or "main"), safe="")
            kind = "blob" if p.get("is_file") else "tree"
            url = f"{self.BASE}/{repo}" + (f"/-/{kind}/{branch}/{path}" if path else "")
            line, end = p.get("line"), p.get("end_line")
            if p.get("is_file") and type(line) is int:
                url += f"#L{line}" + (f"-{end}" if type(end) is int and end > line else "")
            result["url"] = url
        return msg
