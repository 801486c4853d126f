"""Self-tests of wire.messages: every result shape of PROTOCOL §2/§3/§5.2/§6.1.

Valid examples come from PROTOCOL.md; each strictness rule has a failing
example whose error path is asserted.
"""

import copy

import attrs
import pytest
from hypothesis import given, settings, strategies as st

from wire import messages as m
from wire.messages import ShapeError, structure


def shape_error(obj, cls) -> ShapeError:
    with pytest.raises(ShapeError) as info:
        structure(obj, cls)
    return info.value


def without_raw(value):
    """A structured value as plain data, minus the raw mappings kept for
    the handshake cases (they legitimately carry unknown keys)."""
    return attrs.asdict(value, filter=lambda a, _: a.name != "raw")


# ------------------------------------------------------------ valid examples
# (from PROTOCOL.md where it has one; otherwise built from the shape table)

INIT = {"protocol": 1, "name": "acme", "icon": "gitlab",
        "capabilities": {"orgs": True, "code_search": False, "file_search": True,
                         "refs": True, "log": True, "blame": False, "commit": True},
        "cache": {"bytes": 10485760}}                                    # §2.2
SEARCH_REPOS = {"items": [{"full_name": "acme/payments"}, {"org": "acme-labs"}]}  # §3.1
ORG_REPOS = {"repos": ["payments", {"name": "ledger", "description": "double-entry core",
                                    "private": True, "archived": False,
                                    "pushed_at": "2026-03-02T09:30:00Z"}]}  # §3.2
TREE = {"entries": [{"path": "docs", "type": "tree", "sha": "d-7c1e"},
                    {"path": "docs/intro.md", "type": "blob", "sha": "3b9f0a", "size": 512}],
        "truncated": False, "branch": "v2.0.0"}                           # §3.3
BLOB = {"bytes_b64": "aGVsbG8K"}
BLOB_AT = {"bytes_b64": "aGVsbG8K", "sha": "3b9f0a"}
REFS = {"branches": [{"name": "main", "sha": "c0ffee1234", "default": True},
                     {"name": "feature", "sha": "beef5678"}],
        "tags": [{"name": "v2.0.0", "sha": "7a9e11"}]}
LOG = {"items": [{"sha": "c0ffee1234", "subject": "Fix typo", "author": "Ada",
                  "date": "2026-03-02T09:30:00+01:00"},
                 {"sha": "beef5678", "subject": "Start", "author": "Bob",
                  "date": "2026-03-01T08:00:00Z"}],
       "truncated": True}
BLAME = {"ranges": [{"start_line": 1, "end_line": 3, "sha": "beef5678", "author": "Bob",
                     "date": "2026-03-01T08:00:00Z"},
                    {"start_line": 4, "end_line": 4, "sha": "c0ffee1234", "author": "Ada",
                     "date": "2026-03-02T08:30:00Z"}]}
COMMIT = {"sha": "c0ffee1234", "author": "Ada", "date": "2026-03-02T09:30:00+01:00",
          "message": "Fix typo\n\nThe intro misspelled 'the'.", "parents": ["beef5678"],
          "files": [{"path": "docs/intro.md", "status": "modified", "additions": 1,
                     "deletions": 1, "patch": "@@ -3 +3 @@\n-teh end\n+the end"},
                    {"path": "img/logo.png", "status": "added", "binary": True},
                    {"path": "NEW.md", "previous_path": "OLD.md", "status": "renamed",
                     "patch": ""}],
          "truncated": False,
          "web_url": "https://forge.example/acme/payments/commit/c0ffee1234"}  # §3.12
HIT = {"repo": "acme/payments", "path": "src/net.rs", "sha": "3b9f0a",
       "matches": ["retry"], "line": 42}                                   # §5.2
SEARCH = {"items": [HIT, {"repo": "acme/ledger", "path": "docs/retry.md", "sha": "77aa01",
                          "matches": [], "located": False, "branch": "dev"}],
          "truncated": True, "index": {"as_of": "2026-08-20T14:00:00Z"}}   # §3.13
PARTIAL = {"id": 11, "items": [HIT]}                                       # §5.2
CLONE_URL = {"clone_url": "/srv/fixture/alpha"}
WEB_URL = {"url": "https://forge.example/acme/payments/blob/main/src/net.rs#L42"}
ORG_URL = {"url": "https://forge.example/acme"}
ERROR = {"code": 429, "message": "API quota exhausted",
         "data": {"kind": "rate_limited", "retry_after_s": 60}}             # §6.1

EXAMPLES = [
    (m.InitializeResult, INIT), (m.SearchRepos, SEARCH_REPOS), (m.OrgRepos, ORG_REPOS),
    (m.Tree, TREE), (m.Blob, BLOB), (m.BlobAt, BLOB_AT), (m.Refs, REFS), (m.Log, LOG),
    (m.Blame, BLAME), (m.Commit, COMMIT), (m.SearchResult, SEARCH),
    (m.PartialParams, PARTIAL), (m.CloneUrl, CLONE_URL), (m.WebUrl, WEB_URL),
    (m.OrgUrl, ORG_URL), (m.ErrorObject, ERROR), (m.SearchHit, HIT),
]
EXAMPLE_IDS = [cls.__name__ for cls, _ in EXAMPLES]


