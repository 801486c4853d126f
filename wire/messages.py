"""Result shapes of the rootle provider protocol (v1.6) as attrs models.

This module owns the *shape* of every reply a provider sends: one frozen
attrs class per result and per item, and ONE cattrs ``converter`` that turns
a decoded JSON value into them. ``structure(obj, cls)`` is the entry point;
``converter.structure`` behaves the same.

Reading follows the protocol's reader tolerance (PROTOCOL §3.0, §7.2,
RULINGS "Reader tolerance and defaults"):

* unknown keys are ignored everywhere, whatever their value;
* an absent optional member takes the host's default (search hit ``sha`` "",
  ``branch`` "main", ``matches`` [], ``located`` true; tree ``truncated``
  false, ``branch`` "main"; arrays []; ...);
* ``null`` for a genuinely optional member (``size``, ``line``, ``as_of``,
  ``pushed_at``, ``web_url``, ``patch``, counts, ...) reads as absent.

It is strict where the protocol is strict: a required member must be present
with its JSON type (a boolean is not an integer, ``1.0`` is not an integer,
an integer is not a string), ``null`` for a member with a non-null default is
a shape error (§3.0, §11 #16), unsigned integers are >= 0 and commit counts
fit in a u32. Any violation raises one ``ShapeError`` naming the member path,
e.g. ``entries[3].sha: missing required member``.

``read(obj, cls)`` is the tolerant twin for the suite's cases (RULINGS
"Reader tolerance" and "Attribution": a malformed member is judged only by
the case that owns it, every other case reads around it). It returns a
``Reading``: the model as far as it could be read, and every shape problem
once, with its member path, so a case filters the problems it owns. In a
Reading, a malformed optional member takes its default, a malformed required
member reads as None, and an array item whose key member (``KEY``) is
malformed, or that is not an object, is left out.

The handshake reply is the exception: the host reads it tolerantly (§2.3,
§2.4) and RULINGS give its MUSTs to FC-001..004, so ``InitializeResult``
exposes the host's *effective* values and keeps the raw mapping for those
cases; it fails only when the result is not an object.

Only shapes and JSON types live here. Semantic rules (1-based lines,
coalescing, ISO dates, base64, known statuses...) belong to the cases.
"""

import functools
import json
import math
import threading
import typing
from typing import Annotated, Any, Callable, Mapping, NewType, Union

import attrs
import cattrs
from cattrs.errors import (
    AttributeValidationNote,
    ClassValidationError,
    IterableValidationError,
    IterableValidationNote,
)
from cattrs.gen import make_dict_structure_fn, override

__all__ = [
    "ShapeError", "converter", "structure", "UInt", "U32", "U32_MAX", "NonNegNumber",
    "KNOWN_CAPABILITIES", "Capabilities", "InitializeResult",
    "TreeEntry", "Tree", "Blob", "BlobAt", "Branch", "Tag", "Refs",
    "LogItem", "Log", "BlameRange", "Blame", "COMMIT_STATUSES", "CommitFile",
    "Commit", "SearchHit", "Index", "SearchResult", "RepoItem", "OrgItem",
    "SearchRepos", "OrgRepo", "OrgRepos", "CloneUrl", "WebUrl", "OrgUrl",
    "ErrorData", "ErrorObject", "PartialParams", "RESULT_TYPES", "Reading", "read", "KEY",
]

# Unsigned JSON integers (never a boolean, never a float). U32 bounds the
# commit file counts: the host fails a reply whose count exceeds it (§11 #19).
UInt = NewType("UInt", int)
U32 = NewType("U32", int)
U32_MAX = 4294967295
# error.data.retry_after_s: RULINGS give FC-063 "a non-negative number".
NonNegNumber = NewType("NonNegNumber", float)

# Marks an optional member whose absence means "none" but for which the host
# rejects an explicit null (search/code ``index``, §11 #16).
NOT_NULL = "not-null"

_MAX_LISTED = 3  # problems spelled out in ShapeError's message

# Field metadata: the member that makes an array item what it is (a tree
# entry's path, a hit's repo and path). ``read`` drops an item whose key
# member is malformed; any other malformed member is read around.
KEY = "key"


