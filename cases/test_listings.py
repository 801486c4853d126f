"""Listing and link cases (FC-110..FC-115): search/repos, org/repos, repo/clone_url,
repo/web_url, org/url (PROTOCOL §3.1, §3.2, §3.9-§3.11).

Expectations are the fixture's repositories (their directories) and git:
the vcs repo's clone_url is cloned into a temporary directory and its
branches compared with the fixture's own (when it names a local path or a
file:// URL). Fault repos need not be listed (RULINGS "Fault repos"). The
`orgs` capability gates org/repos and org/url: false is never asked.
"""

import os
import re
import subprocess
import tempfile
from urllib.parse import unquote, urlparse

from cases.kit.api import case, fc_assert, fail, listing, need, owner, show, skip, warn
from cases.kit.facts import disk_blobs, faults, served
from cases.kit.formats import basic_instant, instant
from cases.kit.replies import read_reply, try_request
from fixture.catalog import (ALPHA, ALPHA_ESCAPE_PATHS, BETA, TERM_LINE_PATH, VCS,
                             VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH, VCS_THREE_COMMITS, WIDE)
from wire.messages import CloneUrl, OrgRepos, OrgUrl, RepoItem, SearchRepos, WebUrl, read

GIT_CLONE_TIMEOUT_S = 60
# What git clone takes besides a local path: scheme URLs and the scp-like form.
GIT_URL = re.compile(r"^(?:(?:https?|ssh|git|git\+ssh|ssh\+git|ftps?)://[^/\s]+(?:/\S*)?"
                     r"|[\w.+-]+@[\w.-]+:\S+|[\w.-]+:[^/\\\s]\S*)$")
# The members of an org/repos object FC-112 owns (the v1.4 entries; the
# protocol monitor attributes them alike): its name and the optional members.
OBJECT_MEMBERS = re.compile(r"repos\[(\d+)\]\.(name|description|private|archived|pushed_at)")


# Listed ids asked back per reply: a bound on the requests one listing costs.
LISTED_BACK = 12


def problems_text(problems):
    return listing((f"{p or '(top level)'}: {m}" for p, m in problems), 3)


# How an id is asked back: the cheapest method naming a repository, and the
# one the host sends when a picked repository is opened.
ASKED_BACK = (("repo/clone_url", {}), ("repo/tree", {"ref": None}))


def accepted_back(adapter, fx, repo_id, own=None):
    """None when ``repo_id`` (an id the adapter emitted) is served back, else
    why not: repo/clone_url and repo/tree (ref null) of it must each answer
    a result object. Any error refuses the id, whatever its kind or none
    (§1.1 MUST accept back every id emitted); a fault repo's own error is
    fine (RULINGS "Fault repos"). An id that is none of the fixture's
    repositories (``own``, default: the canonical ones, whose trees are
    FC-020's) but whose path names one of its directories (the host's
    grammar serves nested ids) must serve what that directory holds."""
    own = served(fx) if own is None else own
    fault = repo_id in {fx.repo(name) for name in faults(fx)}
    for method, extra in ASKED_BACK:
        result, err = try_request(adapter, method, {"repo": repo_id, **extra})
        if err is not None and not fault:
            kind = f"kind {err.raw_kind!r}" if err.raw_kind is not None else "no kind"
            return f"{repo_id}: {method} answered an error ({kind}, {err.message!r})"
        if err is None and not isinstance(result, dict):
            return f"{repo_id}: {method} answered {show(result, 40)}"
    return None if fault or repo_id in own else serves_its_path(fx, repo_id, result)


def serves_its_path(fx, repo_id, result):
    """None when the tree ``result`` of a listed id that is not one of the
    fixture's repositories lists the files of the fixture directory its path
    names (all of them unless truncated), or when the path names none (the
    grammar is the adapter's: nothing to compare); else what is wrong. The
    fixture's own repositories are FC-020's (coverage of a tree)."""
    rel = repo_id.split("/", 1)[1] if "/" in repo_id else ""
    top = os.path.join(fx.path, rel)
    if not rel or ".." in rel.split("/") or not os.path.isdir(top):
        return None
    disk = {p for p, kind in fx.walk(rel).items() if kind == "blob"}
    entries = result.get("entries") if isinstance(result.get("entries"), list) else []
    listed = {e.get("path") for e in entries if isinstance(e, dict) and e.get("type") != "tree"}
    foreign = sorted(str(p) for p in listed - disk)
    missing = sorted(disk - listed) if result.get("truncated") is not True else []
    if foreign or missing:
        return (f"{repo_id}: repo/tree does not serve what {rel}/ holds ("
                + (f"files not in it: {listing(foreign, 2)}" if foreign else
                   f"missing {listing(missing, 2)}, truncated not true") + ")")
    return None


