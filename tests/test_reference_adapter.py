"""The reference adapter, vendor/fs_provider.py, driven over stdio through wire.Provider.

Every method is exercised against a materialized fixture. Expectations come
from the fixture's bytes on disk and from git itself (ls-tree, show, log,
blame, diff-tree), never from the adapter's own output. The adapter's
documented choices (blob id = sha256 of the bytes, annotated tag sha = the
tagged commit, 1 MiB refusal, error codes) are asserted as such.

A few behaviours need a request that stays in flight on purpose (replies out
of order, a stream cut by a cancel). For those the adapter runs inside a tiny
wrapper (WRAPPER below) that adds one method, `test/hold`, answered only once
its own $/cancelRequest arrives, and can stall a search at one repository
until a cancel has been read. Both wait on events, never on the clock.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse
from pathlib import Path

import pytest

from fixture import catalog as C
from fixture import materialize
from wire import Provider, ProviderError

ROOT = Path(__file__).resolve().parents[1]
ADAPTER = ROOT / "vendor" / "fs_provider.py"
DEADLINE_S = 20.0
ORG = "local"
MIB = 1024 * 1024
WAIT_S = 10.0          # upper bound for event waits (a hang fails instead of blocking)
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not available on PATH")

WRAPPER = r"""
import os, sys, threading
sys.path.insert(0, os.environ["FS_TEST_VENDOR"])
import fs_provider as F

cancel_seen = threading.Event()
_notification = F.Server.notification
def notification(self, msg):
    _notification(self, msg)
    if msg.get("method") == "$/cancelRequest":
        cancel_seen.set()
F.Server.notification = notification

def hold(cat, params, call):          # answered only once its own cancel arrives
    return {"released": call.cancelled.wait(60)}
F.METHODS["test/hold"] = hold

_search_hit = F.search_hit
def search_hit(repo, path, info, query):   # a scan stalls at the gate repo until a cancel
    if repo.name == os.environ.get("FS_TEST_GATE_REPO"):
        cancel_seen.wait(60)
    return _search_hit(repo, path, info, query)
F.search_hit = search_hit
sys.exit(F.main(sys.argv[1:]))
"""


# ---------------------------------------------------------------- plumbing

def adapter_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FORGE_", "FS_TEST_"))}
    env["FORGE_ORG"] = ORG
    env.update(extra)
    return env


def spawn(folder: Path, *, env: dict | None = None, wrapped: bool = False) -> Provider:
    argv = [sys.executable, "-c", WRAPPER] if wrapped else [sys.executable, str(ADAPTER)]
    env = env if env is not None else adapter_env()
    if wrapped:
        env = {**env, "FS_TEST_VENDOR": str(ADAPTER.parent)}
    provider = Provider(argv + [str(folder)], env=env, deadline_s=DEADLINE_S)
    provider.start()
    return provider


GIT_ENV = {**{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "LC_ALL": "C"}


def git(repo: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, input=input,
                          capture_output=True, check=True).stdout


def git_text(repo: Path, *args: str) -> str:
    return git(repo, *args).decode("utf-8")


def git_contents(repo: Path, specs: list[str]) -> list[bytes]:
    """The bytes of each `rev:path` (or object id), in one `git cat-file --batch`."""
    out = git(repo, "cat-file", "--batch", input="".join(f"{spec}\n" for spec in specs).encode())
    found, pos = [], 0
    for spec in specs:
        eol = out.index(b"\n", pos)
        header = out[pos:eol].split()
        assert header[-1] != b"missing", spec
        size = int(header[2])
        found.append(out[eol + 1:eol + 1 + size])
        pos = eol + 2 + size
    return found


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def b64(text: str) -> bytes:
    """Strict standard base64: the alphabet, padding, no whitespace (PROTOCOL §3.4)."""
    data = base64.b64decode(text, validate=True)
    assert base64.b64encode(data).decode("ascii") == text, "base64 is not canonical"
    return data


def disk_walk(repo: Path) -> dict[str, str]:
    """Every path of a repository on disk (without .git): relpath -> "blob" | "tree"."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        rel = Path(dirpath).relative_to(repo)
        for name in dirnames:
            found[(rel / name).as_posix()] = "tree"
        for name in filenames:
            found[(rel / name).as_posix()] = "blob"
    return found


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:8000]


def first_line_with(data: bytes, term: str) -> int | None:
    for number, line in enumerate(data.lower().split(b"\n"), 1):
        if term.encode() in line:
            return number
    return None


def error_of(provider: Provider, method: str, params) -> ProviderError:
    with pytest.raises(ProviderError) as info:
        provider.request(method, params)
    err = info.value
    assert err.origin == "adapter", err
    raw = err.raw
    assert isinstance(raw["code"], int) and not isinstance(raw["code"], bool)
    assert isinstance(raw["message"], str) and raw["message"]
    assert isinstance(raw["data"], dict) and isinstance(raw["data"]["kind"], str) and raw["data"]["kind"]
    if raw["code"] != -32601:
        assert raw["code"] > 0
    return err


def kind_of(provider: Provider, method: str, params) -> str:
    return error_of(provider, method, params).raw["data"]["kind"]


def raw_exchange(provider: Provider, line: bytes, reply_id: int) -> dict | None:
    """Write `line` as is and return the reply carrying `reply_id` (an id the client never issues)."""
    got = threading.Event()
    found: list = []

    def listen(entry) -> None:
        if entry.direction == "in" and entry.kind == "reply" and entry.id == reply_id:
            found.append(entry.msg)
            got.set()

    previous, provider.transcript.listener = provider.transcript.listener, listen
    try:
        provider.send_raw(line)
        got.wait(WAIT_S)
    finally:
        provider.transcript.listener = previous
    return found[0] if found else None


def inbound(provider: Provider, mark: int) -> list:
    return [e for e in provider.transcript.since(mark) if e.direction == "in"]


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def fx():
    with materialize() as m:
        yield m


@pytest.fixture(scope="module")
def ad(fx):
    provider = spawn(fx.path)
    yield provider
    provider.close()


@pytest.fixture(scope="module")
def vcs(fx) -> Path:
    if not fx.vcs_built:
        pytest.skip(fx.vcs_skip_reason)
    return fx.path / C.VCS


def repo(name: str) -> str:
    return f"{ORG}/{name}"


def make_git_repo(path: Path) -> None:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")


def commit_all(path: Path, message: str, when: int) -> str:
    env_date = f"@{when} +0200"
    git(path, "add", "-A")
    git(path, "-c", "user.name=Tess T", "-c", "user.email=t@example.org", "-c", "commit.gpgsign=false",
        "commit", "-q", "--allow-empty", "-m", message,
        f"--date={env_date}")
    return git_text(path, "rev-parse", "HEAD").strip()


# ---------------------------------------------------------------- invocation and handshake

def test_usage_and_fixture_dir_from_environment(fx, tmp_path):
    for argv in ([], [str(fx.path), str(fx.path)], [str(tmp_path / "missing")]):
        proc = subprocess.run([sys.executable, str(ADAPTER), *argv], env=adapter_env(),
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=WAIT_S)
        assert proc.returncode == 2, argv
        assert b"usage: fs_provider.py <dir>" in proc.stderr and proc.stdout == b""
    provider = Provider([sys.executable, str(ADAPTER)],
                        env=adapter_env(FORGE_FIXTURE_DIR=str(fx.path)), deadline_s=DEADLINE_S)
    with provider:
        provider.start()
        names = provider.request("org/repos", {"org": ORG})["repos"]
    assert sorted(names) == sorted(p.name for p in fx.path.iterdir() if p.is_dir())


