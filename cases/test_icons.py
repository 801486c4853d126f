"""Icons (FC-080): a single-glyph icon must display without special fonts."""

import unicodedata

from cases.api import case, fc_assert, listing
from cases.formats import BUILTIN_ICONS
from cases.replies import handshakes

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


@case("FC-080")
def test_single_glyph_icon_is_displayable(adapter, spawn):
    """In every handshake, an `icon` that is one code point (not a builtin name) is a character any
    terminal shows without special fonts: not a control, format, whitespace,
    combining, unassigned, surrogate or private-use code point, nor a letter
    or symbol whose glyph is blank (the Hangul fillers, the blank Braille
    pattern).

    Falsified by: icon-private-use: icon "\\ue709": one code point, but a Nerd Font private-use
    glyph.
    """
    bad = []
    for where, init in handshakes(adapter, spawn):
        icon = init.get("icon")
        if not isinstance(icon, str) or len(icon) != 1 or icon in BUILTIN_ICONS:
            continue   # absent, builtin or multi-code-point: FC-004's business
        category = unicodedata.category(icon)
        if category in UNDISPLAYABLE:
            bad.append(f"{where}: U+{ord(icon):04X} ({UNDISPLAYABLE[category]}, "
                       f"category {category})")
        elif ord(icon) in BLANK:
            bad.append(f"{where}: U+{ord(icon):04X} {BLANK[ord(icon)]} (category {category}, "
                       f"but its glyph is blank)")
    fc_assert(not bad, expected="a character any terminal can display", got=listing(bad, 3),
              why="an icon glyph must render without special fonts")