def test_initialize_example():
    init = structure(INIT, m.InitializeResult)
    assert (init.protocol, init.name, init.icon, init.cache_bytes) == (1, "acme", "gitlab", 10485760)
    caps = init.capabilities
    assert (caps.orgs, caps.code_search, caps.file_search, caps.refs, caps.log,
            caps.blame, caps.commit) == (True, False, True, True, True, False, True)
    assert caps.raw == INIT["capabilities"]
    assert init.raw == INIT


def test_search_repos_example():
    assert structure(SEARCH_REPOS, m.SearchRepos) == m.SearchRepos(
        items=(m.RepoItem("acme/payments"), m.OrgItem("acme-labs")))


def test_org_repos_example():
    repos = structure(ORG_REPOS, m.OrgRepos).repos
    assert repos == (
        m.OrgRepo("payments", bare=True),
        m.OrgRepo("ledger", description="double-entry core", private=True, archived=False,
                  pushed_at="2026-03-02T09:30:00Z"),
    )


def test_rich_repos_scenario():  # §9 rich-repos
    reply = {"repos": ["plain", {"name": "meta", "description": "d", "private": True,
                                 "archived": True, "pushed_at": "2026-08-20T10:11:12Z"}]}
    plain, meta = structure(reply, m.OrgRepos).repos
    assert plain == m.OrgRepo("plain", bare=True)
    assert meta == m.OrgRepo("meta", "d", True, True, "2026-08-20T10:11:12Z", bare=False)


def test_tree_example():
    tree = structure(TREE, m.Tree)
    assert tree == m.Tree(entries=(m.TreeEntry("docs", "tree", "d-7c1e"),
                                   m.TreeEntry("docs/intro.md", "blob", "3b9f0a", 512)),
                          truncated=False, branch="v2.0.0")
    assert [e.is_tree for e in tree.entries] == [True, False]
    # §1.2's minimal exchange
    assert structure({"entries": [], "truncated": False, "branch": "main"}, m.Tree) == m.Tree()


def test_blob_examples():
    assert structure(BLOB, m.Blob) == m.Blob("aGVsbG8K")
    assert structure({"bytes_b64": ""}, m.Blob) == m.Blob("")  # an empty file
    assert structure(BLOB_AT, m.BlobAt) == m.BlobAt("aGVsbG8K", "3b9f0a")


def test_refs_example():
    assert structure(REFS, m.Refs) == m.Refs(
        branches=(m.Branch("main", "c0ffee1234", True), m.Branch("feature", "beef5678", False)),
        tags=(m.Tag("v2.0.0", "7a9e11"),))


def test_log_example():
    log = structure(LOG, m.Log)
    assert log.truncated is True
    assert log.items == (m.LogItem("c0ffee1234", "Fix typo", "Ada", "2026-03-02T09:30:00+01:00"),
                         m.LogItem("beef5678", "Start", "Bob", "2026-03-01T08:00:00Z"))


def test_blame_example():
    assert structure(BLAME, m.Blame).ranges == (
        m.BlameRange(1, 3, "beef5678", "Bob", "2026-03-01T08:00:00Z"),
        m.BlameRange(4, 4, "c0ffee1234", "Ada", "2026-03-02T08:30:00Z"))


def test_commit_example():
    commit = structure(COMMIT, m.Commit)
    assert (commit.sha, commit.author, commit.date) == ("c0ffee1234", "Ada", "2026-03-02T09:30:00+01:00")
    assert commit.message == "Fix typo\n\nThe intro misspelled 'the'."
    assert commit.parents == ("beef5678",)
    assert commit.truncated is False
    assert commit.web_url == "https://forge.example/acme/payments/commit/c0ffee1234"
    assert commit.files == (
        m.CommitFile("docs/intro.md", "modified", None, 1, 1, "@@ -3 +3 @@\n-teh end\n+the end"),
        m.CommitFile("img/logo.png", "added", binary=True),
        m.CommitFile("NEW.md", "renamed", previous_path="OLD.md", patch=""),
    )
    # absent patch (unavailable) and "" (metadata-only) stay distinct
    assert commit.files[1].patch is None and commit.files[2].patch == ""


def test_commit_unknown_status_reads_as_modified():
    f = structure({"path": "a", "status": "copied"}, m.CommitFile)
    assert f.status == "copied" and f.effective_status == "modified"
    assert structure({"path": "a", "status": "removed"}, m.CommitFile).effective_status == "removed"