def test_initialize_is_honest_and_the_same_every_time(ad, fx, tmp_path):
    first = ad.init_results[0]
    assert first["protocol"] == 1 and type(first["protocol"]) is int
    assert first["name"] == "fs" and first["icon"] == "folder"
    caps = first["capabilities"]
    assert all(type(v) is bool for v in caps.values())
    assert caps["orgs"] and caps["code_search"] and caps["file_search"]
    revisions = {caps[k] for k in ("refs", "log", "blame", "commit")}
    assert revisions == {fx.vcs_built}
    assert ad.request("initialize", {"protocol": 1, "cache_bytes": 1 << 29,
                                     "cache_dir": str(tmp_path)}) == first
    assert ad.request("initialize", None) == first

    (tmp_path / "plain").mkdir()
    with spawn(tmp_path) as plain_only:
        caps = plain_only.init_results[0]["capabilities"]
    assert not any(caps[k] for k in ("refs", "log", "blame", "commit"))


def test_without_git_on_path_the_revision_set_is_off(fx, tmp_path):
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    with spawn(fx.path, env=adapter_env(PATH=str(empty_bin))) as provider:
        caps = provider.init_results[0]["capabilities"]
        assert not any(caps[k] for k in ("refs", "log", "blame", "commit"))
        if fx.vcs_built:   # the git repo is still served, as its working tree
            tree = provider.request("repo/tree", {"repo": repo(C.VCS), "ref": None})
            assert {e["path"] for e in tree["entries"]} == set(disk_walk(fx.path / C.VCS))


# ---------------------------------------------------------------- repositories and orgs

def test_repositories_and_org(ad, fx):
    on_disk = sorted(p.name for p in fx.path.iterdir() if p.is_dir())
    assert sorted(ad.request("org/repos", {"org": ORG})["repos"]) == on_disk
    assert sorted(ad.request("org/repos", {"org": "any-org"})["repos"]) == on_disk
    items = ad.request("search/repos", {"query": ""})["items"]
    assert sorted(i["full_name"] for i in items if "full_name" in i) == [repo(n) for n in on_disk]
    assert {"org": ORG} in items
    items = ad.request("search/repos", {"query": "ALP"})["items"]
    assert items == [{"full_name": repo(C.ALPHA)}]
    assert ad.request("org/url", {"org": ORG})["url"] == fx.path.as_uri()


def test_forge_org_names_ids_and_incoming_orgs_are_ignored(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.txt").write_bytes(b"hello\n")
    with spawn(tmp_path, env=adapter_env(FORGE_ORG="acme")) as provider:
        items = provider.request("search/repos", {"query": "pla"})["items"]
        assert items == [{"full_name": "acme/plain"}]
        for repo_id in ("acme/plain", "other/plain"):
            tree = provider.request("repo/tree", {"repo": repo_id, "ref": None})
            assert [e["path"] for e in tree["entries"]] == ["a.txt"]
        hit, = provider.request("search/code", {"q": "hello", "limit": 10})["items"]
        assert hit["repo"] == "acme/plain"


# ---------------------------------------------------------------- trees and blobs (working tree)

@pytest.mark.parametrize("name", [C.ALPHA, C.BETA, C.WIDE])
def test_tree_lists_every_path_once_with_content_ids(ad, fx, name):
    result = ad.request("repo/tree", {"repo": repo(name), "ref": None})
    assert result["truncated"] is False and result["branch"] == "main"
    paths = [e["path"] for e in result["entries"]]
    assert len(paths) == len(set(paths))
    on_disk = disk_walk(fx.path / name)
    assert {e["path"]: e["type"] for e in result["entries"]} == on_disk
    blob_ids = set()
    for e in result["entries"]:
        if e["type"] == "blob":
            data = (fx.path / name / e["path"]).read_bytes()
            assert e["sha"] == sha256(data) and e["size"] == len(data), e["path"]
            blob_ids.add(e["sha"])
    dir_ids = {e["sha"] for e in result["entries"] if e["type"] == "tree"}
    assert len(dir_ids) == sum(1 for t in on_disk.values() if t == "tree")
    assert not dir_ids & blob_ids


def test_wide_tree_is_complete_past_a_thousand_entries(ad, fx):
    result = ad.request("repo/tree", {"repo": repo(C.WIDE), "ref": None})
    in_big_dir = [e for e in result["entries"] if e["path"].startswith(C.WIDE_BIG_DIR + "/")]
    assert len(in_big_dir) == len(os.listdir(fx.path / C.WIDE / C.WIDE_BIG_DIR)) > 1000
    assert result["truncated"] is False


def test_blobs_are_the_exact_bytes(ad, fx):
    tree = ad.request("repo/tree", {"repo": repo(C.ALPHA), "ref": None})
    ids = {e["path"]: e["sha"] for e in tree["entries"] if e["type"] == "blob"}
    twin_a, twin_b = C.ALPHA_TWINS
    assert ids[twin_a] == ids[twin_b]
    for path in (C.ALPHA_BINARY, C.ALPHA_EMPTY, C.ALPHA_UNICODE, twin_a, *C.ALPHA_ESCAPE_PATHS):
        reply = ad.request("repo/blob", {"repo": repo(C.ALPHA), "sha": ids[path]})
        assert b64(reply["bytes_b64"]) == (fx.path / C.ALPHA / path).read_bytes(), path
    assert b"\0" in b64(ad.request("repo/blob", {"repo": repo(C.ALPHA),
                                                  "sha": ids[C.ALPHA_BINARY]})["bytes_b64"])
    assert ad.request("repo/blob", {"repo": repo(C.ALPHA), "sha": ids[C.ALPHA_EMPTY]}) == {"bytes_b64": ""}


def test_blobs_over_one_mib_are_refused_with_kind_provider(ad, fx, tmp_path):
    tree = ad.request("repo/tree", {"repo": repo(C.ALPHA), "ref": None})
    big = next(e for e in tree["entries"] if e["path"] == C.ALPHA_BIG)
    assert big["size"] > MIB
    assert kind_of(ad, "repo/blob", {"repo": repo(C.ALPHA), "sha": big["sha"]}) == "provider"
    assert kind_of(ad, "repo/blob_at", {"repo": repo(C.ALPHA), "path": C.ALPHA_BIG,
                                        "ref": None}) == "provider"
    edge = tmp_path / "edge"
    edge.mkdir()
    (edge / "exactly").write_bytes(b"x" * MIB)
    (edge / "over").write_bytes(b"x" * (MIB + 1))
    with spawn(tmp_path) as provider:
        got = provider.request("repo/blob_at", {"repo": repo("edge"), "path": "exactly", "ref": None})
        assert len(b64(got["bytes_b64"])) == MIB
        assert kind_of(provider, "repo/blob_at", {"repo": repo("edge"), "path": "over",
                                                  "ref": None}) == "provider"


def test_blob_at_on_a_plain_directory(ad, fx):
    for ref in (None, "main"):
        got = ad.request("repo/blob_at", {"repo": repo(C.ALPHA), "path": C.ALPHA_UNICODE, "ref": ref})
        data = (fx.path / C.ALPHA / C.ALPHA_UNICODE).read_bytes()
        assert b64(got["bytes_b64"]) == data and got["sha"] == sha256(data)
    tree = ad.request("repo/tree", {"repo": repo(C.ALPHA), "ref": "main"})
    assert tree["branch"] == "main" and len(tree["entries"]) == len(disk_walk(fx.path / C.ALPHA))
    assert kind_of(ad, "repo/tree", {"repo": repo(C.ALPHA), "ref": "feature"}) == "not_found"
    for path in ("no/such/file", "src", "../beta/README.md"):
        assert kind_of(ad, "repo/blob_at", {"repo": repo(C.ALPHA), "path": path,
                                            "ref": None}) == "not_found", path


def test_a_rewritten_file_gets_a_new_id_at_once(tmp_path):
    folder = tmp_path / "plain"
    folder.mkdir()
    target = folder / "f.txt"
    target.write_bytes(b"aaaa")
    with spawn(tmp_path) as provider:
        def file_id() -> str:
            tree = provider.request("repo/tree", {"repo": repo("plain"), "ref": None})
            return tree["entries"][0]["sha"]
        first = file_id()
        target.write_bytes(b"bbbb")            # same size, within the same timestamp tick
        second = file_id()
        assert (first, second) == (sha256(b"aaaa"), sha256(b"bbbb"))
        assert kind_of(provider, "repo/blob", {"repo": repo("plain"), "sha": first}) == "not_found"
        got = provider.request("repo/blob", {"repo": repo("plain"), "sha": second})
        assert b64(got["bytes_b64"]) == b"bbbb"
        target.write_bytes(b"aaaa")
        assert file_id() == first


def test_a_recent_change_is_rechecked_for_one_timestamp_tick():
    """A cache entry is trusted only once its file is older than the file
    system's timestamp tick: 50 ms with sub-second stamps, 2 s with whole
    seconds (FAT-like), so a same-tick rewrite is never served stale."""
    import types
    F = _load_reference("fs_provider_racy")
    now = 1_800_000_000_123_456_789
    def racy(age_ns, whole=False):
        stamp = now - age_ns
        if whole:
            stamp -= stamp % 1_000_000_000
        return F._racy(types.SimpleNamespace(st_mtime_ns=stamp, st_ctime_ns=stamp), now)
    assert racy(10_000_000) and not racy(80_000_000)
    assert racy(1_000_000_000, whole=True) and not racy(3_000_000_000, whole=True)


def _load_reference(name: str):
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, ADAPTER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_file_is_read_to_its_end_whatever_its_stat_said(tmp_path):
    """read_entry_bytes takes the stat's size as a hint only: a file that
    grew or shrank since it was stat'ed is read whole, as it is now."""
    F = _load_reference("fs_provider_read")
    target = tmp_path / "f.txt"
    target.write_bytes(b"0123456789")
    st = os.lstat(target)
    assert F.read_entry_bytes(str(target), st) == b"0123456789"
    target.write_bytes(b"0123456789" * 300_000)          # grew past the hint (3 MB)
    assert F.read_entry_bytes(str(target), st) == b"0123456789" * 300_000
    target.write_bytes(b"012")                            # shrank
    assert F.read_entry_bytes(str(target), st) == b"012"
    target.write_bytes(b"")
    assert F.read_entry_bytes(str(target), os.lstat(target)) == b""


def test_odd_entries_on_disk(tmp_path):
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "target.txt").write_bytes(b"t\n")
    os.symlink("target.txt", folder / "link")
    os.symlink("/etc", folder / "escape")
    os.mkfifo(folder / "pipe")                   # reading it would hang: never listed
    os.mkdir(folder / ".hidden")
    (folder / os.fsdecode(b"bad\xff.txt")).write_bytes(b"not listed: the wire is UTF-8\n")
    (tmp_path / ".hidden-repo").mkdir()
    with spawn(tmp_path) as provider:
        assert provider.request("org/repos", {"org": ORG})["repos"] == ["odd"]
        tree = provider.request("repo/tree", {"repo": repo("odd"), "ref": None})
        kinds = {e["path"]: (e["type"], e["sha"]) for e in tree["entries"]}
        assert kinds == {".hidden": ("tree", kinds[".hidden"][1]),
                         "escape": ("blob", sha256(b"/etc")), "link": ("blob", sha256(b"target.txt")),
                         "target.txt": ("blob", sha256(b"t\n"))}
        got = provider.request("repo/blob", {"repo": repo("odd"), "sha": sha256(b"target.txt")})
        assert b64(got["bytes_b64"]) == b"target.txt"
        assert kind_of(provider, "repo/blob_at", {"repo": repo("odd"), "path": "escape/passwd",
                                                  "ref": None}) == "not_found"
        assert provider.request("search/code", {"q": "t", "limit": 50})["items"]
        assert provider.alive


