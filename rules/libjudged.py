"""TC312's configuration judgement of a library site, remembered in the user-level library cache.

``libconfig.judge`` decides, for one library site reached from one compile site, whether the
user's configuration takes the branch it sits behind.  It parses the library files along the
site's chain (a warm run of the transformers bench script parses ~40 files, ``modeling_utils.py``
among them, and walks their trees): most of what a warm run with ``follow-libraries`` spent above
the same run without following.  Its verdict is a function of

- what the user's script shows at the compile site (``libconfig.UserSide``, a plain value),
- the chain's (path, line, is the root) steps,
- the files it parses (``libconfig.parse``) and reads through the environment the config classes
  are searched in (``project.memo["libconfig-env"]``), and that environment's module lookups,

so :func:`judged` stores it under a key of the first two (with the tool's fingerprint and the
environment's roots) together with the stat identity of every file of the third and the answer of
every lookup, and a later run uses it only when all of them still read the same (a library
upgraded, a file edited, a module installed: judged again).  Files modified within the
racy-timestamp margin are never stored (``reading.RACY_MARGIN_NS``).  A verdict used from the
cache adds its files and lookups to the environment's record, so the whole-run record
(``libfollow.dependencies``) still lists everything the result depends on.  Entries are sealed
plain data (``sealed``): a damaged or foreign entry is a miss.  Without a cache (``--no-cache``)
every site is judged.
"""

from __future__ import annotations

import hashlib
import os
import time
from typing import Any

KIND = "judged-1"
FOLDER = "judged"
CACHED_MEMO = "library-cached"  # Project.memo: the run uses the user-level cache (not --no-cache)


def judged(project: Any, side: Any, steps: list[tuple[str, int, bool]]) -> tuple[Any, ...]:
    """``libconfig.judge(project, side, steps)``, from the user-level cache when it still holds."""
    from tclint.rules import libconfig, libfollow, sealed

    cache = libfollow.library_cache() if project.memo.get(CACHED_MEMO) else None
    if cache is None or cache._key is None:
        return libconfig.judge(project, side, steps)
    env = project.memo.get(libfollow.LIBCONFIG_ENV)
    if env is None:  # as libconfig creates it
        env = project.memo[libfollow.LIBCONFIG_ENV] = libfollow.Environment.for_python(
            (project.settings.probe or {}).get("python")
        )
    key = hashlib.blake2b(
        repr((cache.fingerprint, libfollow.environment_key(env), repr(side), steps)).encode(
            "utf-8", "surrogatepass"
        ),
        digest_size=16,
    ).hexdigest()
    path = os.path.join(cache.directory, FOLDER, cache.fingerprint, key[:2], key)
    hit = _valid(sealed.read(path, cache._key, KIND, key), env)
    if hit is not None:
        return hit
    started = time.time_ns()
    parsed: set[str] = set()
    reads_before = dict(env.reads)
    libconfig.RECORDERS.append(parsed)
    try:
        result = libconfig.judge(project, side, steps)
    finally:
        libconfig.RECORDERS.remove(parsed)
    record = _record(result, parsed, env, reads_before, started)
    if record is not None:
        libfollow.write_entry(cache, path, KIND, key, record)
    return result


def _encode(result: tuple[Any, ...]) -> list[Any] | None:
    """The verdict as plain data: booleans, sets and lists of strings (anything else: not stored)."""
    out: list[Any] = []
    for value in result:
        if isinstance(value, bool):
            out.append(["b", value])
        elif isinstance(value, (set, frozenset)) and all(isinstance(v, str) for v in value):
            out.append(["s", sorted(value)])
        elif isinstance(value, list) and all(isinstance(v, str) for v in value):
            out.append(["l", list(value)])
        else:
            return None
    return out


def _decode(plain: Any) -> tuple[Any, ...] | None:
    out: list[Any] = []
    for tag, value in plain:
        if tag == "b" and isinstance(value, bool):
            out.append(value)
        elif tag in ("s", "l") and isinstance(value, list) and all(isinstance(v, str) for v in value):
            out.append(set(value) if tag == "s" else list(value))
        else:
            return None
    return tuple(out)


def _record(
    result: tuple[Any, ...], parsed: set[str], env: Any, reads_before: dict[str, Any], started: int
) -> dict[str, Any] | None:
    """What to store for a verdict: the verdict, the stat identity of every file the judgement
    parsed or read through ``env`` (every file ``env`` read so far: a star-export answer computed
    for an earlier site may serve this one), and every lookup ``env`` answered.  None when a file
    changed while it was used or was modified too recently to be trusted."""
    from tclint.rules import libconfig, libfollow
    from tclint.rules.reading import RACY_MARGIN_NS

    encoded = _encode(result)
    if encoded is None:
        return None
    files: dict[str, tuple[int, ...]] = dict(env.reads)
    for path in parsed:
        now = libfollow._stat_stamp(path)
        tree = libconfig._TREES.get(path)
        if tree is None or now[:2] != tuple(tree[0]):
            return None  # unreadable (judged without it) or changed since it was parsed
        files[os.path.abspath(path)] = now
    for path, stamp in env.reads.items():
        if path in reads_before and reads_before[path] != stamp:
            return None
    for stamp in files.values():
        if stamp != libfollow._MISSING and max(stamp[1], stamp[2]) >= started - RACY_MARGIN_NS:
            return None
    answers = sorted([m, list(found) if found is not None else None] for m, found in env._found.items())
    return {"result": encoded, "files": sorted([p, *s] for p, s in files.items()), "answers": answers}


def _valid(record: Any, env: Any) -> tuple[Any, ...] | None:
    """The stored verdict when every file and lookup it depends on reads the same; its files and
    lookups are then added to ``env``'s record (the whole-run dependencies)."""
    from tclint.rules import libfollow

    if not isinstance(record, dict):
        return None
    try:
        result = _decode(record["result"])
        files = [(str(path), tuple(stamp)) for path, *stamp in record["files"]]
        answers = [(str(module), answer) for module, answer in record["answers"]]
    except (KeyError, TypeError, ValueError):
        return None
    if result is None:
        return None
    for path, stamp in files:
        if libfollow._stat_stamp(path) != stamp:
            return None
    for module, answer in answers:
        got = env.locate(module)
        if (list(got) if got is not None else None) != answer:
            return None
    for path, stamp in files:
        env.reads.setdefault(path, stamp)
    return result
