"""Icons (FC-080): a single-glyph icon must display without special fonts."""

import unicodedata

from cases.api import case, fc_assert
from cases.formats import BUILTIN_ICONS

# Control/format, separators (whitespace), combining marks, unassigned,
# surrogates and private use (Nerd Font glyphs need a patched font).
UNDISPLAYABLE = {"Cc": "a control character", "Cf": "a format character",
                 "Zs": "whitespace", "Zl": "a line separator", "Zp": "a paragraph separator",
                 "Mn": "a combining mark", "Mc": "a combining mark", "Me": "an enclosing mark",
                 "Cn": "unassigned", "Cs": "a surrogate", "Co": "a private-use glyph"}


@case("FC-080")
def test_single_glyph_icon_is_displayable(adapter):
    """An `icon` that is one code point (not a builtin name) is a character any
    terminal shows without special fonts: not a control, format, whitespace,
    combining, unassigned, surrogate or private-use code point.

    Falsified by: icon-private-use: icon "\\ue709": one code point, but a Nerd Font private-use
    glyph.
    """
    icon = adapter.init_result.get("icon")
    if not isinstance(icon, str) or len(icon) != 1 or icon in BUILTIN_ICONS:
        return   # absent, builtin or multi-code-point: FC-004's business
    category = unicodedata.category(icon)
    fc_assert(category not in UNDISPLAYABLE, expected="a character any terminal can display",
              got=f"U+{ord(icon):04X} ({UNDISPLAYABLE.get(category)}, category {category})",
              why="an icon glyph must render without special fonts")