def test_search_example():
    result = structure(SEARCH, m.SearchResult)
    assert result.truncated is True
    assert result.index == m.Index("2026-08-20T14:00:00Z")
    assert result.items == (
        m.SearchHit("acme/payments", "src/net.rs", "3b9f0a", "main", ("retry",), 42, True),
        m.SearchHit("acme/ledger", "docs/retry.md", "77aa01", "dev", (), None, False),
    )
    # §5.2's metadata-only final reply
    assert structure({"items": [], "truncated": False}, m.SearchResult) == m.SearchResult()


def test_partial_example():
    assert structure(PARTIAL, m.PartialParams) == m.PartialParams(
        id=11, items=(m.SearchHit("acme/payments", "src/net.rs", "3b9f0a", matches=("retry",), line=42),))


def test_url_examples():
    assert structure(CLONE_URL, m.CloneUrl) == m.CloneUrl("/srv/fixture/alpha")
    assert structure(WEB_URL, m.WebUrl).url.endswith("#L42")
    assert structure(ORG_URL, m.OrgUrl) == m.OrgUrl("https://forge.example/acme")


def test_error_examples():
    err = structure(ERROR, m.ErrorObject)
    assert (err.code, err.message) == (429, "API quota exhausted")
    assert (err.data.kind, err.data.retry_after_s) == ("rate_limited", 60)
    assert err.data.raw == ERROR["data"]
    plain = structure({"code": 1, "message": "no repository acme/nope"}, m.ErrorObject)
    assert plain.data is None
    proto = structure({"code": -32601, "message": "unknown method 'x'"}, m.ErrorObject)
    assert proto.code == -32601  # reserved protocol-level code is an integer too


def test_result_types_cover_every_method():
    assert set(m.RESULT_TYPES) == {
        "initialize", "search/repos", "org/repos", "repo/tree", "repo/blob", "repo/blob_at",
        "repo/refs", "repo/log", "repo/blame", "repo/commit", "repo/clone_url",
        "repo/web_url", "org/url", "search/code"}


# ---------------------------------------------------------------- tolerance

def _sprinkle(value, extra):
    """A copy of ``value`` with ``extra`` added to every JSON object in it."""
    if isinstance(value, dict):
        out = {k: _sprinkle(v, extra) for k, v in value.items()}
        for k, v in extra.items():
            out.setdefault(k, v)
        return out
    if isinstance(value, list):
        return [_sprinkle(v, extra) for v in value]
    return value


@pytest.mark.parametrize("cls, example", EXAMPLES, ids=EXAMPLE_IDS)
def test_unknown_keys_ignored_everywhere(cls, example):
    extra = {"x_future": {"nested": [1, None]}, "zz": None, "weird": [True, "s"], "n": 1.5}
    assert without_raw(structure(_sprinkle(example, extra), cls)) == without_raw(structure(example, cls))


def test_field_names_that_are_not_wire_members_are_ignored():
    entry = structure({"repos": [{"name": "x", "bare": True}]}, m.OrgRepos).repos[0]
    assert entry.bare is False
    data = structure({"code": 1, "message": "m", "data": {"raw": 5, "kind": "auth"}}, m.ErrorObject).data
    assert data.raw == {"raw": 5, "kind": "auth"}


@pytest.mark.parametrize("cls, obj, expected", [
    (m.Tree, {}, m.Tree(entries=(), truncated=False, branch="main")),
    (m.SearchHit, {"repo": "o/r", "path": "p"},
     m.SearchHit("o/r", "p", sha="", branch="main", matches=(), line=None, located=True)),
    (m.SearchResult, {}, m.SearchResult(items=(), truncated=False, index=None)),
    (m.Index, {}, m.Index(as_of=None)),
    (m.Refs, {}, m.Refs(branches=(), tags=())),
    (m.Branch, {"name": "b", "sha": "s"}, m.Branch("b", "s", default=False)),
    (m.Log, {}, m.Log(items=(), truncated=False)),
    (m.Blame, {}, m.Blame(ranges=())),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": []},
     m.Commit("s", "a", "d", "m", files=(), parents=(), truncated=False, web_url=None)),
    (m.CommitFile, {"path": "p", "status": "added"},
     m.CommitFile("p", "added", previous_path=None, additions=None, deletions=None,
                  patch=None, binary=False)),
    (m.TreeEntry, {"path": "p", "type": "blob", "sha": "s"}, m.TreeEntry("p", "blob", "s", None)),
    (m.SearchRepos, {}, m.SearchRepos(items=())),
    (m.OrgRepos, {}, m.OrgRepos(repos=())),
    (m.OrgRepo, {"name": "n"}, m.OrgRepo("n", None, False, False, None, bare=False)),
    (m.ErrorObject, {"code": 1, "message": "x"}, m.ErrorObject(1, "x", None)),
    (m.ErrorData, {}, m.ErrorData(kind=None, retry_after_s=None)),
], ids=lambda v: v.__name__ if isinstance(v, type) else "")
def test_defaults_applied(cls, obj, expected):
    assert structure(obj, cls) == expected