# ---------------------------------------------------------------- revisions (vcs)

def ref_names(vcs: Path) -> list[str]:
    return git_text(vcs, "for-each-ref", "--format=%(refname:short)", "refs/heads", "refs/tags").split()


def test_tree_at_every_ref_is_gits_tree(ad, vcs):
    tag_object = git_text(vcs, "rev-parse", C.VCS_ANNOTATED_TAG).strip()
    feature_tip = git_text(vcs, "rev-parse", C.VCS_FEATURE_BRANCH).strip()
    for ref in ref_names(vcs) + [tag_object, feature_tip, "HEAD~2"]:
        result = ad.request("repo/tree", {"repo": repo(C.VCS), "ref": ref})
        assert result["branch"] == ref and result["truncated"] is False
        listing = git(vcs, "ls-tree", "-r", "-t", "-z", ref).split(b"\0")
        expected = {rec.split(b"\t")[1].decode(): rec.split()[1].decode() for rec in listing if rec}
        assert {e["path"]: e["type"] for e in result["entries"]} == expected, ref
        blobs = [e for e in result["entries"] if e["type"] == "blob"]
        for e, data in zip(blobs, git_contents(vcs, [f"{ref}:{e['path']}" for e in blobs])):
            assert e["sha"] == sha256(data) and e["size"] == len(data), (ref, e["path"])
    worktree = ad.request("repo/tree", {"repo": repo(C.VCS), "ref": None})
    assert worktree["branch"] == C.VCS_DEFAULT_BRANCH
    assert {e["path"]: e["type"] for e in worktree["entries"]} == disk_walk(vcs)
    assert kind_of(ad, "repo/tree", {"repo": repo(C.VCS), "ref": "no-such-ref"}) == "not_found"
    assert kind_of(ad, "repo/tree", {"repo": repo(C.VCS), "ref": "--all"}) == "not_found"


def test_ids_follow_content_across_refs(ad, vcs):
    def ids(ref):
        entries = ad.request("repo/tree", {"repo": repo(C.VCS), "ref": ref})["entries"]
        return {e["path"]: e["sha"] for e in entries}
    main, feature = ids(C.VCS_DEFAULT_BRANCH), ids(C.VCS_FEATURE_BRANCH)
    for path in (C.VCS_MAIN_ADVANCED, C.VCS_FEATURE_REWRITTEN):
        assert main[path] != feature[path]
    assert main[C.VCS_SAME_BOTH] == feature[C.VCS_SAME_BOTH]
    # An id seen only on another branch still resolves through repo/blob.
    only_feature = feature[C.VCS_FEATURE_REWRITTEN]
    got = ad.request("repo/blob", {"repo": repo(C.VCS), "sha": only_feature})
    assert b64(got["bytes_b64"]) == git(vcs, "show", f"{C.VCS_FEATURE_BRANCH}:{C.VCS_FEATURE_REWRITTEN}")


@needs_git
def test_an_id_from_an_old_commit_resolves_in_a_fresh_process(tmp_path):
    work = tmp_path / "hist"
    make_git_repo(work)
    (work / "f.txt").write_bytes(b"first version\n")
    old = commit_all(work, "First", 1_700_000_000)
    (work / "f.txt").write_bytes(b"second version\n")
    commit_all(work, "Second", 1_700_000_100)
    with spawn(tmp_path) as provider:
        got = provider.request("repo/blob_at", {"repo": repo("hist"), "path": "f.txt", "ref": old})
        assert b64(got["bytes_b64"]) == b"first version\n"
    with spawn(tmp_path) as provider:              # a process that never listed that commit
        got = provider.request("repo/blob", {"repo": repo("hist"), "sha": sha256(b"first version\n")})
        assert b64(got["bytes_b64"]) == b"first version\n"


