"""Path mutants, part j: rules broken only where two requests of one kind
are in flight together, a path the cases do not take first.

Each mutant breaks one MUST where its owner case does not look first and
fails exactly that case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations

from tests.adapters.mutants_deep import promoted
from tests.adapters.proxy import Hooks


def streaming_search(req) -> bool:
    return req is not None and req.method == "search/code" and req.streaming


@promoted("concurrent-streams-crossed", "FC-120",
          '§5.4/§7.4: "$/partial ... params.id: the request it belongs to"; replies and '
          'partials are routed by id, with several requests in flight')
class ConcurrentStreamsCrossed(Hooks):
    """$/partial batches of a stream go out under the id of another streaming search in flight.

    While a second streaming search/code request is waiting for its reply,
    the batches of the first are sent under the second's id (still before
    the second's reply, so no batch follows its reply); a stream alone is
    never touched.

    Hides on: two streams in flight together; FC-120 had one stream beside
    trees and blobs, every other case streams one search at a time.
    """

    def partial(self, proxy, req, msg):
        if not streaming_search(req):
            return msg
        others = [r for r in list(proxy.requests.values())
                  if r.id != req.id and streaming_search(r)]
        if others:
            msg["params"]["id"] = others[-1].id
        return msg
