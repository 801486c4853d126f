"""Handshake cases (FC-001..FC-005): what the initialize reply may say.

Every handshake is judged as sent (the raw dict): each generation of the
group adapter and a process started without cache params
(``replies.handshakes``); FC-005 checks that such a process serves as usual.
"""

from cases.api import case, fc_assert, listing, show, warn
from cases.facts import disk_blobs, read_or_none
from cases.formats import BUILTIN_ICONS, is_int
from cases.replies import NO_CACHE_INIT, blob_ids, handshakes, serves_like, tree, try_request
from fixture.catalog import ALPHA

BASE_CAPABILITIES = ("orgs", "code_search", "file_search")


@case("FC-001")
def test_protocol_is_integer_one(adapter, spawn):
    """Every initialize reply's `protocol` is the JSON integer 1 (not true, "1" or 1.0).

    Falsified by: protocol-string: initialize answers protocol "1" (a string; the host tolerates
    it).
    """
    bad = [f"{where}: " + (f"protocol {show(init.get('protocol'))}" if "protocol" in init
                           else "no protocol member")
           for where, init in handshakes(adapter, spawn)
           if not (is_int(init.get("protocol")) and init.get("protocol") == 1)]
    fc_assert(not bad, expected="protocol: 1 (a JSON integer)", got=listing(bad, 3),
              why="the adapter must answer initialize with the integer protocol 1")


@case("FC-002")
def test_name_absent_or_string(adapter, spawn):
    """`name` is absent or a string in every handshake (an empty one warns).

    Falsified by: name-number: initialize answers name 42.
    """
    seen = [(where, init["name"]) for where, init in handshakes(adapter, spawn) if "name" in init]
    bad = [f"{where}: name {show(name)}" for where, name in seen if not isinstance(name, str)]
    fc_assert(not bad, expected="a string, or no name", got=listing(bad, 3),
              why="name, when present, is a string (the provider's display name)")
    for where, name in seen:
        if name == "":   # a string, as §2.3 asks; the host would show a bare "stdio:"
            warn(f"{where}: name is the empty string; leave it out to be shown as \"stdio\"")


@case("FC-003")
def test_capabilities_shape(adapter, spawn):
    """In every handshake, `capabilities` is absent or an object whose base keys (orgs, code_search,
    file_search), when present, are JSON booleans; unknown keys pass.

    Falsified by: capability-string: capabilities.code_search is the string "yes" (the host reads it
    as its default, true).
    """
    for where, init in handshakes(adapter, spawn):
        if "capabilities" not in init:
            continue
        caps = init["capabilities"]
        fc_assert(isinstance(caps, dict), expected="an object of booleans",
                  got=f"{where}: capabilities {show(caps)}",
                  why="capabilities must be a JSON object")
        bad = {k: caps[k] for k in BASE_CAPABILITIES if k in caps and not isinstance(caps[k], bool)}
        fc_assert(not bad, expected="true or false", got=f"{where}: {show(bad)}",
                  why="capability values must be JSON booleans")


@case("FC-004")
def test_icon_builtin_or_one_glyph(adapter, spawn):
    """In every handshake, `icon` is absent, or a string that is a builtin name (github, gitlab,
    bitbucket, folder) or exactly one Unicode code point.

    Falsified by: icon-misspelled: icon "GitLab": neither a builtin name (exact spelling) nor one
    code point.
    """
    bad = [f"{where}: icon {show(init['icon'])}" for where, init in handshakes(adapter, spawn)
           if "icon" in init and not (isinstance(init["icon"], str)
                                      and (init["icon"] in BUILTIN_ICONS or len(init["icon"]) == 1))]
    fc_assert(not bad, expected=f"one of {', '.join(BUILTIN_ICONS)} or a single character",
              got=listing(bad, 3), why="an icon is a builtin name (exact spelling) or one glyph")


@case("FC-005")
def test_no_cache_params(adapter, spawn, fx):
    """An adapter initialized with exactly {"protocol": 1} (no cache_bytes,
    no cache_dir) answers a result and then serves repo/tree of alpha, and
    repo/blob of a few small files, as the group adapter (initialized with
    cache params) does.

    Falsified by: needs-cache-dir: initialize fails (error reply) when cache_dir is absent.
    """
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
            continue   # the group adapter does not serve it either: FC-024's business
        params = {"repo": fx.repo(ALPHA), "sha": sha}
        err = try_request(provider, "repo/blob", params)[1]
        fc_assert(err is None, expected=f"{path}: served as the group adapter serves it",
                  got=f"repo/blob {show(params)}: an error, kind {show(err and err.raw_kind)}, "
                  f"message {err and err.message!r}",
                  why=f"{when}, the adapter must serve repo/blob as usual")
