"""Deep mutants: one real protocol violation each, hidden where the cases do not look first.

The mutant matrix (tests/adapters/mutants/) proves each case fails on the path it samples
first. ``DEEP`` holds the adversary's mutants: each breaks ONE MUST of
PROTOCOL.md on another path (another repository, ref, batch, method,
generation, process start or moment), the way an independent adapter breaks
a rule where a case does not look first. Each Variant's ``expected`` is exactly
the case that owns the broken rule per RULINGS.md and the registry; the hook
class carries ``rule`` (the section and the MUST it breaks) and its docstring
says where the defect hides (``Hides on:``).

Two owner markers stand for rules no registry case owns (no deep mutant
names either today):

- ``PENDING``: a rule whose owning case is not in the registry yet;
- ``UNOWNED``: a rule no case covers, or whose owner RULINGS does not name.

Such mutants are NOT in MUTANTS: the matrix stays green without them. A deep
mutant its owner case catches exactly is promoted: it moves to the matrix
table of its owner's group (tests/adapters/mutants/<group>.py, ``@promoted``
there keeps its ``rule``) and leaves DEEP. Run one with
``python3 tests/mutant_deep.py <switch> <fixture-dir>``;
``python3 tests/deep_verdicts.py`` runs the suite against all of them and
prints the verdict table.
"""

from __future__ import annotations

import re

from tests.adapters.hooks import Variant, registrar
from tests.adapters.proxy import Hooks

DEEP: dict[str, Variant] = {}
_register = registrar(DEEP)

PENDING = "FC-12x"      # a rule whose owning case is not in the registry yet
UNOWNED = "unowned"     # no case covers the rule, or RULINGS names no owner


def deep(switch: str, owner: str, rule: str):
    """Register a deep mutant: ``owner`` is the one case id it must fail,
    ``rule`` the PROTOCOL.md section and MUST it breaks."""
    def add(cls):
        cls.rule, cls.owner = rule, owner
        return _register(switch, owner)(cls)
    return add


def hides_on(variant: Variant) -> str:
    """The docstring's "Hides on:" sentence (where the cases do not look)."""
    doc = " ".join((variant.hooks.__doc__ or "").split())
    found = re.search(r"Hides on:\s*(.*?)(?:$|(?<=\.)\s)", doc)
    return found.group(1) if found else ""


@deep("network-on-reinitialize", "FC-052",
      '§2.1: "MUST NOT Perform network I/O or credential lookups while answering initialize"')
class NetworkOnReinitialize(Hooks):
    """A respawned generation's initialize (id != 1) opens a TCP connection to a loopback test double first.

    Hides on: a respawned generation; FC-052 samples one first start only.
    """

    def request(self, proxy, req, msg):
        import socket
        if req.method == "initialize" and req.id != 1:
            with socket.socket() as server:
                server.bind(("127.0.0.1", 0))
                server.listen(1)
                with socket.create_connection(server.getsockname(), timeout=2):
                    server.accept()[0].close()
        return msg


@deep("notification-answered-late", "FC-054", '§1.2: "MUST Notifications (messages with no id) are never answered"')
class NotificationAnsweredLate(Hooks):
    """Unknown notifications are answered {"id": null, "error": ...} 1 s later.

    Hides on: after FC-054's SILENCE_S (0.5 s) window and its follow-up tree.
    """

    LATE_S = 1.0

    def notification(self, proxy, msg):
        if msg.get("method") != "$/cancelRequest":
            answer = {"jsonrpc": "2.0", "id": None,
                      "error": {"code": -32601, "message": f"method not found: {msg.get('method')}"}}
            proxy.later(self.LATE_S, lambda: proxy.send_host(answer))
        return msg


# ====================================================================== listings and links
