"""The hypothesis strategy that draws a repository set for ``--explore``.

``repo_sets()`` draws a ``fixture.drawn.DrawnSet`` (names, long names and deep
paths, fan-outs around page sizes, hostile contents, blobs above 1 MiB, empty
repositories, a git history with now and then a merge (resolving a conflict,
or an octopus one) and, rarely, a commit of more than 500 files, a file made
executable, a symbolic link); ``fixture.drawn.write`` turns it into bytes on disk.
The costly shapes (a fan-out of a thousand, a big blob, a wide commit) are
drawn rarely and shrink away; each example first draws a focus (FOCI: a
history's, a file set's or the set's rare shapes, or none), whose shapes it
holds for sure, so each rare shape is drawn within the first examples of a
run. The fixture package stays stdlib only: what draws lives
here, beside the machine that uses it.
"""

from __future__ import annotations

import dataclasses
import unicodedata

from hypothesis import strategies as st

from fixture.drawn import (BIG_FANOUT, BIG_SIZES, DEFAULT_BRANCHES, FAULT_KINDS, FILLER_PREFIX,
                           LONG_NAME_BYTES, NAME_MAX, OCTOPUS_BYTES, OCTOPUS_FILE, ONE_MIB, OURS,
                           PAGE_FANOUTS, SIDE_BRANCHES, SKIPPED_NAMES, TERM_HEAD, TERM_LETTERS,
                           THEIRS, WIDE_BYTES, WIDE_COMMITS, WIDE_FOLDER, DrawnRepo, DrawnSet,
                           History, big_bytes, fillers, plain_text)

# Name pieces: plain ones, and the ones a URL, a shell or a normalizer trips on.
_PLAIN = ("a", "b", "c", "doc", "src", "x1", "readme", "m_n", "Lib", "9")
_HOSTILE = (" ", "#", "?", "%", "+", "&", ";", "=", "%41", "%g1", "é", "e\u0301",
            "ü", "u\u0308", "日本")
_LEADING = ("", "", "-", ".")        # a leading '-' or a dotfile now and then
_WIDE = ("é", "日本", "u\u0308", "ü")  # the multi-byte characters a long name holds
DEEP = (12, 30)                      # directories above a deep path's file
REPO_NAMES = ("r", "s", "t", "lib", "tools", "w")
RARE = 5                             # a rare shape: one draw in RARE (0..RARE-1 hits at the last)
# The costly or rare shapes, in the foci an example may draw: each example
# draws one focus (or none, where shrinking lands) and holds each of its
# shapes for sure, besides whatever else it draws at the usual rates, so
# every shape has its turn within the first examples of a run (hypothesis
# draws a new first choice for most early examples). A history's shapes are
# in the set's git repository, a file set's in its first repository (the git
# one when there is one).
HISTORY = ("big blob", "default branch", "wide commit", "merge")
FILES = ("fan-out", "long name", "deep path", "link")
SET = ("listing", "fault", "empty")
FOCI = ((), HISTORY, FILES, SET)
# the org sizes fillers bring a listing to (a thousand repositories would cost too much)
LISTING_SIZES = tuple(n for n in PAGE_FANOUTS if n <= BIG_FANOUT)
# A merge of the side branch: its files brought in; a file both sides changed,
# resolved by keeping both sides' lines; an octopus merge of a third branch too.
MERGES = ("plain", "conflict", "octopus")