def test_blob_at_serves_the_refs_bytes_and_the_tree_id(ad, vcs):
    for ref in (C.VCS_DEFAULT_BRANCH, C.VCS_FEATURE_BRANCH, C.VCS_LIGHT_TAG, C.VCS_ANNOTATED_TAG):
        tree = ad.request("repo/tree", {"repo": repo(C.VCS), "ref": ref})
        ids = {e["path"]: e["sha"] for e in tree["entries"] if e["type"] == "blob"}
        path = C.VCS_FEATURE_REWRITTEN
        got = ad.request("repo/blob_at", {"repo": repo(C.VCS), "path": path, "ref": ref})
        assert b64(got["bytes_b64"]) == git(vcs, "show", f"{ref}:{path}")
        assert got["sha"] == ids[path]
    got = ad.request("repo/blob_at", {"repo": repo(C.VCS), "path": C.VCS_SAME_BOTH, "ref": None})
    assert b64(got["bytes_b64"]) == (vcs / C.VCS_SAME_BOTH).read_bytes()
    assert kind_of(ad, "repo/blob_at", {"repo": repo(C.VCS), "path": "no/such", "ref": "main"}) == "not_found"
    assert kind_of(ad, "repo/blob_at", {"repo": repo(C.VCS), "path": C.VCS_SAME_BOTH,
                                        "ref": "no-such-ref"}) == "not_found"
    assert kind_of(ad, "repo/blob_at", {"repo": repo(C.VCS), "path": "src", "ref": "main"}) == "not_found"


