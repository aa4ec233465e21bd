"""Following compiled regions into installed packages (issue 21), without running any of them.

Most users compile models they did not write (``torch.compile(kornia.filters.GaussianBlur2d(...))``).
With ``follow-libraries`` on, the project pass does not stop at a reference into an installed
package: :class:`Environment` finds the module's source file by searching the interpreter's import
roots on disk only (the import system's rules for source files -- regular packages, modules,
namespace packages in several portions -- applied to folder listings, so no package's
``__init__`` ever runs, as ``importlib.util.find_spec`` would for a parent; ``.pth`` path lines and the ``MAPPING`` of setuptools'
``__editable__`` finders read as data; namespace packages), and :func:`follow` adds that file's
facts to the project and builds it again, round after round, until the regions reach no module not
yet loaded.  Only what a reference names is loaded (module by module, lazily), and each library
file's facts are cached by content hash in a user-level cache shared by every project
(:func:`library_cache`).  Library files are never files of the project: the engine reports none of
their findings; TC312 summarises them at the user's compile site.
"""

from __future__ import annotations

import ast
import copy
import glob
import os
import sys
import time
from typing import Any

from tclint.rules.facts import FileFacts
from tclint.rules.names import literal_names
from tclint.rules.project import Project

# Modules never followed: torch's own code is what the rules model, not something to walk; the
# standard library and the packages the per-file walk already treats as never-project code.
_SKIP_ROOTS = frozenset({"torch", "torchgen", "functorch", "triton", "__future__"}) | frozenset(
    sys.stdlib_module_names
)
MAX_LIBRARY_FILES = 600  # a bound on one run's lazily loaded files (a huge package reached everywhere)
MAX_ROUNDS = 40
LIBRARY_MEMO = "library_files"  # Project.memo key: path -> (module, distribution root folder)


