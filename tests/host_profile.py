#!/usr/bin/env python3
"""The host profile: an adapter that behaves as PROTOCOL.md Appendix A
documents the host's filesystem reference adapter, row by row.

    python3 tests/host_profile.py <root>

It is a second reference for the self-test (tests/test_host_profile.py):
written from Appendix A's table and the protocol, not from
vendor/fs_provider.py, so the suite is checked against the adapter the host
actually ships, whose choices differ from ours wherever the protocol leaves
room. Stdlib only.

Where Appendix A is silent, the choices are written here:

* FAULTS.json is not read: the host's adapter knows nothing of the suite's
  fault repos, so ``denied``, ``throttled`` and ``broken`` are unknown
  repositories like any other (the self-test sets FORGE_NO_FAULTS=1).
* An incoming id is served when the part after its first ``/`` names a
  directory under the root (the host's copy resolves the path and nothing
  else); ``..`` and absolute parts are refused.
* Blobs over 1 MiB are served whole (the table names no refusal).
* ``$/cancelRequest`` is ignored: requests are answered one at a time, in
  order, so a cancel always names a finished request.
* A search term matches a file whose content or path holds it (any case);
  a hit's ``matches`` are the terms found in the content, spelled as the
  file spells them, so a file matched by its path alone is a path-only hit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from urllib.parse import quote

ORG = "local"
SKIPPED = {".git", "__pycache__", "target", "node_modules"}
MAX_DEPTH = 6            # how deep directories holding only directories are descended
SEARCH_REPOS_MAX = 20
LOG_DEFAULT, LOG_CAP = 50, 99
COMMIT_FILES_CAP = 500
LANGUAGES = {"rust": (".rs",), "markdown": (".md", ".markdown"), "python": (".py",),
             "toml": (".toml",), "text": (".txt",), "shell": (".sh",), "go": (".go",)}
USAGE = "usage: host_profile.py <root>\n"


class Failure(Exception):
    """Any handler failure: answered as {"code": 1, "message": ...}."""


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def git(repo_dir: str, *args: str, check: bool = True) -> bytes:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": os.environ.get("HOME", "/"),
           "LC_ALL": "C", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0",
           "GIT_PAGER": "cat"}
    proc = subprocess.run(["git", "-C", repo_dir, "-c", "core.quotepath=false", *args], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True)
    if check and proc.returncode != 0:
        raise Failure(f"git {args[0]}: {proc.stderr.decode('utf-8', 'replace').strip()}")
    return proc.stdout if proc.returncode == 0 else b""


class Repo:
    def __init__(self, root: str, rel: str):
        self.rel = rel
        self.dir = os.path.join(root, rel)
        self.is_git = os.path.exists(os.path.join(self.dir, ".git"))

    # -- the working tree ------------------------------------------------
    def disk_entries(self):
        """(path, type, file path on disk or None) of every file and directory."""
        found = []
        for dirpath, dirnames, filenames in os.walk(self.dir):
            dirnames[:] = sorted(d for d in dirnames if d != ".git")
            rel = os.path.relpath(dirpath, self.dir)
            prefix = "" if rel == "." else rel.replace(os.sep, "/") + "/"
            for d in dirnames:
                found.append((prefix + d, "tree", None))
            for f in sorted(filenames):
                found.append((prefix + f, "blob", os.path.join(dirpath, f)))
        return found

    # -- git ---------------------------------------------------------------
    def need_git(self):
        if not self.is_git:
            raise Failure(f"{self.rel} is not a git repository")

    def commit(self, ref) -> str:
        self.need_git()
        ref = "HEAD" if ref in (None, "") else ref
        if not isinstance(ref, str) or ref.startswith("-"):
            raise Failure(f"bad ref {ref!r}")
        out = git(self.dir, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}", check=False)
        if not out.strip():
            raise Failure(f"unknown ref {ref}")
        return out.decode().strip()

    def git_entries(self, commit: str):
        """(path, type, git object id) of every entry of the commit's tree."""
        out = git(self.dir, "ls-tree", "-r", "-t", "-z", commit)
        entries = []
        for row in out.split(b"\0"):
            if b"\t" in row:
                meta, path = row.split(b"\t", 1)
                _mode, kind, oid = meta.decode().split()
                entries.append((path.decode("utf-8", "surrogateescape"),
                                "tree" if kind == "tree" else "blob", oid))
        return entries

    def cat(self, oid: str) -> bytes:
        return git(self.dir, "cat-file", "blob", oid)