@pytest.mark.parametrize("cls, obj, attr", [
    (m.TreeEntry, {"path": "p", "type": "blob", "sha": "s", "size": None}, "size"),
    (m.SearchHit, {"repo": "r", "path": "p", "line": None}, "line"),
    (m.Index, {"as_of": None}, "as_of"),
    (m.OrgRepo, {"name": "n", "pushed_at": None}, "pushed_at"),
    (m.OrgRepo, {"name": "n", "description": None}, "description"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [],
                "web_url": None}, "web_url"),
    (m.CommitFile, {"path": "p", "status": "added", "patch": None}, "patch"),
    (m.CommitFile, {"path": "p", "status": "added", "additions": None}, "additions"),
    (m.CommitFile, {"path": "p", "status": "added", "deletions": None}, "deletions"),
    (m.CommitFile, {"path": "p", "status": "renamed", "previous_path": None}, "previous_path"),
    (m.ErrorObject, {"code": 1, "message": "x", "data": None}, "data"),
    (m.ErrorData, {"kind": None, "retry_after_s": None}, "kind"),
], ids=lambda v: v if isinstance(v, str) else "")
def test_null_for_genuinely_optional_member_reads_as_absent(cls, obj, attr):
    assert getattr(structure(obj, cls), attr) is None


# ----------------------------------------------------------------- handshake

@pytest.mark.parametrize("caps, expected", [
    (None, dict(orgs=True, code_search=True, file_search=True, refs=False, log=False,
                blame=False, commit=False)),
    ({}, dict(orgs=True, code_search=True, file_search=True, refs=False)),
    ({"code_search": False}, dict(code_search=False, file_search=False)),   # inherits
    ({"code_search": False, "file_search": True}, dict(code_search=False, file_search=True)),
    ({"code_search": True, "file_search": False}, dict(code_search=True, file_search=False)),
    ({"code_search": "no"}, dict(code_search=True, file_search=True)),      # not a bool: default
    ({"refs": 1, "log": "true", "blame": None, "commit": True},
     dict(refs=False, log=False, blame=False, commit=True)),
    ({"orgs": False, "future": {"x": 1}}, dict(orgs=False)),
    ([True], dict(orgs=True, code_search=True, refs=False)),                # not an object
])
def test_capabilities_effective_values(caps, expected):
    init = {"protocol": 1} if caps is None else {"protocol": 1, "capabilities": caps}
    got = structure(init, m.InitializeResult).capabilities
    assert {k: getattr(got, k) for k in expected} == expected
    assert got.raw == (caps if isinstance(caps, dict) else {})
    assert m.KNOWN_CAPABILITIES == ("orgs", "code_search", "file_search", "refs", "log",
                                    "blame", "commit")


@pytest.mark.parametrize("protocol", ["1", 1.0, None, -1, True, [1]])
def test_handshake_is_read_like_the_host(protocol):
    # RULINGS: protocol "1"/1.0 fails FC-001 only; everyone else sees protocol 1
    init = structure({"protocol": protocol, "name": 7, "icon": ["x"], "cache": {"bytes": 1.0}},
                     m.InitializeResult)
    assert (init.protocol, init.name, init.icon, init.cache_bytes) == (1, None, None, None)
    assert init.raw["protocol"] == protocol


def test_handshake_keeps_a_different_unsigned_protocol_and_absent_members():
    init = structure({"protocol": 2}, m.InitializeResult)
    assert init.protocol == 2 and init.name is None and init.cache_bytes is None
    assert structure({}, m.InitializeResult).protocol == 1
    assert structure({"protocol": 1, "cache": "big"}, m.InitializeResult).cache_bytes is None


def test_handshake_must_be_an_object():
    err = shape_error([1], m.InitializeResult)
    assert err.path == "" and "expected an object" in err.message


# --------------------------------------------------------- search/repos odd shape

def test_search_repos_full_name_wins_and_neither_is_dropped():
    reply = {"items": [{"full_name": "a/b", "org": "a"}, {}, {"name": "x"}, {"full_name": None, "org": "o"},
                       {"org": "z"}]}
    assert structure(reply, m.SearchRepos).items == (m.RepoItem("a/b"), m.OrgItem("o"), m.OrgItem("z"))


@pytest.mark.parametrize("item, path", [
    ({"full_name": 5}, "items[1].full_name"),
    ({"org": ["a"]}, "items[1].org"),
    ({"full_name": "a/b", "org": 3}, "items[1].org"),      # fails even though full_name decides
    ("a/b", "items[1]"),
])
def test_search_repos_non_string_fails_whole_reply(item, path):
    err = shape_error({"items": [{"org": "ok"}, item]}, m.SearchRepos)
    assert err.path == path


# ------------------------------------------------------------- org/repos odd shape

@pytest.mark.parametrize("entry, path, fragment", [
    (5, "repos[1]", "expected a string or an object, got 5"),
    (None, "repos[1]", "got null"),
    ({}, "repos[1].name", "missing required member"),
    ({"name": 3}, "repos[1].name", "expected a string, got 3"),
    ({"name": "n", "private": "yes"}, "repos[1].private", "expected a boolean"),
    ({"name": "n", "archived": None}, "repos[1].archived", "got null"),
    ({"name": "n", "pushed_at": 20260820}, "repos[1].pushed_at", "expected a string"),
])
def test_org_repos_entry_errors(entry, path, fragment):
    err = shape_error({"repos": ["ok", entry]}, m.OrgRepos)
    assert err.path == path and fragment in err.message


