"""Path mutants, part l: the streaming rules (FC-040..FC-045) broken on
streamed filename searches (path: queries), a path those cases do not take
first: on a forge with filename search only (code_search false,
file_search true), and beside content search.

Each mutant breaks one MUST where its owner case does not look first and
fails exactly that case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations

from tests.adapters.gates import Stall
from tests.adapters.hooks import AwaitsCancel, FilesearchOnly
from tests.adapters.mutants_deep import promoted


def path_query(req) -> bool:
    q = req.params.get("q") if req is not None else None
    return isinstance(q, str) and q.startswith("path:")


@promoted("filesearch-only-cancel-answers-error", "FC-045",
          '§5.4: "MUST (client side) Cancellation is not terminal"; "SUITE FC-045 requires the '
          'stream to stop cleanly and the adapter not to error" (RULINGS: an error reply after '
          'a cancel fails FC-045)')
class FilesearchOnlyCancelAnswersError(FilesearchOnly, AwaitsCancel):
    """Declares code_search false, file_search true (legal); a cancelled streamed path: search answers an error.

    A fast stream may finish before the host's cancel arrives, so the final
    reply of a stream is held up to CANCEL_WAIT_S for a cancel to show up;
    uncancelled streams and one-shot searches are answered as usual.

    Hides on: an adapter without content search; FC-045 cancelled content
    searches only and skipped when code_search was false.
    """

    def reply(self, proxy, req, msg):
        if req is not None and req.method == "search/code" and req.streaming \
                and self.cancelled(proxy, req):
            return {"jsonrpc": "2.0", "id": req.id,
                    "error": {"code": 1, "message": "request cancelled",
                              "data": {"kind": "provider"}}}
        return super().reply(proxy, req, msg)


@promoted("path-stream-stall-4s", "FC-043",
          '§5.3: "SHOULD Emit batches at least every couple of seconds (FC-043 runs a 2 s '
          'inactivity window against a 1.2 s batch cadence)"')
class PathStreamStall4s(Stall):
    """A 4 s silence after the first batch of every streamed path: search (filename search).

    Content streams are left alone; the adapter declares both search
    capabilities, as the reference does.

    Hides on: streamed path: queries; FC-043 timed content streams only, and
    the path: streams of FC-030, FC-034 and FC-042 wait a whole deadline.
    """

    def before(self, req, n):
        return super().before(req, n) if path_query(req) else 0.0

    def before_reply(self, req):
        return super().before_reply(req) if path_query(req) else 0.0