def require_orgs(adapter):
    if not adapter.caps.orgs:
        skip("needs the 'orgs' capability, which the adapter declares false (never asked)")


@case("FC-110")
def test_search_repos(adapter, fx):
    """search/repos by each fixture repository's name answers items that are
    objects with a string full_name or org (the repository among them as
    <org>/<name> is advised: matching is the adapter's, a warning); every
    repository id it lists, for those queries and for the empty query and
    part of a name (the pick popup as the user types), is of the form
    <org>/<name> and accepted back (by repo/clone_url and repo/tree), and
    one whose path names a fixture directory that is none of its
    repositories (nested ids) serves that directory's files.

    Falsified by: search-repos-nested-serves-parent: search/repos also lists <org>/alpha/docs, a
    nested id, whose repo/tree then serves the whole of alpha (not what docs/ holds).
    """
    emitted, unfound = [], []
    for name in sorted(set(served(fx).values())):
        what = f"search/repos {show({'query': name})}"
        reading = read_reply(adapter.request("search/repos", {"query": name}), SearchRepos,
                             what, None)
        if reading.problems:
            fail(f"{what} answers items with a string full_name or org",
                 got=problems_text(reading.problems))
        items = reading.model.items
        names = [i.full_name for i in items if isinstance(i, RepoItem)]
        if fx.repo(name) not in names:
            unfound.append(f"{what}: full_name {listing(names) or 'none'}")
        emitted += [n for n in names if n not in emitted]
    if unfound:
        # RULINGS "Search": matching is the adapter's (§3.1 has no MUST on it)
        warn(f"a fixture repository not found by its name: {listing(unfound, 2)}; the pick "
             f"popup finds a repository by what the user types")
    # what the host's pick popup sends as the user types: nothing yet, part of a name
    for query in ("", min(served(fx).values(), key=len)[1:]):
        result, err = try_request(adapter, "search/repos", {"query": query})
        if err is None:   # refusing a loose query is not this rule's business
            items = read(result, SearchRepos).model
            emitted += [i.full_name for i in (items.items if items else ())
                        if isinstance(i, RepoItem) and isinstance(i.full_name, str)
                        and i.full_name not in emitted]
    judge_listed_ids(adapter, fx, emitted)


def judge_listed_ids(adapter, fx, emitted, own=None, ask=None) -> None:
    """FC-110 on the repository ids search/repos listed: each of the form
    <org>/<name>, and each of ``ask`` (default: every one; the first
    LISTED_BACK) accepted back (``accepted_back``; ``own``: the set's
    repositories)."""
    malformed = [n for n in emitted if not re.fullmatch(r"[^/]+(/[^/]+)+", n)]
    fc_assert(not malformed, expected="ids of the form <org>/<name>", got=listing(malformed),
              why="repository ids are <org>/<name>")
    ask = emitted if ask is None else ask
    refused = [why for why in (accepted_back(adapter, fx, n, own) for n in ask[:LISTED_BACK])
               if why]
    fc_assert(not refused, expected="every listed id served back", got=listing(refused, 3),
              why="an adapter accepts back every repository id it emitted")


def org_repos(adapter, fx, what, whose=None):
    """(org/repos of the fixture's org read as OrgRepos, the result as sent); a
    reply that is not an object fails the running case (``whose`` None) or
    skips it naming the owner."""
    result = adapter.request("org/repos", {"org": fx.org})
    return read_reply(result, OrgRepos, what, whose), result


def org_entry_names(reading, result):
    """(names, problems) of an org/repos reply: the names of its entries that
    are strings or objects with a string name, and the problems FC-111 owns
    (repos not an array, an entry neither a string nor an object). An object
    read around for an optional member FC-112 owns (description, private,
    archived, pushed_at) still names its repository."""
    names = [r.name for r in reading.model.repos]
    later = {}   # entry index -> its name, for entries left out over FC-112's members
    problems = []
    for path, message in reading.problems:
        m = OBJECT_MEMBERS.fullmatch(path)
        if m is None:
            problems.append(f"{path or '(top level)'}: {message}")
            continue
        entry = result["repos"][int(m.group(1))]
        if isinstance(entry.get("name"), str):
            later[int(m.group(1))] = entry["name"]
    return names + list(later.values()), problems