class ShapeError(ValueError):
    """A reply does not have the protocol's shape.

    ``path`` and ``message`` describe the first offending member;
    ``problems`` holds every (path, message) pair found, in document order.
    ``str()`` lists up to three of them.
    """

    def __init__(self, path: str, message: str,
                 problems: tuple[tuple[str, str], ...] | None = None):
        self.path = path
        self.message = message
        self.problems = problems or ((path, message),)
        shown = "; ".join(f"{p or '(top level)'}: {m}"
                          for p, m in self.problems[:_MAX_LISTED])
        extra = len(self.problems) - _MAX_LISTED
        if extra > 0:
            shown += f" (and {extra} more)"
        super().__init__(shown)

    def __reduce__(self):
        return (type(self), (self.path, self.message, self.problems))


class _Invalid(ValueError):
    """A leaf shape problem raised by a hook; ``at`` is a path suffix below
    the member being structured (e.g. ".full_name")."""

    def __init__(self, message: str, at: str = ""):
        super().__init__(message)
        self.message = message
        self.at = at


# Returned by an item hook for an item the host silently drops (a search/repos
# item with neither full_name nor org); sequence hooks filter it out.
_DROP = object()


# ---------------------------------------------------------------- messages

def _got(value: object) -> str:
    """'got ...' in JSON vocabulary, showing short scalars."""
    if value is None:
        return "got null"
    if isinstance(value, bool):
        return f"got boolean {'true' if value else 'false'}"
    if isinstance(value, int):
        return f"got {value}"
    if isinstance(value, float):
        return f"got number {json.dumps(value)}"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        if len(text) > 40:
            text = text[:37] + '..."'
        return f"got string {text}"
    if isinstance(value, list):
        return "got an array"
    if isinstance(value, dict):
        return "got an object"
    return f"got {type(value).__name__}"


def _is_int(value: object) -> bool:
    return type(value) is int  # excludes bool (a subclass) and floats


# ------------------------------------------------------------ models: handshake

KNOWN_CAPABILITIES = ("orgs", "code_search", "file_search",
                      "refs", "log", "blame", "commit")


@attrs.frozen
class Capabilities:
    """Effective capability values (v1.6 defaults, §2.4) plus what was sent.

    A key that is absent or not a JSON boolean takes its default, like the
    host; ``raw`` is the capabilities object as sent ({} when absent or not
    an object) so FC-003/FC-099 can judge the declared types.
    """

    orgs: bool = True
    code_search: bool = True
    file_search: bool = True  # default: the effective code_search
    refs: bool = False
    log: bool = False
    blame: bool = False
    commit: bool = False
    raw: Mapping[str, Any] = attrs.field(factory=dict, hash=False)

    @classmethod
    def from_raw(cls, obj: object) -> "Capabilities":
        raw = dict(obj) if isinstance(obj, dict) else {}

        def flag(key: str, default: bool) -> bool:
            value = raw.get(key)
            return value if isinstance(value, bool) else default

        code_search = flag("code_search", True)
        return cls(orgs=flag("orgs", True), code_search=code_search,
                   file_search=flag("file_search", code_search),
                   refs=flag("refs", False), log=flag("log", False),
                   blame=flag("blame", False), commit=flag("commit", False),
                   raw=raw)


@attrs.frozen
class InitializeResult:
    """The handshake reply as the host reads it (§2.3).

    ``protocol`` is the effective major: the unsigned integer sent, else 1
    (host quirk; FC-001 judges ``raw["protocol"]``). ``name``/``icon`` are
    None when absent or not strings; ``cache_bytes`` is ``cache.bytes`` when
    that is an unsigned integer.
    """

    protocol: int = 1
    name: str | None = None
    icon: str | None = None
    capabilities: Capabilities = attrs.field(factory=Capabilities)
    cache_bytes: int | None = None
    raw: Mapping[str, Any] = attrs.field(factory=dict, hash=False)


# ----------------------------------------------------------- models: results

@attrs.frozen
class TreeEntry:
    path: str = attrs.field(metadata={KEY: True})
    type: str          # "blob" | "tree"; the host reads anything else as a file
    sha: str           # required for directories too (§11 #17)
    size: UInt | None = None

    @property
    def is_tree(self) -> bool:
        return self.type == "tree"


@attrs.frozen
class Tree:
    entries: tuple[TreeEntry, ...] = ()
    truncated: bool = False
    branch: str = "main"


@attrs.frozen
class Blob:
    bytes_b64: str


