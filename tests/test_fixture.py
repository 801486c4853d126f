"""Self-tests of the canonical fixture: manifest, builders, catalog, materialization.

Every catalog value is proved true of the fixture here (from the bytes and
from git itself), so a case that relies on a name relies on a checked fact.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fixture import (FIXTURE_ROOT, GIT_MISSING_REASON, FixtureError, git_available,
                     materialize, verify_manifest)
from fixture import build_vcs, build_wide
from fixture import catalog as cat

# `fixture.materialize` is the re-exported function; the module is reached this way.
mat = importlib.import_module("fixture.materialize")

REPO_ROOT = FIXTURE_ROOT.parent
needs_git = pytest.mark.skipif(not git_available(), reason=GIT_MISSING_REASON)
TERMS = (cat.TERM_LINE, cat.TERM_PATHONLY, cat.TERM_MANY_ALPHA, cat.TERM_WIDE,
         cat.TERM_SEVERAL)


@pytest.fixture(scope="module")
def copy():
    with materialize() as m:
        yield m


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True,
                          text=True).stdout


def files_of(root: Path) -> dict[str, bytes]:
    """Every file under root (skipping .git), by root-relative POSIX path."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            path = Path(dirpath) / name
            out[path.relative_to(root).as_posix()] = path.read_bytes()
    return out


def snapshot(root: Path) -> dict[str, tuple]:
    """Content hash, mode and mtime of every file and dir (not __pycache__)."""
    snap = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__"]
        for name in dirnames:
            snap[os.path.relpath(os.path.join(dirpath, name), root) + "/"] = ()
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            with open(path, "rb") as fh:
                digest = hashlib.sha256(fh.read()).hexdigest()
            snap[os.path.relpath(path, root)] = (digest, st.st_mode, st.st_mtime_ns)
    return snap