class Environment:
    """Where an interpreter's imports come from, read from the disk (nothing is imported)."""

    def __init__(self, roots: list[str], editable: dict[str, str] | None = None) -> None:
        self.roots = [r for r in dict.fromkeys(roots) if r and os.path.isdir(r)]
        self.editable = editable or {}  # top-level name -> its folder (setuptools editable finders)
        self._found: dict[str, tuple[str, bool, str] | None] = {}
        self._locations: dict[str, tuple[list[tuple[str, str]], str] | None] = {}
        # source files read through this environment -> their stat identity taken before reading
        # (all -1: missing): what a cached result that used them is re-validated against
        self.reads: dict[str, tuple[int, ...]] = {}
        self.created_ns = time.time_ns()  # before any read: the racy-timestamp check's reference

    def note_read(self, path: str) -> None:
        """Record the stat of a file about to be read (see :func:`dependencies`)."""
        self.reads[path] = _stat_stamp(path)

    @classmethod
    def for_python(cls, python: str | None = None) -> Environment:
        """The import roots of ``python`` (an interpreter path, e.g. the probe's ``python`` setting:
        its ``lib/python*/site-packages`` folders, found next to it), or of this interpreter."""
        if python:
            prefix = os.path.dirname(os.path.dirname(os.path.abspath(python)))  # <venv>/bin/python
            roots = sorted(glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages")))
            roots += sorted(glob.glob(os.path.join(prefix, "Lib", "site-packages")))
        else:
            roots = [p for p in sys.path if p and os.path.isdir(p) and not _is_tclint_root(p)]
        extra, editable = [], {}
        for root in list(roots):
            more, mapping = read_pth(root)
            extra += more
            editable.update(mapping)
        return cls([*roots, *extra], editable)

    def locate(self, module: str) -> tuple[str, bool, str] | None:
        """(source file, is_package, import root) of a module, or None (not installed, compiled
        code only, a namespace package's folder without a file)."""
        if module in self._found:
            return self._found[module]
        found = self._locate(module)
        self._found[module] = found
        return found

    def _locate(self, module: str) -> tuple[str, bool, str] | None:
        parent, _, name = module.rpartition(".")
        where = self._search_path(parent) if parent else None
        if parent and where is None:
            return None
        if not parent and module in self.editable:
            folder = self.editable[module]
            init = os.path.join(folder, "__init__.py")
            if os.path.isfile(init):
                return init, True, os.path.dirname(folder)
            if os.path.isfile(folder) and folder.endswith(".py"):
                return folder, False, os.path.dirname(folder)
        for folder, root in where[0] if where is not None else ((r, r) for r in self.roots):
            init = os.path.join(folder, name, "__init__.py")
            if os.path.isfile(init):
                return init, True, root
            plain = os.path.join(folder, name + ".py")
            if os.path.isfile(plain):
                return plain, False, root
        return None

    def _search_path(self, package: str) -> tuple[list[tuple[str, str]], str] | None:
        """((folder, import root) pairs a package's submodules are searched in, the package name):
        a regular package's folder, or every portion of a namespace package, as the import system
        would find them (a regular package found first wins over later portions)."""
        if package in self._locations:
            return self._locations[package]
        parent, _, name = package.rpartition(".")
        out: tuple[list[tuple[str, str]], str] | None = None
        if not parent and package in self.editable and os.path.isdir(self.editable[package]):
            out = ([(self.editable[package], os.path.dirname(self.editable[package]))], package)
        else:
            where = self._search_path(parent) if parent else ([(r, r) for r in self.roots], "")
            if where is not None:
                portions: list[tuple[str, str]] = []
                for folder, root in where[0]:
                    candidate = os.path.join(folder, name)
                    if os.path.isfile(os.path.join(candidate, "__init__.py")):
                        if not portions:
                            portions = [(candidate, root)]
                        break
                    if os.path.isfile(candidate + ".py"):
                        break  # a module, not a package: no submodules
                    if os.path.isdir(candidate):
                        portions.append((candidate, root))
                out = (portions, package) if portions else None
        self._locations[package] = out
        return out


_MISSING = (-1, -1, -1, -1, -1)


def _stat_stamp(path: str) -> tuple[int, ...]:
    """(size, mtime_ns, ctime_ns, inode, device), as the project's stat table identifies a file."""
    try:
        st = os.stat(path)
    except OSError:
        return _MISSING
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


def _is_tclint_root(path: str) -> bool:
    return os.path.isfile(os.path.join(path, "tclint", "__init__.py")) and os.path.isdir(
        os.path.join(path, "rules")
    )


def read_pth(root: str) -> tuple[list[str], dict[str, str]]:
    """The path lines of a site folder's ``.pth`` files (``import`` lines are code: never run) and the
    ``MAPPING`` of its ``__editable__.*_finder.py`` files (read as a literal)."""
    paths: list[str] = []
    mapping: dict[str, str] = {}
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return paths, mapping
    for name in names:
        full = os.path.join(root, name)
        if name.endswith(".pth"):
            try:
                with open(full, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().splitlines()
            except OSError:
                continue
            for line in lines:
                line = line.strip()
                if not line or line.startswith(("#", "import ", "import\t")):
                    continue
                target = line if os.path.isabs(line) else os.path.join(root, line)
                if os.path.isdir(target):
                    paths.append(target)
        elif name.startswith("__editable__") and name.endswith("_finder.py"):
            mapping.update(_editable_mapping(full))
    return paths, mapping


def _editable_mapping(path: str) -> dict[str, str]:
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return {}
    for node in tree.body:
        target = (
            node.targets[0]
            if isinstance(node, ast.Assign) and len(node.targets) == 1
            else getattr(node, "target", None)
        )
        mapping = getattr(node, "value", None)  # an Assign or AnnAssign
        if isinstance(target, ast.Name) and target.id == "MAPPING" and mapping is not None:
            try:
                value = ast.literal_eval(mapping)
            except ValueError:
                return {}
            if isinstance(value, dict):
                return {str(k): str(v) for k, v in value.items() if isinstance(v, str)}
    return {}


class RecordingProject(Project):
    """A project that remembers the references its regions could not resolve (the next modules to
    load): only while it finds the compile sites' targets and walks the regions, so that code no
    region reaches (a file's other functions, eager code) loads nothing."""

    def __init__(self, files: Any, settings: Any) -> None:
        super().__init__(files, settings)
        self.misses: set[str] = set()
        self._recording = False

    def resolve(self, ref: str | None, near: FileFacts | None, depth: int = 0) -> tuple[str, str] | None:
        result = super().resolve(ref, near, depth)
        if result is None and ref and self._recording:
            self.misses.add(ref)
        return result

    def module_file(self, module: str, near: FileFacts | None) -> FileFacts | None:
        found = super().module_file(module, near)
        if found is None and self._recording:
            self.misses.add(module + ".")
        return found

    def _roots(self) -> Any:
        self._recording = True
        try:
            yield from super()._roots()
        finally:
            self._recording = False

    def _bfs(self, roots: Any) -> None:
        self._recording = True
        try:
            super()._bfs(roots)
        finally:
            self._recording = False

    def _live_files(self) -> frozenset[str] | None:
        # which files a compiled program can run looks up every import and call of every file:
        # no request to load a module (recorded, those misses loaded the whole of transformers'
        # imports up to MAX_LIBRARY_FILES, so the modules the regions need were cut off)
        recording, self._recording = self._recording, False
        try:
            return super()._live_files()
        finally:
            self._recording = recording


def library_cache() -> Any:
    """The user-level cache of library facts, shared by every project (keyed by file hashes), or None."""
    from tclint.rules.cache import Cache

    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(home, "tclint", "libraries")
    cache = _LIBRARY_CACHES.get(directory)
    if cache is None or cache.refused:
        # one per process and folder: a Cache stamps tclint's own modules to fingerprint them
        # (6 ms), and TC312 asks for it at every site it judges (``libjudged``)
        cache = _LIBRARY_CACHES[directory] = Cache(directory)
    return None if cache.refused else cache


_LIBRARY_CACHES: dict[str, Any] = {}


def write_entry(cache: Any, path: str, kind: str, name: str, value: Any) -> bool:
    """A sealed entry written under the user-level cache's folder: the folder made ready (marked
    as tclint's, as ``Cache.flush`` does) first, so an entry written before the first flush does
    not make the folder look foreign; never through a link (a folder of someone else's)."""
    from tclint.rules import cachedir, sealed

    if cache._key is None:
        return False
    try:
        cachedir.prepare(cache.directory)
        top = os.path.join(cache.directory, os.path.relpath(path, cache.directory).split(os.sep, 1)[0])
        if os.path.islink(top):
            return False
        os.makedirs(os.path.dirname(path), exist_ok=True)
        sealed.write(path, cache._key, kind, name, value)
    except (OSError, ValueError, cachedir.CacheDirError):
        return False
    return True


_MEMO: dict[
    str, tuple[tuple[Any, ...], Any, FileFacts]
] = {}  # path -> (stat and key, source, facts): a long-lived process


def _library_facts(
    path: str, module: str, is_package: bool, root: str, settings: Any, cache: Any
) -> tuple[Any, FileFacts]:
    """One library file's source and plain facts: from this process's memo while the file's size and
    mtime are unchanged (the language server rebuilds its project on every edit), else from the
    user-level cache by content hash, else walked."""
    from tclint.rules.engine import analyze_source
    from tclint.rules.reading import read_source

    try:
        st = os.stat(path)
        stamp: tuple[Any, ...] = (
            st.st_size,
            st.st_mtime_ns,
            module,
            is_package,
            root,
            tuple(settings.compiling_predicates),
        )
    except OSError:
        stamp = ()
    hit = _MEMO.get(path)
    if stamp and hit is not None and hit[0] == stamp:
        return hit[1], hit[2]
    src = read_source(path, None, settings.max_file_size, None, path)
    ff = None
    key = None
    if cache is not None and src.digest:
        key = cache.facts_key(src.digest, module, is_package, root, settings.compiling_predicates, path)
        ff = cache.get_facts(key)
        if ff is not None:
            ff.path = path
    if ff is None:
        ff = analyze_source(src, module, is_package, root, settings.compiling_predicates)
        if key is not None:
            cache.put_facts(key, ff)
    if stamp:
        _MEMO[path] = (stamp, src, ff)
    return src, own_copy(ff)


def own_copy(ff: FileFacts) -> FileFacts:
    """Facts the project may bind names in (``StarExports.bind`` adds aliases, ``Dispatch`` replaces
    functions) without changing the object the cache stores and the process memo keeps: the facts
    as walked, which another run with other files around them must see unchanged."""
    out = copy.copy(ff)
    out.aliases = dict(ff.aliases)
    out.functions = dict(ff.functions)
    return out


def follow(
    linter: Any,
    project: Project,
    facts: list[FileFacts],
    settings: Any,
    env: Environment | None = None,
    cached: bool | None = None,
) -> tuple[Project, dict[str, Any], dict[str, tuple[str, str]]]:
    """The project built again with every installed module its regions reach (loaded round after
    round), the library files' sources (for the type refinement's re-walks) and the library files
    (path -> (module, import root): :func:`mark` them on the final project).  ``cached``: use the
    user-level cache (default: when the linter has a cache, i.e. not under ``--no-cache``)."""

    env = env or Environment.for_python((settings.probe or {}).get("python"))
    own_roots = {ff.module.split(".", 1)[0] for ff in facts if ff.module}
    own_dirs = {os.path.abspath(ff.root) for ff in facts if ff.root}
    env.roots = [r for r in env.roots if os.path.abspath(r) not in own_dirs]  # the project is not a library
    loaded: dict[str, tuple[str, str]] = {}
    sources: dict[str, Any] = {}
    lib_facts: list[FileFacts] = []
    if cached is None:
        cached = getattr(linter, "cache", None) is not None
    cache = library_cache() if cached else None
    tried: set[str] = set()
    current: Project = project
    rec = RecordingProject(facts, settings)
    rec.build()
    stars = StarExports(env, cache)
    dispatch = Dispatch(env)
    by_module: dict[str, FileFacts] = {}
    plan_key = _plan_key(facts, env, settings)
    # a warm run loads at once what the last run with these project files loaded (each entry checked
    # against the environment), so the rounds below only bind names: a few project builds, not one per import
    for module, (path, is_package, root) in _read_plan(cache, plan_key, env).items():
        tried.add(module)
        env.note_read(path)
        src, ff = _library_facts(path, module, is_package, root, settings, cache)
        loaded[path] = (module, root)
        sources[path] = src
        lib_facts.append(ff)
        by_module[module] = ff
    if lib_facts:
        rec = RecordingProject([*facts, *lib_facts], settings)
        rec.build()
    for _ in range(MAX_ROUNDS):
        wanted = _modules_to_load(rec.misses, own_roots, tried, env)
        if not wanted and (stars.bind(rec.misses, by_module) | dispatch.add_edges(lib_facts)):
            rec = RecordingProject([*facts, *lib_facts], settings)  # a star-imported name now leads on
            rec.build()
            continue
        if not wanted or len(loaded) >= MAX_LIBRARY_FILES:
            break
        for module, (path, is_package, root) in wanted.items():
            if len(loaded) >= MAX_LIBRARY_FILES:
                break
            env.note_read(path)
            src, ff = _library_facts(path, module, is_package, root, settings, cache)
            loaded[path] = (module, root)
            sources[path] = src
            lib_facts.append(ff)
            by_module[module] = ff
        rec = RecordingProject([*facts, *lib_facts], settings)
        rec.build()
    if cache is not None:
        cache.flush()
        _write_plan(
            cache,
            plan_key,
            {m: (p, ff.is_package, loaded[p][1]) for p, (m, _r) in loaded.items() for ff in (by_module[m],)},
        )
    if lib_facts:
        # every way out of the rounds above has just built ``rec`` from these very facts (a
        # round that binds or loads anything builds again): it is the project, built once more
        # it would be the same one (one build of ~120 library files saved per warm run)
        rec.misses = set()
        current = rec
    return current, sources, loaded


def _plan_key(facts: list[FileFacts], env: Environment, settings: Any) -> str:
    import hashlib

    parts = [*sorted(ff.path for ff in facts), "|", *env.roots, "|", *map(str, settings.compiling_predicates)]
    return hashlib.blake2b("\n".join(parts).encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _plan_path(cache: Any, key: str) -> str:
    return os.path.join(cache.directory, "plans", cache.fingerprint, key)


def _read_plan(cache: Any, key: str, env: Environment) -> dict[str, tuple[str, bool, str]]:
    """The library modules the last run with these project files loaded, still located where they were."""
    from tclint.rules import sealed

    if cache is None or cache._key is None:
        return {}
    try:
        entries = sealed.read(_plan_path(cache, key), cache._key, "follow-plan", key)
    except (OSError, ValueError):
        return {}
    out: dict[str, tuple[str, bool, str]] = {}
    for entry in entries if isinstance(entries, list) else ():
        if not (isinstance(entry, list) and len(entry) == 4 and isinstance(entry[0], str)):
            continue
        module, path, is_package, root = entry
        if env.locate(module) == (path, is_package, root) and len(out) < MAX_LIBRARY_FILES:
            out[module] = (path, is_package, root)
    return out


def _write_plan(cache: Any, key: str, plan: dict[str, tuple[str, bool, str]]) -> None:
    from tclint.rules import sealed

    if cache._key is None:
        return
    try:
        os.makedirs(os.path.dirname(_plan_path(cache, key)), exist_ok=True)
        sealed.write(
            _plan_path(cache, key),
            cache._key,
            "follow-plan",
            key,
            [[m, p, bool(ip), r] for m, (p, ip, r) in sorted(plan.items())],
        )
    except (OSError, ValueError):
        return


class StarExports:
    """Names a package re-exports with ``from .x import *`` (torchvision.models, every level of
    transformers' lazy ``__init__`` files, whose real imports sit under ``if TYPE_CHECKING:``), found by
    reading the sources (nothing is imported): the per-file facts do not bind star-imported names,
    so a reference ``pkg.Name`` that does not resolve in ``pkg`` is looked up in the modules ``pkg``
    star-imports, recursively, and bound as an alias of ``pkg`` to the module that defines it."""

    def __init__(self, env: Environment, cache: Any = None) -> None:
        self.env = env
        self.cache = cache  # the user-level cache: a module's bindings kept while its stat holds
        self._info: dict[str, tuple[list[str], set[str], set[str] | None] | None] = {}
        self._found: dict[tuple[str, str], str | None] = {}

    def bind(self, misses: set[str], by_module: dict[str, FileFacts]) -> bool:
        """Alias every missed ``module.Name`` of a loaded module that star-imports ``Name``; True if any."""
        changed = False
        for ref in sorted(misses):
            parts = ref.rstrip(".").split(".")
            for i in range(len(parts) - 1, 0, -1):
                module = ".".join(parts[:i])
                ff = by_module.get(module)
                if ff is None:
                    continue
                name = parts[i]
                if name in ff.aliases or name in ff.functions or name in ff.classes:
                    break
                target = self.source_of(module, name)
                if target is not None:
                    ff.aliases[name] = f"{target}.{name}"
                    changed = True
                break
        return changed

    def source_of(self, module: str, name: str, depth: int = 0) -> str | None:
        """The module, among those ``module`` star-imports (recursively), that binds ``name``."""
        key = (module, name)
        if key in self._found:
            return self._found[key]
        self._found[key] = None  # recursion guard
        found = None
        info = self._read(module)
        if info is not None and depth < 8:
            stars, _bound, _exported = info
            low = name.lower()
            # the star import named like the name first (transformers' `.bert` for `BertModel`): one
            # hit among hundreds without reading them all
            for target in sorted(stars, key=lambda m: m.rsplit(".", 1)[-1].replace("_", "") not in low):
                tinfo = self._read(target)
                if tinfo is None:
                    continue
                _tstars, tbound, texported = tinfo
                if texported is not None and name not in texported:
                    continue  # `__all__` limits what a star import takes
                if name in tbound:
                    found = target
                    break
                if not name.startswith("_") and self.source_of(target, name, depth + 1) is not None:
                    found = target  # bound in `target` by its own star import: resolve from there
                    break
        self._found[key] = found
        return found

    def _read(self, module: str) -> tuple[list[str], set[str], set[str] | None] | None:
        """(modules star-imported, names bound at module level, the literal ``__all__`` or None)."""
        if module in self._info:
            return self._info[module]
        out = None
        located = self.env.locate(module)
        if located is not None:
            path, is_package, _root = located
            self.env.note_read(path)
            stored = self._stored(path, module, is_package)
            if stored is not None:
                self._info[module] = stored[0]
                return stored[0]
            try:
                with open(path, encoding="utf-8", errors="replace") as fh:
                    tree = ast.parse(fh.read())
            except (OSError, SyntaxError, ValueError):
                tree = None
            if tree is not None:
                out = _module_bindings(tree, module, is_package)
            self._store(path, module, is_package, out)
        self._info[module] = out
        return out

    def _entry(self, path: str, module: str, is_package: bool) -> tuple[str, str] | None:
        """(entry path, name) of a module's bindings in the user-level cache (transformers' lazy
        ``__init__`` files are long: parsing them was a third of a warm follow)."""
        if self.cache is None or self.cache._key is None:
            return None
        import hashlib

        name = hashlib.blake2b(
            repr((path, module, is_package)).encode("utf-8", "surrogatepass"), digest_size=16
        )
        key = name.hexdigest()
        return os.path.join(self.cache.directory, "bindings", self.cache.fingerprint, key[:2], key), key

    def _stored(
        self, path: str, module: str, is_package: bool
    ) -> tuple[tuple[list[str], set[str], set[str] | None] | None] | None:
        """((the bindings or None),) as stored for the file's present stat identity, else None."""
        from tclint.rules import sealed

        entry = self._entry(path, module, is_package)
        if entry is None:
            return None
        value = sealed.read(entry[0], self.cache._key, "star-bindings-1", entry[1])
        try:
            stamp, info = value
            if tuple(stamp) != self.env.reads[path] or self.env.reads[path] == _MISSING:
                return None
            if info is None:
                return (None,)
            stars, bound, exported = info
            return (
                (
                    [str(m) for m in stars],
                    {str(n) for n in bound},
                    None if exported is None else {str(n) for n in exported},
                ),
            )
        except (TypeError, ValueError):
            return None

    def _store(
        self,
        path: str,
        module: str,
        is_package: bool,
        out: tuple[list[str], set[str], set[str] | None] | None,
    ) -> None:
        from tclint.rules.reading import RACY_MARGIN_NS

        entry = self._entry(path, module, is_package)
        stamp = self.env.reads.get(path, _MISSING)
        if entry is None or stamp == _MISSING or _stat_stamp(path) != stamp:
            return
        if max(stamp[1], stamp[2]) >= time.time_ns() - RACY_MARGIN_NS:
            return  # a change within the same timestamp tick would not show
        info = None if out is None else [out[0], sorted(out[1]), None if out[2] is None else sorted(out[2])]
        write_entry(self.cache, entry[0], "star-bindings-1", entry[1], [list(stamp), info])


def _module_bindings(
    tree: ast.Module, module: str, is_package: bool
) -> tuple[list[str], set[str], set[str] | None]:
    """(modules star-imported, names bound, literal ``__all__``) of a module's top level, ``if`` and
    ``try`` blocks included (``if TYPE_CHECKING:``, ``try: import x``)."""
    stars: list[str] = []
    bound: set[str] = set()
    exported: list[set[str]] = []
    todo = list(tree.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.If, ast.Try)):
            todo += [*stmt.body, *stmt.orelse, *getattr(stmt, "finalbody", [])]
            todo += [s for h in getattr(stmt, "handlers", []) for s in h.body]
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            _import_bindings(stmt, module, is_package, stars, bound)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            bound |= names
            listed = literal_names(stmt.value) if "__all__" in names and stmt.value is not None else None
            if listed is not None:
                exported.append(listed)
    return stars, bound, exported[0] if exported else None


def _import_bindings(
    stmt: ast.Import | ast.ImportFrom, module: str, is_package: bool, stars: list[str], bound: set[str]
) -> None:
    from tclint.rules.names import resolve_relative

    if isinstance(stmt, ast.Import):
        bound.update((a.asname or a.name).split(".", 1)[0] for a in stmt.names)
        return
    base = resolve_relative(module, is_package, stmt.level or 0, stmt.module)
    for alias in stmt.names:
        if alias.name != "*":
            bound.add(alias.asname or alias.name)
        elif base:
            stars.append(base)


# Dispatch tables a library indexes with a key derived from the model's class, read as data from the
# library's source: (package, the ``self.<attribute>(...)`` call, the table's module, the table's name,
# the key the library falls back to).  transformers: ``PreTrainedModel.loss_function`` returns
# ``LOSS_MAPPING[loss_type]``, ``loss_type`` the class name when it is a key, else the first key found
# in the class name (``re.findall`` over the keys), else ``"ForCausalLM"`` (modeling_utils.py).
DISPATCH_TABLES = (
    ("transformers", "loss_function", "transformers.loss.loss_utils", "LOSS_MAPPING", "ForCausalLM"),
)


class Dispatch:
    """Call edges for :data:`DISPATCH_TABLES`: ``self.loss_function(...)`` in ``BertForSequenceClassification``
    calls ``ForSequenceClassificationLoss``, a callee no walk of the call can name."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self._tables: dict[str, dict[str, str] | None] = {}

    def add_edges(self, lib_facts: list[FileFacts]) -> bool:
        """Add the dispatched edge next to each table call of a loaded file; True if any was new."""
        changed = False
        for package, attr, module, table, fallback in DISPATCH_TABLES:
            for ff in lib_facts:
                if ff.module.split(".", 1)[0] != package:
                    continue
                for key, fn in list(ff.functions.items()):
                    if fn.cls is None:
                        continue
                    added = self._add(fn, attr, module, table, fallback)
                    if added:
                        # a new function object: the one in the cache and the process memo (the
                        # facts as walked) stays as it was, so a changed table is seen next run
                        fn = ff.functions[key] = copy.copy(fn)
                        fn.calls = [*fn.calls, *added]
                        changed = True
        return changed

    def _add(self, fn: Any, attr: str, module: str, table: str, fallback: str) -> list[Any]:
        """The dispatched edges ``fn`` lacks."""
        import dataclasses

        calls = [e for e in fn.calls if e.kind == "self" and e.target == attr and e.method == "__call__"]
        if not calls:
            return []
        mapping = self.table(module, table)
        if not mapping:
            return []
        target = mapping.get(_dispatch_key(fn.cls.rsplit(".", 1)[-1], list(mapping), fallback))
        if target is None:
            return []
        added: list[Any] = []
        for edge in calls:
            new = dataclasses.replace(edge, kind="name", target=target, method="__call__")
            if not any(
                e.kind == "name" and e.target == target and e.loc == edge.loc for e in [*fn.calls, *added]
            ):
                added.append(new)
        return added

    def table(self, module: str, name: str) -> dict[str, str] | None:
        """A module-level ``NAME = {"key": callee, ...}`` literal, callees qualified through the
        module's imports."""
        key = f"{module}:{name}"
        if key in self._tables:
            return self._tables[key]
        out = None
        located = self.env.locate(module)
        if located is not None:
            self.env.note_read(located[0])
            try:
                with open(located[0], encoding="utf-8", errors="replace") as fh:
                    tree = ast.parse(fh.read())
            except (OSError, SyntaxError, ValueError):
                tree = None
            if tree is not None:
                out = _literal_table(tree, module, located[1], name)
        self._tables[key] = out
        return out


def _literal_table(tree: ast.Module, module: str, is_package: bool, name: str) -> dict[str, str] | None:
    from tclint.rules.names import resolve_relative

    imported: dict[str, str] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom):
            base = resolve_relative(module, is_package, stmt.level or 0, stmt.module)
            imported.update((a.asname or a.name, f"{base}.{a.name}") for a in stmt.names if a.name != "*")
    for stmt in tree.body:
        if (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
            and stmt.targets[0].id == name
            and isinstance(stmt.value, ast.Dict)
        ):
            out = {}
            for k, v in zip(stmt.value.keys, stmt.value.values, strict=True):
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Name):
                    out[k.value] = imported.get(v.id, f"{module}.{v.id}")
            return out
    return None


