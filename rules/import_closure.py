"""The local modules that given files import, for a run with no project marker above them.

``tclint check run.py`` (or the probe's static side, which lints the files a program ran) in a
folder without ``pyproject.toml``, a setup file or a repository indexes only the given files
(``config.project_root``: a stray script is no reason to walk a home folder).  Yet a script
importing ``models`` from beside it is how many projects start, and Python finds ``models/``
because the script's folder is ``sys.path[0]``: without it the compile site in ``run.py`` cannot be
resolved (TC311) and the model's hazards are never linted.  This module finds those files as the
import system would from the import roots of the given files (``discovery.module_for``): only the
modules the given files import, and transitively what those import, only below those roots; in a
folder of installed distributions (``site-packages``) only the given files' own packages.  It
reads the files' import statements (``ast``); it never imports or runs anything.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from tclint.rules.discovery import module_for

MAX_FILES = 2000  # a bound, not a budget: a script's local package is far smaller


def import_closure(files: list[str]) -> list[str]:
    """Absolute paths of the ``.py`` files below the given files' import roots that they import,
    directly or through each other (the given files themselves excluded), in discovery order."""
    given = [os.path.abspath(f) for f in files if f.endswith(".py") and os.path.isfile(f)]
    roots = list(dict.fromkeys(module_for(f)[2] for f in given))
    given_tops = _given_tops(given)
    seen = set(given)
    queue = list(given)
    found: list[str] = []
    for script in _scripts_importing(given, roots):  # `run.py` beside the package of a given file
        if script not in seen:
            seen.add(script)
            found.append(script)
            queue.append(script)
    while queue and len(found) < MAX_FILES:
        path = queue.pop(0)
        module, is_package, _root = module_for(path)
        for name in _imported_modules(path, module, is_package):
            for candidate in _files_of(name, roots, given_tops):
                if candidate not in seen:
                    seen.add(candidate)
                    found.append(candidate)
                    queue.append(candidate)
    return found[:MAX_FILES]


MAX_SCRIPTS = 200  # the .py files read at one import root, looking for importers of a package


def _scripts_importing(given: list[str], roots: list[str]) -> Iterator[str]:
    """The scripts at an import root (its own ``.py`` files, not a walk) that import the package
    of a given file inside a package: ``tclint check models/seq.py`` is linted with the
    ``run.py`` that compiles ``models.Seq2Seq``."""
    tops: dict[str, set[str]] = {}
    for path in given:
        module, _is_package, root = module_for(path)
        if "." in module or os.path.basename(path) == "__init__.py":
            tops.setdefault(root, set()).add(module.split(".")[0])
    for root in roots:
        wanted = tops.get(root)
        if not wanted or installed_root(root):
            continue  # a top-level module of site-packages is another distribution, not a script
        try:
            names = sorted(n for n in os.listdir(root) if n.endswith(".py"))[:MAX_SCRIPTS]
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            if not os.path.isfile(path):
                continue
            stem = name[:-3]
            if any(m.split(".")[0] in wanted for m in _imported_modules(path, stem, False)):
                yield path


def _imported_modules(path: str, module: str, is_package: bool) -> Iterator[str]:
    """Dotted names the file's import statements may load (``from a import b``: ``a`` and ``a.b``,
    since ``b`` may be a submodule); relative imports resolved against the file's package."""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            tree = ast.parse(fh.read(), path)
    except (OSError, SyntaxError, ValueError):
        return
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".") if package else []
                if node.level - 1 > len(parts):
                    continue  # beyond the top-level package: Python refuses it too
                base_parts = parts[: len(parts) - (node.level - 1)]
                if node.module:
                    base_parts.append(node.module)
                base = ".".join(p for p in base_parts if p)
            else:
                base = node.module or ""
            if not base:
                continue
            yield base
            for alias in node.names:
                if alias.name != "*":
                    yield f"{base}.{alias.name}"


def _given_tops(given: list[str]) -> dict[str, set[str]]:
    """The top-level package (or module) names of the given files, per import root."""
    tops: dict[str, set[str]] = {}
    for path in given:
        module, _is_package, root = module_for(path)
        tops.setdefault(root, set()).add(module.split(".")[0])
    return tops


def installed_root(root: str) -> bool:
    """Whether ``root`` is a folder of installed distributions (``site-packages``, Debian's
    ``dist-packages``), where each top-level name is a distribution of its own."""
    return os.path.basename(root) in ("site-packages", "dist-packages")


def _files_of(name: str, roots: list[str], given_tops: dict[str, set[str]]) -> Iterator[str]:
    """The files importing ``name`` runs below one of ``roots``: each package's ``__init__.py`` on
    the way, then the module's file (``a/b.py`` or ``a/b/__init__.py``).  In a folder of installed
    distributions only the packages of the given files count: a library given beside a script is
    linted with its own modules, not with every distribution it imports (torch's 1,251 files for
    normflows: torch's own classes then read as the project's, ``torch.autograd.Function.apply``
    as a project function)."""
    parts = name.split(".")
    for root in roots:
        if installed_root(root) and parts[0] not in given_tops.get(root, ()):
            continue
        folder = root
        for i, part in enumerate(parts):
            if not part.isidentifier():
                break
            last = i == len(parts) - 1
            package_init = os.path.join(folder, part, "__init__.py")
            if os.path.isfile(package_init):
                yield package_init
                folder = os.path.join(folder, part)
                continue
            if last and os.path.isfile(os.path.join(folder, part + ".py")):
                yield os.path.join(folder, part + ".py")
            break
