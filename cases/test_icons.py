"""Icons (FC-080): a single-glyph icon must display without special fonts."""

from cases.kit.api import case, fc_assert, listing
from cases.kit.formats import undisplayable_icon
from cases.kit.replies import handshakes


@case("FC-080")
def test_single_glyph_icon_is_displayable(adapter, spawn):
    """In every handshake (the group adapter's generations and the start
    without cache params here; every other initialize result of the run,
    a second initialize on one process too, through cases/judges/claims.py), an
    `icon` that is one code point (not a builtin name) is a character any
    terminal shows without special fonts: not a control, format, whitespace,
    combining, unassigned, surrogate or private-use code point, nor a letter
    or symbol whose glyph is blank (the Hangul fillers, the blank Braille
    pattern).

    Falsified by: icon-private-use: icon "\\ue709": one code point, but a Nerd Font private-use
    glyph.
    """
    bad = [f"{where}: {problem}" for where, init in handshakes(adapter, spawn)
           if (problem := undisplayable_icon(init.get("icon"))) is not None]
    fc_assert(not bad, expected="a character any terminal can display", got=listing(bad, 3),
              why="an icon glyph must render without special fonts")
