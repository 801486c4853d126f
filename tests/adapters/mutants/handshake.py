"""The matrix mutants that break a case of cases/test_handshake.py.

``TABLE`` maps each switch to its Variant (tests/adapters/mutants/__init__.py
gathers the tables into MUTANTS); each mutant's expected set names the case it
must fail alone.
"""

from __future__ import annotations

from tests.adapters.common import NoCacheInit, RespawnedInitialize, no_cache
from tests.adapters.hooks import InitResult, Variant, matrix
from tests.adapters.proxy import Hooks, result_of

TABLE: dict[str, Variant] = {}
mutant, promoted = matrix(TABLE)


@mutant("protocol-string", "FC-001")
class ProtocolString(InitResult):
    """initialize answers protocol "1" (a string; the host tolerates it)."""

    def edit(self, proxy, req, result):
        result["protocol"] = "1"


@mutant("name-number", "FC-002")
class NameNumber(InitResult):
    """initialize answers name 42."""

    def edit(self, proxy, req, result):
        result["name"] = 42


@mutant("capability-string", "FC-003")
class CapabilityString(InitResult):
    """capabilities.code_search is the string "yes" (the host reads it as its default, true)."""

    def edit(self, proxy, req, result):
        result.setdefault("capabilities", {})["code_search"] = "yes"


@mutant("icon-misspelled", "FC-004")
class IconMisspelled(InitResult):
    """icon "GitLab": neither a builtin name (exact spelling) nor one code point."""

    def edit(self, proxy, req, result):
        result["icon"] = "GitLab"


@mutant("needs-cache-dir", "FC-005")
class NeedsCacheDir(Hooks):
    """initialize fails (error reply) when cache_dir is absent."""

    def request(self, proxy, req, msg):
        if req.method == "initialize" and not isinstance(req.params.get("cache_dir"), str):
            proxy.error(req, "cache_dir is required", kind="provider")
            return None
        return msg


# FC-001..005 and FC-080 judge the group adapter's generation-1 answer; FC-005
# starts a process without cache params and only checks that it serves a tree.
# A respawn-only change would also break FC-051 (same answer every
# generation), so the *-no-cache mutants hide in the no-cache-params start.
@promoted("protocol-string-no-cache", "FC-001", '§2.3: adapters "MUST send integer 1"')
class ProtocolStringNoCache(NoCacheInit):
    """initialize answers protocol "1" when started without cache params.

    Hides on: the process FC-005 starts without cache_bytes/cache_dir; FC-001
    reads only the group adapter's handshake.
    """

    def change(self, result):
        result["protocol"] = "1"


@promoted("name-number-no-cache", "FC-002",
      '§2.3 name: optional string; RULINGS "a member that is present ... has its stated JSON type"')
class NameNumberNoCache(NoCacheInit):
    """initialize answers name 42 when started without cache params.

    Hides on: FC-005's start; FC-002 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["name"] = 42


@promoted("capability-string-no-cache", "FC-003", '§2.4: "MUST Capability values are JSON booleans"')
class CapabilityStringNoCache(NoCacheInit):
    """capabilities.code_search is "yes" when started without cache params.

    Hides on: FC-005's start; FC-003 reads only the group adapter's handshake.
    """

    def change(self, result):
        result.setdefault("capabilities", {})["code_search"] = "yes"


@promoted("icon-misspelled-no-cache", "FC-004",
      '§2.5: "MUST If present, icon is a string that is either one of the builtin names ... or '
      'exactly one literal character"')
class IconMisspelledNoCache(NoCacheInit):
    """icon "GitLab" when started without cache params.

    Hides on: FC-005's start; FC-004 reads only the group adapter's handshake.
    """

    def change(self, result):
        result["icon"] = "GitLab"


@promoted("no-cache-blob-fails", "FC-005",
      '§2.2: "MUST Adapters tolerate both cache fields being absent"')
class NoCacheBlobFails(Hooks):
    """Without cache params, initialize and repo/tree work but repo/blob answers an error.

    Hides on: repo/blob; FC-005 only checks that the no-cache process serves
    repo/tree of alpha.
    """

    def request(self, proxy, req, msg):
        if req.method == "repo/blob" and no_cache(proxy):
            proxy.error(req, "blob store unavailable: no cache_dir was given", kind="provider")
            return None
        return msg


@mutant("respawn-initialize-not-object", "FC-001")
class RespawnInitializeNotObject(RespawnedInitialize):
    """A respawned generation answers initialize with result true (not an object).

    Hides on: the first start of each process. A handshake result that is
    not an object carries no protocol: FC-001's on every generation (the
    protocol monitor); every case that needed a respawned generation skips,
    naming FC-001's defect.
    """

    def answer(self, proxy, req, msg):
        return {"jsonrpc": "2.0", "id": req.id, "result": True}


@mutant("respawn-protocol-2", "FC-001")
class RespawnProtocol2(RespawnedInitialize):
    """A respawned generation answers initialize with protocol 2 (the host refuses it).

    Hides on: the first start of each process (FC-001 reads every
    generation's handshake); every case that needed a respawned generation
    skips, naming FC-001's defect.
    """

    def answer(self, proxy, req, msg):
        result = result_of(msg)
        if result is not None:
            result["protocol"] = 2
        return msg


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