@attrs.frozen
class BlobAt:
    bytes_b64: str
    sha: str


@attrs.frozen
class Branch:
    name: str
    sha: str
    default: bool = False


@attrs.frozen
class Tag:
    name: str
    sha: str


@attrs.frozen
class Refs:
    branches: tuple[Branch, ...] = ()
    tags: tuple[Tag, ...] = ()


@attrs.frozen
class LogItem:
    sha: str
    subject: str
    author: str
    date: str


@attrs.frozen
class Log:
    items: tuple[LogItem, ...] = ()
    truncated: bool = False


@attrs.frozen
class BlameRange:
    start_line: UInt
    end_line: UInt
    sha: str
    author: str
    date: str


@attrs.frozen
class Blame:
    ranges: tuple[BlameRange, ...] = ()


COMMIT_STATUSES = ("added", "removed", "modified", "renamed")


@attrs.frozen
class CommitFile:
    path: str
    status: str
    previous_path: str | None = None
    additions: U32 | None = None   # None = unknown, never 0 (§3.12)
    deletions: U32 | None = None
    patch: str | None = None       # None = unavailable; "" = metadata-only
    binary: bool = False

    @property
    def effective_status(self) -> str:
        """The host reads an unknown status as "modified"."""
        return self.status if self.status in COMMIT_STATUSES else "modified"


@attrs.frozen
class Commit:
    sha: str
    author: str
    date: str
    message: str
    files: tuple[CommitFile, ...]
    parents: tuple[str, ...] = ()
    truncated: bool = False
    web_url: str | None = None


@attrs.frozen
class SearchHit:
    repo: str = attrs.field(metadata={KEY: True})
    path: str = attrs.field(metadata={KEY: True})
    sha: str = ""
    branch: str = "main"
    matches: tuple[str, ...] = ()
    line: UInt | None = None
    located: bool = True


@attrs.frozen
class Index:
    as_of: str | None = None


@attrs.frozen
class SearchResult:
    items: tuple[SearchHit, ...] = ()
    truncated: bool = False
    # absent = live or unknown; an explicit null fails the reply (§11 #16)
    index: Annotated[Index | None, NOT_NULL] = None


@attrs.frozen
class RepoItem:
    """A search/repos item naming a repository."""
    full_name: str


@attrs.frozen
class OrgItem:
    """A search/repos item naming an organisation."""
    org: str


@attrs.frozen
class SearchRepos:
    """Items with neither a string ``full_name`` nor ``org`` are dropped,
    like the host does; ``full_name`` wins when both are present."""
    items: tuple[Union[RepoItem, OrgItem], ...] = ()


@attrs.frozen
class OrgRepo:
    """An org/repos entry; ``bare`` tells it came as a plain string."""
    name: str
    description: str | None = None
    private: bool = False
    archived: bool = False
    pushed_at: str | None = None
    bare: bool = False


@attrs.frozen
class OrgRepos:
    repos: tuple[OrgRepo, ...] = ()


@attrs.frozen
class CloneUrl:
    clone_url: str


@attrs.frozen
class WebUrl:
    url: str


@attrs.frozen
class OrgUrl:
    url: str


@attrs.frozen
class ErrorData:
    """``error.data``: ``kind`` a string, ``retry_after_s`` a non-negative
    number (RULINGS: FC-063's shape); other members are kept in ``raw``."""
    kind: str | None = None
    retry_after_s: NonNegNumber | None = None
    raw: Mapping[str, Any] = attrs.field(factory=dict, hash=False)


@attrs.frozen
class ErrorObject:
    """A JSON-RPC error member (§6.1). Only FC-063 judges this shape; the
    host's tolerant mapping lives in wire.errors."""
    code: int
    message: str
    data: ErrorData | None = None


@attrs.frozen
class PartialParams:
    """``params`` of a ``$/partial`` notification (§5.2)."""
    id: UInt
    items: tuple[SearchHit, ...]


RESULT_TYPES: Mapping[str, type] = {
    "initialize": InitializeResult,
    "search/repos": SearchRepos,
    "org/repos": OrgRepos,
    "repo/tree": Tree,
    "repo/blob": Blob,
    "repo/blob_at": BlobAt,
    "repo/refs": Refs,
    "repo/log": Log,
    "repo/blame": Blame,
    "repo/commit": Commit,
    "repo/clone_url": CloneUrl,
    "repo/web_url": WebUrl,
    "org/url": OrgUrl,
    "search/code": SearchResult,
}


