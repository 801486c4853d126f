"""Path mutants, part f: the handshake rules on every initialize of the run
(a second initialize on one process, a respawned generation), blob ids after
a second initialize, and replies routed under concurrency; and the control of
a backend that throttles requests in flight.

Written like tests/adapters/mutants_deep.py (a hook class per switch, its
docstring's first line what it changes, then "Hides on:").
"""

from __future__ import annotations

from tests.adapters.controls import control
from tests.adapters.hooks import BlobIds, InitResult, PairReplies
from tests.adapters.mutants import mutant
from tests.adapters.proxy import Hooks


# ---------------------------------------------------------------- handshakes

class LaterInit(InitResult):
    """From the second initialize of a process on, ``change(result)``."""

    def __init__(self):
        self.inits = 0

    def edit(self, proxy, req, result):
        self.inits += 1
        if self.inits > 1:
            self.change(result)

    def change(self, result: dict) -> None:
        pass


@mutant("protocol-string-second-init", "FC-001")
class ProtocolStringSecondInit(LaterInit):
    """A second initialize on the same process answers protocol "1" (a string).

    Hides on: FC-121's repeated initializes; FC-001 read only each
    generation's first handshake, and FC-121 only that a result came back.
    """

    def change(self, result):
        result["protocol"] = "1"


@mutant("name-number-second-init", "FC-002")
class NameNumberSecondInit(LaterInit):
    """A second initialize on the same process answers name 42.

    Hides on: FC-121's repeated initializes; FC-002 read only each
    generation's first handshake.
    """

    def change(self, result):
        result["name"] = 42


@mutant("capability-string-second-init", "FC-003")
class CapabilityStringSecondInit(LaterInit):
    """A second initialize on the same process answers capabilities.code_search "yes".

    Hides on: FC-121's repeated initializes; FC-003 read only each
    generation's first handshake.
    """

    def change(self, result):
        result.setdefault("capabilities", {})["code_search"] = "yes"


@mutant("icon-misspelled-second-init", "FC-004")
class IconMisspelledSecondInit(LaterInit):
    """A second initialize on the same process answers icon "GitLab".

    Hides on: FC-121's repeated initializes; FC-004 read only each
    generation's first handshake.
    """

    def change(self, result):
        result["icon"] = "GitLab"


@mutant("protocol-string-respawn", "FC-001")
class ProtocolStringRespawn(InitResult):
    """A respawned generation's initialize (id not 1) answers protocol "1" (a string).

    Hides on: the spawned processes' respawns (FC-013, FC-050, FC-051,
    FC-052); FC-001 read only the group adapters' handshakes, and FC-051
    failed on it instead (RULINGS: protocol "1" fails FC-001 only).
    """

    def edit(self, proxy, req, result):
        if req.id != 1:
            result["protocol"] = "1"


@mutant("log-capability-string-respawn", "FC-099")
class LogCapabilityStringRespawn(InitResult):
    """A respawned generation's initialize (id not 1) answers capabilities.log "true" (a string).

    Hides on: the spawned processes' respawns; FC-099 read only the group
    adapter's handshake (RULINGS: the revision keys' types are FC-099's).
    """

    def edit(self, proxy, req, result):
        if req.id != 1:
            result.setdefault("capabilities", {})["log"] = "true"


@mutant("cache-bytes-string", "FC-005")
class CacheBytesString(InitResult):
    """Every initialize answers cache {"bytes": "0 B"} (a string, not an unsigned integer).

    Hides on: every handshake; no case read the reply's cache member.
    """

    def edit(self, proxy, req, result):
        result["cache"] = {"bytes": "0 B"}


@mutant("cache-string-respawn", "FC-005")
class CacheStringRespawn(InitResult):
    """A respawned generation's initialize (id not 1) answers cache "10 MB" (not an object).

    Hides on: the spawned processes' respawns; FC-051 leaves cache out of
    its comparison (RULINGS), FC-005 reads the group adapter's and the
    no-cache start's handshakes.
    """

    def edit(self, proxy, req, result):
        if req.id != 1:
            result["cache"] = "10 MB"


# ---------------------------------------------------------------- ids after a second initialize

REKEY = "v2-"


@mutant("blob-ids-rekeyed-after-second-init", "FC-121")
class BlobIdsRekeyedAfterSecondInit(BlobIds):
    """After a second initialize on a process every blob id it lists gets a "v2-" prefix (repo/blob
    resolves both).

    Hides on: FC-121, which compared only the paths listed before and after
    the extra initializes; no other case sends one.
    """

    def __init__(self):
        super().__init__()
        self.inits = 0

    def request(self, proxy, req, msg):
        if req.method == "initialize":
            self.inits += 1
        return super().request(proxy, req, msg)

    def fake(self, proxy, req, sha, repo, path, ref, where):
        return REKEY + sha if self.inits > 1 else sha


# ---------------------------------------------------------------- concurrency

@mutant("concurrent-trees-swapped", "FC-120")
class ConcurrentTreesSwapped(PairReplies):
    """Replies to repo/tree requests in flight together are sent under each other's ids.

    Hides on: FC-120, which had only one repo/tree in flight (beside blobs
    and a stream). A tree reply is held (up to HOLD_S) while another
    repo/tree is outstanding; one request at a time is never touched.
    """

    # Long enough for wide's 3,000-entry tree on a loaded machine (0.5 s let
    # alpha's reply go alone under a whole self-test's load); only a tree
    # reply with another tree outstanding waits, so only FC-120 pays it.
    HOLD_S = 2.0

    def holds(self, req):
        return req.method == "repo/tree"

    def waits(self, proxy, req):
        return any(r.method == "repo/tree" and r.id != req.id
                   for r in list(proxy.requests.values()))

    def pair(self, proxy, held, msg):
        held["id"], msg["id"] = msg["id"], held["id"]
        proxy.send_host(held)
        return msg


THROTTLE_AT = 3   # requests in flight (initialize aside) from which a new repo/blob is refused


@control("rate-limited-in-flight")
class RateLimitedInFlight(Hooks):
    """While 3 or more requests are in flight, a new repo/blob is answered at once, under its own
    id, with a rate_limited error (retry_after_s 1): a backend's concurrency cap (§6.2).
    """

    def request(self, proxy, req, msg):
        others = [r for r in list(proxy.requests.values())
                  if r.id != req.id and r.method != "initialize"]
        if req.method == "repo/blob" and len(others) >= THROTTLE_AT:
            proxy.error(req, "too many concurrent requests", kind="rate_limited", retry_after_s=1)
            return None
        return msg