def repo_sets(*, max_repos: int = 3):
    """The hypothesis strategy of a DrawnSet: one to ``max_repos``
    repositories (the first plain, a git one among them when drawn; names
    plain or hostile), a directory with a page-straddling fan-out now and
    then, mostly filler repositories that bring the listing to a page size
    (none where shrinking lands), and one to three search terms planted in
    plain-text files."""
    def ok_name(name: str) -> bool:
        return (name not in ("", ".", "..") and name not in SKIPPED_NAMES
                and "z" not in name.lower() and len(name.encode("utf-8")) <= NAME_MAX)

    def rarely():
        return st.integers(0, RARE - 1).map(lambda n: n == RARE - 1)   # shrinks to False

    def unless(focused: bool, strategy):
        """``strategy``'s boolean, or True when the example focuses on the shape
        (drawn either way, so a shrink that drops the focus keeps the rest)."""
        return strategy.map(lambda hit: hit or focused)

    piece = st.sampled_from(_PLAIN + _HOSTILE)     # shrinks toward the plain pieces
    short = st.builds(lambda lead, parts: lead + "".join(parts), st.sampled_from(_LEADING),
                      st.lists(piece, min_size=1, max_size=4)).filter(ok_name)

    @st.composite
    def any_segment(draw, focused: bool = False) -> str:
        """A name: now and then one at the file system's limit (long_segment)."""
        return draw(long_segment()) if draw(unless(focused, rarely())) else draw(short)

    # A repository is a top-level directory named as the adapter contract
    # serves it (<org>/<name>): hostile pieces too, but no leading '.' (a
    # hidden directory is no repository) and no filler's name.
    repo_name = st.one_of(
        st.sampled_from(REPO_NAMES),
        st.builds(lambda lead, parts: lead + "".join(parts), st.sampled_from(_LEADING[:3]),
                  st.lists(piece, min_size=1, max_size=3))
        .filter(lambda n: ok_name(n) and not n.startswith(FILLER_PREFIX)))

    @st.composite
    def long_segment(draw) -> str:
        """A name of LONG_NAME_BYTES UTF-8 bytes, multi-byte characters first,
        letters to the exact size."""
        size = draw(st.integers(*LONG_NAME_BYTES))
        wide = draw(st.sampled_from(_WIDE))
        head = wide * draw(st.integers(1, 20))
        return head + "a" * (size - len(head.encode("utf-8")))

    segment = any_segment()

    line_text = st.text(alphabet="abc XYé-_.\t", max_size=12).map(lambda s: s.encode("utf-8"))
    oddity = st.sampled_from((b"", b"", b"\r", b"\x0c", b"\x00", b"\xff\xfe", b"\x1c", b"\x85"))

    @st.composite
    def contents(draw) -> bytes:
        kind = draw(st.sampled_from(("empty", "text", "text", "text")))
        if kind == "empty":
            return b""
        lines = draw(st.lists(line_text, min_size=1, max_size=5))
        joiner = draw(st.sampled_from((b"\n", b"\n", b"\r\n")))
        data = joiner.join(lines) + (joiner if draw(st.booleans()) else b"")
        odd = draw(oddity)
        if odd:
            at = draw(st.integers(0, len(data)))
            data = data[:at] + odd + data[at:]
        return data

    @st.composite
    def file_set(draw, *, need_root_file: bool, focus=()) -> tuple[tuple[str, bytes], ...]:
        """A repository's files; ``focus``: the shapes it holds for sure."""
        files: dict[str, bytes] = {}
        dirs = [""]
        for _ in range(draw(st.integers(0, 2))):          # depth: nested directories
            parent = draw(st.sampled_from(dirs))
            name = draw(segment)
            dirs.append(f"{parent}/{name}" if parent else name)
        for k in range(draw(st.integers(1 if need_root_file else 0, 4))):
            where = draw(st.sampled_from(dirs))
            name = draw(any_segment("long name" in focus and k == 0))   # focused: a long one
            files[f"{where}/{name}" if where else name] = draw(contents())
        if draw(unless("fan-out" in focus, st.integers(0, 3).map(lambda n: n == 3))):
            # a fan-out around a page size (shrinks away)
            where = draw(st.sampled_from(dirs[1:] or [""]))
            big = draw(rarely())                          # a thousand files: rarely
            n = draw(st.sampled_from([n for n in PAGE_FANOUTS if (n > BIG_FANOUT) == big]))
            folder = f"{where}/fan" if where else "fan"
            for i in range(n):
                files[f"{folder}/f{i:03d}.txt"] = b"%d\n" % i
        if draw(unless("deep path" in focus, rarely())):   # a deep path
            chain = "/".join(f"d{i}" for i in range(draw(st.sampled_from(DEEP))))
            files[f"{chain}/{draw(segment)}"] = draw(contents())
        if draw(unless("big blob" in focus, st.integers(0, 2).map(lambda n: n == 2))):
            # a blob above 1 MiB (shrinks away)
            where = draw(st.sampled_from(dirs))
            name = draw(segment)
            files[f"{where}/{name}" if where else name] = big_bytes(draw(st.sampled_from(BIG_SIZES)))
        if need_root_file and not any("/" not in p for p in files):
            files[draw(segment)] = draw(contents())
        # a file and a directory of one name cannot both exist
        parents = {p[:i] for p in files for i, c in enumerate(p) if c == "/"}
        clash = parents & set(files)
        return tuple((p, files[p]) for p in sorted(files) if p not in clash)

    @st.composite
    def history(draw, tip: tuple, focus=()) -> History:
        # drawn either way, so dropping the focus keeps every later draw in place
        default = draw(st.sampled_from(DEFAULT_BRANCHES))
        other = draw(st.sampled_from([b for b in DEFAULT_BRANCHES if b != "main"]))
        if "default branch" in focus and default == "main":
            default = other
        side = draw(st.sampled_from([b for b in SIDE_BRANCHES if b != default]))
        snaps = [tip]
        for _ in range(draw(st.integers(1, 3))):          # older commits, newest first
            older = draw(_older(dict(snaps[0])))
            if older != snaps[0]:                         # git commits no empty change
                snaps.insert(0, older)
        side_from = draw(st.integers(0, len(snaps) - 1))
        side_snaps, cur = [], snaps[side_from]
        for _ in range(draw(st.integers(1, 2))):
            nxt = draw(_changed(dict(cur)))
            if nxt != cur:
                side_snaps.append(nxt)
                cur = nxt
        if not side_snaps:                                # the side branch differs from its fork
            side_snaps.append(tuple(sorted({**dict(cur), "side-only": b"side\n"}.items())))
        if draw(unless("wide commit" in focus, st.booleans())):
            # a commit past the 500-file budget (shrinks away)
            n = draw(st.sampled_from(WIDE_COMMITS))
            if "wide commit" in focus:
                n = max(WIDE_COMMITS)                     # focused: past the budget
            wide = {f"{WIDE_FOLDER}/w{i:03d}.txt": WIDE_BYTES for i in range(n)}
            side_snaps.append(tuple(sorted({**dict(side_snaps[-1]), **wide}.items())))
        older = max(0, len(snaps) - 2)
        tags = draw(st.integers(0, older)), draw(st.integers(0, older))
        # the side branch merged (shrinks away)
        merged = draw(unless("merge" in focus, st.integers(0, 2).map(lambda n: n == 2)))
        octopus, executable = None, ()
        if merged:
            how = draw(st.sampled_from(MERGES))
            fork = snaps[side_from]
            resolved = {}
            if how == "conflict" and side_from < len(snaps) - 1:
                both = [p for p in sorted(dict(fork)) if p in dict(snaps[-1])
                        and p in dict(side_snaps[-1]) and not p.startswith(WIDE_FOLDER + "/")]
                if both:                                  # both sides change one file
                    p = draw(st.sampled_from(both))
                    ours = dict(snaps[-1])[p] + OURS
                    snaps[-1] = tuple(sorted({**dict(snaps[-1]), p: ours}.items()))
                    side_snaps[-1] = tuple(sorted({**dict(side_snaps[-1]),
                                                   p: dict(side_snaps[-1])[p] + THEIRS}.items()))
                    resolved[p] = ours + THEIRS
            if how == "octopus":                          # a third branch, one commit
                octopus = tuple(sorted({**dict(fork), OCTOPUS_FILE: OCTOPUS_BYTES}.items()))
                resolved[OCTOPUS_FILE] = OCTOPUS_BYTES
            tip = dict(_merge(snaps[-1], fork, side_snaps[-1]))
            snaps.append(tuple(sorted({**tip, **resolved}.items())))
        elif len(snaps) > 1 and draw(rarely()):           # the tip makes a file executable
            kept = sorted(set(dict(snaps[-1])) & set(dict(snaps[-2])))
            if kept:
                executable = (draw(st.sampled_from(kept)),)
        return History(default, tuple(snaps), side, side_from, tuple(side_snaps), *tags, merged,
                       executable=executable, octopus=octopus)

    def _merge(tip: tuple, fork: tuple, side: tuple) -> tuple:
        """A merge of the side branch into ``tip``: the files the side added
        (not the wide commit's, none holding a term) join the tip's where no
        path of the tip is in the way."""
        files = dict(tip)
        for path, data in sorted(dict(side).items()):
            if (path in dict(fork) or path.startswith(WIDE_FOLDER + "/")
                    or TERM_HEAD.encode() in data.lower()
                    or any(p == path or p.startswith(path + "/") or path.startswith(p + "/")
                           for p in files)):
                continue
            files[path] = data
        return tuple(sorted(files.items()))

    @st.composite
    def _changed(draw, files: dict) -> tuple:
        """One commit's worth of change: a modify, an add, a delete or a rename."""
        files = dict(files)
        op = draw(st.sampled_from(("modify", "add", "delete", "rename")))
        names = sorted(files)
        if op in ("modify", "delete", "rename") and names:
            victim = draw(st.sampled_from(names))
            if op == "modify":
                files[victim] = files[victim] + b"changed\n"
            elif op == "delete" and len(names) > 1:
                del files[victim]
            elif op == "rename":
                new = draw(segment)
                if not any(p == new or p.startswith(new + "/") for p in files):
                    files[new] = files.pop(victim)
        else:
            new = draw(segment)
            if not any(p == new or p.startswith(new + "/") or new.startswith(p + "/")
                       for p in files):
                files[new] = draw(contents())
        return tuple(sorted(files.items()))

    @st.composite
    def _older(draw, files: dict) -> tuple:
        """The commit before ``files``: the reverse of a change (so renames and
        deletions happen going forward)."""
        return draw(_changed(files))

    @st.composite
    def sets(draw) -> DrawnSet:
        focus = draw(st.sampled_from(FOCI))
        n = draw(st.integers(1, max_repos))
        # unique as a normalizing, case-folding file system would keep them apart
        names = draw(st.lists(repo_name, min_size=n, max_size=n,
                              unique_by=lambda m: unicodedata.normalize("NFC", m).casefold()))
        wants_git = draw(unless(focus == HISTORY, st.booleans()))   # a git one (shrinks away)
        at = draw(st.integers(0, n - 1))                # drawn either way, as ``other`` is
        git_at = at if wants_git else -1
        # the focused shape: in the git repository, or in the first
        home = names[max(git_at, 0)]
        repos = {name: dict(draw(file_set(need_root_file=True,
                                          focus=focus if name == home else ())))
                 for name in names}
        terms = []
        texts = [(name, p) for name in names for p, d in sorted(repos[name].items())
                 if plain_text(d) and not p.startswith("fan/") and "/fan/" not in p]
        for k in range(draw(st.integers(1, 3)) if texts else 0):
            term = TERM_HEAD + draw(st.text(TERM_LETTERS, min_size=3, max_size=3)) + str(k)
            where = draw(st.lists(st.sampled_from(texts), min_size=1, max_size=3, unique=True))
            for name, path in where:
                lines = repos[name][path].split(b"\n")
                at = draw(st.integers(0, len(lines) - 1))
                before = draw(st.sampled_from((b" ", b"\r", b"\x0c", b"x\ry ")))
                lines[at] = lines[at] + before + term.encode()
                repos[name][path] = b"\n".join(lines)
            terms.append((term, tuple(where)))
        out = []
        for i, name in enumerate(names):
            files = tuple(sorted(repos[name].items()))
            hist = draw(history(files, focus)) if i == git_at else None
            out.append(DrawnRepo(name, hist.commits[-1] if hist else files, hist))

        def folded(name: str) -> str:
            return unicodedata.normalize("NFC", name).casefold()

        def unused() -> list[str]:
            taken = {folded(r.name) for r in out}
            return [m for m in REPO_NAMES if folded(m) not in taken]

        if draw(unless("empty" in focus, rarely())) and unused():   # an empty repository
            name = draw(st.sampled_from(unused()))
            hist = None
            if draw(st.booleans()):                       # git init's: no commit, HEAD unborn
                hist = History(draw(st.sampled_from(DEFAULT_BRANCHES)), (), "", 0, (), 0, 0)
            out.append(DrawnRepo(name, (), hist))
        faults = ()
        if draw(unless("fault" in focus, rarely())) and unused():   # a repository standing for a failure
            name = draw(st.sampled_from(unused()))
            faults = ((name, *draw(st.sampled_from(FAULT_KINDS))),)
        # most draws list the org around a page size; none is where shrinking lands
        sizes = LISTING_SIZES if "listing" in focus else (0,) + LISTING_SIZES
        fill = fillers(draw(st.sampled_from(sizes)), len(out))
        if draw(unless("link" in focus, rarely())):       # a symbolic link to a file
            out = draw(linked(out))
        return DrawnSet(tuple(out), tuple(terms), faults=faults, fillers=fill)

    @st.composite
    def linked(draw, repos: list) -> list:
        """``repos`` with a symbolic link at one's root to one of its files
        holding no term (so no search finds a term at the link), not above
        1 MiB; in a git repository, added by its tip commit (none when the tip
        is a merge)."""
        fit = [i for i, r in enumerate(repos) if r.files
               and not (r.is_git and r.history.merged)]
        if not fit:
            return repos
        i = draw(st.sampled_from(fit))
        repo = repos[i]
        targets = [p for p, d in repo.files
                   if TERM_HEAD.encode() not in d.lower() and len(d) <= ONE_MIB]
        name = draw(short)
        if not targets or any(p == name or p.startswith(name + "/") for p, _ in repo.files):
            return repos
        link = ((name, draw(st.sampled_from(targets))),)
        hist = repo.history and dataclasses.replace(repo.history, links=link)
        return repos[:i] + [dataclasses.replace(repo, history=hist, links=link)] + repos[i + 1:]

    return sets()