@case("FC-111")
def test_org_repos(adapter, fx):
    """org/repos of the fixture's org lists alpha, beta and vcs by their
    names relative to the org (a string or an object with a string name);
    <org>/<name> of each name listed is accepted back and, when its path
    names a fixture directory that is none of its repositories (nested ids,
    as the host's grammar makes), serves that directory's files; an org that
    cannot be listed should be an error, not an empty list (a warning).

    Falsified by: org-repos-full-ids: org/repos lists full ids (<org>/<name>) instead of names
    relative to the org.
    """
    require_orgs(adapter)
    what = f"org/repos {show({'org': fx.org})}"
    reading, result = org_repos(adapter, fx, what)
    names, problems = org_entry_names(reading, result)
    fc_assert(not problems, expected="entries that are strings or objects",
              got=listing(problems, 3), why=f"{what}: org/repos entries are names")
    unnamed = [p for p, _ in reading.problems if p.endswith(".name")]
    need(not unnamed, f"{what} has objects without a string name ({listing(unnamed)})",
         owner("org/repos object members are"))
    # the contract's spellings only (RULINGS "Repository ids and listings"):
    # wide may be served as other, nested ids, judged below as listed
    judge_org_names(adapter, fx, what, names, set(served(fx).values()) - {WIDE})
    other = f"{fx.org}-no-such-org-fc111"
    result, err = try_request(adapter, "org/repos", {"org": other})
    if err is None and isinstance(result, dict) and result.get("repos", []) == []:
        warn(f"org/repos of the unknown org {other!r} answered an empty list; an org that "
             f"cannot be listed should be an error (e.g. not_found)")


def judge_org_names(adapter, fx, what: str, names, want, own=None, ask=None) -> None:
    """FC-111 on the names of one org/repos reply: relative to the org, every
    repository of ``want`` (directory names) among them, and <org>/<name> of
    each of ``ask`` (default: every name; the first LISTED_BACK) accepted
    back (``accepted_back``; ``own``: the set's repositories)."""
    prefixed = [n for n in names if n.startswith(f"{fx.org}/")]
    fc_assert(not prefixed, expected=f"names relative to {fx.org!r}", got=listing(prefixed),
              why=f"{what} lists names relative to the org, not full ids")
    want = set(want)
    fc_assert(want <= set(names), expected=f"the fixture's repositories {listing(want)}",
              got=f"missing {listing(want - set(names))}",
              why=f"{what} lists the org's repositories")
    ask = names if ask is None else ask
    refused = [why for why in (accepted_back(adapter, fx, f"{fx.org}/{n}", own)
                               for n in ask[:LISTED_BACK]) if why]
    fc_assert(not refused, expected="<org>/<name> served back for each name",
              got=listing(refused, 3), why="the host joins the org and a listed name into an id")


@case("FC-112")
def test_org_repo_objects(adapter, fx):
    """org/repos object entries (v1.4; strings stay legal) have a string name
    and, when present, a string description, boolean private and archived,
    and an ISO-8601 pushed_at (the basic format warns).

    Falsified by: org-repos-epoch-pushed-at: org/repos answers objects whose pushed_at is epoch
    seconds as a string (names kept).
    """
    require_orgs(adapter)
    what = f"org/repos {show({'org': fx.org})}"
    reading, result = org_repos(adapter, fx, what, owner("org/repos entries are"))
    names, problems = org_entry_names(reading, result)
    need(not problems, f"org/repos entries {listing(problems, 2)}", owner("org/repos entries are"))
    typed = [(p, m) for p, m in reading.problems if OBJECT_MEMBERS.fullmatch(p)]
    if typed:
        fail(f"{what}: org/repos objects have the v1.4 member types", got=problems_text(typed))
    dated = [o for o in reading.model.repos if not o.bare and o.pushed_at is not None]
    bad = [f"{o.name}: pushed_at {o.pushed_at!r}" for o in dated
           if instant(o.pushed_at) is None and basic_instant(o.pushed_at) is None]
    fc_assert(not bad, expected="pushed_at in ISO-8601", got=listing(bad, 3),
              why=f"{what}: pushed_at is an ISO-8601 date-time")
    # RULINGS "Content and revisions": the basic format passes with a warning
    basic = [f"{o.name}: {o.pushed_at!r}" for o in dated if instant(o.pushed_at) is None]
    if basic:
        warn(f"org/repos pushed_at in the ISO-8601 basic format ({listing(basic, 2)}): the "
             f"host shows dates verbatim; the extended format (2026-03-02T09:30:00Z) reads better")