# ----------------------------------------------------------------- strictness

STRICT = [
    # missing required members
    (m.Tree, {"entries": [{"path": "a", "type": "blob", "sha": "1"}] * 3
              + [{"path": "d", "type": "tree"}]},
     "entries[3].sha", "missing required member"),
    (m.Tree, {"entries": [{"type": "blob", "sha": "1"}]}, "entries[0].path", "missing required member"),
    (m.Blob, {}, "bytes_b64", "missing required member"),
    (m.BlobAt, {"bytes_b64": ""}, "sha", "missing required member"),
    (m.Refs, {"branches": [{"name": "main"}]}, "branches[0].sha", "missing required member"),
    (m.Refs, {"tags": [{"sha": "1"}]}, "tags[0].name", "missing required member"),
    (m.Log, {"items": [{"sha": "1", "subject": "s", "author": "a"}]}, "items[0].date",
     "missing required member"),
    (m.Blame, {"ranges": [{"start_line": 1, "sha": "s", "author": "a", "date": "d"}]},
     "ranges[0].end_line", "missing required member"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m"}, "files",
     "missing required member"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [{"path": "p"}]},
     "files[0].status", "missing required member"),
    (m.SearchResult, {"items": [{"path": "p"}]}, "items[0].repo", "missing required member"),
    (m.PartialParams, {"id": 3}, "items", "missing required member"),
    (m.CloneUrl, {"url": "x"}, "clone_url", "missing required member"),
    (m.WebUrl, {}, "url", "missing required member"),
    (m.OrgUrl, {"clone_url": "x"}, "url", "missing required member"),
    (m.ErrorObject, {"code": 1}, "message", "missing required member"),
    # wrong JSON types: an int is not a str, a bool is not an int, 1.0 is not an int
    (m.Tree, {"entries": [{"path": "a", "type": "blob", "sha": 5}]}, "entries[0].sha",
     "expected a string, got 5"),
    (m.Blob, {"bytes_b64": 2}, "bytes_b64", "expected a string, got 2"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "line": True}]}, "items[0].line",
     "expected a non-negative integer, got boolean true"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "line": 3.0}]}, "items[0].line",
     "expected a non-negative integer, got number 3.0"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "line": "3"}]}, "items[0].line",
     'expected a non-negative integer, got string "3"'),
    (m.Blame, {"ranges": [{"start_line": 1.0, "end_line": 1, "sha": "s", "author": "a",
                           "date": "d"}]}, "ranges[0].start_line", "got number 1.0"),
    (m.Tree, {"entries": [{"path": "a", "type": "blob", "sha": "1", "size": 1.5}]},
     "entries[0].size", "expected a non-negative integer"),
    (m.ErrorObject, {"code": True, "message": "m"}, "code", "expected an integer, got boolean true"),
    (m.ErrorObject, {"code": 1.0, "message": "m"}, "code", "expected an integer, got number 1.0"),
    (m.ErrorObject, {"code": "1", "message": "m"}, "code", "expected an integer"),
    (m.ErrorObject, {"code": 1, "message": 5}, "message", "expected a string, got 5"),
    (m.ErrorObject, {"code": 1, "message": "m", "data": "auth"}, "data", "expected an object"),
    (m.ErrorObject, {"code": 1, "message": "m", "data": {"kind": 3}}, "data.kind",
     "expected a string, got 3"),
    (m.ErrorObject, {"code": 1, "message": "m", "data": {"retry_after_s": "60"}},
     "data.retry_after_s", "expected a non-negative number"),
    (m.ErrorObject, {"code": 1, "message": "m", "data": {"retry_after_s": -1}},
     "data.retry_after_s", "expected a non-negative number, got -1"),
    (m.ErrorObject, {"code": 1, "message": "m", "data": {"retry_after_s": False}},
     "data.retry_after_s", "got boolean false"),
    (m.PartialParams, {"id": "11", "items": []}, "id", "expected a non-negative integer"),
    (m.PartialParams, {"id": 11, "items": {"0": HIT}}, "items", "expected an array, got an object"),
    (m.Refs, {"branches": [{"name": "b", "sha": "s", "default": "yes"}]}, "branches[0].default",
     "expected a boolean"),
    (m.Log, {"truncated": 0}, "truncated", "expected a boolean, got 0"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "matches": "retry"}]},
     "items[0].matches", "expected an array, got string"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "matches": ["a", 1]}]},
     "items[0].matches[1]", "expected a string, got 1"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "located": "false"}]},
     "items[0].located", "expected a boolean"),
    (m.SearchResult, {"index": {"as_of": 1724162400}}, "index.as_of", "expected a string"),
    (m.SearchResult, {"index": "2026-08-20"}, "index", "expected an object"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [],
                "parents": "p1"}, "parents", "expected an array"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [],
                "parents": ["p1", 2]}, "parents[1]", "expected a string, got 2"),
    (m.Tree, {"entries": {"path": "a"}}, "entries", "expected an array, got an object"),
    (m.Tree, {"entries": ["a"]}, "entries[0]", 'expected an object, got string "a"'),
    (m.Tree, [], "", "expected an object, got an array"),
    (m.SearchResult, "x", "", "expected an object"),
    # unsigned integers and the u32 counts
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "line": -1}]}, "items[0].line",
     "expected a non-negative integer, got -1"),
    (m.Tree, {"entries": [{"path": "a", "type": "blob", "sha": "1", "size": -5}]},
     "entries[0].size", "expected a non-negative integer, got -5"),
    (m.Blame, {"ranges": [{"start_line": -1, "end_line": 1, "sha": "s", "author": "a",
                           "date": "d"}]}, "ranges[0].start_line", "got -1"),
    (m.PartialParams, {"id": -11, "items": []}, "id", "expected a non-negative integer"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m",
                "files": [{"path": "p", "status": "modified", "additions": 4294967296}]},
     "files[0].additions", "expected an integer in 0..4294967295, got 4294967296"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m",
                "files": [{"path": "p", "status": "modified", "deletions": -1}]},
     "files[0].deletions", "got -1"),
    # null for a member with a non-null default (§3.0, §11 #16)
    (m.Tree, {"truncated": None}, "truncated", "expected a boolean, got null"),
    (m.Tree, {"entries": None}, "entries", "expected an array, got null"),
    (m.Tree, {"branch": None}, "branch", "expected a string, got null"),
    (m.SearchResult, {"items": None}, "items", "got null"),
    (m.SearchResult, {"index": None}, "index", "got null"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "matches": None}]},
     "items[0].matches", "got null"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "located": None}]},
     "items[0].located", "got null"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "sha": None}]}, "items[0].sha", "got null"),
    (m.SearchResult, {"items": [{"repo": "r", "path": "p", "branch": None}]},
     "items[0].branch", "got null"),
    (m.Log, {"items": None}, "items", "got null"),
    (m.Refs, {"tags": None}, "tags", "got null"),
    (m.Refs, {"branches": [{"name": "b", "sha": "s", "default": None}]}, "branches[0].default",
     "got null"),
    (m.Blame, {"ranges": None}, "ranges", "got null"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [],
                "parents": None}, "parents", "got null"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": [],
                "truncated": None}, "truncated", "got null"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m",
                "files": [{"path": "p", "status": "added", "binary": None}]}, "files[0].binary",
     "got null"),
    (m.Commit, {"sha": "s", "author": "a", "date": "d", "message": "m", "files": None},
     "files", "got null"),
    (m.SearchRepos, {"items": None}, "items", "got null"),
    (m.OrgRepos, {"repos": None}, "repos", "got null"),
    (m.OrgRepos, {"repos": [{"name": "n", "private": None}]}, "repos[0].private", "got null"),
    # required members sent as null are not absent-and-fine either
    (m.Tree, {"entries": [{"path": "a", "type": None, "sha": "1"}]}, "entries[0].type", "got null"),
    (m.BlobAt, {"bytes_b64": "", "sha": None}, "sha", "got null"),
]