def test_refs_match_git_and_every_name_and_sha_round_trips(ad, vcs):
    result = ad.request("repo/refs", {"repo": repo(C.VCS)})
    heads = dict(line.split() for line in git_text(
        vcs, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads").splitlines())
    assert {b["name"]: b["sha"] for b in result["branches"]} == heads
    assert [b["name"] for b in result["branches"] if b.get("default")] == [C.VCS_DEFAULT_BRANCH]
    tag_names = git_text(vcs, "tag").split()
    # Documented choice: an annotated tag reports the commit it tags.
    assert {t["name"]: t["sha"] for t in result["tags"]} == {
        name: git_text(vcs, "rev-parse", f"{name}^{{commit}}").strip() for name in tag_names}
    everywhere = set.intersection(*(set(git_text(vcs, "ls-tree", "-r", "--name-only", r).split("\n"))
                                     for r in ref_names(vcs)))
    path = min(p for p in everywhere if p)       # a file present at every ref
    for entry in result["branches"] + result["tags"]:
        for ref in (entry["name"], entry["sha"]):
            commit = git_text(vcs, "rev-parse", f"{entry['sha']}^{{commit}}").strip()
            log = ad.request("repo/log", {"repo": repo(C.VCS), "path": None, "ref": ref, "limit": 1})
            assert log["items"][0]["sha"] == commit, ref
            tree = ad.request("repo/tree", {"repo": repo(C.VCS), "ref": ref})
            assert tree["branch"] == ref
            ad.request("repo/blob_at", {"repo": repo(C.VCS), "path": path, "ref": ref})
            ad.request("repo/blame", {"repo": repo(C.VCS), "path": path, "ref": ref})


def git_log(vcs: Path, ref: str, path: str | None = None) -> list[dict]:
    out = git_text(vcs, "log", "--format=%H%x1f%s%x1f%an%x1f%aI", ref, "--", *([path] if path else []))
    return [dict(zip(("sha", "subject", "author", "date"), line.split("\x1f")))
            for line in out.splitlines()]


def test_log_is_gits_log_with_limit_and_truncated(ad, vcs):
    everything = git_log(vcs, "HEAD")
    got = ad.request("repo/log", {"repo": repo(C.VCS), "path": None, "ref": None, "limit": None})
    assert got["items"] == everything and got["truncated"] is False
    three = git_log(vcs, "HEAD", C.VCS_THREE_COMMITS)
    assert len(three) == 3
    params = {"repo": repo(C.VCS), "path": C.VCS_THREE_COMMITS, "ref": None}
    assert ad.request("repo/log", {**params, "limit": 2}) == {"items": three[:2], "truncated": True}
    assert ad.request("repo/log", {**params, "limit": 3}) == {"items": three, "truncated": False}
    assert ad.request("repo/log", {**params, "limit": 500}) == {"items": three, "truncated": False}
    feature = ad.request("repo/log", {**params, "ref": C.VCS_FEATURE_BRANCH, "limit": None})
    assert feature["items"] == git_log(vcs, C.VCS_FEATURE_BRANCH, C.VCS_THREE_COMMITS)
    assert kind_of(ad, "repo/log", {**params, "ref": "no-such-ref"}) == "not_found"
    assert kind_of(ad, "repo/log", {**params, "path": "never/existed"}) == "not_found"
    # Author offsets survive: at least one commit of the fixture is not UTC.
    assert any(not item["date"].endswith("+00:00") for item in everything)


def git_blame_ranges(vcs: Path, ref: str, path: str) -> list[dict]:
    """Expected ranges from `git blame -l -s` (one sha per line), coalesced here."""
    shas = [line.split()[0] for line in
            git_text(vcs, "blame", "--root", "-l", "-s", ref, "--", path).splitlines()]
    ranges: list[dict] = []
    for number, sha in enumerate(shas, 1):
        if ranges and ranges[-1]["sha"] == sha:
            ranges[-1]["end_line"] = number
        else:
            author, date = git_text(vcs, "log", "-1", "--format=%an%x1f%aI", sha).strip().split("\x1f")
            ranges.append({"start_line": number, "end_line": number, "sha": sha,
                           "author": author, "date": date})
    return ranges


def test_blame_is_gits_blame_coalesced(ad, vcs):
    for ref in (None, C.VCS_DEFAULT_BRANCH, C.VCS_FEATURE_BRANCH):
        for path in (C.VCS_BLAME_TWO_AUTHORS, C.VCS_THREE_COMMITS):
            got = ad.request("repo/blame", {"repo": repo(C.VCS), "path": path, "ref": ref})
            expected = git_blame_ranges(vcs, ref or "HEAD", path)
            assert got["ranges"] == expected, (ref, path)
            lines = git(vcs, "show", f"{ref or 'HEAD'}:{path}").rstrip(b"\n").split(b"\n")
            assert expected[-1]["end_line"] == len(lines)
    two = ad.request("repo/blame", {"repo": repo(C.VCS), "path": C.VCS_BLAME_TWO_AUTHORS, "ref": None})
    assert len({r["author"] for r in two["ranges"]}) == 2 and len(two["ranges"]) >= 3
    assert kind_of(ad, "repo/blame", {"repo": repo(C.VCS), "path": "no/such", "ref": None}) == "not_found"


HUNK_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def apply_hunks(old: bytes, patch: str) -> bytes:
    """Apply a hunks-only unified patch to `old`, checking every header count on the way."""
    old_lines = re.findall(rb"[^\n]*\n|[^\n]+$", old)
    out: list[bytes] = []
    pos = 0
    hunk_lines = patch.split("\n")
    i = 0
    while i < len(hunk_lines):
        m = HUNK_HEADER.match(hunk_lines[i])
        assert m, f"not a hunk header: {hunk_lines[i]!r}"
        a, b, c, d = (int(g) if g is not None else 1 for g in m.groups())
        i += 1
        olds: list[bytes] = []
        news: list[bytes] = []
        last_sides: tuple = ()
        while i < len(hunk_lines) and not hunk_lines[i].startswith("@@"):
            line = hunk_lines[i]
            i += 1
            if line.startswith("\\"):            # "\ No newline at end of file"
                for side in last_sides:
                    side[-1] = side[-1][:-1]
                continue
            body = line[1:].encode() + b"\n"
            last_sides = {" ": (olds, news), "-": (olds,), "+": (news,)}[line[0]]
            for side in last_sides:
                side.append(body)
        assert (len(olds), len(news)) == (b, d)
        start = a - 1 if b else a
        out += old_lines[pos:start]
        assert old_lines[start:start + b] == olds
        pos = start + b
        out += news
    return b"".join(out + old_lines[pos:])


def check_commit(provider: Provider, repo_dir: Path, repo_id: str, commit: str) -> dict:
    got = provider.request("repo/commit", {"repo": repo_id, "sha": commit})
    meta = git_text(repo_dir, "show", "-s", "--format=%H%x1f%P%x1f%an%x1f%aI", commit).strip()
    sha, parents, author, date = meta.split("\x1f")
    assert (got["sha"], got["parents"], got["author"], got["date"]) == (sha, parents.split(), author, date)
    message = git_text(repo_dir, "show", "-s", "--format=%B", commit).rstrip("\n")
    assert got["message"] == message and not got["message"].endswith("\n")
    base = parents.split()[0] if parents else git_text(
        repo_dir, "hash-object", "-t", "tree", os.devnull).strip()
    status = git(repo_dir, "diff-tree", "-r", "-M", "-z", "--name-status", base, sha).split(b"\0")
    numstat = git(repo_dir, "diff-tree", "-r", "-M", "-z", "--numstat", base, sha).split(b"\0")
    words = {"A": "added", "D": "removed", "M": "modified", "T": "modified", "R": "renamed", "C": "added"}
    expected = []
    while status and status[0]:
        letter = status.pop(0).decode()[0]
        paths = [status.pop(0).decode() for _ in range(2 if letter in "RC" else 1)]
        counts = numstat.pop(0).decode().split("\t")
        if letter in "RC":
            numstat[:2] = []
        expected.append((paths[-1], words[letter], paths[0] if letter in "RC" else None,
                         None if counts[0] == "-" else (int(counts[0]), int(counts[1]))))
    files = got["files"]
    assert [(f["path"], f["status"], f.get("previous_path"),
             None if f.get("binary") else (f["additions"], f["deletions"])) for f in files] \
        == expected[:500]
    assert got["truncated"] is (len(expected) > 500)
    texts = [f for f in files if not f.get("binary")]
    assert all("patch" not in f and "additions" not in f for f in files if f.get("binary"))
    olds = git_contents(repo_dir, [f"{base}:{f.get('previous_path', f['path'])}" for f in texts
                                   if f["status"] != "added"])
    news = git_contents(repo_dir, [f"{sha}:{f['path']}" for f in texts if f["status"] != "removed"])
    for f in texts:
        old = b"" if f["status"] == "added" else olds.pop(0)
        new = b"" if f["status"] == "removed" else news.pop(0)
        patch = f["patch"]
        assert not patch.endswith("\n")
        if patch == "":                           # metadata only: mode change, pure rename, empty file
            assert old == new, f["path"]
        else:
            assert apply_hunks(old, patch) == new, f["path"]
    return got


def test_every_commit_of_the_fixture(ad, vcs):
    commits = git_text(vcs, "rev-list", "--all").split()
    seen = set()
    for commit in commits:
        got = check_commit(ad, vcs, repo(C.VCS), commit)
        seen |= {f["status"] for f in got["files"]}
        seen |= {"binary"} if any(f.get("binary") for f in got["files"]) else set()
        seen |= {"empty patch"} if any(f.get("patch") == "" for f in got["files"]) else set()
    assert seen >= {"added", "removed", "modified", "renamed", "binary", "empty patch"}
    merge = git_text(vcs, "rev-list", "--merges", "-n1", "HEAD").strip()
    got = ad.request("repo/commit", {"repo": repo(C.VCS), "sha": merge})
    assert len(got["parents"]) == 2
    first_parent = git_text(vcs, "diff-tree", "-r", "--name-only", got["parents"][0], merge).split()
    assert [f["path"] for f in got["files"]] == first_parent
    short = git_text(vcs, "rev-parse", "--short", "HEAD").strip()
    assert ad.request("repo/commit", {"repo": repo(C.VCS), "sha": short})["sha"] == \
        git_text(vcs, "rev-parse", "HEAD").strip()
    assert kind_of(ad, "repo/commit", {"repo": repo(C.VCS), "sha": "0" * 40}) == "not_found"


@needs_git
def test_trees_read_through_the_batch_git_are_what_ls_tree_lists(tmp_path):
    """Repo.git_tree reads a commit's tree objects through the batch git:
    the same entries, in the same order, with the same sizes, as
    `git ls-tree -r -t -l` (a submodule and a name that is not UTF-8 left
    out), at every commit of the fixture's vcs and of an odd repository."""
    F = _load_reference("fs_provider_trees")
    work = tmp_path / "odd"
    make_git_repo(work)
    (work / "deep" / "er" / "est").mkdir(parents=True)
    (work / "deep" / "er" / "est" / "leaf.txt").write_bytes(b"leaf\n")
    (work / "deep" / "a b.txt").write_bytes(b"spaced\n")
    (work / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(work / "run.sh", 0o755)
    os.symlink("run.sh", work / "link")
    (work / "empty").write_bytes(b"")
    (work / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    first = commit_all(work, "odd", 1_700_000_000)
    git(work, "update-index", "--add", "--cacheinfo", f"160000,{first},sub")   # a gitlink
    second = commit_all(work, "with a submodule", 1_700_000_100)
    with materialize() as m:
        cases = [(m.path / C.VCS, git_text(m.path / C.VCS, "rev-list", "--all").split()),
                 (work, [first, second])]
        for folder, commits in cases:
            batch = F.Repo(folder.name, str(folder), True)
            for commit in commits:
                want = [(e.path, e.type, e.oid, e.size) for e in batch._tree_from_ls_tree(commit)]
                got = batch._tree_from_objects(commit)
                assert got is not None
                batch._hash_blobs([e.oid for e in got if e.type == "blob"])
                got = [(e.path, e.type, e.oid, F._blob_size_by_oid.get(e.oid) if e.type == "blob"
                        else None) for e in got]
                assert got == want
    F.close_git_objects()


@needs_git
@pytest.mark.parametrize("setup,expected", [
    ("plain", "main"),
    ("other-branch", "topic"),
    ("tag-of-that-name", None),      # git says heads/main: asked of git itself
    ("detached", None),
    ("dot-git-file", None),
])
def test_the_head_branch_is_read_as_git_reads_it(tmp_path, setup, expected):
    """Repo.default_branch reads .git/HEAD where it says plainly which
    branch, and asks `git symbolic-ref --short HEAD` otherwise; both ways
    give git's answer."""
    F = _load_reference("fs_provider_head")
    work = tmp_path / "r"
    make_git_repo(work)
    (work / "f").write_bytes(b"x\n")
    sha = commit_all(work, "one", 1_700_000_000)
    if setup == "other-branch":
        git(work, "checkout", "-q", "-b", "topic")
    elif setup == "tag-of-that-name":
        git(work, "tag", "main")
    elif setup == "detached":
        git(work, "checkout", "-q", "--detach", sha)
    elif setup == "dot-git-file":
        shutil.move(str(work / ".git"), str(tmp_path / "elsewhere.git"))
        (work / ".git").write_text(f"gitdir: {tmp_path / 'elsewhere.git'}\n")
    repo_ = F.Repo("r", str(work), True)
    assert repo_._head_branch() == expected
    try:
        said = git_text(work, "symbolic-ref", "-q", "--short", "HEAD").strip()
    except subprocess.CalledProcessError:
        said = None
    if said is not None:
        assert repo_.default_branch() == said
    F.close_git_objects()


@needs_git
def test_commit_metadata_read_through_the_batch_git_is_what_git_show_prints(tmp_path):
    """commit_meta reads a commit object through the batch git and gives
    what `git show -s --format=%H%x00%P%x00%an%x00%aI%x00%B` prints: every
    commit of the fixture's vcs, and odd ones (a merge, offsets either side
    of UTC, a name with trailing spaces, a message without a final newline,
    an empty one); a commit with an encoding header is left to git."""
    F = _load_reference("fs_provider_meta")
    work = tmp_path / "meta"
    make_git_repo(work)

    def commit(message: str, when: str, name: str = "Tess T", *extra: str) -> str:
        git(work, "-c", f"user.name={name}", "-c", "user.email=t@example.org",
            "-c", "commit.gpgsign=false", *extra, "commit", "-q", "--allow-empty",
            "--allow-empty-message", "--cleanup=verbatim", "-m", message, f"--date={when}")
        return git_text(work, "rev-parse", "HEAD").strip()

    odd = [commit("root\n\nbody\n", "@1700000000 +0530"),
           commit("no final newline", "@1700000100 -0800", "Spaced Name  "),
           commit("", "@1700000200 +0000")]
    git(work, "checkout", "-q", "-b", "side", odd[0])
    odd.append(commit("side", "@1700000300 +0100"))
    git(work, "checkout", "-q", "main")
    git(work, "-c", "user.name=M", "-c", "user.email=m@example.org", "merge", "-q",
        "--no-ff", "-m", "a merge", "side")
    odd.append(git_text(work, "rev-parse", "HEAD").strip())
    latin = commit("caf\u00e9", "@1700000400 +0000", "Tess T", "-c", "i18n.commitEncoding=latin-1")
    fmt = "--format=%H%x00%P%x00%an%x00%aI%x00%B"
    with materialize() as m:
        vcs = m.path / C.VCS
        for folder, commits in ((vcs, git_text(vcs, "rev-list", "--all").split()), (work, odd)):
            for sha in commits:
                assert F.commit_meta(str(folder), sha) == git(folder, "show", "-s", fmt, sha), sha
    assert F.commit_meta(str(work), latin) is None
    F.close_git_objects()


@needs_git
def test_commit_edge_cases(tmp_path):
    work = tmp_path / "edge"
    make_git_repo(work)
    (work / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (work / "empty.txt").write_bytes(b"")
    (work / "tail").write_bytes(b"no newline at the end")
    root = commit_all(work, "Root\n\nWith a body.\n", 1_700_000_000)
    (work / "crlf.txt").write_bytes(b"one\r\nTWO\r\n")
    (work / "tail").write_bytes(b"still no newline")
    os.remove(work / "empty.txt")
    os.symlink("crlf.txt", work / "empty.txt")    # a file becomes a symlink: a type change
    for n in range(501):
        (work / f"z-many-{n:03}.txt").write_bytes(b"%d\n" % n)   # sorted after the edge cases
    big = commit_all(work, "Many files", 1_700_000_100)
    (work / "plain").mkdir()
    with spawn(tmp_path) as provider:
        assert check_commit(provider, work, repo("edge"), root)["parents"] == []
        got = check_commit(provider, work, repo("edge"), big)
        assert got["truncated"] is True and len(got["files"]) == 500
        crlf = next(f for f in got["files"] if f["path"] == "crlf.txt")
        assert crlf["patch"].split("\n")[1:] == [" one\r", "-two\r", "+TWO\r"]
        tail = next(f for f in got["files"] if f["path"] == "tail")
        assert "\\ No newline at end of file" in tail["patch"]
        typechange = next(f for f in got["files"] if f["path"] == "empty.txt")
        assert typechange["status"] == "modified" and typechange["patch"].startswith("@@")
        assert provider.request("repo/blame", {"repo": repo("edge"), "path": "empty.txt",
                                               "ref": root}) == {"ranges": []}
        for method, params in (("repo/refs", {}), ("repo/log", {}), ("repo/blame", {"path": "x"}),
                               ("repo/commit", {"sha": "main"})):
            assert kind_of(provider, method, {"repo": repo("plain"), **params}) == "not_found"


# ---------------------------------------------------------------- URLs

def test_clone_url_is_a_path_git_clones(ad, vcs, tmp_path):
    clone_url = ad.request("repo/clone_url", {"repo": repo(C.VCS)})["clone_url"]
    assert clone_url == str(vcs)
    git(tmp_path, "clone", "-q", clone_url, "copy")
    assert git_text(tmp_path / "copy", "rev-parse", "HEAD") == git_text(vcs, "rev-parse", "HEAD")


def test_web_urls_are_escaped_file_uris_with_line_anchors(ad, fx):
    for path in C.ALPHA_ESCAPE_PATHS:
        url = ad.request("repo/web_url", {"repo": repo(C.ALPHA), "path": path, "branch": "",
                                          "line": 3, "end_line": None, "is_file": True})["url"]
        parts = urllib.parse.urlsplit(url)
        assert parts.scheme == "file" and parts.fragment == "L3" and not parts.query
        assert urllib.parse.unquote(parts.path) == str(fx.path / C.ALPHA / path)
    url = ad.request("repo/web_url", {"repo": repo(C.ALPHA), "path": C.ALPHA_UNICODE, "branch": "main",
                                      "line": 2, "end_line": 5})["url"]
    assert url.endswith("#L2-L5")
    url = ad.request("repo/web_url", {"repo": repo(C.ALPHA), "path": "src", "branch": "",
                                      "line": 2, "end_line": None, "is_file": False})["url"]
    assert url == (fx.path / C.ALPHA / "src").as_uri()
    url = ad.request("repo/web_url", {"repo": repo(C.ALPHA), "path": "", "branch": "", "line": None,
                                      "end_line": None, "is_file": False})["url"]
    assert url == (fx.path / C.ALPHA).as_uri()


# ---------------------------------------------------------------- search

@functools.lru_cache(maxsize=2)
def disk_files(folder: Path) -> dict[tuple[str, str], bytes]:
    """(repo id, path) -> bytes of every file of a folder of repositories (read once)."""
    return {(repo(top.name), path): (top / path).read_bytes()
            for top in folder.iterdir() if top.is_dir()
            for path, kind in disk_walk(top).items() if kind == "blob"}


def files_with(fx, term: str) -> set[tuple[str, str]]:
    """(repo, path) of every file on disk whose path, or (text files only) bytes, contain
    `term` case-insensitively: what the adapter documents as a hit."""
    return {(repo_id, path) for (repo_id, path), data in disk_files(fx.path).items()
            if term in path.lower() or (not is_binary(data) and term.encode() in data.lower())}


def search(ad, q: str, limit: int | None = 500) -> dict:
    return ad.request("search/code", {"q": q, "limit": limit})


def test_search_hit_has_line_sha_and_literal_matches(ad, fx):
    hit, = search(ad, C.TERM_LINE)["items"]
    data = (fx.path / C.ALPHA / C.TERM_LINE_PATH).read_bytes()
    assert (hit["repo"], hit["path"], hit["branch"]) == (repo(C.ALPHA), C.TERM_LINE_PATH, "main")
    assert hit["line"] == first_line_with(data, C.TERM_LINE) > 1
    assert hit["sha"] == sha256(data)
    assert all(m.encode() in data for m in hit["matches"]) and hit["matches"]
    upper, = search(ad, C.TERM_LINE.upper())["items"]
    assert upper == hit
    blob = ad.request("repo/blob", {"repo": hit["repo"], "sha": hit["sha"]})
    assert b64(blob["bytes_b64"]) == data


def test_search_path_only_hit(ad):
    hit, = search(ad, C.TERM_PATHONLY)["items"]
    assert hit["path"] == C.TERM_PATHONLY_PATH and hit["matches"] == [] and "line" not in hit
    hits = search(ad, f"path:{C.TERM_PATHONLY}")["items"]
    assert [h["path"] for h in hits] == [C.TERM_PATHONLY_PATH]


def test_search_limit_is_honoured_and_truncated_is_proof(ad, fx):
    many = files_with(fx, C.TERM_MANY_ALPHA)
    full = search(ad, C.TERM_MANY_ALPHA, limit=None)
    assert {(h["repo"], h["path"]) for h in full["items"]} == many and full["truncated"] is False
    cut = search(ad, C.TERM_MANY_ALPHA, limit=3)
    assert len(cut["items"]) == 3 and cut["truncated"] is True
    exact = search(ad, C.TERM_MANY_ALPHA, limit=len(many))
    assert len(exact["items"]) == len(many) and exact["truncated"] is False
    wide = files_with(fx, C.TERM_WIDE)
    assert len(wide) > 500
    page = search(ad, C.TERM_WIDE, limit=500)
    assert len(page["items"]) == 500 and page["truncated"] is True
    everything = search(ad, C.TERM_WIDE, limit=len(wide) + 1)
    assert {(h["repo"], h["path"]) for h in everything["items"]} == wide
    assert everything["truncated"] is False


def test_search_grammar(ad, fx):
    def found(q: str) -> set[tuple[str, str]]:
        return {(h["repo"], h["path"]) for h in search(ad, q, limit=None)["items"]}

    term = "and"                                   # in .rs, .md and other files of several repos
    everywhere = files_with(fx, term)
    rs_files = {h for h in everywhere if h[1].endswith(".rs")}
    assert 0 < len(rs_files) < len(everywhere)
    assert found(f"{term} extension:rs") == rs_files == found(f"{term} language:rust")
    assert found(f"{term} extension:.rs") == rs_files
    assert found(f"{term} -extension:rs") == everywhere - rs_files == found(f"{term} NOT language:Rust")
    assert found(f"{term} path:src/net") == {h for h in everywhere if "src/net" in h[1]}
    alpha = {h for h in everywhere if h[0] == repo(C.ALPHA)}
    assert 0 < len(alpha) < len(everywhere)
    assert found(f"{term} repo:{repo(C.ALPHA)}") == alpha
    assert found(f"{term} -repo:{repo(C.ALPHA)}") == everywhere - alpha
    assert found(f"{term} org:{ORG}") == everywhere and found(f"{term} org:elsewhere") == set()
    assert found(f"{C.TERM_MANY_ALPHA} -{C.TERM_LINE}") == \
        files_with(fx, C.TERM_MANY_ALPHA) - {(repo(C.ALPHA), C.TERM_LINE_PATH)}
    assert found(f"{C.TERM_MANY_ALPHA} NOT {C.TERM_LINE}") == found(f"{C.TERM_MANY_ALPHA} -{C.TERM_LINE}")
    data = (fx.path / C.ALPHA / C.TERM_LINE_PATH).read_bytes()
    line = data.split(b"\n")[first_line_with(data, C.TERM_LINE) - 1].decode()
    phrase = " ".join(line.split()[:3])
    assert len(phrase.split()) == 3 and phrase in line
    assert (repo(C.ALPHA), C.TERM_LINE_PATH) in found(f'"{phrase}"')
    assert found(f'"{phrase}') == found(f'"{phrase}"')      # an unterminated quote closes at the end
    assert found(f'"{phrase} zzzz-nowhere"') == set()         # a phrase is one term
    assert found("") == set() and found(f"-{term}") == set()
    binary = (fx.path / C.ALPHA / C.ALPHA_BINARY).read_bytes()
    marker = re.search(rb"[A-Za-z]{4}", binary).group(0).decode().lower()
    assert (repo(C.ALPHA), C.ALPHA_BINARY) not in found(marker)   # binary content is not searched


def test_search_scoped_to_a_missing_or_failing_repo(ad):
    assert kind_of(ad, "search/code", {"q": f"x repo:{repo('nope')}", "limit": 5}) == "not_found"
    for name, kind in C.FAULT_REPOS.items():
        assert kind_of(ad, "search/code", {"q": f"x repo:{repo(name)}", "limit": 5}) == kind


def test_streamed_search_batches_per_repo_then_a_metadata_only_reply(ad, fx):
    q = "e"
    one_shot = search(ad, q, limit=None)
    mark = ad.transcript.mark()
    call = ad.call("search/code", {"q": q, "limit": None, "partial": True})
    final = call.result()
    assert final == {"items": [], "truncated": False}
    batches = call.partials
    assert all(batches) and len(batches) >= 3
    repos_per_batch = [{h["repo"] for h in batch} for batch in batches]
    assert all(len(r) == 1 for r in repos_per_batch)
    assert len({next(iter(r)) for r in repos_per_batch}) == len(batches)
    streamed = [h for batch in batches for h in batch]
    assert {(h["repo"], h["path"]) for h in streamed} == files_with(fx, q)
    assert streamed == one_shot["items"]
    frames = [e for e in inbound(ad, mark) if e.kind in ("partial", "reply")]
    assert [e.kind for e in frames] == ["partial"] * len(batches) + ["reply"]
    assert all(e.id == call.id for e in frames)
    limited = ad.call("search/code", {"q": C.TERM_WIDE, "limit": 500, "partial": True})
    assert limited.result() == {"items": [], "truncated": True}
    assert sum(len(b) for b in limited.partials) == 500


# ---------------------------------------------------------------- streaming and cancel

def test_cancel_during_a_stream_still_ends_with_a_normal_reply(ad):
    first = threading.Event()
    mark = ad.transcript.mark()
    call = ad.call("search/code", {"q": "e", "limit": None, "partial": True},
                   on_partial=lambda items: first.set())
    assert first.wait(WAIT_S)
    ad.cancel(call)
    result = call.result()
    assert result["items"] == [] and isinstance(result["truncated"], bool)
    frames = [e for e in inbound(ad, mark) if e.kind in ("partial", "reply")]
    assert frames[-1].kind == "reply" and all(e.kind == "partial" for e in frames[:-1])
    ad.cancel(call)                                 # a cancel for a finished id is ignored
    ad.notify("$/cancelRequest", {"id": 987654})   # and so is one for an id never issued
    assert ad.request("org/repos", {"org": ORG})["repos"]


def test_cancel_cuts_a_running_scan(fx):
    first = threading.Event()
    env = adapter_env(FS_TEST_GATE_REPO=C.BETA)    # the scan stalls at beta until a cancel is read
    with spawn(fx.path, env=env, wrapped=True) as provider:
        call = provider.call("search/code", {"q": "e", "limit": None, "partial": True},
                             on_partial=lambda items: first.set())
        assert first.wait(WAIT_S)
        provider.cancel(call)
        assert call.result() == {"items": [], "truncated": True}
        streamed = [h for batch in call.partials for h in batch]
        assert {h["repo"] for h in streamed} <= {repo(C.ALPHA), repo(C.BETA)}
        assert len(streamed) < len(files_with(fx, "e"))
        assert provider.request("org/repos", {"org": ORG})["repos"]


# ---------------------------------------------------------------- concurrency

def test_replies_come_out_of_order(fx):
    with spawn(fx.path, wrapped=True) as provider:
        held = provider.call("test/hold", {})
        quick = provider.call("org/repos", {"org": ORG})
        assert quick.result()["repos"] and not held.done   # answered while an older request waits
        provider.cancel(held)
        assert held.result() == {"released": True}
        replies = [e.id for e in provider.transcript.entries() if e.kind == "reply"]
        assert replies.index(quick.id) < replies.index(held.id)


def test_many_requests_in_flight_are_routed_and_lines_never_interleave(ad, fx):
    mark = ad.transcript.mark()
    files = sorted(p for p, kind in disk_walk(fx.path / C.ALPHA).items()
                   if kind == "blob" and p != C.ALPHA_BIG)
    calls = [(path, ad.call("repo/blob_at", {"repo": repo(C.ALPHA), "path": path, "ref": None}))
             for path in files]
    trees = [ad.call("repo/tree", {"repo": repo(C.WIDE), "ref": None}) for _ in range(6)]
    searches = [ad.call("search/code", {"q": C.TERM_WIDE, "limit": None, "partial": True})
                for _ in range(3)]
    for path, call in calls:
        assert b64(call.result()["bytes_b64"]) == (fx.path / C.ALPHA / path).read_bytes(), path
    sizes = {len(t.result()["entries"]) for t in trees}
    assert sizes == {len(disk_walk(fx.path / C.WIDE))}
    for s in searches:
        assert s.result() == {"items": [], "truncated": False}
        assert sum(len(b) for b in s.partials) == len(files_with(fx, C.TERM_WIDE))
    bad = [e for e in ad.transcript.since(mark)
           if e.kind == "violation" or e.outcome not in (None, "delivered")]
    assert bad == []


# ---------------------------------------------------------------- errors

def test_fault_repos_answer_their_error_on_every_method(ad, fx):
    faults = json.loads((fx.path / "FAULTS.json").read_bytes())
    for name, spec in faults.items():
        for method, params in (("repo/tree", {"ref": None}), ("repo/blob", {"sha": "0" * 64}),
                               ("repo/blob_at", {"path": "x", "ref": None}), ("repo/refs", {}),
                               ("repo/log", {}), ("repo/blame", {"path": "x"}),
                               ("repo/commit", {"sha": "HEAD"}), ("repo/clone_url", {}),
                               ("repo/web_url", {"path": "", "branch": ""})):
            err = error_of(ad, method, {"repo": repo(name), **params})
            assert err.raw["data"]["kind"] == spec["kind"], (name, method)
            assert err.raw["data"].get("retry_after_s") == spec.get("retry_after_s")
    assert repo("denied") not in {i.get("full_name") for i in
                                  ad.request("search/repos", {"query": ""})["items"]}


def test_error_kinds_and_shapes(ad):
    for method, params in (("repo/tree", {"ref": None}), ("repo/blob", {"sha": "ab" * 32}),
                           ("repo/blob_at", {"path": "a", "ref": None}), ("repo/refs", {}),
                           ("repo/log", {}), ("repo/blame", {"path": "a"}),
                           ("repo/commit", {"sha": "HEAD"}), ("repo/clone_url", {}),
                           ("repo/web_url", {"path": "", "branch": ""})):
        assert kind_of(ad, method, {"repo": repo("no-such-repo"), **params}) == "not_found", method
        assert kind_of(ad, method, {"repo": "local/nested/too/deep", **params}) == "not_found"
    assert kind_of(ad, "repo/blob", {"repo": repo(C.ALPHA), "sha": "ab" * 32}) == "not_found"
    unknown = error_of(ad, "repo/frobnicate", {})
    assert unknown.raw["code"] == -32601 and unknown.raw["data"]["kind"] == "not_found"
    missing = error_of(ad, "repo/tree", None)
    assert missing.raw["data"]["kind"] == "invalid_params" and missing.raw["code"] == 400
    assert kind_of(ad, "repo/tree", {"repo": 7}) == "invalid_params"
    assert ad.alive


# ---------------------------------------------------------------- reader tolerance

def test_null_params_are_absent_params(ad, fx):
    assert ad.request("initialize", None)["protocol"] == 1
    assert ad.request("search/repos", None)["items"]
    assert ad.request("search/code", None) == {"items": [], "truncated": False}
    assert ad.request("org/repos", None)["repos"]
    assert ad.request("org/url", None)["url"].startswith("file://")
    a_file = min(p for p, kind in disk_walk(fx.path / C.BETA).items() if kind == "blob")
    url = ad.request("repo/web_url", {"repo": repo(C.BETA), "path": a_file, "branch": "",
                                      "line": None, "end_line": None, "is_file": True})["url"]
    assert "#" not in url
    if fx.vcs_built:
        log = ad.request("repo/log", {"repo": repo(C.VCS), "path": None, "ref": None, "limit": None})
        assert len(log["items"]) == len(git_log(fx.path / C.VCS, "HEAD"))


def test_unknown_members_are_ignored(ad, fx):
    plain = ad.request("repo/tree", {"repo": repo(C.BETA), "ref": None})
    extra = ad.request("repo/tree", {"repo": repo(C.BETA), "ref": None, "bogus": {"x": [1, None]},
                                     "partial": "yes"})
    assert extra == plain
    line = json.dumps({"jsonrpc": "2.0", "id": 900_001, "method": "repo/tree",
                       "params": {"repo": repo(C.BETA), "ref": None}, "trace": {"span": 1},
                       "meta": [1, 2]}).encode() + b"\n"
    reply = raw_exchange(ad, line, 900_001)
    assert reply is not None and reply["result"] == plain


def test_notifications_and_junk_are_never_answered(ad):
    mark = ad.transcript.mark()
    ad.notify("repo/tree", {"repo": repo(C.ALPHA), "ref": None})
    ad.notify("$/somethingNew", {"x": 1})
    ad.notify("$/cancelRequest", {"id": 424242})
    for junk in (b"\n", b"   \n", b"not json\n", b"[1, 2]\n", b"42\n", b'{"jsonrpc":"2.0"}{"a":1}\n',
                 b"\xff\xfe\n"):
        ad.send_raw(junk)
    assert ad.request("org/repos", {"org": ORG})["repos"]
    replies = [e for e in inbound(ad, mark)]
    assert [e.kind for e in replies] == ["reply"]
    assert ad.alive


# ---------------------------------------------------------------- lifecycle

def test_ids_survive_a_respawn(ad):
    before = ad.request("repo/tree", {"repo": repo(C.ALPHA), "ref": None})
    init = ad.respawn()
    assert init == ad.init_results[0]
    assert ad.request("repo/tree", {"repo": repo(C.ALPHA), "ref": None}) == before


def test_stdin_eof_finishes_the_work_in_hand_then_exits_cleanly(fx):
    provider = spawn(fx.path)
    try:
        call = provider.call("repo/tree", {"repo": repo(C.WIDE), "ref": None})
        provider.child.close_stdin()
        assert len(call.result()["entries"]) == len(disk_walk(fx.path / C.WIDE))
        assert provider.child.wait(WAIT_S) == 0
    finally:
        provider.close()


# ---------------------------------------------------------------- the batch git

@needs_git
def test_batch_git_answers_what_it_cannot_see_through_a_git_of_its_own(tmp_path):
    """The reference reads objects through one long-lived `git cat-file
    --batch` per repository (vendor/fs_provider.py GitObjects). A commit made
    after it started, asked by a short id (which that git may not list), a
    ref it has no answer for and a name git must never see are answered as a
    git started for the question would; its batch git ends with it."""
    import psutil

    work = tmp_path / "later"
    make_git_repo(work)
    (work / "a.txt").write_bytes(b"one\n")
    first = commit_all(work, "First", 1_700_000_000)
    with spawn(tmp_path) as provider:
        assert provider.request("repo/commit", {"repo": repo("later"), "sha": "main"})["sha"] == first
        batch = [p for p in psutil.Process(provider.child.pid).children(recursive=True)
                 if "cat-file" in p.cmdline()]
        assert len(batch) == 1, [p.cmdline() for p in batch]
        (work / "a.txt").write_bytes(b"two\n")
        second = commit_all(work, "Second", 1_700_000_100)
        for name in (second[:12], second, "main", "HEAD~1"):
            want = first if name == "HEAD~1" else second
            assert provider.request("repo/commit", {"repo": repo("later"), "sha": name})["sha"] == want
        for name in ("main\nHEAD", "no-such-branch", "0" * 40, "-p"):
            assert kind_of(provider, "repo/commit", {"repo": repo("later"), "sha": name}) == "not_found"
        assert batch[0].is_running() and batch[0].status() != psutil.STATUS_ZOMBIE
        provider.child.close_stdin()
        assert provider.child.wait(WAIT_S) == 0
    with pytest.raises(psutil.NoSuchProcess):
        batch[0].status()          # waited for by the adapter before it exited, not left running
