"""Handshake cases (FC-001..FC-005): what the initialize reply may say.

Every handshake is judged as sent (the raw dict), with one rule set
(``wire.monitor.handshake_problems``): the case itself reads each generation
of the group adapter and a process started without cache params
(``replies.handshakes``); the protocol monitor reads every other initialize
result of the run (every spawn, every respawned generation, a second
initialize on one process) and hands what it finds to the same owner
(``cases.judges.monitoring``). FC-005 also checks that a process started without
cache params serves as usual, and owns the reply's ``cache`` member.
"""

from cases.kit.api import case, fc_assert, listing, show
from cases.kit.facts import disk_blobs, read_or_none
from cases.kit.replies import NO_CACHE_INIT, blob_ids, handshakes, serves_like, tree, try_request
from fixture.catalog import ALPHA
from wire.monitor import (BUILTIN_ICONS, HANDSHAKE_CACHE, HANDSHAKE_CAPABILITIES, HANDSHAKE_ICON,
                          HANDSHAKE_NAME, HANDSHAKE_PROTOCOL, handshake_problems)


def judge(adapter, spawn, rule: str, expected: str, why: str) -> None:
    """Fail the running case on the handshakes it reads itself (the group
    adapter's, every generation, and the start without cache params) that
    break ``rule``. Every other initialize result of the run (a spawned
    process's, a respawned generation's, a second initialize on one process)
    is judged by the protocol monitor on the same rule, this case's: its
    verdict lists where in the run each offending one was seen."""
    bad = [f"{where}: {problem}" for where, init in handshakes(adapter, spawn)
           for r, strength, problem in handshake_problems(init) if r == rule and strength == "must"]
    fc_assert(not bad, expected=expected, got=listing(bad, 3), why=why)


@case("FC-001")
def test_protocol_is_integer_one(adapter, spawn):
    """Every initialize reply's `protocol` is the JSON integer 1 (not true, "1" or 1.0).

    Falsified by: protocol-string: initialize answers protocol "1" (a string; the host tolerates
    it).
    """
    judge(adapter, spawn, HANDSHAKE_PROTOCOL, "protocol: 1 (a JSON integer)",
          "the adapter must answer every initialize with the integer protocol 1")


@case("FC-002")
def test_name_absent_or_string(adapter, spawn):
    """`name` is absent or a string in every handshake (an empty one warns).

    Falsified by: name-number: initialize answers name 42.
    """
    judge(adapter, spawn, HANDSHAKE_NAME, "a string, or no name",
          "name, when present, is a string (the provider's display name)")
    # an empty name (a SHOULD) warns through the monitor, on every handshake of the run


@case("FC-003")
def test_capabilities_shape(adapter, spawn):
    """In every handshake, `capabilities` is absent or an object whose base keys (orgs, code_search,
    file_search), when present, are JSON booleans; unknown keys pass.

    Falsified by: capability-string: capabilities.code_search is the string "yes" (the host reads it
    as its default, true).
    """
    judge(adapter, spawn, HANDSHAKE_CAPABILITIES, "an object whose base keys are true or false",
          "capabilities must be a JSON object, its base values JSON booleans")


@case("FC-004")
def test_icon_builtin_or_one_glyph(adapter, spawn):
    """In every handshake, `icon` is absent, or a string that is a builtin name (github, gitlab,
    bitbucket, folder) or exactly one Unicode code point.

    Falsified by: icon-misspelled: icon "GitLab": neither a builtin name (exact spelling) nor one
    code point.
    """
    judge(adapter, spawn, HANDSHAKE_ICON,
          f"one of {', '.join(BUILTIN_ICONS)} or a single character",
          "an icon is a builtin name (exact spelling) or one glyph")


@case("FC-005")
def test_no_cache_params(adapter, spawn, fx):
    """An adapter initialized with exactly {"protocol": 1} (no cache_bytes,
    no cache_dir) answers a result and then serves as the group adapter
    (initialized with cache params) does: repo/tree of alpha, searches, a
    log and a commit (replies.serves_like), and repo/blob of a few small
    files. In every handshake, `cache` is absent or an object
    whose `bytes`, when present, is an unsigned JSON integer.

    Falsified by: needs-cache-dir: initialize fails (error reply) when cache_dir is absent.
    """
    # the handshake's cache member (the budget's reply side, §2.3) has its
    # stated type in every handshake: here and, through the monitor, in every
    # initialize result of the run
    judge(adapter, spawn, HANDSHAKE_CACHE, 'no cache, or an object {"bytes": <unsigned integer>}',
          "cache, when present, is an object whose bytes is an unsigned JSON integer")
    provider = spawn(init_params=dict(NO_CACHE_INIT))   # an error reply or a crash fails here
    when = "initialized without cache params"
    serves_like(provider, adapter, fx, when)
    # repo/blob too: a blob store that needs cache_dir breaks there, not in repo/tree.
    small = sorted(p for p in disk_blobs(fx, ALPHA)
                   if len(read_or_none(fx, ALPHA, p) or b"") in range(1, 4096))[:3]
    usual = blob_ids(tree(adapter, fx, ALPHA).model, set(small))
    mine = blob_ids(tree(provider, fx, ALPHA).model, set(usual))
    for path, sha in sorted(mine.items()):
        if try_request(adapter, "repo/blob", {"repo": fx.repo(ALPHA), "sha": usual[path]})[1]:
            continue   # the group adapter does not serve it either: FC-012's business
        params = {"repo": fx.repo(ALPHA), "sha": sha}
        err = try_request(provider, "repo/blob", params)[1]
        fc_assert(err is None, expected=f"{path}: served as the group adapter serves it",
                  got=f"repo/blob {show(params)}: an error, kind {show(err and err.raw_kind)}, "
                  f"message {err and err.message!r}",
                  why=f"{when}, the adapter must serve repo/blob as usual")
