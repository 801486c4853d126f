"""Path mutants, part k: content ids broken only in a respawned generation's
search hits, a path the id cases do not take first (FC-013 compares trees
across a respawn; FC-010 and FC-012 judge hit shas in one generation).

Each mutant breaks one MUST where its owner case does not look first and
fails exactly that case (written like tests/adapters/mutants_deep.py: a
hook class per switch, its docstring's first line what it changes, then
"Hides on:").
"""

from __future__ import annotations

from tests.adapters.hooks import SaltedIds
from tests.adapters.mutants_deep import promoted
from tests.adapters.mutants_paths_i import FirstInitialize


@promoted("respawn-hit-ids-salted", "FC-013",
          '§4: "MUST Ids are stable: the same unchanged content ... yields the same id on every '
          'call (FC-010) and after the adapter is killed and respawned (FC-013)"')
class RespawnHitIdsSalted(FirstInitialize, SaltedIds):
    """A respawned generation salts its search hits' shas with a per-process random value (its trees' ids stay genuine).

    The salt is fixed for the process, so its hits agree from one search to
    the next, and repo/blob of a salted id serves the file's bytes (the
    reverse map); the first generation of every process is left alone.

    Hides on: search hits after a respawn; FC-013 compared only trees across
    the respawn, and FC-010/FC-012 judge hit shas in a first generation.
    """

    def request(self, proxy, req, msg):
        msg = FirstInitialize.request(self, proxy, req, msg)
        return SaltedIds.request(self, proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        if where != "hit" or not self.respawned:
            return sha
        return super().fake(proxy, req, sha, repo, path, ref, where)