def _dispatch_key(class_name: str, keys: list[str], fallback: str) -> str:
    """The key ``re.findall("(k1|k2|...)", class_name)[0]`` gives (the class name itself first)."""
    if class_name in keys:
        return class_name
    for start in range(len(class_name)):
        for k in keys:
            if class_name.startswith(k, start):
                return k
    return fallback


def mark(project: Project, loaded: dict[str, tuple[str, str]], cached: bool = True) -> None:
    """Tell the rules which of the project's files are an installed package's (never reported),
    and whether the run uses the user-level cache (``libjudged``: not under ``--no-cache``)."""
    from tclint.rules.libjudged import CACHED_MEMO

    project.memo[LIBRARY_MEMO] = loaded
    project.memo[CACHED_MEMO] = cached


def refine(
    linter: Any,
    project: Project,
    sources: dict[str, Any],
    lib_sources: dict[str, Any],
    env: Environment | None = None,
) -> Project:
    """:func:`refine_with` for a command-line run: the project's files walked again from ``sources``."""
    from tclint.rules.engine import analyze_source

    def other(ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
        src = sources.get(ff.path)
        if src is None or src.text is None:
            return None
        predicates = linter.resolver.for_file(ff.path).compiling_predicates
        return analyze_source(src, ff.module, ff.is_package, ff.root, predicates, seeds, returns_of)

    return refine_with(project, lib_sources, other, getattr(linter, "cache", None) is not None, env)


def refine_with(
    project: Project, lib_sources: dict[str, Any], other: Any, cached: bool, env: Environment | None = None
) -> Project:
    """The type refinement of :mod:`tclint.rules.argflow` over the project and its library files, the
    library files' re-walks cached like their plain facts: keyed by the file's hash, the parameter
    types flowed in and the answers the walk got about callees' return types (a sealed index lists
    which callees a walk asked about), so that a warm run re-derives only the user's side."""
    import hashlib

    from tclint.rules import sealed
    from tclint.rules.argflow import refine as argflow_refine
    from tclint.rules.engine import analyze_source

    cache = library_cache() if cached else None
    lib_predicates = project.settings.compiling_predicates
    index_dir = os.path.join(cache.directory, "refined", cache.fingerprint) if cache is not None else ""
    pending_index: dict[str, list[str]] = {}

    def digest(*parts: str) -> str:
        return hashlib.blake2b("|".join(parts).encode(), digest_size=16).hexdigest()

    def answers(refs: list[str], returns_of: Any) -> str:
        return repr([(ref, returns_of(ref)) for ref in refs])

    def reanalyze(ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
        if ff.path not in lib_sources:
            return other(ff, seeds, returns_of)  # the project's own file
        src = lib_sources[ff.path]
        if src.text is None:
            return None
        predicates = lib_predicates
        if cache is None or not src.digest or cache._key is None:
            return analyze_source(src, ff.module, ff.is_package, ff.root, predicates, seeds, returns_of)
        base = digest(
            cache.facts_key(src.digest, ff.module, ff.is_package, ff.root, predicates, ff.path), repr(seeds)
        )
        asked = sealed.read(os.path.join(index_dir, base), cache._key, "refined-index", base)
        if isinstance(asked, list) and all(isinstance(r, str) for r in asked):
            hit = cache.get_facts(digest(base, answers(asked, returns_of)))
            if hit is not None:
                hit.path = ff.path
                return hit
        queried: list[str] = []

        def recording(ref: str) -> Any:
            queried.append(ref)
            return returns_of(ref)

        new = analyze_source(src, ff.module, ff.is_package, ff.root, predicates, seeds, recording)
        refs = sorted(set(queried))
        cache.put_facts(digest(base, answers(refs, returns_of)), new)
        pending_index[base] = refs
        return new

    dispatch = Dispatch(env or Environment.for_python((project.settings.probe or {}).get("python")))

    def with_dispatch(ff: FileFacts, seeds: Any, returns_of: Any) -> FileFacts | None:
        new = reanalyze(ff, seeds, returns_of)
        if new is not None and ff.path in lib_sources:
            new = own_copy(new)  # (the walk as cached stays unbound)
            dispatch.add_edges([new])  # a re-walk has the file's own edges only
        return new

    project = argflow_refine(project, with_dispatch)
    if cache is not None:
        cache.flush()
        _write_index(cache, index_dir, pending_index)
    return project


def _write_index(cache: Any, index_dir: str, pending_index: dict[str, list[str]]) -> None:
    """The sealed lists of callees each new re-walk asked about (see :func:`refine_with`)."""
    from tclint.rules import sealed

    key = cache._key
    if key is None or not pending_index:
        return
    os.makedirs(index_dir, exist_ok=True)
    for base, refs in pending_index.items():
        try:
            sealed.write(os.path.join(index_dir, base), key, "refined-index", base, refs)
        except (OSError, ValueError):
            continue


def _modules_to_load(
    misses: set[str], own_roots: set[str], tried: set[str], env: Environment
) -> dict[str, tuple[str, bool, str]]:
    """The longest installed module named by each unresolved reference (not the project's, not torch's
    nor the standard library's), each asked of the environment once."""
    out: dict[str, tuple[str, bool, str]] = {}
    for ref in misses:
        parts = ref.rstrip(".").split(".")
        if not parts[0] or parts[0] in own_roots or parts[0] in _SKIP_ROOTS or parts[0].startswith("<"):
            continue
        for i in range(len(parts), 0, -1):
            module = ".".join(parts[:i])
            if module in tried:
                if module in out or env.locate(module) is not None:
                    break
                continue
            tried.add(module)
            found = env.locate(module)
            if found is not None:
                out[module] = found
                break
    return out


def is_library_file(project: Project, path: str) -> bool:
    return path in project.memo.get(LIBRARY_MEMO, {})


# --------------------------------------------------------------------------------------------
# what a result computed while following depends on outside the project (the whole-run cache)
# --------------------------------------------------------------------------------------------
LIBCONFIG_ENV = "libconfig-env"  # Project.memo key of the environment TC312's judgement searches


def begin_recording() -> None:
    """A run whose :func:`dependencies` will be taken starts: forget the files TC312's judgement
    parsed for earlier runs of this process (``libconfig.PARSED``)."""
    libconfig = sys.modules.get("tclint.rules.libconfig")
    if libconfig is not None:
        libconfig.PARSED.clear()


def environment_key(env: Environment) -> str:
    """The import roots and editable mappings of an environment, as text for a cache key (a new
    ``.pth`` path or an editable install changes it)."""
    return repr((env.roots, sorted(env.editable.items())))


def dependencies(
    envs: list[Environment],
    project: Project | None = None,
    covered: set[str] | frozenset[str] = frozenset(),
    parsed: Any = None,
) -> dict[str, Any] | None:
    """Everything outside the project's files that a run following installed packages read, as
    plain data: each environment's roots and the answer of every module lookup it made (a module
    installed since, or removed, answers differently), and the stat identity of every file read --
    library facts loaded, star exports and dispatch tables read, and the files TC312's
    configuration judgement parsed since :func:`begin_recording` (``libconfig.PARSED``; ``parsed``:
    those paths instead, e.g. every file the process parsed, for a long-lived server whose
    judgements are memoised across passes); ``covered``: files whose content is in the run's key
    already.  None when the result must not be reused: a file changed while the run read it,
    or one modified so recently that a change within the same timestamp tick would not show
    (``reading.RACY_MARGIN_NS``, as the stat table).  :func:`dependencies_hold` re-checks it."""
    from tclint.rules.reading import RACY_MARGIN_NS

    if project is not None and isinstance(project.memo.get(LIBCONFIG_ENV), Environment):
        envs = [*envs, project.memo[LIBCONFIG_ENV]]
    files: dict[str, tuple[int, ...]] = {}
    rows = []
    for env in envs:
        for path, stamp in env.reads.items():
            if files.setdefault(os.path.abspath(path), stamp) != stamp:
                return None  # read twice, changed in between
        rows.append(
            [
                list(env.roots),
                sorted([k, v] for k, v in env.editable.items()),
                sorted([m, list(found) if found is not None else None] for m, found in env._found.items()),
            ]
        )
    libconfig = sys.modules.get("tclint.rules.libconfig")
    trees = dict(getattr(libconfig, "_TREES", {}))
    for path in sorted(getattr(libconfig, "PARSED", ()) if parsed is None else parsed):
        stamp = trees[path][0] if path in trees else _MISSING[:2]
        path = os.path.abspath(path)
        if path in covered:
            continue
        now = files.get(path) or _stat_stamp(path)
        if now[:2] != tuple(stamp):
            return None  # changed since it was parsed
        files[path] = now
    started = min((env.created_ns for env in envs), default=time.time_ns())
    for stamp in files.values():
        if stamp != _MISSING and max(stamp[1], stamp[2]) >= started - RACY_MARGIN_NS:
            return None
    return {"envs": rows, "files": sorted([p, *stamp] for p, stamp in files.items())}


def dependencies_hold(record: Any) -> bool:
    """Does every file and module lookup of a :func:`dependencies` record still read the same?
    Files by size and mtime (as the project's stat table); lookups asked again of an environment
    with the recorded roots (a few ``stat`` calls each).  Anything malformed: False (a miss)."""
    if not isinstance(record, dict):
        return False
    try:
        for path, *stamp in record["files"]:
            if list(_stat_stamp(path)) != stamp:
                return False
        for roots, editable, found in record["envs"]:
            env = Environment([str(r) for r in roots], {str(k): str(v) for k, v in editable})
            if env.roots != roots:
                return False  # a root folder vanished
            for module, answer in found:
                got = env.locate(module)
                if (list(got) if got is not None else None) != answer:
                    return False
    except (KeyError, TypeError, ValueError):
        return False
    return True