def fixture_copy(tmp_path: Path) -> Path:
    dest = tmp_path / "fixture"
    shutil.copytree(FIXTURE_ROOT, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


# -- manifest ----------------------------------------------------------------

def test_manifest_matches_the_fixture():
    verify_manifest()
    assert (FIXTURE_ROOT / mat.MANIFEST).read_text(encoding="utf-8") == mat.manifest_text(), \
        "MANIFEST.sha256 is not the sorted, complete manifest of the fixture"


@pytest.mark.parametrize("edit", ["flip-byte", "delete", "add", "vcs-input"])
def test_manifest_names_the_edited_file(tmp_path, edit):
    root = fixture_copy(tmp_path)
    verify_manifest(root)   # the untouched copy verifies
    rel = {"flip-byte": f"{cat.ALPHA}/{cat.TERM_LINE_PATH}", "delete": f"{cat.BETA}/README.md",
           "add": f"{cat.ALPHA}/src/stray.rs", "vcs-input": "vcs-inputs/blobs/lib-2.rs"}[edit]
    target = root / rel
    if edit == "delete":
        target.unlink()
    elif edit == "add":
        target.write_text("fn stray() {}\n")
    else:
        data = bytearray(target.read_bytes())
        data[len(data) // 2] ^= 0x01
        target.write_bytes(bytes(data))
    with pytest.raises(FixtureError, match=re.escape(rel)):
        verify_manifest(root)


def test_manifest_rejects_a_committed_generated_file(tmp_path):
    root = fixture_copy(tmp_path)
    (root / cat.ALPHA / cat.ALPHA_BIG).write_bytes(mat.big_bin_bytes())
    with pytest.raises(FixtureError, match="generated at materialization"):
        verify_manifest(root)


def test_materialize_refuses_an_edited_fixture_and_leaves_nothing(tmp_path):
    root = fixture_copy(tmp_path)
    (root / "FAULTS.json").write_text("{}\n")
    parent = tmp_path / "out"
    parent.mkdir()
    with pytest.raises(FixtureError, match="FAULTS.json"):
        materialize(parent, root=root)
    assert list(parent.iterdir()) == []


def test_maintainer_command_verifies():
    proc = subprocess.run([sys.executable, "-m", "fixture"], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


# -- the vcs builder ---------------------------------------------------------

@needs_git
def test_vcs_build_is_deterministic_and_matches_the_pins(tmp_path):
    first = build_vcs.build(tmp_path / "one")
    second = build_vcs.build(tmp_path / "two")
    assert first.pins() == second.pins()
    assert first.pins() == build_vcs.load_pins(), \
        "commit ids differ from fixture/vcs-inputs/pinned.json (see FIXTURES.md, 'Pins')"
    for ref, oid in first.refs.items():
        assert git(first.path, "rev-parse", ref).strip() == oid


def test_pins_are_written_in_fixtures_md():
    text = (REPO_ROOT / "FIXTURES.md").read_text(encoding="utf-8")
    pins = build_vcs.load_pins()
    for label, oid in {**pins["commits"], **pins["refs"]}.items():
        assert oid in text, f"FIXTURES.md lacks the pin of {label} ({oid})"


def test_every_vcs_blob_is_used():
    steps = build_vcs.load_steps()["steps"]
    used = {c["blob"] for s in steps for c in s.get("changes", []) if "blob" in c}
    present = {p.name for p in (build_vcs.INPUTS / build_vcs.BLOBS_DIR).iterdir()}
    assert used == present


@pytest.fixture(scope="module")
def vcs(copy):
    if not copy.vcs_built:
        pytest.skip(copy.vcs_skip_reason)
    return copy.path / cat.VCS


def show(repo: Path, ref: str, path: str) -> bytes:
    return subprocess.run(["git", "show", f"{ref}:{path}"], cwd=repo, check=True,
                          capture_output=True).stdout


def test_vcs_ends_clean_on_main_with_both_branches(vcs):
    assert git(vcs, "symbolic-ref", "HEAD").strip() == f"refs/heads/{cat.VCS_DEFAULT_BRANCH}"
    assert git(vcs, "status", "--porcelain", "--untracked-files=all") == ""
    branches = set(git(vcs, "for-each-ref", "--format=%(refname:short)", "refs/heads").split())
    assert branches == {cat.VCS_DEFAULT_BRANCH, cat.VCS_FEATURE_BRANCH}


def test_vcs_tags_one_light_one_annotated(vcs):
    assert git(vcs, "cat-file", "-t", f"refs/tags/{cat.VCS_LIGHT_TAG}").strip() == "commit"
    assert git(vcs, "cat-file", "-t", f"refs/tags/{cat.VCS_ANNOTATED_TAG}").strip() == "tag"
    assert git(vcs, "cat-file", "-t", f"{cat.VCS_ANNOTATED_TAG}^{{commit}}").strip() == "commit"


def test_vcs_branches_diverge_both_ways_at_the_fork(vcs):
    main, feature = cat.VCS_DEFAULT_BRANCH, cat.VCS_FEATURE_BRANCH
    fork = git(vcs, "merge-base", main, feature).strip()
    # main advanced past the fork; feature kept the fork's bytes
    assert show(vcs, main, cat.VCS_MAIN_ADVANCED) != show(vcs, feature, cat.VCS_MAIN_ADVANCED)
    assert show(vcs, feature, cat.VCS_MAIN_ADVANCED) == show(vcs, fork, cat.VCS_MAIN_ADVANCED)
    # feature rewrote a file at the fork; main kept the fork's bytes
    assert show(vcs, main, cat.VCS_FEATURE_REWRITTEN) != show(vcs, feature, cat.VCS_FEATURE_REWRITTEN)
    assert show(vcs, main, cat.VCS_FEATURE_REWRITTEN) == show(vcs, fork, cat.VCS_FEATURE_REWRITTEN)
    assert show(vcs, main, cat.VCS_SAME_BOTH) == show(vcs, feature, cat.VCS_SAME_BOTH)


def test_vcs_file_touched_by_exactly_three_commits_on_main(vcs):
    log = git(vcs, "rev-list", cat.VCS_DEFAULT_BRANCH, "--", cat.VCS_THREE_COMMITS).split()
    assert len(log) == 3


def test_vcs_blame_has_two_authors_in_separate_ranges(vcs):
    porcelain = git(vcs, "blame", "--line-porcelain", cat.VCS_DEFAULT_BRANCH, "--",
                    cat.VCS_BLAME_TWO_AUTHORS)
    authors = [line[len("author "):] for line in porcelain.splitlines()
               if line.startswith("author ")]
    runs = [a for i, a in enumerate(authors) if i == 0 or a != authors[i - 1]]
    assert len(set(authors)) == 2 and len(runs) >= 3 and runs[0] == runs[-1], runs


def test_vcs_has_what_repo_commit_needs(vcs):
    main = cat.VCS_DEFAULT_BRANCH
    assert len(git(vcs, "rev-list", "--max-parents=0", main).split()) == 1
    merges = git(vcs, "rev-list", "--merges", main).split()
    assert len(merges) == 1
    merge = merges[0]
    first, second = git(vcs, "rev-parse", f"{merge}^1", f"{merge}^2").split()
    assert git(vcs, "diff", "--name-only", first, merge) != git(vcs, "diff", "--name-only", second, merge), \
        "the merge's first-parent diff must differ from its second-parent diff"
    raw = git(vcs, "log", "--first-parent", "-M", "--raw", "--numstat", "--format=@%H", main)
    old, new = cat.VCS_RENAMED
    assert re.search(rf"^:100644 100644 (\w+) \1 R100\t{re.escape(old)}\t{re.escape(new)}$", raw, re.M)
    assert re.search(rf"^:100644 000000 \w+ 0+ D\t{re.escape(cat.VCS_DELETED)}$", raw, re.M)
    modified = git(vcs, "log", "--first-parent", "--diff-filter=M", "--format=%H", main, "--",
                   cat.VCS_BINARY_CHANGED).split()
    assert len(modified) == 1 and git(vcs, "show", "--numstat", "--format=", modified[0], "--",
                                      cat.VCS_BINARY_CHANGED).startswith("-\t-\t"), "no binary change"
    assert re.search(rf"^:100644 100755 (\w+) \1 M\t{re.escape(cat.VCS_MODE_CHANGED)}$", raw, re.M), \
        "no mode-only change"


def test_vcs_has_the_url_hostile_names_at_both_branches(vcs):
    for branch in (cat.VCS_DEFAULT_BRANCH, cat.VCS_FEATURE_BRANCH):
        names = set(git(vcs, "ls-tree", "-r", "-z", "--name-only", branch).split("\0"))
        assert set(cat.VCS_ESCAPE_PATHS) <= names, branch
    contents = {show(vcs, cat.VCS_DEFAULT_BRANCH, p) for p in cat.VCS_ESCAPE_PATHS}
    assert len(contents) == len(cat.VCS_ESCAPE_PATHS)


def test_vcs_tip_has_the_line_end_cases_and_two_dates(vcs):
    main = cat.VCS_DEFAULT_BRANCH
    tip = git(vcs, "log", "-1", "--first-parent", "--format=%H", main, "--",
              cat.VCS_NO_FINAL_NEWLINE).strip()
    assert tip == git(vcs, "rev-parse", main).strip(), "the marker's change is main's tip"
    # a line that had its \n loses it: the patch carries `\ No newline at end of file`
    assert show(vcs, f"{tip}^", cat.VCS_NO_FINAL_NEWLINE).endswith(b"\n")
    assert not show(vcs, tip, cat.VCS_NO_FINAL_NEWLINE).endswith(b"\n")
    assert "\n\\ No newline at end of file" in git(vcs, "show", "--format=", tip, "--",
                                                    cat.VCS_NO_FINAL_NEWLINE)
    # every line of the CRLF file ends in \r\n, and git keeps the \r in the blob
    crlf = show(vcs, tip, cat.VCS_CRLF)
    assert crlf.endswith(b"\r\n") and crlf.count(b"\n") == crlf.count(b"\r\n") > 1
    assert git(vcs, "log", "-1", "--format=%H", main, "--", cat.VCS_CRLF).strip() == tip
    # its committer date is another instant (and offset) than its author date
    author, committer = git(vcs, "log", "-1", "--format=%at %ai%n%ct %ci", tip).splitlines()
    assert author.split()[0] != committer.split()[0] and author[-5:] != committer[-5:]
    others = git(vcs, "log", "--all", "--format=%at %ct", f"^{tip}").splitlines()
    assert all(len(set(line.split())) == 1 for line in others), "one commit whose dates differ"


def test_only_the_tip_has_the_line_end_cases(vcs):
    """The two files above are the fixture's only text lacking a final \n or holding a \r:
    what a case learns about line ends it learns from them."""
    for ref in git(vcs, "rev-list", "--all").split():
        for path in git(vcs, "ls-tree", "-r", "-z", "--name-only", ref).split("\0"):
            if not path or path == cat.VCS_BINARY_CHANGED:
                continue
            data = show(vcs, ref, path)
            if not data:
                continue
            assert data.endswith(b"\n") or path == cat.VCS_NO_FINAL_NEWLINE, (ref, path)
            assert b"\r" not in data or path == cat.VCS_CRLF, (ref, path)


def test_vcs_dates_carry_non_utc_offsets(vcs):
    offsets = {line.split()[-1] for line in git(vcs, "log", "--all", "--format=%ai").splitlines()}
    assert any(o.startswith("+") and o != "+0000" for o in offsets), offsets
    assert any(o.startswith("-") for o in offsets), offsets


# -- wide --------------------------------------------------------------------

def test_wide_is_wide(copy):
    wide = copy.path / cat.WIDE
    assert len(os.listdir(wide / cat.WIDE_BIG_DIR)) > 1000
    # a directory that directly holds a file: one repository by the host's grammar too
    assert (wide / cat.WIDE_TOP_FILE).is_file()
    files = files_of(wide)
    entries = len(files) + sum(len(d) for _, d, _ in os.walk(wide))
    assert entries >= 3000
    # more than a backend page (100) and than the host's render budget (500)
    assert sum(cat.TERM_WIDE.encode() in data for data in files.values()) > 500
    listing = "".join(f"{hashlib.sha256(files[p]).hexdigest()}  {p}\n" for p in sorted(files))
    assert hashlib.sha256(listing.encode()).hexdigest() == build_wide.digest()


# -- alpha, beta, terms ------------------------------------------------------

@pytest.fixture(scope="module")
def everything(copy) -> dict[str, bytes]:
    """All content a search could see: every repo of the copy plus all vcs history inputs."""
    found = {f"{repo}/{rel}": data for repo in (cat.ALPHA, cat.BETA, cat.WIDE, cat.VCS)
             for rel, data in files_of(copy.path / repo).items()}
    found.update({f"vcs-inputs/{rel}": data
                  for rel, data in files_of(FIXTURE_ROOT / "vcs-inputs").items()})
    return found


def holders(everything: dict[str, bytes], term: str) -> tuple[set[str], set[str]]:
    """(paths whose content contains term, paths whose name contains it), case-insensitively."""
    in_content = {p for p, data in everything.items() if term.encode() in data.lower()}
    in_path = {p for p in everything if term in p.lower()}
    return in_content, in_path


def test_terms_are_single_lower_case_words():
    for term in TERMS:
        assert re.fullmatch(r"[a-z]+", term), term
    assert len(set(TERMS)) == len(TERMS)


def test_term_line_is_in_one_file_once_not_on_line_one(everything):
    content, paths = holders(everything, cat.TERM_LINE)
    assert content == {f"{cat.ALPHA}/{cat.TERM_LINE_PATH}"} and not paths
    lines = everything[f"{cat.ALPHA}/{cat.TERM_LINE_PATH}"].split(b"\n")
    hits = [n for n, line in enumerate(lines, 1) if cat.TERM_LINE.encode() in line.lower()]
    assert len(hits) == 1 and hits[0] > 1, hits


def test_term_pathonly_is_in_one_name_and_no_content(everything):
    content, paths = holders(everything, cat.TERM_PATHONLY)
    assert not content and paths == {f"{cat.ALPHA}/{cat.TERM_PATHONLY_PATH}"}


def test_term_many_alpha_is_in_many_alpha_files_only(everything):
    content, paths = holders(everything, cat.TERM_MANY_ALPHA)
    assert len(content) >= 6 and all(p.startswith(f"{cat.ALPHA}/") for p in content)
    assert not paths


def test_term_wide_is_in_wide_only(everything):
    content, paths = holders(everything, cat.TERM_WIDE)
    assert len(content) == 600 and all(p.startswith(f"{cat.WIDE}/") for p in content)   # catalog
    assert not paths


def test_term_several_is_in_one_alpha_file_and_one_beta_file_only(everything):
    """A stream of one batch per repository carries it in at least two batches (FC-043)."""
    content, paths = holders(everything, cat.TERM_SEVERAL)
    assert content == {f"{repo}/{path}" for repo, path in cat.TERM_SEVERAL_PATHS}
    assert {repo for repo, _ in cat.TERM_SEVERAL_PATHS} == {cat.ALPHA, cat.BETA}
    assert not paths


def test_alpha_has_the_special_files(copy):
    alpha = copy.path / cat.ALPHA
    big = (alpha / cat.ALPHA_BIG).read_bytes()
    assert 2**20 < len(big) < 2 * 2**20 and big == mat.big_bin_bytes()
    binary = (alpha / cat.ALPHA_BINARY).read_bytes()
    assert b"\0" in binary and len(binary) < 4096
    assert (alpha / cat.ALPHA_EMPTY).stat().st_size == 0
    assert not cat.ALPHA_UNICODE.isascii() and (alpha / cat.ALPHA_UNICODE).is_file()
    a, b = cat.ALPHA_TWINS
    assert a != b and (alpha / a).read_bytes() == (alpha / b).read_bytes()
    for path in cat.ALPHA_ESCAPE_PATHS:
        assert (alpha / path).is_file(), path
    for char in " #?%+":
        assert any(char in path for path in cat.ALPHA_ESCAPE_PATHS), repr(char)
    assert any(p.startswith("src/") and p.count("/") >= 2 for p in files_of(alpha)), \
        "src/ has no nested dir"
    # every other file's bytes are unique: the twins are the only sharing pair
    counts = Counter(files_of(alpha).values())
    assert [n for n in counts.values() if n > 1] == [2]


def test_beta_holds_notes_only(copy):
    names = files_of(copy.path / cat.BETA)
    assert len(names) >= 2 and all(n.endswith(".md") for n in names)


def test_faults_json_is_the_contract(copy):
    faults = json.loads((copy.path / "FAULTS.json").read_text(encoding="utf-8"))
    assert faults == {"denied": {"kind": "auth"},
                      "throttled": {"kind": "rate_limited", "retry_after_s": 37},
                      "broken": {"kind": "provider"}}
    assert {name: f["kind"] for name, f in faults.items()} == cat.FAULT_REPOS


# -- materialization ---------------------------------------------------------

def test_materialized_copy_holds_only_the_contract_layout(copy):
    expected = {cat.ALPHA, cat.BETA, cat.WIDE, "FAULTS.json"} | ({cat.VCS} if copy.vcs_built else set())
    assert set(os.listdir(copy.path)) == expected
    assert copy.path.name.startswith("forge-fixture-")


def test_without_git_the_vcs_repo_is_skipped_with_the_reason(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert not git_available()
    with materialize(tmp_path) as m:
        assert (m.vcs_built, m.vcs_skip_reason) == (False, GIT_MISSING_REASON)
        assert not (m.path / cat.VCS).exists()
        assert (m.path / cat.ALPHA / cat.ALPHA_BIG).is_file()


def test_build_vcs_false_skips_with_a_reason(tmp_path):
    with materialize(tmp_path, build_vcs=False) as m:
        assert not m.vcs_built and m.vcs_skip_reason
        assert not (m.path / cat.VCS).exists()


def test_materialize_and_cleanup_never_write_the_repo_fixture(tmp_path):
    before = snapshot(FIXTURE_ROOT)
    with materialize(tmp_path) as m:
        for rel in files_of(m.path / cat.ALPHA):
            target = m.path / cat.ALPHA / rel
            assert target.stat().st_nlink == 1, f"{rel} is a hard link"
            assert not target.is_symlink()
            with open(target, "ab") as fh:   # what FC-011 does to its copy
                fh.write(b"mutated\n")
        locked = m.path / cat.BETA / "notes"  # cleanup must cope with read-only trees
        os.chmod(locked / "ideas.md", 0o444)
        os.chmod(locked, 0o555)
    assert not m.path.exists() and list(tmp_path.iterdir()) == []
    m.cleanup()   # idempotent
    assert snapshot(FIXTURE_ROOT) == before


def test_fixture_package_is_stdlib_only():
    allowed = set(sys.stdlib_module_names) | {"fixture", "__future__"}
    for source in FIXTURE_ROOT.glob("*.py"):
        tree = ast.parse(source.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed, f"{source.name} imports {name}"


# -- the prepared-vcs cache (fixture/cache.py) ---------------------------------

def refs_of(repo: Path) -> dict[str, str]:
    lines = git(repo, "for-each-ref", "--format=%(objectname) %(refname)").splitlines()
    return {ref: oid for oid, ref in (line.split(" ", 1) for line in lines)}


def tree_state(root: Path) -> dict[str, tuple]:
    """Bytes and mode of every file, mode of every dir. Left out: git's index
    (it holds the files' stat data) and reflogs (branch and checkout steps
    stamp them with the time of the build), which differ between two builds."""
    state = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if rel == ".git/index" or rel.startswith(".git/logs"):
                continue
            st = os.lstat(path)
            data = path.read_bytes() if name in filenames else b""
            state[rel] = (hashlib.sha256(data).hexdigest(), oct(st.st_mode))
    return state


@pytest.fixture
def vcs_cache(tmp_path, monkeypatch):
    """An empty private cache dir, and a count of the vcs builds made."""
    from fixture import cache
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV, str(where))
    builds = []
    real = build_vcs.build

    def counting(dest, **kw):
        builds.append(dest)
        return real(dest, **kw)

    monkeypatch.setattr(build_vcs, "build", counting)
    return where / "fixture", builds


def entries_of(cache_root: Path) -> list[str]:
    return sorted(p.name for p in cache_root.iterdir())


@needs_git
def test_cache_hit_gives_a_private_copy_equal_to_a_build(tmp_path, vcs_cache):
    from fixture import cache
    cache_root, builds = vcs_cache
    assert cache.prepare_vcs(tmp_path / "one", build_vcs.INPUTS) == "built"
    assert cache.prepare_vcs(tmp_path / "two", build_vcs.INPUTS) == "hit"
    assert len(builds) == 1, "a hit replays nothing"
    (entry,) = entries_of(cache_root)
    direct = tmp_path / "direct"
    builds.clear()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(cache.ENV, "off")
        assert cache.prepare_vcs(direct, build_vcs.INPUTS) == "uncached"
    assert tree_state(tmp_path / "two") == tree_state(direct)
    assert refs_of(tmp_path / "two") == build_vcs.load_pins()["refs"]
    assert git(tmp_path / "two", "status", "--porcelain", "--untracked-files=all") == ""
    cached = cache_root / entry / cache.TREE
    for dirpath, _dirnames, filenames in os.walk(tmp_path / "two"):
        for name in filenames:
            path = Path(dirpath) / name
            st = os.lstat(path)
            assert st.st_nlink == 1 and not path.is_symlink(), f"{path} is linked"
            twin = cached / path.relative_to(tmp_path / "two")
            if twin.exists():
                assert not os.path.samefile(path, twin)
    # writing to a copy never reaches the cache
    target = tmp_path / "two" / cat.VCS_THREE_COMMITS
    target.write_bytes(b"changed by an adapter\n")
    assert cache.prepare_vcs(tmp_path / "three", build_vcs.INPUTS) == "hit"
    assert (tmp_path / "three" / cat.VCS_THREE_COMMITS).read_bytes() != b"changed by an adapter\n"


@needs_git
def test_materialize_uses_the_cache(tmp_path, vcs_cache):
    cache_root, builds = vcs_cache
    with materialize(tmp_path) as first, materialize(tmp_path) as second:
        assert first.vcs_built and second.vcs_built
        assert refs_of(first.path / cat.VCS) == refs_of(second.path / cat.VCS)
    assert len(builds) == 1
    assert [n for n in entries_of(cache_root) if n.startswith("vcs-")] and \
        not [n for n in entries_of(cache_root) if n.startswith(".")]


@needs_git
def test_cache_changed_input_is_a_rebuild(tmp_path, vcs_cache):
    from fixture import cache
    cache_root, builds = vcs_cache
    inputs = tmp_path / "inputs"
    shutil.copytree(build_vcs.INPUTS, inputs)
    assert cache.prepare_vcs(tmp_path / "one", inputs) == "built"
    steps = json.loads((inputs / build_vcs.STEPS_FILE).read_text(encoding="utf-8"))
    steps["steps"][0]["message"] += "\nedited"
    (inputs / build_vcs.STEPS_FILE).write_text(json.dumps(steps), encoding="utf-8")
    assert cache.prepare_vcs(tmp_path / "two", inputs) == "built"
    assert len(builds) == 2 and len(entries_of(cache_root)) == 2
    assert refs_of(tmp_path / "one") != refs_of(tmp_path / "two"), "the edit changes every id"
    git_path = shutil.which("git")
    assert cache.vcs_key(inputs, git_path) != cache.vcs_key(build_vcs.INPUTS, git_path)


@needs_git
@pytest.mark.parametrize("damage", ["flip-byte", "delete-file", "garbage-listing",
                                    "listing-of-another-key", "listing-escapes"])
def test_cache_corrupted_entry_is_detected_and_rebuilt(tmp_path, vcs_cache, damage):
    from fixture import cache
    cache_root, builds = vcs_cache
    assert cache.prepare_vcs(tmp_path / "one", build_vcs.INPUTS) == "built"
    (name,) = entries_of(cache_root)
    entry = cache_root / name
    listing = json.loads((entry / cache.LISTING).read_text(encoding="utf-8"))
    victim = entry / cache.TREE / cat.VCS_BLAME_TWO_AUTHORS
    if damage == "flip-byte":
        data = bytearray(victim.read_bytes())
        data[0] ^= 0x01
        victim.write_bytes(bytes(data))
    elif damage == "delete-file":
        objects = [p for p in (entry / cache.TREE / ".git" / "objects").rglob("*") if p.is_file()]
        os.chmod(objects[0].parent, 0o755)
        objects[0].unlink()
    elif damage == "garbage-listing":
        (entry / cache.LISTING).write_text('{"format": 1, "key": ', encoding="utf-8")
    elif damage == "listing-of-another-key":
        listing["key"] = "0" * 40
        (entry / cache.LISTING).write_text(json.dumps(listing), encoding="utf-8")
    else:
        listing["files"]["../escaped"] = listing["files"].pop(cat.VCS_BLAME_TWO_AUTHORS)
        (entry / cache.LISTING).write_text(json.dumps(listing), encoding="utf-8")
    assert cache.prepare_vcs(tmp_path / "two", build_vcs.INPUTS) == "built"
    assert len(builds) == 2
    assert refs_of(tmp_path / "two") == build_vcs.load_pins()["refs"]
    assert tree_state(tmp_path / "two") == tree_state(tmp_path / "one")
    assert not (tmp_path / "escaped").exists()
    assert entries_of(cache_root) == [name], "the bad entry is replaced, nothing left aside"
    assert cache.prepare_vcs(tmp_path / "three", build_vcs.INPUTS) == "hit"


@needs_git
def test_cache_two_runs_missing_at_once_both_get_a_good_copy(tmp_path, vcs_cache):
    """Both builds finish before either publishes (a barrier in the builder), so
    one rename loses: that run uses its own build and leaves nothing behind."""
    import threading

    from fixture import cache
    cache_root, builds = vcs_cache
    barrier = threading.Barrier(2, timeout=60)
    counting = build_vcs.build

    def build_then_wait(dest, **kw):
        result = counting(dest, **kw)
        barrier.wait()
        return result

    results: dict[str, object] = {}

    def run(name):
        try:
            results[name] = cache.prepare_vcs(tmp_path / name, build_vcs.INPUTS)
        except BaseException as exc:   # reported by the assert below
            results[name] = exc

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(build_vcs, "build", build_then_wait)
        threads = [threading.Thread(target=run, args=(n,)) for n in ("one", "two")]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    assert results == {"one": "built", "two": "built"}
    assert len(builds) == 2
    for name in ("one", "two"):
        assert refs_of(tmp_path / name) == build_vcs.load_pins()["refs"]
    assert len(entries_of(cache_root)) == 1, entries_of(cache_root)
    assert cache.prepare_vcs(tmp_path / "three", build_vcs.INPUTS) == "hit"


@needs_git
def test_cache_concurrent_materializations_in_processes(tmp_path):
    """Four processes materialize at once from an empty cache: every copy is
    right, the cache ends with one entry and no temporary leftovers."""
    from fixture import cache
    code = ("import sys, json, subprocess; sys.path.insert(0, sys.argv[1]); "
            "from fixture import materialize; sys.stdin.readline(); "
            "m = materialize(sys.argv[2]); "
            "out = subprocess.run(['git', 'rev-parse', 'HEAD'], cwd=m.path / 'vcs', "
            "capture_output=True, text=True).stdout.strip(); "
            "m.cleanup(); print(out)")
    env = dict(os.environ, **{cache.ENV: str(tmp_path / "cache")})
    procs = [subprocess.Popen([sys.executable, "-c", code, str(REPO_ROOT), str(tmp_path)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
             for _ in range(4)]
    for p in procs:                  # released together
        p.stdin.write("go\n")
        p.stdin.flush()
    outs = [p.communicate(timeout=120)[0].strip() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert set(outs) == {build_vcs.load_pins()["refs"][f"refs/heads/{cat.VCS_DEFAULT_BRANCH}"]}
    root = tmp_path / "cache" / "fixture"
    assert len(entries_of(root)) == 1 and entries_of(root)[0].startswith("vcs-")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache"], "every copy was removed"


def test_cache_dir_unusable_or_off_means_no_cache(tmp_path, monkeypatch):
    from fixture import cache
    monkeypatch.setenv(cache.ENV, "off")
    assert cache.cache_dir() is None
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv(cache.ENV, str(shared))
    assert cache.cache_dir() is None, "a world-writable dir is not trusted"
    monkeypatch.delenv(cache.ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "forge-conformance" / "fixture"
    assert stat.S_IMODE(os.stat(cache.cache_dir()).st_mode) == 0o700
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/path")   # invalid per the XDG spec: ignored
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    assert cache.cache_dir() == tmp_path / "home" / ".cache" / "forge-conformance" / "fixture"


@needs_git
def test_git_answers_are_gits_and_a_later_run_asks_no_git(tmp_path, vcs_cache, monkeypatch):
    """fixture.git_answers: what one run asked git about a build (a failing
    question too) is what the next run gets without running git; a file that
    is damaged or of another key is ignored whole; off means none."""
    from cases.harness.fixture_view import FixtureView
    from fixture import git_answers
    cache_root, _ = vcs_cache
    inputs = FIXTURE_ROOT / "vcs-inputs"
    home = tmp_path / "home"
    home.mkdir()
    unknown = "0" * 40
    with materialize(tmp_path) as m:
        first = git_answers.for_inputs(inputs)
        fx = FixtureView(m.path, "local", True, None, home, first)
        log = fx.git_bytes("log", "--format=%H %s", "main")
        assert log == git(m.path / cat.VCS, "log", "--format=%H %s", "main").encode()
        with pytest.raises(RuntimeError, match=r"failed \(1\)"):
            fx.git_bytes("cat-file", "-e", unknown)
        first.save()
        assert first.path.parent == cache_root and stat.S_IMODE(first.path.stat().st_mode) == 0o600

        def no_git(*a, **kw):
            raise AssertionError(f"git was run: {a}")

        later = FixtureView(m.path, "local", True, None, home, git_answers.for_inputs(inputs))
        with monkeypatch.context() as mp:
            mp.setattr(subprocess, "run", no_git)
            assert later.git_bytes("log", "--format=%H %s", "main") == log
            with pytest.raises(RuntimeError, match=r"failed \(1\)"):
                later.git_bytes("cat-file", "-e", unknown)
            with pytest.raises(AssertionError, match="git was run"):
                later.git_bytes("rev-parse", "main")   # never asked: git it is
        for damage in ("{not json", json.dumps({"format": 1, "key": "another", "answers": []}),
                       json.dumps({"format": 1, "key": first.key,
                                   "answers": [[["log"], "0", "", ""]]})):
            first.path.write_text(damage, encoding="utf-8")
            assert git_answers.for_inputs(inputs).get(("log", "--format=%H %s", "main")) is None
    monkeypatch.setenv("FORGE_FIXTURE_CACHE", "off")
    assert git_answers.for_inputs(inputs) is None