class Server:
    def __init__(self, root: str):
        self.root = os.path.abspath(root)
        self.oid_sha: dict[tuple[str, str], str] = {}

    # -- repositories --------------------------------------------------------
    def repo_ids(self) -> list[str]:
        """Every directory that directly holds files (or is a git worktree);
        directories holding only directories are descended into."""
        found = []

        def visit(path: str, rel: str, depth: int) -> None:
            try:
                entries = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                return
            subdirs = [e for e in entries if e.is_dir(follow_symlinks=False)
                       and e.name not in SKIPPED]
            holds_files = any(e.is_file(follow_symlinks=False) for e in entries)
            if rel and (holds_files or os.path.exists(os.path.join(path, ".git"))):
                found.append(rel)
                return
            if depth < MAX_DEPTH:
                for e in subdirs:
                    visit(e.path, f"{rel}/{e.name}" if rel else e.name, depth + 1)

        visit(self.root, "", 0)
        return found

    def repo(self, params) -> Repo:
        repo_id = params.get("repo")
        if not isinstance(repo_id, str) or "/" not in repo_id:
            raise Failure(f"bad repository id {repo_id!r}")
        rel = repo_id.split("/", 1)[1]
        parts = rel.split("/")
        if not rel or any(p in ("", ".", "..") for p in parts) or os.path.isabs(rel):
            raise Failure(f"no repository {repo_id}")
        if not os.path.isdir(os.path.join(self.root, rel)):
            raise Failure(f"no repository {repo_id}")
        return Repo(self.root, rel)

    def any_git(self) -> bool:
        return any(os.path.exists(os.path.join(self.root, r, ".git")) for r in self.repo_ids())

    # -- methods -------------------------------------------------------------
    def initialize(self, params):
        caps = {"orgs": True, "code_search": True}
        if self.any_git():
            caps.update(refs=True, log=True, blame=True, commit=True)
        return {"protocol": 1, "name": "fs", "icon": "folder", "capabilities": caps}

    def search_repos(self, params):
        query = params.get("query") or ""
        query = query.lower() if isinstance(query, str) else ""
        items = [{"full_name": f"{ORG}/{r}"} for r in self.repo_ids()
                 if query in f"{ORG}/{r}".lower()][:SEARCH_REPOS_MAX]
        return {"items": items or [{"org": ORG}]}

    def org_repos(self, params):
        return {"repos": self.repo_ids()}

    def blob_id(self, repo: Repo, oid: str) -> str:
        key = (repo.dir, oid)
        if key not in self.oid_sha:
            self.oid_sha[key] = sha256_hex(repo.cat(oid))
        return self.oid_sha[key]

    def repo_tree(self, params):
        repo = self.repo(params)
        ref = params.get("ref")
        entries = []
        if ref is None:
            for path, kind, disk in repo.disk_entries():
                if kind == "tree":
                    entries.append({"path": path, "type": "tree",
                                    "sha": sha256_hex(path.encode("utf-8", "surrogateescape"))})
                else:
                    with open(disk, "rb") as f:
                        data = f.read()
                    entries.append({"path": path, "type": "blob", "sha": sha256_hex(data),
                                    "size": len(data)})
        else:
            commit = repo.commit(ref)
            for path, kind, oid in repo.git_entries(commit):
                if kind == "tree":
                    entries.append({"path": path, "type": "tree",
                                    "sha": sha256_hex(path.encode("utf-8", "surrogateescape"))})
                else:
                    data_id = self.blob_id(repo, oid)
                    entries.append({"path": path, "type": "blob", "sha": data_id})
        return {"entries": entries, "truncated": False,
                "branch": ref if isinstance(ref, str) and ref else "main"}

    def repo_blob(self, params):
        repo = self.repo(params)
        want = params.get("sha")
        if not isinstance(want, str):
            raise Failure("sha must be a string")
        for _path, kind, disk in repo.disk_entries():
            if kind == "blob":
                with open(disk, "rb") as f:
                    data = f.read()
                if sha256_hex(data) == want:
                    return {"bytes_b64": base64.b64encode(data).decode("ascii")}
        if repo.is_git:
            for ref in self.all_refs(repo):
                for _path, kind, oid in repo.git_entries(ref):
                    if kind == "blob" and self.blob_id(repo, oid) == want:
                        return {"bytes_b64": base64.b64encode(repo.cat(oid)).decode("ascii")}
        raise Failure(f"no blob {want} in {repo.rel}")

    def all_refs(self, repo: Repo) -> list[str]:
        out = git(repo.dir, "for-each-ref", "--format=%(objectname)", "refs/heads", "refs/tags")
        return sorted(set(out.decode().split()))

    def repo_blob_at(self, params):
        repo = self.repo(params)
        path, ref = params.get("path"), params.get("ref")
        if not isinstance(path, str) or not path:
            raise Failure("path must be a non-empty string")
        if ref is None:
            full = os.path.join(repo.dir, path)
            if ".." in path.split("/") or not os.path.isfile(full):
                raise Failure(f"no file {path}")
            with open(full, "rb") as f:
                data = f.read()
        else:
            commit = repo.commit(ref)
            oid = next((o for p, k, o in repo.git_entries(commit) if p == path and k == "blob"),
                       None)
            if oid is None:
                raise Failure(f"no file {path} at {ref}")
            data = repo.cat(oid)
        return {"bytes_b64": base64.b64encode(data).decode("ascii"), "sha": sha256_hex(data)}

    def repo_refs(self, params):
        repo = self.repo(params)
        repo.need_git()
        head = git(repo.dir, "symbolic-ref", "--quiet", "--short", "HEAD", check=False)
        head = head.decode().strip()
        out = git(repo.dir, "for-each-ref", "--format=%(refname)%00%(objectname)",
                  "refs/heads", "refs/tags").decode()
        branches, tags = [], []
        for line in out.splitlines():
            name, oid = line.split("\0")
            if name.startswith("refs/heads/"):
                branch = {"name": name[len("refs/heads/"):], "sha": oid}
                if branch["name"] == head:
                    branch["default"] = True
                branches.append(branch)
            else:   # an annotated tag's own object id, as the host's adapter reports it
                tags.append({"name": name[len("refs/tags/"):], "sha": oid})
        return {"branches": branches, "tags": tags}

    def repo_log(self, params):
        repo = self.repo(params)
        commit = repo.commit(params.get("ref"))
        limit = params.get("limit")
        limit = LOG_DEFAULT if not isinstance(limit, int) or limit < 1 else min(limit, LOG_CAP)
        args = ["log", "-z", "--format=%H%x00%s%x00%an%x00%aI", f"-n{limit + 1}", commit]
        path = params.get("path")
        if isinstance(path, str) and path:
            args += ["--", path]
        fields = git(repo.dir, *args).decode("utf-8", "replace").split("\0")
        items = []
        for i in range(0, len(fields) - 3, 4):
            sha, subject, author, date = fields[i:i + 4]
            items.append({"sha": sha.strip(), "subject": subject, "author": author, "date": date})
        return {"items": items[:limit], "truncated": len(items) > limit}

    def repo_blame(self, params):
        repo = self.repo(params)
        commit = repo.commit(params.get("ref"))
        path = params.get("path")
        if not isinstance(path, str) or not path:
            raise Failure("path must be a non-empty string")
        out = git(repo.dir, "blame", "--line-porcelain", commit, "--", path)
        ranges, info, line_no, current = [], {}, 0, None
        for raw in out.split(b"\n"):
            if raw.startswith(b"\t"):
                line_no += 1
                date = datetime.fromtimestamp(int(info["author-time"]), timezone.utc)
                row = {"sha": current, "author": info.get("author", ""),
                       "date": date.strftime("%Y-%m-%dT%H:%M:%SZ")}
                if ranges and ranges[-1]["sha"] == current:
                    ranges[-1]["end_line"] = line_no
                else:
                    ranges.append({"start_line": line_no, "end_line": line_no, **row})
                continue
            words = raw.decode("utf-8", "replace").split(" ", 1)
            if len(words[0]) == 40 and all(c in "0123456789abcdef" for c in words[0]):
                current = words[0]
            elif len(words) == 2:
                info[words[0]] = words[1]
        return {"ranges": ranges}

    def repo_commit(self, params):
        repo = self.repo(params)
        want = params.get("sha")
        if not isinstance(want, str) or not want:
            raise Failure("sha must be a non-empty string")
        sha = repo.commit(want)
        meta = git(repo.dir, "show", "-s", "--format=%an%x00%aI%x00%P", sha)
        author, date, parents = meta.decode("utf-8", "replace").strip("\n").split("\0", 2)
        raw = git(repo.dir, "cat-file", "commit", sha).decode("utf-8", "replace")
        message = raw.split("\n\n", 1)[1] if "\n\n" in raw else ""
        message = message[:-1] if message.endswith("\n") else message
        parents = parents.split()
        base = parents[0] if parents else git(repo.dir, "hash-object", "-t", "tree",
                                              "/dev/null").decode().strip()
        rows = git(repo.dir, "diff-tree", "-r", "-z", "-M", "-C", "--find-copies-harder",
                   "--no-commit-id", base, sha).split(b"\0")
        files, i = [], 0
        while i < len(rows) and rows[i].startswith(b":"):
            status = rows[i].decode().split()[-1]
            if status[0] in "RC":
                old, new = (r.decode("utf-8", "surrogateescape") for r in rows[i + 1:i + 3])
                i += 3
            else:
                old = new = rows[i + 1].decode("utf-8", "surrogateescape")
                i += 2
            files.append(self.commit_file(repo, base, sha, status[0], old, new))
        truncated = len(files) > COMMIT_FILES_CAP
        return {"sha": sha, "author": author, "date": date, "message": message,
                "parents": parents, "files": files[:COMMIT_FILES_CAP], "truncated": truncated}

    def commit_file(self, repo, base, sha, status, old, new):
        names = {"A": "added", "D": "removed", "R": "renamed", "C": "added"}
        entry = {"path": new, "status": names.get(status, "modified")}
        if status in "RC":
            entry["previous_path"] = old
        paths = [old, new] if old != new else [new]
        diff = git(repo.dir, "diff", "--no-color", "--no-ext-diff", "-M", "-C",
                   "--find-copies-harder", base, sha, "--", *paths)
        lines = diff.split(b"\n")
        if any(l.startswith(b"Binary files ") or l == b"GIT binary patch" for l in lines):
            entry["binary"] = True
            return entry
        start = next((n for n, l in enumerate(lines) if l.startswith(b"@@")), None)
        body = [] if start is None else lines[start:]
        while body and body[-1] == b"":
            body.pop()
        entry["patch"] = b"\n".join(body).decode("utf-8", "replace")
        entry["additions"] = sum(1 for l in body if l.startswith(b"+"))
        entry["deletions"] = sum(1 for l in body if l.startswith(b"-"))
        return entry

    def clone_url(self, params):
        return {"clone_url": self.repo(params).dir}

    def web_url(self, params):
        repo = self.repo(params)
        path = params.get("path") or ""
        url = "file://" + quote(os.path.join(repo.dir, path) if path else repo.dir)
        line, end = params.get("line"), params.get("end_line")
        if path and params.get("is_file", True) and isinstance(line, int):
            url += f"#L{line}-L{end}" if isinstance(end, int) and end > line else f"#L{line}"
        return {"url": url}

    def org_url(self, params):
        return {"url": "file://" + quote(self.root)}

    # -- search/code ---------------------------------------------------------
    def search_code(self, params, emit):
        query = params.get("q")
        if not isinstance(query, str):
            raise Failure("q must be a string")
        terms, negated, repos, exts = parse_query(query)
        limit = params.get("limit")
        limit = limit if isinstance(limit, int) and limit > 0 else None
        streaming = params.get("partial") is True
        count, truncated = 0, False
        one_shot = []
        for rel in self.repo_ids():
            if repos and rel not in repos:
                continue
            batch = []
            for hit in self.scan(Repo(self.root, rel), terms, negated, exts, streaming):
                if limit is not None and count >= limit:
                    truncated = True   # one hit past the budget proves the cut
                    break
                batch.append(hit)
                count += 1
            if streaming and batch:
                emit(batch)
            one_shot += batch
            if truncated:
                break
        return {"items": [] if streaming else one_shot, "truncated": truncated}

    def scan(self, repo, terms, negated, exts, with_line):
        if not terms:
            return
        for path, kind, disk in repo.disk_entries():
            if kind != "blob" or (exts and not path.lower().endswith(exts)):
                continue
            with open(disk, "rb") as f:
                data = f.read()
            if b"\0" in data:
                continue   # binary files are skipped
            text = data.decode("utf-8", "replace")
            low, low_path = text.lower(), path.lower()
            if any(t in low or t in low_path for t in negated):
                continue
            if not all(t in low or t in low_path for t in terms):
                continue
            matches = []
            for t in terms:
                at = low.find(t)
                if at >= 0:
                    matches.append(text[at:at + len(t)])
            hit = {"repo": f"{ORG}/{repo.rel}", "path": path, "sha": sha256_hex(data),
                   "matches": matches}
            if with_line and matches:
                first = matches[0].lower()
                hit["line"] = next(n for n, l in enumerate(low.split("\n"), 1) if first in l)
            yield hit


