"""The matrix mutants that break a case of cases/test_icons.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from tests.adapters.common import NoCacheInit
from tests.adapters.hooks import InitResult, Variant, matrix
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("icon-private-use", "FC-080")
class IconPrivateUse(InitResult):
    """icon "\\ue709": one code point, but a Nerd Font private-use glyph."""

    def edit(self, proxy, req, result):
        result["icon"] = "\ue709"


@promoted("icon-private-use-no-cache", "FC-080",
      '§2.5: "MUST If present, icon is a string that is ... exactly one literal character that any '
      'terminal can display without special fonts"')
class IconPrivateUseNoCache(NoCacheInit):
    """icon "\\ue709" (a Nerd Font private-use glyph) when started without cache params.

    Hides on: FC-005's start; FC-080 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["icon"] = "\ue709"


@promoted("icon-hangul-filler", "FC-080",
          '§2.5: icon "exactly one literal character that any terminal can display without '
          'special fonts"')
class IconHangulFiller(InitResult):
    """icon "\\u3164" (HANGUL FILLER): one code point of category Lo whose glyph is blank.

    Hides on: a letter category; FC-080 judged categories only.
    """

    def edit(self, proxy, req, result):
        result["icon"] = "\u3164"


@promoted("second-initialize-icon-private-use", "FC-080",
          '§2.5: "MUST If present, icon is ... exactly one literal character that any terminal '
          'can display without special fonts"')
class SecondInitializeIconPrivateUse(Hooks):
    """An initialize after the first on the same process answers icon "\\ue709" (one code point, a Nerd Font private-use glyph).

    Hides on: a second initialize on one process (an older host sent two);
    FC-080 read the group adapter's generations and the start without cache
    params, the protocol monitor judges an icon's shape only (FC-004's: one
    code point passes), and FC-121 only that a result came back.
    """

    def __init__(self):
        self.initializes = 0

    def reply(self, proxy, req, msg):
        result = result_of(msg)
        if req is not None and req.method == "initialize" and result is not None:
            self.initializes += 1
            if self.initializes > 1:
                result["icon"] = "\ue709"
        return msg
