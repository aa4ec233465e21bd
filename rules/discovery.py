"""Which files to lint, and what module each one is.

Directories are walked with .gitignore honoured (as ruff and git do: nested .gitignore files,
negation, anchored and directory-only patterns) and ``exclude`` / ``extend-exclude`` applied.
Files named explicitly are always linted unless ``force-exclude`` is set, which is what pre-commit
needs: it passes every changed file, excluded or not.  Only regular files are linted: a walk skips
named pipes, devices and sockets, and ``named_path_problem`` says why a path given on the command
line cannot be linted (missing, permission denied, not a regular file).  A folder the walk cannot
list is yielded itself when asked (``unlistable=True``), so the run reports it (TC011) instead of
passing without having seen its files.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from tclint.rules.config import ConfigResolver, Settings
from tclint.rules.reading import file_kind

SOURCE_SUFFIXES = (".py", ".ipynb")


class GitIgnore:
    """The patterns of one .gitignore file (or .git/info/exclude), relative to its folder."""

    def __init__(self, base: str, lines: list[str]) -> None:
        self.base = base
        self.rules: list[tuple[re.Pattern[str], bool, bool]] = []
        for raw in lines:
            line = raw.rstrip("\n").rstrip("\r")
            if not line or line.startswith("#"):
                continue
            # trailing spaces are ignored unless escaped
            while line.endswith(" ") and not line.endswith("\\ "):
                line = line[:-1]
            negate = line.startswith("!")
            if negate:
                line = line[1:]
            if line.startswith("\\"):
                line = line[1:]
            dir_only = line.endswith("/")
            line = line.rstrip("/")
            if not line:
                continue
            self.rules.append((_gitignore_regex(line), negate, dir_only))

    @classmethod
    def load(cls, base: str, path: str) -> GitIgnore | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                return cls(base, fh.readlines())
        except OSError:
            return None

    def match(self, rel: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by a negation, None: no pattern applies."""
        result = None
        for regex, negate, dir_only in self.rules:
            if dir_only and not is_dir:
                continue
            if regex.match(rel):
                result = not negate
        return result


@lru_cache(maxsize=4096)
def _gitignore_regex(pattern: str) -> re.Pattern[str]:
    anchored = "/" in pattern
    if pattern.startswith("/"):
        pattern = pattern[1:]
    out = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("/**", i) and i + 3 == len(pattern):
            out.append("/.*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = pattern.find("]", i + 1)
            if j == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : j].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = j
        elif c == "\\" and i + 1 < len(pattern):
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(c))
        i += 1
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    # Matches the path itself only. What lies inside an ignored folder is ignored because the walk
    # never enters the folder (and ``_git_ignored`` checks each parent folder), as git does; that
    # keeps a folder the user names on the command line lintable even when a .gitignore above it
    # lists it (ruff behaves the same).
    return re.compile(f"^{prefix}{body}$")


def _below(path: str, base: str) -> str | None:
    """``path`` relative to ``base`` when the absolute, normalised ``path`` lies below it, else
    None (a string slice: discovery asks this for every entry of the tree)."""
    n = len(base)
    if path.startswith(base) and path[n : n + 1] == os.sep:
        return path[n + 1 :]
    return None


def _relative(path: str, base: str) -> str:
    """``os.path.relpath`` with '/' separators, cheap for the common case of a path below ``base``."""
    rel = _below(path, base)
    if rel is None:
        rel = os.path.relpath(path, base)
    return rel if os.sep == "/" else rel.replace(os.sep, "/")


@lru_cache(maxsize=256)
def _compiled_excludes(patterns: tuple[str, ...]) -> tuple[re.Pattern[str] | None, tuple[str, ...]]:
    """(one regex for the patterns matched against a name, the patterns matched against a path)."""
    names: list[str] = []
    paths: list[str] = []
    for pattern in patterns:
        pat = pattern.rstrip("/")
        if not pat:
            continue
        if "/" not in pat:
            names.append(fnmatch.translate(pat))
        else:
            paths.append(pat.lstrip("./") if pat.startswith("./") else pat)
    name_regex = re.compile("|".join(f"(?:{n})" for n in names)) if names else None
    return name_regex, tuple(paths)