# ---------------------------------------------------------------- converter

class _Converter(cattrs.Converter):
    """A cattrs converter whose ``structure`` raises ``ShapeError`` only."""

    def structure(self, obj: Any, cl: Any) -> Any:  # type: ignore[override]
        try:
            return super().structure(obj, cl)
        except (ClassValidationError, IterableValidationError, _Invalid) as exc:
            raise _to_shape_error(exc) from None


converter = _Converter(detailed_validation=True, forbid_extra_keys=False)


def structure(obj: Any, cls: type) -> Any:
    """Structure a decoded JSON value into ``cls``; raises ``ShapeError``."""
    return converter.structure(obj, cls)


# --- error translation

def _last_segment(exc: BaseException) -> str:
    seg = ""
    for note in getattr(exc, "__notes__", ()) or ():
        if isinstance(note, AttributeValidationNote):
            seg = f".{note.name}"
        elif isinstance(note, IterableValidationNote):
            seg = f"[{note.index}]"
    return seg


def _collect(exc: BaseException, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(exc, (ClassValidationError, IterableValidationError)):
        for sub in exc.exceptions:
            _collect(sub, path + _last_segment(sub), out)
        return
    if isinstance(exc, _Invalid):
        out.append(((path + exc.at).lstrip("."), exc.message))
    elif isinstance(exc, KeyError) and exc.args and path.endswith(f".{exc.args[0]}"):
        # cattrs' generated code indexes the dict: a KeyError for the very
        # member being structured means it is absent
        out.append((path.lstrip("."), "missing required member"))
    else:  # a bug in a hook rather than in the reply; still name the place
        out.append((path.lstrip("."), f"{type(exc).__name__}: {exc}"))


def _to_shape_error(exc: BaseException) -> ShapeError:
    problems: list[tuple[str, str]] = []
    _collect(exc, "", problems)
    if not problems:
        problems.append(("", str(exc) or type(exc).__name__))
    path, message = problems[0]
    return ShapeError(path, message, tuple(problems))


# --- primitive hooks (strict JSON types; cattrs' defaults coerce)

def _str(value: object, _: object = None) -> str:
    if type(value) is str:
        return value
    raise _Invalid(f"expected a string, {_got(value)}")


def _bool(value: object, _: object = None) -> bool:
    if value is True or value is False:
        return value
    raise _Invalid(f"expected a boolean, {_got(value)}")


def _int(value: object, _: object = None) -> int:
    if _is_int(value):
        return value  # type: ignore[return-value]
    raise _Invalid(f"expected an integer, {_got(value)}")


def _uint(value: object, _: object = None) -> int:
    if _is_int(value) and value >= 0:  # type: ignore[operator]
        return value  # type: ignore[return-value]
    raise _Invalid(f"expected a non-negative integer, {_got(value)}")


def _u32(value: object, _: object = None) -> int:
    if _is_int(value) and 0 <= value <= U32_MAX:  # type: ignore[operator]
        return value  # type: ignore[return-value]
    raise _Invalid(f"expected an integer in 0..{U32_MAX}, {_got(value)}")


def _number_nonneg(value: object, _: object = None) -> int | float:
    if (_is_int(value) or type(value) is float) and 0 <= value < math.inf:  # type: ignore[operator]
        return value  # type: ignore[return-value]
    raise _Invalid(f"expected a non-negative number, {_got(value)}")


converter.register_structure_hook(str, _str)
converter.register_structure_hook(bool, _bool)
converter.register_structure_hook(int, _int)
converter.register_structure_hook(UInt, _uint)
converter.register_structure_hook(U32, _u32)
converter.register_structure_hook(NonNegNumber, _number_nonneg)


# --- generic hook factories

_UnionType = type(int | None)


def _is_optional(tp: Any) -> bool:
    args = typing.get_args(tp)
    return (typing.get_origin(tp) in (Union, _UnionType)
            and len(args) == 2 and type(None) in args)


def _optional_factory(tp: Any) -> Callable[[Any, Any], Any]:
    """``X | None``: null reads as absent (genuinely optional members only;
    members with a non-null default are typed plain ``X``)."""
    inner_tp = next(a for a in typing.get_args(tp) if a is not type(None))
    inner = converter.get_structure_hook(inner_tp)

    def hook(value: Any, _: Any) -> Any:
        return None if value is None else inner(value, inner_tp)
    return hook


def _is_not_null(tp: Any) -> bool:
    return typing.get_origin(tp) is Annotated and NOT_NULL in tp.__metadata__


def _not_null_factory(tp: Any) -> Callable[[Any, Any], Any]:
    inner_tp = next(a for a in typing.get_args(tp.__origin__) if a is not type(None))
    inner = converter.get_structure_hook(inner_tp)

    def hook(value: Any, _: Any) -> Any:
        if value is None:
            raise _Invalid("got null; omit the member instead of sending null")
        return inner(value, inner_tp)
    return hook


def _is_array(tp: Any) -> bool:
    args = typing.get_args(tp)
    return typing.get_origin(tp) is tuple and len(args) == 2 and args[1] is Ellipsis


def _array_factory(tp: Any) -> Callable[[Any, Any], Any]:
    """``tuple[X, ...]`` from a JSON array only (cattrs would iterate a
    string or an object); item errors carry their index."""
    item_tp = typing.get_args(tp)[0]
    item = converter.get_structure_hook(item_tp)

    def hook(value: Any, _: Any) -> tuple:
        if type(value) is not list:
            raise _Invalid(f"expected an array, {_got(value)}")
        out = []
        errors: list[Exception] = []
        for i, element in enumerate(value):
            try:
                result = item(element, item_tp)
            except Exception as exc:  # noqa: BLE001
                exc.__notes__ = [*getattr(exc, "__notes__", []),
                                 IterableValidationNote(f"Structuring {tp} @ index {i}", i, item_tp)]
                errors.append(exc)
                continue
            if result is not _DROP:
                out.append(result)
        if errors:
            raise IterableValidationError(f"While structuring {tp}", errors, tp)
        return tuple(out)
    return hook


def _object_hook(cls: type, **overrides: Any) -> Callable[[Any, Any], Any]:
    """cattrs' generated structure function for an attrs class, behind a
    check that the value is a JSON object at all."""
    generated = make_dict_structure_fn(cls, converter, **overrides)

    def hook(value: Any, _: Any = None) -> Any:
        if type(value) is not dict:
            raise _Invalid(f"expected an object, {_got(value)}")
        return generated(value, cls)
    return hook


converter.register_structure_hook_factory(_is_optional, _optional_factory)
converter.register_structure_hook_factory(_is_not_null, _not_null_factory)
converter.register_structure_hook_factory(_is_array, _array_factory)
converter.register_structure_hook_factory(attrs.has, lambda cls: _object_hook(cls))


# --- the odd shapes

def _structure_initialize(value: Any, _: Any) -> InitializeResult:
    if type(value) is not dict:
        raise _Invalid(f"expected an object, {_got(value)}")
    protocol = value.get("protocol")
    name = value.get("name")
    icon = value.get("icon")
    cache = value.get("cache")
    cache_bytes = cache.get("bytes") if type(cache) is dict else None
    return InitializeResult(
        protocol=protocol if _is_int(protocol) and protocol >= 0 else 1,
        name=name if type(name) is str else None,
        icon=icon if type(icon) is str else None,
        capabilities=Capabilities.from_raw(value.get("capabilities")),
        cache_bytes=cache_bytes if _is_int(cache_bytes) and cache_bytes >= 0 else None,
        raw=dict(value),
    )


def _structure_capabilities(value: Any, _: Any) -> Capabilities:
    return Capabilities.from_raw(value)


def _structure_search_repos_item(value: Any, _: Any) -> Any:
    if type(value) is not dict:
        raise _Invalid(f"expected an object, {_got(value)}")
    full_name = value.get("full_name")
    org = value.get("org")
    # A present non-string full_name/org fails the whole reply (§11 #29),
    # even when the other key would have decided the item.
    if full_name is not None and type(full_name) is not str:
        raise _Invalid(f"expected a string, {_got(full_name)}", ".full_name")
    if org is not None and type(org) is not str:
        raise _Invalid(f"expected a string, {_got(org)}", ".org")
    if full_name is not None:
        return RepoItem(full_name)
    if org is not None:
        return OrgItem(org)
    return _DROP


_org_repo_object = _object_hook(OrgRepo, bare=override(omit=True))


def _structure_org_repo(value: Any, _: Any) -> OrgRepo:
    if type(value) is str:
        return OrgRepo(name=value, bare=True)
    if type(value) is dict:
        return _org_repo_object(value)
    raise _Invalid(f"expected a string or an object, {_got(value)}")


_error_data_object = _object_hook(ErrorData, raw=override(omit=True))


def _structure_error_data(value: Any, _: Any) -> ErrorData:
    data = _error_data_object(value)
    return attrs.evolve(data, raw=dict(value))


converter.register_structure_hook(InitializeResult, _structure_initialize)
converter.register_structure_hook(Capabilities, _structure_capabilities)
converter.register_structure_hook(Union[RepoItem, OrgItem], _structure_search_repos_item)
converter.register_structure_hook(OrgRepo, _structure_org_repo)
converter.register_structure_hook(ErrorData, _structure_error_data)


# ---------------------------------------------------------------- tolerant reading

_MISSING = object()
# Classes with a hook of their own: read strictly, as one member.
_OWN_HOOK = (InitializeResult, Capabilities, OrgRepo, ErrorData)


@attrs.frozen
class Reading:
    """A reply read tolerantly: ``model`` (None when the reply is not an
    object) and ``problems``, every (member path, message) in document order."""

    model: Any
    problems: tuple[tuple[str, str], ...] = ()
    places: Mapping[int, str] = attrs.field(factory=dict, eq=False, repr=False)

    def where(self, item: Any) -> str | None:
        """The member path an array item of ``model`` was read from."""
        return self.places.get(id(item))

    def at(self, pattern: str, under: str | None = None) -> list[tuple[str, str]]:
        """The problems whose path matches ``pattern``: ``*`` is one member
        name, ``[*]`` any index, a pattern ending in ``...`` matches everything
        below and one starting with ``...`` any place above
        (``"entries[*].size"``, ``"index..."``, ``"...located"``); with
        ``under``, the pattern is relative to that path."""
        if not self.problems:
            return []     # the usual case: nothing to match (and no pattern to compile)
        if under is not None:
            pattern = under + ("" if pattern.startswith("[") else ".") + pattern
        rx = _pattern(pattern)
        return [(p, m) for p, m in self.problems if rx.fullmatch(p)]

    def of(self, item: Any, member: str = "...") -> list[tuple[str, str]]:
        """The problems of one array item (of one ``member`` of it)."""
        place = self.where(item)
        return [] if place is None else self.at(member, under=place)


@functools.lru_cache(maxsize=1024)
def _pattern(pattern: str):
    import re
    below = pattern.endswith("...")
    above = pattern.startswith("...")
    core = pattern[3 if above else 0:len(pattern) - 3 if below else None].strip(".")
    rx = re.escape(core).replace(r"\[\*\]", r"\[\d+\]").replace(r"\*", r"[^.\[]*")
    return re.compile((r"(?:.*[.\]])?" if above else "") + rx
                      + (r"(?:[.\[].*)?" if below else ""))


# A reading is a pure function of the JSON value and the class, and the
# models are frozen, so a big reply read again (a case asks wide's
# 3,000-entry tree several times, every case of a group lists it) is read
# once: keyed by its JSON text, which costs a third of reading it. The
# protocol monitor's strict check of every reply (shape_error) is remembered
# the same way, apart from the readings.
_MEMO_MIN_ITEMS = 256      # a reply with an array at least this long is remembered
_MEMO_SIZE = 16            # answers kept, the oldest dropped first
_memo: dict[tuple[Any, str], Any] = {}
_memo_lock = threading.Lock()
_SHAPE_OK = object()       # shape_error's remembered "no error"


def _memo_key(obj: Any, kind: Any) -> tuple[Any, str] | None:
    """The memo's key for a big JSON object (an array of _MEMO_MIN_ITEMS or
    more as a member), else None."""
    if type(obj) is dict and any(type(v) is list and len(v) >= _MEMO_MIN_ITEMS
                                 for v in obj.values()):
        try:
            return (kind, json.dumps(obj, separators=(",", ":"), allow_nan=True))
        except (TypeError, ValueError):    # not JSON after all (a test's object)
            return None
    return None


def _memo_get(key: tuple[Any, str] | None) -> Any:
    if key is None:
        return None
    with _memo_lock:
        return _memo.get(key)


def _memo_put(key: tuple[Any, str] | None, value: Any) -> None:
    if key is None:
        return
    with _memo_lock:
        if len(_memo) >= _MEMO_SIZE:
            _memo.pop(next(iter(_memo)))
        _memo[key] = value


def read(obj: Any, cls: Any) -> Reading:
    """Read a decoded JSON value as ``cls`` tolerantly (see the module doc)."""
    key = _memo_key(obj, cls)
    known = _memo_get(key)
    if known is not None:
        return known
    problems: list[tuple[str, str]] = []
    places: dict[int, str] = {}
    model = _read(obj, cls, "", problems, places)
    reading = Reading(None if model is _MISSING else model, tuple(problems), places)
    _memo_put(key, reading)
    return reading


def shape_error(obj: Any, cls: type) -> ShapeError | None:
    """None when ``obj`` structures as ``cls`` (``structure``, strict), else
    the ShapeError it raises."""
    key = _memo_key(obj, ("strict", cls))
    known = _memo_get(key)
    if known is not None:
        return None if known is _SHAPE_OK else known
    try:
        structure(obj, cls)
        error = None
    except ShapeError as exc:
        error = exc.with_traceback(None)   # kept: without the frames it was raised in
    _memo_put(key, _SHAPE_OK if error is None else error)
    return error


def _join(path: str, sub: str) -> str:
    if not sub:
        return path
    if not path or sub.startswith("["):
        return path + sub
    return f"{path}.{sub}"


@functools.lru_cache(maxsize=None)
def _shape_of(tp: Any) -> str:
    """How _read walks ``tp``: "model" (an attrs class read member by member),
    "models" (an array of those), or "value" (one structure call); computed
    once per type (a wide tree is thousands of entries)."""
    if attrs.has(tp) and tp not in _OWN_HOOK:
        return "model"
    if _is_array(tp) and attrs.has(typing.get_args(tp)[0]):
        return "models"
    return "value"


@functools.lru_cache(maxsize=None)
def _members(tp: Any) -> tuple[tuple[str, Any, bool, bool, bool, str], ...]:
    """(name, type, required, is the key member, is a plain str, _shape_of
    its type) of each member of an attrs class, in order; computed once per
    class (hashing a typing generic for every member of every entry of a
    wide tree costs more than reading it)."""
    return tuple((f.name, f.type, f.default is attrs.NOTHING, bool(f.metadata.get(KEY)),
                  f.type is str, _shape_of(f.type)) for f in attrs.fields(tp))


def _read(value: Any, tp: Any, path: str, problems: list, places: dict,
          shape: str | None = None) -> Any:
    if shape is None:
        shape = _shape_of(tp)
    if shape == "value":
        if tp is str and type(value) is str:    # the common members, without the dispatch
            return value
        try:
            return converter.structure(value, tp)
        except ShapeError as exc:
            problems.extend((_join(path, p), m) for p, m in exc.problems)
            return _MISSING
    if shape == "model":
        if type(value) is not dict:
            problems.append((path, f"expected an object, {_got(value)}"))
            return _MISSING
        kwargs: dict[str, Any] = {}
        for name, member_tp, required, key, plain_str, member_shape in _members(tp):
            member = value.get(name, _MISSING)
            if member is _MISSING:
                got = _MISSING
                if required:
                    problems.append((_join(path, name), "missing required member"))
            elif plain_str and type(member) is str:   # the common members, without a path
                kwargs[name] = member
                continue
            else:
                got = _read(member, member_tp, _join(path, name), problems, places, member_shape)
            if got is _MISSING:
                if key:
                    return _MISSING
                if required:
                    kwargs[name] = None
                continue   # the default applies
            kwargs[name] = got
        return tp(**kwargs)
    # "models": an array of attrs classes, each item read (and placed) alone
    if type(value) is not list:
        problems.append((path, f"expected an array, {_got(value)}"))
        return _MISSING
    item_tp = typing.get_args(tp)[0]
    item_shape = _shape_of(item_tp)
    out = []
    for i, element in enumerate(value):
        place = f"{path}[{i}]"
        item = _read(element, item_tp, place, problems, places, item_shape)
        if item is not _MISSING:
            places[id(item)] = place
            out.append(item)
    return tuple(out)
