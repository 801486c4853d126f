"""Handshake cases (FC-001..FC-005): what the initialize reply may say.

The group adapter's generation-1 reply is judged as sent (``init_result``,
the raw dict); FC-005 handshakes a fresh process without cache params.
"""

from cases.api import case, fc_assert, show
from cases.formats import BUILTIN_ICONS, is_int
from cases.replies import serves_like

BASE_CAPABILITIES = ("orgs", "code_search", "file_search")


@case("FC-001")
def test_protocol_is_integer_one(adapter):
    """The initialize reply's `protocol` is the JSON integer 1 (not true, "1" or 1.0).

    Falsified by: protocol-string: initialize answers protocol "1" (a string; the host tolerates
    it).
    """
    init = adapter.init_result
    value = init.get("protocol")
    fc_assert(is_int(value) and value == 1, expected="protocol: 1 (a JSON integer)",
              got=f"protocol: {show(value)}" if "protocol" in init else "no protocol member",
              why="the adapter must answer initialize with the integer protocol 1")


@case("FC-002")
def test_name_absent_or_string(adapter):
    """`name` is absent or a non-empty string.

    Falsified by: name-number: initialize answers name 42.
    """
    if "name" not in adapter.init_result:
        return
    name = adapter.init_result["name"]
    fc_assert(isinstance(name, str) and name != "", expected="a non-empty string, or no name",
              got=f"name: {show(name)}", why="name, when present, is the provider's display name")


@case("FC-003")
def test_capabilities_shape(adapter):
    """`capabilities` is absent or an object whose base keys (orgs, code_search,
    file_search), when present, are JSON booleans; unknown keys pass.

    Falsified by: capability-string: capabilities.code_search is the string "yes" (the host reads it
    as its default, true).
    """
    if "capabilities" not in adapter.init_result:
        return
    caps = adapter.init_result["capabilities"]
    fc_assert(isinstance(caps, dict), expected="an object of booleans",
              got=f"capabilities: {show(caps)}", why="capabilities must be a JSON object")
    bad = {k: caps[k] for k in BASE_CAPABILITIES if k in caps and not isinstance(caps[k], bool)}
    fc_assert(not bad, expected="true or false", got=show(bad),
              why="capability values must be JSON booleans")


@case("FC-004")
def test_icon_builtin_or_one_glyph(adapter):
    """`icon` is absent, or a string that is a builtin name (github, gitlab,
    bitbucket, folder) or exactly one Unicode code point.

    Falsified by: icon-misspelled: icon "GitLab": neither a builtin name (exact spelling) nor one
    code point.
    """
    if "icon" not in adapter.init_result:
        return
    icon = adapter.init_result["icon"]
    fc_assert(isinstance(icon, str) and (icon in BUILTIN_ICONS or len(icon) == 1),
              expected=f"one of {', '.join(BUILTIN_ICONS)} or a single character",
              got=f"icon: {show(icon)}",
              why="an icon is a builtin name (exact spelling) or one glyph")


@case("FC-005")
def test_no_cache_params(adapter, spawn, fx):
    """An adapter initialized with exactly {"protocol": 1} (no cache_bytes,
    no cache_dir) answers a result and then serves repo/tree of alpha as the
    group adapter (initialized with cache params) does.

    Falsified by: needs-cache-dir: initialize fails (error reply) when cache_dir is absent.
    """
    provider = spawn(init_params={"protocol": 1})   # an error reply or a crash fails here
    serves_like(provider, adapter, fx, "initialized without cache params")