def local_source(url):
    """The local path a clone URL names (an absolute path or a file:// URL), or None."""
    if url.startswith("file://"):
        parsed = urlparse(url)
        return unquote(parsed.path) if parsed.netloc in ("", "localhost") else None
    return url if os.path.isabs(url) else None


def remote_path(url):
    """The repository path a remote clone URL names ("" when it names only a
    server: https://forge.example/ clones nothing)."""
    if re.match(r"^[\w.+-]+://", url):
        return urlparse(url).path.strip("/")
    return url.split(":", 1)[1].strip("/") if ":" in url else ""


def git_env(home):
    return {"PATH": os.environ.get("PATH", os.defpath), "HOME": home, "LC_ALL": "C",
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_TERMINAL_PROMPT": "0"}


def clone_heads(url):
    """(branch -> commit id of a clone of ``url``, None) or (None, git's complaint)."""
    with tempfile.TemporaryDirectory(prefix="fc113-clone-") as tmp:
        dest = os.path.join(tmp, "clone")
        env = git_env(tmp)
        run = subprocess.run(["git", "-c", "protocol.file.allow=always", "clone", "--quiet",
                              "--no-checkout", "--", url, dest], env=env, cwd=tmp,
                             stdin=subprocess.DEVNULL, capture_output=True,
                             timeout=GIT_CLONE_TIMEOUT_S)
        if run.returncode != 0:
            return None, run.stderr.decode("utf-8", "replace").strip()[:200]
        out = subprocess.run(["git", "-C", dest, "for-each-ref",
                              "--format=%(refname:strip=3)%00%(objectname)", "refs/remotes/origin"],
                             env=env, capture_output=True, timeout=GIT_CLONE_TIMEOUT_S)
        heads = dict(line.split("\0", 1) for line in out.stdout.decode().splitlines()
                     if "\0" in line)
        return heads, None


@case("FC-113")
def test_clone_url(adapter, fx):
    """repo/clone_url answers a string for every repository (two may share
    one: §3.9 is silent); a remote URL (a hosted forge's: https,
    ssh...) must be well-formed for git and name a path on its server, and is
    not cloned, nor warned about (the suite runs offline); for vcs, a local
    path or file:// URL is cloned with git and must give the fixture's main
    and feature commits.

    Falsified by: clone-url-parent-dir: repo/clone_url of a git repository names the directory above
    it (not a repository).
    """
    urls = {}
    for name in sorted(set(served(fx).values()) | {ALPHA, BETA}):
        what = f"repo/clone_url {show({'repo': fx.repo(name)})}"
        url = read_reply(adapter.request("repo/clone_url", {"repo": fx.repo(name)}), CloneUrl,
                         what, None).model.clone_url
        judge_clone_url_form(what, url)
        urls[name] = url
    # Two repositories may share a clone URL (RULINGS "Repository ids and
    # listings": §3.9 is silent), so each URL is judged on its own.
    if not fx.vcs_built:
        return   # nothing to clone; the plain repositories were judged
    judge_cloned(urls[VCS], fx.repo(VCS), lambda branch: fx.git("rev-parse", branch).strip(),
                 (VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH))


def judge_clone_url_form(what: str, url) -> None:
    """FC-113 on one clone_url: a non-empty string; a remote URL (not a local
    path or file:// URL) well-formed for git and naming a path on its server."""
    fc_assert(isinstance(url, str) and url.strip(), expected="a non-empty string clone_url",
              got=show(url), why=f"{what} is a URL or path")
    if local_source(url) is None:   # a remote URL: its form, and that it names a path
        fc_assert(GIT_URL.match(url) and remote_path(url), expected="a URL git clone "
                  "accepts, naming the repository's path on its server", got=show(url),
                  why=f"{what} is a URL or path git clone accepts")


def judge_cloned(url: str, repo_id: str, commit_of, branches) -> None:
    """FC-113 on a git repository's clone_url: a local one is cloned with git
    and has each of ``branches`` at ``commit_of(branch)``."""
    source = local_source(url)
    if source is None:
        # A hosted forge's URL cannot be cloned offline: its form was judged above.
        # No warning: §3.9 asks for any URL git clone accepts, and no SHOULD
        # prefers a local one (a real HTTP adapter answers https).
        return
    heads, complaint = clone_heads(url)
    fc_assert(heads is not None, expected=f"git clone {url} to succeed", got=complaint,
              why="clone_url is a path or URL git clone accepts")
    for branch in branches:
        want = commit_of(branch)
        fc_assert(heads.get(branch) == want, expected=f"{branch} at {want[:12]} in the clone",
                  got=f"{branch} at {show(heads.get(branch))}",
                  why=f"cloning {repo_id}'s clone_url gives its commits")


@case("FC-114")
def test_web_url(adapter, fx):
    """repo/web_url answers a non-empty string for a file, a directory and the
    root (path "", branch "", line null, with the host's is_file) of every
    fixture repository (plain directories and the git repo alike), for a
    file of vcs at each branch the host browses, and for each URL-hostile
    file name of alpha; a line
    anchor for a file and a range anchor should change the URL (warnings).

    Falsified by: web-url-root-refused: repo/web_url of the repository root (path "") answers an
    error.
    """
    def url_of(path, is_file, line=None, end_line=None, repo=fx.repo(ALPHA), branch=""):
        params = {"repo": repo, "path": path, "branch": branch, "line": line, "end_line": end_line,
                  "is_file": is_file}
        kind = "the root" if not path else "a file" if is_file else "a directory"
        what = f"repo/web_url {show(params)} ({kind})"
        result, err = try_request(adapter, "repo/web_url", params)
        if err is not None:   # refused because of the host's is_file? that is FC-053's
            bare_params = {k: v for k, v in params.items() if k != "is_file"}
            _, bare = try_request(adapter, "repo/web_url", bare_params)
            need(bare is not None, f"{what} answered an error only with the host's "
                 f"is_file member ({err.message!r})", owner("unknown params members are"))
        fc_assert(err is None, expected="a URL", got=f"an error: {err.message!r}" if err else "",
                  why=f"{what} answers a URL")
        url = read(result, WebUrl).model.url if isinstance(result, dict) else None
        fc_assert(isinstance(url, str) and url.strip(), expected="a non-empty string url",
                  got=show(result, 80), why=f"{what} answers a URL")
        return url

    directory = TERM_LINE_PATH.rsplit("/", 1)[0]
    plain = url_of(TERM_LINE_PATH, True)
    url_of(directory, False)
    url_of("", False)
    line = url_of(TERM_LINE_PATH, True, 3)
    if line == plain:
        warn(f"repo/web_url with line 3 gave the same URL as without ({plain!r}): no line anchor")
    span = url_of(TERM_LINE_PATH, True, 3, 5)
    if span == line:
        warn(f"repo/web_url with line 3 and end_line 5 gave the single-line URL ({line!r}): "
             f"no range anchor")
    for name in sorted(set(served(fx).values()) - {ALPHA}):   # each backend kind, not alpha's only
        nested = sorted(p for p in disk_blobs(fx, name) if "/" in p)
        url_of("", False, repo=fx.repo(name))
        if nested:
            url_of(nested[0], True, repo=fx.repo(name))
            url_of(nested[0].rsplit("/", 1)[0], False, repo=fx.repo(name))
    # the branch the host browses (it sends the tree's branch), and names a URL must escape
    if fx.vcs_built:
        for branch in (VCS_DEFAULT_BRANCH, VCS_FEATURE_BRANCH):
            url_of(VCS_THREE_COMMITS, True, repo=fx.repo(VCS), branch=branch)
    for path in ALPHA_ESCAPE_PATHS:
        url_of(path, True)


@case("FC-115")
def test_org_url(adapter, fx, spawn):
    """org/url of the fixture's org answers a non-empty string url, in the
    group's process and as the first request of a fresh process (one that
    has not listed the org).

    Falsified by: org-url-href: org/url answers {"href": ...} instead of {"url": ...}.
    """
    require_orgs(adapter)
    for where, provider in (("", adapter), (" as a fresh process's first request", None)):
        provider = provider or spawn()
        result = provider.request("org/url", {"org": fx.org})
        judge_org_url(f"org/url {show({'org': fx.org})}{where}", result)


def judge_org_url(what: str, result) -> None:
    """FC-115 on one org/url result: a non-empty string url."""
    url = read_reply(result, OrgUrl, what, None).model.url
    fc_assert(isinstance(url, str) and url.strip(),
              expected="a non-empty string url", got=show(result, 80),
              why=f"{what} answers the organisation's page")