@pytest.mark.parametrize("cls, obj, path, fragment", STRICT,
                         ids=[f"{c.__name__}:{p or 'top'}:{i}" for i, (c, _, p, _) in enumerate(STRICT)])
def test_strictness(cls, obj, path, fragment):
    err = shape_error(obj, cls)
    assert err.path == path, str(err)
    assert fragment in err.message, str(err)
    assert str(err).startswith(f"{path or '(top level)'}: ")


def test_u32_upper_bound_is_accepted():
    f = structure({"path": "p", "status": "modified", "additions": 4294967295, "deletions": 0},
                  m.CommitFile)
    assert (f.additions, f.deletions) == (4294967295, 0)


def test_zero_is_unsigned():
    hit = structure({"repo": "r", "path": "p", "line": 0}, m.SearchHit)  # 1-based is FC-031's
    assert hit.line == 0


# -------------------------------------------------------------- ShapeError

def test_shape_error_is_one_value_error_listing_up_to_three():
    obj = {"entries": [{"path": 1, "type": 2, "sha": 3, "size": -4}], "truncated": "no"}
    err = shape_error(obj, m.Tree)
    assert isinstance(err, ValueError)
    assert err.path == "entries[0].path" and err.message == "expected a string, got 1"
    assert [p for p, _ in err.problems] == ["entries[0].path", "entries[0].type", "entries[0].sha",
                                            "entries[0].size", "truncated"]
    assert str(err) == ("entries[0].path: expected a string, got 1; "
                        "entries[0].type: expected a string, got 2; "
                        "entries[0].sha: expected a string, got 3 (and 2 more)")


