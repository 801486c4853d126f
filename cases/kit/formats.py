"""Value formats the cases judge beyond JSON types: strict and lenient
base64, ISO-8601 instants ("Z" included), JSON integers, builtin icon names."""

from __future__ import annotations

import base64
import binascii
import datetime as _dt
import re
from typing import Any

from cases.kit.api import show
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
    r"(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$")


def instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 date-time names (offsets and 'Z' honoured), or None.

    An offset may be whole hours alone (``+01``: ISO 8601 leaves the minutes
    out when they are zero, as PostgreSQL prints it). A date-time without an
    offset is read as UTC."""
    return _instant_of(_ISO, text)


def epoch_instant(seconds: int | str) -> _dt.datetime:
    return _dt.datetime.fromtimestamp(int(seconds), _dt.timezone.utc)


_ISO_BASIC = re.compile(
    r"^(\d{4})(\d{2})(\d{2})[Tt](\d{2})(\d{2})(\d{2})?(?:[.,](\d+))?"
    r"(?:([Zz])|([+-])(\d{2})(\d{2})?)?$")


def basic_instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 *basic format* date-time names
    (``20260302T093000Z``, ``20260302T103000+0100``), or None. RULINGS: the
    basic format passes with a warning."""
    return _instant_of(_ISO_BASIC, text)


def either_instant(text: Any) -> _dt.datetime | None:
    """The instant an ISO-8601 date-time names in the extended or the basic
    format (RULINGS: the basic format passes, with a warning its case gives),
    or None: for matching a date with a commit's, never for judging its form."""
    return instant(text) or basic_instant(text)


def _instant_of(form: re.Pattern, text: Any) -> _dt.datetime | None:
    """The instant ``text`` names when ``form`` (_ISO or _ISO_BASIC: the same
    groups) matches it, or None; no offset is UTC."""
    if not isinstance(text, str):
        return None
    m = form.match(text.strip())
    if not m:
        return None
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0")[:6].ljust(6, "0"))
    try:
        tz = _dt.timezone.utc
        if m.group(9):   # (an offset of 24 hours or more is no offset: ValueError)
            delta = _dt.timedelta(hours=int(m.group(10)), minutes=int(m.group(11) or 0))
            tz = _dt.timezone(delta if m.group(9) == "+" else -delta)
        return _dt.datetime(year, month, day, hour, minute, min(second, 59), micro, tzinfo=tz)
    except ValueError:
        return None


# Control/format, separators (whitespace), combining marks, unassigned,
# surrogates and private use (Nerd Font glyphs need a patched font).
UNDISPLAYABLE = {"Cc": "a control character", "Cf": "a format character",
                 "Zs": "whitespace", "Zl": "a line separator", "Zp": "a paragraph separator",
                 "Mn": "a combining mark", "Mc": "a combining mark", "Me": "an enclosing mark",
                 "Cn": "unassigned", "Cs": "a surrogate", "Co": "a private-use glyph"}
# Letters and symbols whose glyph is blank: the Hangul fillers (Unicode's
# Default_Ignorable_Code_Point letters, rendered as nothing or as a space)
# and the blank Braille pattern. One code point of a displayable category,
# yet the user sees no icon.
BLANK = {0x115F: "HANGUL CHOSEONG FILLER", 0x1160: "HANGUL JUNGSEONG FILLER",
         0x3164: "HANGUL FILLER", 0xFFA0: "HALFWIDTH HANGUL FILLER",
         0x2800: "BRAILLE PATTERN BLANK"}


def undisplayable_icon(icon) -> str | None:
    """Why a one-code-point ``icon`` (not a builtin name) is no character any
    terminal shows without special fonts (FC-080), or None; an icon that is
    absent, a builtin name or not one code point is FC-004's business."""
    import unicodedata
    if not isinstance(icon, str) or len(icon) != 1 or icon in BUILTIN_ICONS:
        return None
    category = unicodedata.category(icon)
    if category in UNDISPLAYABLE:
        return f"U+{ord(icon):04X} ({UNDISPLAYABLE[category]}, category {category})"
    if ord(icon) in BLANK:
        return f"U+{ord(icon):04X} {BLANK[ord(icon)]} (category {category}, but its glyph is blank)"
    return None