def _exclude_match(path: str, patterns: tuple[str, ...], root: str | None) -> bool:
    """ruff-style exclusion: a pattern without '/' matches any path component's name; one with
    '/' matches the path relative to the configuration's folder (or a prefix folder of it)."""
    if not patterns:
        return False
    name_regex, path_patterns = _compiled_excludes(patterns)
    if name_regex is not None and name_regex.match(os.path.basename(path)):
        return True
    if not path_patterns or not root:
        return False
    try:
        rel = _relative(path, root)
    except ValueError:
        return False
    if rel.startswith("../"):
        return False
    return any(fnmatch.fnmatchcase(rel, pat) or fnmatch.fnmatchcase(rel, pat + "/*") for pat in path_patterns)


def is_excluded(path: str, settings: Settings) -> bool:
    """Whether ``path`` or a folder above it (up to the configuration's folder, or the working
    folder, or the repository) matches ``exclude`` / ``extend-exclude``."""
    absolute = os.path.abspath(path)
    patterns = (*settings.exclude, *settings.extend_exclude)
    stop = settings.root
    if stop is None or not absolute.startswith(stop + os.sep):
        cwd = os.getcwd()
        stop = (
            cwd
            if absolute.startswith(cwd + os.sep)
            else _repository_root(absolute) or os.path.dirname(absolute)
        )
    current = absolute
    while True:
        if _exclude_match(current, patterns, settings.root):
            return True
        parent = os.path.dirname(current)
        if parent == current or current == stop or parent == stop:
            return False
        current = parent


def _repository_root(path: str) -> str | None:
    """The nearest folder above ``path`` holding ``.git``: where folder patterns stop applying when
    neither a configuration file nor the working folder says where the project starts."""
    current = os.path.dirname(path)
    while True:
        if os.path.exists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


@dataclass(slots=True)
class Discovered:
    path: str  # as the user will see it (relative to the working folder when below it)
    explicit: bool


def display_path(path: str) -> str:
    absolute = os.path.abspath(path)
    return _below(absolute, os.getcwd()) or absolute


