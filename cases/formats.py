"""Value formats the cases judge beyond JSON types: strict and lenient
base64, ISO-8601 instants ("Z" included), JSON integers, builtin icon names."""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
from typing import Any

from cases.api import show
from wire.monitor import strict_base64_problem

# The icon names the host renders itself (PROTOCOL §2.5), exact spelling.
BUILTIN_ICONS = ("github", "gitlab", "bitbucket", "folder")


def is_int(value: Any) -> bool:
    """A JSON integer: never a boolean, never a float."""
    return type(value) is int


def b64_loose(text: Any) -> bytes | None:
    """Decode base64 the forgiving way (url-safe alphabet, whitespace, missing
    padding): for cases that judge bytes, not the encoding (FC-024 owns that)."""
    if not isinstance(text, str):
        return None
    cleaned = re.sub(r"\s+", "", text).translate(str.maketrans("-_", "+/"))
    cleaned += "=" * (-len(cleaned) % 4)
    try:
        return base64.b64decode(cleaned, validate=True)
    except (binascii.Error, ValueError):
        return None


def b64_strict_problem(text: Any) -> str | None:
    """None when ``text`` is strict standard base64, else what is wrong with it
    (the one definition is the protocol monitor's, which judges every frame)."""
    if not isinstance(text, str):
        return f"bytes_b64 is not a string ({show(text, 40)})"
    return strict_base64_problem(text)


# ---------------------------------------------------------------- ISO-8601

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?$")


def instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 date-time names (offsets and 'Z' honoured), or None.

    A date-time without an offset is read as UTC."""
    if not isinstance(text, str):
        return None
    m = _ISO.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    if m.group(9):
        delta = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11)))
        tz = _dt.timezone(delta if m.group(9) == "+" else -delta)
    else:
        tz = _dt.timezone.utc
    try:
        return _dt.datetime(year, month, day, hour, minute, min(second, 59), micro, tzinfo=tz)
    except ValueError:
        return None


def epoch_instant(seconds: int | str) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(int(seconds), _dt.timezone.utc)


_ISO_BASIC = re.compile(
    r"^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(\d{2})?(?:[.,](\d+))?(?:([Zz])|([+-])(\d{2})(\d{2})?)?$")


def basic_instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 *basic format* date-time names
    (``20260302T093000Z``, ``20260302T103000+0100``), or None. RULINGS: the
    basic format passes with a warning."""
    if not isinstance(text, str):
        return None
    m = _ISO_BASIC.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    tz = _dt.timezone.utc
    if m.group(9):
        delta = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11) or 0))
        tz = _dt.timezone(delta if m.group(9) == "+" else -delta)
    try:
        return _dt.datetime(year, month, day, hour, minute, min(second, 59), micro, tzinfo=tz)
    except ValueError:
        return None
