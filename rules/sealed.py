"""Cache entries that cannot run code and cannot be forged by the linted repository.

A cache folder travels with a project (a clone, a shared volume, an archive), so its files are as
untrusted as the project itself.  Every entry is therefore

    MAGIC | MAC (32 bytes) | marshal payload of plain data

where the MAC is keyed BLAKE2b over the entry's kind, its name and the payload, under a random key
kept outside every project, per user: ``$TCLINT_CACHE_KEY_FILE`` if set, else
``$XDG_CONFIG_HOME/tclint/cache-key`` (``~/.config/tclint/cache-key``), created with mode 0600 in a
0700 folder.  The MAC is checked before the payload is decoded; an entry whose MAC does not match
(written by someone else, moved to another name, damaged, truncated) is a miss, and so is any
payload marshal or the caller cannot decode.  ``marshal`` builds only plain values (see
``plaindata``), so even a decoded payload is data, never a call.

Entries are written to a temporary file in the target's folder and renamed over the target; a
failed write (a full disk) removes its temporary file.
"""

from __future__ import annotations

import hashlib
import hmac
import marshal
import os
import sys
import tempfile
from typing import Any

KEY_ENV = "TCLINT_CACHE_KEY_FILE"
MAGIC = b"TCLINT-CACHE-3\n"  # 3: authenticated marshal (1 and 2 were pickles)
MAC_SIZE = 32
TMP_PREFIX = ".tclint-tmp-"  # temporary files tclint writes in its cache folder
MARSHAL_VERSION = 4

_key: bytes | None = None
_key_path: str | None = None


def key_path() -> str:
    """Where this user's cache key lives (outside every project)."""
    return key_paths()[0]


def key_paths() -> list[str]:
    """Where the key may live, first choice first: ``$TCLINT_CACHE_KEY_FILE`` alone when set,
    else the user's config folder, then (a read-only home) the user's cache folder, then a
    folder of this user's own in the temporary folder."""
    explicit = os.environ.get(KEY_ENV)
    if explicit:
        return [explicit]
    home = os.path.expanduser("~")
    config = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(home, ".cache")
    paths = [os.path.join(config, "tclint", "cache-key"), os.path.join(cache, "tclint", "cache-key")]
    try:
        uid = os.getuid() if hasattr(os, "getuid") else 0
        paths.append(os.path.join(tempfile.gettempdir(), f"tclint-{uid}", "cache-key"))
    except OSError:  # no usable temporary folder
        pass
    return paths


def user_key(create: bool = False) -> bytes | None:
    """This user's cache key; with ``create``, made if missing or unusable.  None: no key (every
    read is a miss, nothing is written)."""
    global _key, _key_path
    paths = key_paths()
    if _key is not None and _key_path in paths:
        return _key
    for path in paths:
        key = _read_key(path)
        if key is None and create:
            key = _new_key(path)
        if key is not None:
            _key, _key_path = key, path
            return key
    return None


def _read_key(path: str) -> bytes | None:
    """The key in ``path`` if it is one this user alone can read and write."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o077):
            return None  # someone else could read (and so forge with) or replace it
        text = os.read(fd, 256).strip()
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text.decode("ascii"))
    except ValueError:
        return None
    return key if len(key) == MAC_SIZE else None


def _new_key(path: str) -> bytes | None:
    """Write a fresh key (atomically: a key file is never seen half written); when another
    process got there first, use its key."""
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        st = os.lstat(folder)
        if hasattr(os, "getuid") and (st.st_uid != os.getuid() or st.st_mode & 0o022):
            return None  # a folder someone else made or may write to (the shared temporary folder)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".cache-key-")  # mode 0600
    except OSError:
        return None
    key = os.urandom(MAC_SIZE)
    try:
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(key.hex() + "\n")
            try:
                os.link(tmp, path)  # never replaces a key another process just wrote
            except FileExistsError:
                existing = _read_key(path)
                if existing is not None:
                    return existing
                os.replace(tmp, path)  # the existing file is no usable key: replace it
            except OSError:
                os.replace(tmp, path)  # no hard links on this file system
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return None
    return _read_key(path)


# marshal's format may change between Python versions: an entry is only read by the version that wrote it
_WRITER = f"{sys.implementation.name}-{sys.version_info[0]}.{sys.version_info[1]}".encode()


def _mac(key: bytes, kind: str, name: str, payload: bytes) -> bytes:
    h = hashlib.blake2b(key=key, digest_size=MAC_SIZE, person=b"tclint-cache")
    h.update(_WRITER + b"\0" + f"{kind}\0{name}\0".encode("utf-8", "surrogatepass"))
    h.update(payload)
    return h.digest()


def seal(key: bytes, kind: str, name: str, value: Any) -> bytes:
    """The bytes of an entry holding ``value`` (plain data; marshal raises ValueError otherwise)."""
    return seal_payload(key, kind, name, marshal.dumps(value, MARSHAL_VERSION))


def seal_payload(key: bytes, kind: str, name: str, payload: bytes) -> bytes:
    """The bytes of an entry whose value is already ``payload`` (``marshal.dumps(value,
    MARSHAL_VERSION)``): what a writer that must not hold every value until the key is known
    keeps instead (``rerun.store_full``)."""
    return MAGIC + _mac(key, kind, name, payload) + payload


def unseal(key: bytes | None, kind: str, name: str, data: bytes) -> Any:
    """The value of an entry, or None for anything not written under this key for this kind and
    name: the MAC is verified before a byte of the payload is decoded."""
    if key is None or len(data) < len(MAGIC) + MAC_SIZE or not data.startswith(MAGIC):
        return None
    mac = data[len(MAGIC) : len(MAGIC) + MAC_SIZE]
    payload = data[len(MAGIC) + MAC_SIZE :]
    if not hmac.compare_digest(mac, _mac(key, kind, name, payload)):
        return None
    try:
        return marshal.loads(payload)
    except Exception:  # authentic but unreadable (another Python's marshal): a miss
        return None


def read(path: str, key: bytes | None, kind: str, name: str) -> Any:
    """The value stored in the entry file ``path``, or None (missing, foreign, damaged)."""
    if key is None:
        return None
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    return unseal(key, kind, name, data)


def write_atomic(target: str, data: bytes) -> None:
    """Replace ``target`` with ``data`` through a temporary file in the same folder; on any
    failure (ENOSPC, EDQUOT, EROFS) the temporary file is removed and the error raised."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".", prefix=TMP_PREFIX, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write(path: str, key: bytes, kind: str, name: str, value: Any) -> None:
    """Store ``value`` as the entry file ``path`` (raises OSError, or ValueError for a value that
    is not plain data)."""
    write_atomic(path, seal(key, kind, name, value))


def write_payload(path: str, key: bytes, kind: str, name: str, payload: bytes) -> None:
    """Store the marshalled value ``payload`` as the entry file ``path`` (see ``seal_payload``)."""
    write_atomic(path, seal_payload(key, kind, name, payload))