def named_path_problem(path: str) -> str | None:
    """Why ``path``, named on the command line, cannot be linted, or None when it can: it does
    not exist, it (or a folder above it) denies access, or it is neither a regular file nor a
    folder (a named pipe would block the run, a device would be read forever)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return "no such file or folder"
    except PermissionError:
        return "permission denied"
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        if stat.S_ISDIR(st.st_mode):
            with os.scandir(path):
                pass
        elif stat.S_ISREG(st.st_mode):
            os.close(os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)))
        else:
            return (
                f"not a regular file ({file_kind(st.st_mode)}); tclint lints regular files and folders only"
            )
    except PermissionError:
        return "permission denied" + (" (cannot list the folder)" if stat.S_ISDIR(st.st_mode) else "")
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def discover(
    paths: list[str],
    resolver: ConfigResolver,
    force_exclude: bool | None = None,
    unlistable: bool = False,
) -> Iterator[Discovered]:
    """Yield the source files under ``paths`` (each once), in a stable order; ``unlistable``: also
    each folder the walk found but could not list (the reader turns it into a TC011)."""
    seen: set[str] = set()
    for given in paths:
        absolute = os.path.abspath(given)
        if os.path.isdir(absolute):
            settings = resolver.for_dir(absolute)
            if force_exclude if force_exclude is not None else settings.force_exclude:
                if is_excluded(absolute, settings):
                    continue
            for path in _walk(absolute, resolver, unlistable):
                if path not in seen:
                    seen.add(path)
                    yield Discovered(display_path(path), False)
        else:
            if absolute in seen:
                continue
            settings = resolver.for_file(absolute)
            fe = force_exclude if force_exclude is not None else settings.force_exclude
            if fe and (is_excluded(absolute, settings) or _git_ignored(absolute)):
                continue
            seen.add(absolute)
            yield Discovered(display_path(absolute) if os.path.exists(absolute) else given, True)


def _git_ignored(path: str) -> bool:
    directory = os.path.dirname(path)
    chain: list[GitIgnore] = []
    current = directory
    while True:
        gi = os.path.join(current, ".gitignore")
        if os.path.isfile(gi):
            loaded = GitIgnore.load(current, gi)
            if loaded:
                chain.append(loaded)
        if os.path.exists(os.path.join(current, ".git")):
            break
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    chain.reverse()  # outermost first: an inner .gitignore overrides an outer one
    # git ignores a file when it, or any folder it lies in, is ignored; a negation cannot re-include
    # a file whose folder is ignored, so the folders are decided first, outermost first.
    ancestors: list[str] = []
    current = directory
    while chain and len(current) >= len(chain[0].base):
        ancestors.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    for folder in reversed(ancestors):
        if folder != chain[0].base and _ignored(
            folder, True, [gi for gi in chain if _inside(folder, gi.base)]
        ):
            return True
    return _ignored(path, False, chain)


def _inside(path: str, base: str) -> bool:
    return path != base and (path + os.sep).startswith(base.rstrip(os.sep) + os.sep)


def _walk(top: str, resolver: ConfigResolver, unlistable: bool = False) -> Iterator[str]:
    settings = resolver.for_dir(top)
    ignores: list[GitIgnore] = []
    if settings.respect_gitignore:
        ignores = _gitignores_above(top)
    yield from _walk_dir(top, resolver, ignores, unlistable)


def _gitignores_above(top: str) -> list[GitIgnore]:
    """.gitignore files between the repository root and ``top`` (exclusive), outermost first."""
    chain: list[GitIgnore] = []
    current = os.path.dirname(top)
    found_repo = os.path.exists(os.path.join(top, ".git"))
    while not found_repo:
        gi = os.path.join(current, ".gitignore")
        if os.path.isfile(gi):
            loaded = GitIgnore.load(current, gi)
            if loaded:
                chain.append(loaded)
        if os.path.exists(os.path.join(current, ".git")):
            exclude = os.path.join(current, ".git", "info", "exclude")
            if os.path.isfile(exclude):
                loaded = GitIgnore.load(current, exclude)
                if loaded:
                    chain.append(loaded)
            break
        parent = os.path.dirname(current)
        if parent == current:
            return []  # not in a repository: no .gitignore applies
        current = parent
    chain.reverse()
    return chain


def _ignored(path: str, is_dir: bool, ignores: list[GitIgnore]) -> bool:
    verdict = None
    for gi in ignores:
        m = gi.match(_relative(path, gi.base), is_dir)
        if m is not None:
            verdict = m
    return bool(verdict)


def _walk_dir(  # noqa: C901 - long, not split yet (issue 16)
    directory: str, resolver: ConfigResolver, ignores: list[GitIgnore], unlistable: bool = False
) -> Iterator[str]:
    settings = resolver.for_dir(directory)
    local = list(ignores)
    if settings.respect_gitignore:
        git_dir = os.path.join(directory, ".git")
        if os.path.exists(git_dir):
            local = []  # a nested repository starts its own ignore rules
            exclude = os.path.join(git_dir, "info", "exclude")
            if os.path.isfile(exclude):
                loaded = GitIgnore.load(directory, exclude)
                if loaded:
                    local.append(loaded)
        gi = os.path.join(directory, ".gitignore")
        if os.path.isfile(gi):
            loaded = GitIgnore.load(directory, gi)
            if loaded:
                local.append(loaded)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return  # removed while the walk ran
    except OSError:
        if unlistable:
            yield directory
        return
    patterns = (*settings.exclude, *settings.extend_exclude)
    for entry in entries:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if _exclude_match(entry.path, patterns, settings.root):
            continue
        if settings.respect_gitignore and local and _ignored(entry.path, is_dir, local):
            continue
        if is_dir:
            yield from _walk_dir(entry.path, resolver, local, unlistable)
        elif entry.name.endswith(SOURCE_SUFFIXES):
            try:
                if not entry.is_file():
                    continue
            except OSError:
                continue
            yield entry.path


@lru_cache(maxsize=65536)
def _has_init(directory: str) -> bool:
    return os.path.isfile(os.path.join(directory, "__init__.py"))


def module_for(path: str) -> tuple[str, bool, str]:
    """(dotted module name, is_package, import root) as Python would import this file when its
    top-most package folder's parent is on sys.path (scripts: their own folder)."""
    absolute = os.path.abspath(path)
    directory, filename = os.path.split(absolute)
    stem = filename.rsplit(".", 1)[0]
    is_package = stem == "__init__"
    parts = [] if is_package else [stem]
    current = directory
    while _has_init(current):
        parts.append(os.path.basename(current))
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    parts.reverse()
    module = ".".join(p for p in parts if p) or stem
    return module, is_package, current