def test_converter_structure_raises_shape_error_too():
    with pytest.raises(ShapeError) as info:
        m.converter.structure({"entries": [{}]}, m.Tree)
    assert info.value.path == "entries[0].path"
    assert "Structuring" not in str(info.value)  # no cattrs wording leaks out


def test_long_strings_are_cut_in_messages():
    err = shape_error({"bytes_b64": None, "x": 1}, m.Blob)
    assert err.message == "expected a string, got null"
    err = shape_error({"code": "x" * 500, "message": "m"}, m.ErrorObject)
    assert len(str(err)) < 120


# ------------------------------------------------------------------ models

def test_models_are_frozen_and_slotted():
    tree = structure(TREE, m.Tree)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        tree.branch = "x"  # type: ignore[misc]
    assert not hasattr(tree, "__dict__")
    assert isinstance(tree.entries, tuple)
    hash(tree)
    hash(structure(INIT, m.InitializeResult))  # raw mappings are left out of the hash


def test_a_few_thousand_items_structure():
    hits = [{"repo": "acme/p", "path": f"src/f{i}.rs", "sha": "ab" * 32, "matches": ["retry"],
             "line": i + 1, "unknown": {"a": [1]}} for i in range(5000)]
    entries = [{"path": f"d/f{i}", "type": "blob", "sha": "cd" * 32, "size": i} for i in range(5000)]
    assert len(structure({"items": hits}, m.SearchResult).items) == 5000
    assert len(structure({"entries": entries}, m.Tree).entries) == 5000


# --------------------------------------------------------------- properties

json_scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) \
    | st.floats(allow_nan=False) | st.text(max_size=8)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)

# every name the models read, so generated extra keys are truly unknown
KNOWN_NAMES = {a.name for cls in vars(m).values() if attrs.has(cls) for a in attrs.fields(cls)} \
    | {"cache", "bytes"}
unknown_keys = st.text(min_size=1, max_size=12).filter(lambda k: k not in KNOWN_NAMES)


@settings(max_examples=150, deadline=None)
@given(example=st.sampled_from(EXAMPLES),
       extra=st.dictionaries(unknown_keys, json_values, min_size=1, max_size=4))
def test_property_extra_keys_never_change_the_value(example, extra):
    cls, obj = example
    assert without_raw(structure(_sprinkle(obj, extra), cls)) == without_raw(structure(obj, cls))


# (model, example, location of an integer member, reported path)
INT_SLOTS = [
    (m.Tree, TREE, ("entries", 1, "size"), "entries[1].size"),
    (m.SearchResult, SEARCH, ("items", 0, "line"), "items[0].line"),
    (m.PartialParams, PARTIAL, ("id",), "id"),
    (m.PartialParams, PARTIAL, ("items", 0, "line"), "items[0].line"),
    (m.Blame, BLAME, ("ranges", 1, "start_line"), "ranges[1].start_line"),
    (m.Blame, BLAME, ("ranges", 0, "end_line"), "ranges[0].end_line"),
    (m.Commit, COMMIT, ("files", 0, "additions"), "files[0].additions"),
    (m.Commit, COMMIT, ("files", 0, "deletions"), "files[0].deletions"),
    (m.ErrorObject, ERROR, ("code",), "code"),
    (m.ErrorObject, ERROR, ("data", "retry_after_s"), "data.retry_after_s"),
]


def _replaced(obj, where, value):
    out = copy.deepcopy(obj)
    target = out
    for key in where[:-1]:
        target = target[key]
    target[where[-1]] = value
    return out


@settings(max_examples=150, deadline=None)
@given(slot=st.sampled_from(INT_SLOTS),
       value=st.booleans() | st.floats(allow_nan=False).filter(lambda f: f.is_integer())
       | st.integers(0, 99).map(str))
def test_property_bool_float_or_string_never_accepted_as_int(slot, value):
    cls, obj, where, path = slot
    if path == "data.retry_after_s" and type(value) is float and value >= 0 and value != float("inf"):
        return  # RULINGS: FC-063 accepts any non-negative number there
    err = shape_error(_replaced(obj, where, value), cls)
    assert err.path == path


@settings(max_examples=100, deadline=None)
@given(slot=st.sampled_from(INT_SLOTS), value=st.integers(-2**64, 2**64))
def test_property_integers_accepted_exactly_in_range(slot, value):
    cls, obj, where, path = slot
    lo, hi = {"code": (-2**64, 2**64)}.get(path, (0, 2**64))
    if path.startswith("files[0]."):
        hi = m.U32_MAX
    candidate = _replaced(obj, where, value)
    if lo <= value <= hi:
        assert structure(candidate, cls) is not None
    else:
        assert shape_error(candidate, cls).path == path


# ---------------------------------------------------------------- tolerant reading (read)

