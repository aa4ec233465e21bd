"""A damaged cache (a disk that filled up, a crash between write and rename on a filesystem that
does not order them, a copied or synced cache folder) must cost time, never correctness: tclint
never crashes on a bad entry and never reports what an uncached run would not."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tclint.rules import sealed
from tclint.rules.cache import Cache

from tests.helpers.fuzzutil import as_dicts, budget, lint_bytes, python_seeds, tried
from tests.helpers.relutil import tclint

SEEDS = python_seeds()
FILES = {"a.py": SEEDS[3], "b.py": SEEDS[10], "c.py": SEEDS[-2]}
OVERFLOW = b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\x7f"  # BINBYTES8 with an absurd length
MEMORY = b"\x80\x05\x96\xff\xff\xff\xff\xff\xff\xff\x7f"  # BYTEARRAY8 likewise
# marshal payloads that make marshal.loads raise: a tuple cut short, a bad type code, a truncated
# string (sealed with the user's key below, so that the MAC passes and marshal runs)
BAD_MARSHAL = [b"(\x02\x00\x00\x00", b"\x00", b"u\xff\x00\x00\x00abc"]


def _entries(folder: str, kind: str | None = None) -> list[str]:
    out = []
    for base, _dirs, names in os.walk(folder):
        out.extend(
            os.path.join(base, n)
            for n in names
            if n.endswith(".entry") and (kind is None or f"{os.sep}{kind}{os.sep}" in base + os.sep)
        )
    return sorted(out)


@pytest.fixture
def warm(tmp_path):
    folder = str(tmp_path / "cache")
    cache = Cache(folder)
    lint_bytes(FILES, cache=cache)
    cache.flush()
    assert _entries(folder, "facts") and _entries(folder, "runs")
    return folder


def _uncached():
    return as_dicts(lint_bytes(FILES).diagnostics)


def test_truncated_and_empty_entries(warm):
    for i, path in enumerate(_entries(warm)):
        with open(path, "r+b") as fh:
            fh.truncate(i % 7)
    assert as_dicts(lint_bytes(FILES, cache=Cache(warm)).diagnostics) == _uncached()


@pytest.mark.parametrize("payload", [OVERFLOW, MEMORY], ids=["OverflowError", "MemoryError"])
@pytest.mark.parametrize("kind", ["facts", "runs"])
def test_entries_that_raise_unusual_errors(warm, kind, payload):
    for path in _entries(warm, kind):
        with open(path, "wb") as fh:
            fh.write(payload)
    if kind == "facts":
        shutil.rmtree(os.path.join(warm, "runs"))  # so that the facts are read
    assert as_dicts(lint_bytes(FILES, cache=Cache(warm)).diagnostics) == _uncached()


def _name(path: str) -> str:
    return os.path.basename(path)[: -len(".entry")]


@pytest.mark.parametrize("value", [[1, 2], [None], ["TC101"], [("TC101",)], "text", (1, 2, 3)], ids=repr)
@pytest.mark.parametrize("kind", ["facts", "runs"])
def test_authentic_entry_of_the_wrong_shape(warm, kind, value):
    """An entry sealed with the user's own key (a bug, another tclint version) whose value has
    another layout: a miss, never a crash."""
    key = sealed.user_key()
    for path in _entries(warm, kind):
        sealed.write(path, key, kind, _name(path), value)
    if kind == "facts":
        shutil.rmtree(os.path.join(warm, "runs"))
    assert as_dicts(lint_bytes(FILES, cache=Cache(warm)).diagnostics) == _uncached()


@pytest.mark.parametrize("payload", BAD_MARSHAL, ids=["short-tuple", "bad-code", "truncated"])
def test_authentic_entry_marshal_cannot_read(warm, payload):
    key = sealed.user_key()
    for path in _entries(warm):
        kind = os.path.relpath(path, warm).split(os.sep)[0]
        mac = sealed._mac(key, kind, _name(path), payload)
        with open(path, "wb") as fh:
            fh.write(sealed.MAGIC + mac + payload)
    shutil.rmtree(os.path.join(warm, "runs"))
    assert as_dicts(lint_bytes(FILES, cache=Cache(warm)).diagnostics) == _uncached()


def test_swapped_facts_entries(warm):
    """Two entries exchanged (a synced folder, a restored backup): results must not change."""
    facts = _entries(warm, "facts")
    a, b = facts[0], facts[1]
    tmp = a + ".swap"
    os.replace(a, tmp)
    os.replace(b, a)
    os.replace(tmp, b)
    shutil.rmtree(os.path.join(warm, "runs"))
    assert as_dicts(lint_bytes(FILES, cache=Cache(warm)).diagnostics) == _uncached()


_damage = st.lists(
    st.tuples(
        st.integers(0, 10**6),
        st.sampled_from(["truncate", "flip", "zero", "swap", "garbage"]),
        st.integers(0, 10**6),
        st.binary(min_size=1, max_size=64),
    ),
    min_size=1,
    max_size=4,
)


@budget(150, phases=["generate"])
@given(_damage)
def test_random_damage(damage):
    tried("cache: random damage to entries (truncate, flip, empty, swap, garbage)")
    folder = tempfile.mkdtemp(prefix="tclint-damaged-cache-")
    try:
        cache = Cache(folder)
        lint_bytes(FILES, cache=cache)
        cache.flush()
        entries = _entries(folder)
        for which, op, where, blob in damage:
            path = entries[which % len(entries)]
            with open(path, "rb") as fh:
                data = fh.read()
            if op == "truncate":
                data = data[: where % (len(data) + 1)]
            elif op == "flip":
                i = where % max(1, len(data))
                data = data[:i] + blob[:1] + data[i + 1 :]
            elif op == "zero":
                data = b""
            elif op == "swap":
                with open(entries[where % len(entries)], "rb") as fh:
                    data = fh.read()
            else:
                data = blob
            with open(path, "wb") as fh:
                fh.write(data)
        assert as_dicts(lint_bytes(FILES, cache=Cache(folder)).diagnostics) == _uncached()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_cli_with_a_damaged_cache(tmp_path):
    """The same through the command line: no traceback, the uncached output."""
    for name, data in FILES.items():
        (tmp_path / name).write_bytes(data)
    (tmp_path / ".git").mkdir()
    expected = tclint(".", "--output-format", "json", "--no-cache", cwd=str(tmp_path)).stdout
    tclint(".", cwd=str(tmp_path))
    for path in _entries(str(tmp_path / ".tclint_cache")):
        with open(path, "wb") as fh:
            fh.write(OVERFLOW)
    proc = tclint(".", "--output-format", "json", cwd=str(tmp_path))
    assert b"Traceback" not in proc.stderr, proc.stderr.decode()[-1500:]
    assert proc.stdout == expected