def parse_query(query: str):
    """(terms, negated terms, repository paths, extensions), all lower case."""
    lexer = shlex.shlex(query, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words = []
    try:
        for word in lexer:
            words.append(word)
    except ValueError:   # an unterminated quote: closed where the text ends
        words.append(lexer.token)
    terms, negated, repos, exts = [], [], set(), ()
    negate = False
    for word in words:
        if word == "NOT":
            negate = True
            continue
        if word.startswith("-") and len(word) > 1:
            negate, word = True, word[1:]
        low = word.lower()
        if low.startswith("repo:") and not negate:
            repos.add(word[5:].split("/", 1)[1] if "/" in word[5:] else word[5:])
        elif low.startswith("org:"):
            pass   # one organisation: every repository is in it
        elif low.startswith("extension:") and not negate:
            exts += ("." + low[len("extension:"):].lstrip("."),)
        elif low.startswith("language:") and not negate:
            exts += LANGUAGES.get(low[len("language:"):], ("." + low[len("language:"):],))
        elif low:
            (negated if negate else terms).append(low)
        negate = False
    return terms, negated, repos, exts


METHODS = {"initialize": Server.initialize, "search/repos": Server.search_repos,
           "org/repos": Server.org_repos, "repo/tree": Server.repo_tree,
           "repo/blob": Server.repo_blob, "repo/blob_at": Server.repo_blob_at,
           "repo/refs": Server.repo_refs, "repo/log": Server.repo_log,
           "repo/blame": Server.repo_blame, "repo/commit": Server.repo_commit,
           "repo/clone_url": Server.clone_url, "repo/web_url": Server.web_url,
           "org/url": Server.org_url}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write(USAGE)
        return 2
    server = Server(argv[0])
    out = sys.stdout.buffer

    def send(msg) -> None:
        out.write(json.dumps(msg, separators=(",", ":")).encode("ascii") + b"\n")
        out.flush()

    for line in iter(sys.stdin.buffer.readline, b""):
        try:
            msg = json.loads(line.decode("utf-8"))
        except ValueError:
            continue   # junk lines are skipped
        if not isinstance(msg, dict) or "id" not in msg:
            continue   # notifications are never answered
        rid, method = msg.get("id"), msg.get("method")
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        try:
            if method == "search/code":
                def batch(items, rid=rid):
                    send({"jsonrpc": "2.0", "method": "$/partial",
                          "params": {"id": rid, "items": items}})
                result = server.search_code(params, batch)
            elif method in METHODS:
                result = METHODS[method](server, params)
            else:
                raise Failure(f"unknown method '{method}'")
            send({"jsonrpc": "2.0", "id": rid, "result": result})
        except Failure as exc:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": 1, "message": str(exc)}})
        except Exception as exc:   # every handler failure is a code 1 error
            send({"jsonrpc": "2.0", "id": rid,
                  "error": {"code": 1, "message": f"{type(exc).__name__}: {exc}"}})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