def test_read_keeps_what_it_can_and_names_each_problem_once():
    raw = {"entries": [{"path": "a", "type": "blob", "sha": "x", "size": "3"},
                       {"path": 5, "type": "blob", "sha": "y"},
                       "not an entry",
                       {"path": "b", "type": 1}],
           "truncated": "yes", "x_unknown": {"any": [1]}}
    r = m.read(raw, m.Tree)
    # a bad optional member takes its default; a bad required one reads as None;
    # an item whose key member is bad, or that is not an object, is left out
    assert r.model.entries == (m.TreeEntry("a", "blob", "x", None), m.TreeEntry("b", None, None))
    assert r.model.truncated is False and r.model.branch == "main"
    assert r.problems == (
        ("entries[0].size", 'expected a non-negative integer, got string "3"'),
        ("entries[1].path", "expected a string, got 5"),
        ("entries[2]", 'expected an object, got string "not an entry"'),
        ("entries[3].type", "expected a string, got 1"),
        ("entries[3].sha", "missing required member"),
        ("truncated", 'expected a boolean, got string "yes"'))
    b = r.model.entries[1]
    assert r.where(b) == "entries[3]"
    assert r.of(b) == [("entries[3].type", "expected a string, got 1"),
                       ("entries[3].sha", "missing required member")]
    assert r.of(b, "sha") == [("entries[3].sha", "missing required member")]
    assert [p for p, _ in r.at("entries[*].size")] == ["entries[0].size"]
    assert [p for p, _ in r.at("entries...")] == ["entries[0].size", "entries[1].path",
                                                  "entries[2]", "entries[3].type",
                                                  "entries[3].sha"]


def test_read_of_a_well_formed_reply_equals_structure():
    assert m.read(SEARCH, m.SearchResult) == m.Reading(m.structure(SEARCH, m.SearchResult))
    assert m.read(TREE, m.Tree).problems == ()


def test_read_patterns_above_and_below():
    r = m.read({"items": [{"repo": "o/r", "path": "p", "located": "stale"}],
                "index": {"as_of": 3}}, m.SearchResult)
    assert r.model.index is None and r.model.items[0].located is True
    assert r.at("...located") == [("items[0].located", 'expected a boolean, got string "stale"')]
    assert r.at("index...") == [("index.as_of", "expected a string, got 3")]
    batch = m.read([{"repo": "o/r", "path": "p", "line": -1}], tuple[m.SearchHit, ...])
    assert batch.at("[*].line") == [("[0].line", "expected a non-negative integer, got -1")]


def test_read_of_a_reply_that_is_not_an_object():
    r = m.read(None, m.Tree)
    assert r.model is None and r.problems == (("", "expected an object, got null"),)


def test_a_big_reply_read_again_is_the_same_reading_and_a_changed_one_is_not():
    """read() remembers readings of replies with a long array (by their JSON
    text): the same value gives the same reading, a value that differs in one
    member (or only in a type: 1 against 1.0) is read afresh."""
    entries = [{"path": f"f{i}.txt", "type": "blob", "sha": f"{i:064x}", "size": i}
               for i in range(m._MEMO_MIN_ITEMS)]
    tree = {"entries": entries, "truncated": False, "branch": "main"}
    first = m.read(tree, m.Tree)
    assert not first.problems and len(first.model.entries) == m._MEMO_MIN_ITEMS
    again = m.read(copy.deepcopy(tree), m.Tree)
    assert again == first and again.where(again.model.entries[7]) == "entries[7]"
    changed = copy.deepcopy(tree)
    changed["entries"][7]["size"] = 7.0                  # a float is not an integer
    reading = m.read(changed, m.Tree)
    assert reading.at("entries[*].size") and not first.at("entries[*].size")
    changed["entries"][7]["size"] = 8
    assert m.read(changed, m.Tree).model.entries[7].size == 8


def test_shape_error_of_a_big_reply_is_the_strict_check_and_remembered_apart():
    """The monitor's strict check (shape_error) is structure()'s verdict: None
    when it structures, its ShapeError otherwise; a big value's answer is
    remembered, apart from read()'s tolerant readings of the same value."""
    entries = [{"path": f"f{i}.txt", "type": "blob", "sha": f"{i:064x}", "size": i}
               for i in range(m._MEMO_MIN_ITEMS)]
    tree = {"entries": entries, "truncated": False, "branch": "main"}
    assert m.shape_error(tree, m.Tree) is None
    assert m.shape_error(copy.deepcopy(tree), m.Tree) is None
    bad = copy.deepcopy(tree)
    bad["entries"][7]["size"] = 7.0
    with pytest.raises(m.ShapeError) as raised:
        m.structure(bad, m.Tree)
    for _ in range(2):
        error = m.shape_error(copy.deepcopy(bad), m.Tree)
        assert isinstance(error, m.ShapeError) and str(error) == str(raised.value)
        assert "entries[7].size" in str(error)
    reading = m.read(bad, m.Tree)   # read() stays tolerant: the entry's size is a problem
    assert reading.at("entries[*].size") and reading.model is not None
    small = {"entries": entries[:3], "truncated": False}
    assert m.shape_error(small, m.Tree) is None and m.shape_error({"entries": 1}, m.Tree)
