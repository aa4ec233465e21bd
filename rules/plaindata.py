"""Cache payloads as plain data: facts and diagnostics to and from builtins that ``marshal`` writes.

A cache entry must be data, never a program: pickle runs whatever a file asks it to, so the cache
stores only ``None``/``bool``/``int``/``float``/``complex``/``str``/``bytes``/``tuple``/``list``/
``dict``/``set``/``frozenset`` (``marshal.dumps`` refuses anything else, subclasses included), and
this module turns tclint's record classes into such values and back.

A record class becomes a tuple of its fields in declaration order; how each field is converted
follows from its type annotation (``Loc | None``, ``list[CallEdge]``, ``dict[str, Ty]``...), so a
field made only of builtins is stored as it is and costs nothing to decode.  Decoders are built
once per class from the annotations, as straight-line functions, because a re-lint after one edit
decodes every other file's facts (about 800,000 values for 120,000 lines).  Fields typed ``Any``
(a candidate's ``data``, a compile site's options) use a tagged form in which every tuple is a tag,
so any record classes inside them round-trip too.

Decoding only calls the constructors of the classes named here: whatever the bytes hold, the
result is plain data and these records (and a malformed value raises, which callers treat as a
cache miss).  The entries are also authenticated before they are decoded (``sealed``).
"""

from __future__ import annotations

import dataclasses
import enum
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

from tclint.rules import facts as _facts
from tclint.rules import model as _model
from tclint.rules.types import Ty

Codec = tuple[Callable[[Any], Any] | None, Callable[[Any], Any] | None]  # (encode, decode); None: as is

_SCALARS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_RECORDS: dict[str, type] = {}  # class name -> record class (dataclasses, named tuples, enums)
_CODECS: dict[type, Codec] = {}


def _register(*classes: type) -> None:
    for cls in classes:
        _RECORDS[cls.__name__] = cls


_register(
    _model.Severity,
    _model.Confidence,
    _model.Applicability,
    _model.Origin,
    _model.Position,
    _model.Span,
    _model.Edit,
    _model.Fix,
    _model.RelatedLocation,
    _model.Diagnostic,
    Ty,
    *(
        cls
        for cls in vars(_facts).values()
        if isinstance(cls, type)
        and cls.__module__ == _facts.__name__
        and (dataclasses.is_dataclass(cls) or issubclass(cls, enum.Enum))
    ),
)


# -- fields typed Any: the tagged form ---------------------------------------------------------------
def encode_any(value: Any) -> Any:
    """Any value tclint keeps in an ``Any`` field, as plain data in which every tuple is a tag."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list:
        return [encode_any(v) for v in value]
    if kind is dict:
        if all(type(k) is str for k in value):
            return {k: encode_any(v) for k, v in value.items()}
        return ("d", [(encode_any(k), encode_any(v)) for k, v in value.items()])
    if kind is tuple:
        return ("t", *(encode_any(v) for v in value))
    if kind is set or kind is frozenset:
        return ("s" if kind is set else "f", [encode_any(v) for v in value])
    if _RECORDS.get(kind.__name__) is kind:
        encode = codec(kind)[0]
        return ("o", kind.__name__, value if encode is None else encode(value))
    raise TypeError(f"cannot store a {kind.__name__} in the cache")


def decode_any(data: Any) -> Any:
    kind = type(data)
    if kind is list:
        return [decode_any(v) for v in data]
    if kind is dict:
        return {k: decode_any(v) for k, v in data.items()}
    if kind is not tuple:
        if kind in _SCALARS:
            return data
        raise TypeError(f"unexpected {kind.__name__} in a cache entry")
    tag = data[0]
    if tag == "t":
        return tuple(decode_any(v) for v in data[1:])
    if tag == "d":
        return {decode_any(k): decode_any(v) for k, v in data[1]}
    if tag == "s":
        return {decode_any(v) for v in data[1]}
    if tag == "f":
        return frozenset(decode_any(v) for v in data[1])
    if tag == "o":
        decode = codec(_RECORDS[data[1]])[1]
        return data[2] if decode is None else decode(data[2])
    raise ValueError(f"unknown tag {tag!r} in a cache entry")


# -- typed fields ----------------------------------------------------------------------------------
def codec(tp: Any) -> Codec:
    """(encode, decode) for values of the annotation ``tp``; None where the value is stored as is."""
    if isinstance(tp, type) and tp in _CODECS:
        return _CODECS[tp]
    if tp is Any:
        return encode_any, decode_any
    if isinstance(tp, type) and tp in _SCALARS:
        return None, None
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return _union(args)
    if origin is list or origin is set or origin is frozenset:
        return _each(origin, codec(args[0]))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _each(tuple, codec(args[0]))
        return _fixed_tuple([codec(a) for a in args])
    if origin is dict:
        if codec(args[0]) != (None, None):
            raise TypeError(f"dictionary keys must be plain data: {tp}")
        return _dict_values(codec(args[1]))
    if isinstance(tp, type):
        return _record(tp)
    raise TypeError(f"no cache encoding for {tp!r}")


def _each(container: type, inner: Codec) -> Codec:
    enc, dec = inner
    if enc is None and dec is None:
        return None, None
    enc_one = enc or (lambda v: v)
    dec_one = dec or (lambda v: v)
    if container is list:
        return (lambda value: [enc_one(v) for v in value]), (lambda data: [dec_one(v) for v in data])
    return (lambda value: container([enc_one(v) for v in value])), (
        lambda data: container([dec_one(v) for v in data])
    )


def _fixed_tuple(parts: list[Codec]) -> Codec:
    if all(p == (None, None) for p in parts):
        return None, None
    encs = [p[0] or (lambda v: v) for p in parts]
    decs = [p[1] or (lambda v: v) for p in parts]
    pairs_e = list(enumerate(encs))
    pairs_d = list(enumerate(decs))
    return (lambda value: tuple(f(value[i]) for i, f in pairs_e)), (
        lambda data: tuple(f(data[i]) for i, f in pairs_d)
    )


def _dict_values(inner: Codec) -> Codec:
    enc, dec = inner
    if enc is None and dec is None:
        return None, None
    enc_one = enc or (lambda v: v)
    dec_one = dec or (lambda v: v)
    return (lambda value: {k: enc_one(v) for k, v in value.items()}), (
        lambda data: {k: dec_one(v) for k, v in data.items()}
    )


def _union(args: tuple[Any, ...]) -> Codec:
    options = [a for a in args if a is not type(None)]
    if len(options) == 1:
        enc, dec = codec(options[0])
        if enc is None and dec is None:
            return None, None
        enc_one = enc or (lambda v: v)
        dec_one = dec or (lambda v: v)
        return (lambda v: None if v is None else enc_one(v)), (lambda d: None if d is None else dec_one(d))
    # several alternatives (``Fix | tuple[Fix, ...] | None``): store which one it is
    checks = [(i, _runtime_class(a), codec(a)) for i, a in enumerate(options)]
    checks.sort(key=lambda c: c[1] is tuple)  # named tuples are tuples: test record classes first

    def encode(value: Any) -> Any:
        if value is None:
            return None
        for i, cls, (enc, _dec) in checks:
            if isinstance(value, cls):
                return (i, value if enc is None else enc(value))
        raise TypeError(f"a {type(value).__name__} where {options} was expected")

    decoders = {i: dec for i, _cls, (_enc, dec) in checks}

    def decode(data: Any) -> Any:
        if data is None:
            return None
        dec = decoders[data[0]]
        return data[1] if dec is None else dec(data[1])

    return encode, decode


def _runtime_class(tp: Any) -> type:
    origin = typing.get_origin(tp)
    if origin is None:
        if not isinstance(tp, type):
            raise TypeError(f"no cache encoding for {tp!r}")
        return tp
    return origin


def _record(cls: type) -> Codec:
    """A record class's codec, built once: enums by value, named tuples as tuples, dataclasses as
    the tuple of their fields (decoded by a generated straight-line function)."""
    if _RECORDS.get(cls.__name__) is not cls:
        raise TypeError(f"{cls.__qualname__} is not a record class the cache knows")
    if issubclass(cls, enum.Enum):
        members = {m.value: m for m in cls}
        result: Codec = ((lambda v: v.value), members.__getitem__)
    elif issubclass(cls, tuple):  # a named tuple of plain fields
        if any(codec(_hint(t)) != (None, None) for t in cls.__annotations__.values()):
            raise TypeError(f"{cls.__name__}: named tuples in the cache hold plain fields only")
        new = tuple.__new__
        result = (tuple, lambda d: new(cls, d))
    elif dataclasses.is_dataclass(cls):
        # placeholder while the fields are resolved (a class that refers to itself)
        _CODECS[cls] = (lambda v: _CODECS[cls][0](v), lambda d: _CODECS[cls][1](d))  # type: ignore[misc]
        result = _dataclass(cls)
    else:
        raise TypeError(f"no cache encoding for {cls.__qualname__}")
    _CODECS[cls] = result
    return result


_HINTS: dict[str, Any] = {}
_NAMESPACE = {**vars(typing), **vars(_model), **vars(_facts)}


def _hint(annotation: Any) -> Any:
    """An annotation string evaluated in the record modules' names (memoised: the same few dozen
    strings recur, and ``typing.get_type_hints`` would cost a run ~15 ms)."""
    if isinstance(annotation, typing.ForwardRef):  # a named tuple's fields
        annotation = annotation.__forward_arg__
    if not isinstance(annotation, str):
        return annotation
    hint = _HINTS.get(annotation)
    if hint is None:
        hint = _HINTS[annotation] = eval(annotation, _NAMESPACE)  # tclint's own annotations
    return hint


def _dataclass(cls: type) -> Codec:
    hints = {f.name: _hint(f.type) for f in dataclasses.fields(cls)}
    namespace: dict[str, Any] = {"cls": cls}
    enc_parts, dec_parts = [], []
    for i, (name, hint) in enumerate(hints.items()):
        enc = codec(hint)[0]
        namespace[f"e{i}"] = enc
        enc_parts.append(f"v.{name}" if enc is None else f"e{i}(v.{name})")
        dec_parts.append(_decode_expr(hint, f"d[{i}]", namespace, 0) or f"d[{i}]")
    # straight-line functions generated from tclint's own annotations, never from cache data
    source = (
        f"def encode(v):\n    return ({', '.join(enc_parts)},)\n"
        f"def decode(d):\n    return cls({', '.join(dec_parts)})\n"
    )
    exec(compile(source, f"<cache codec for {cls.__name__}>", "exec"), namespace)
    return namespace["encode"], namespace["decode"]


def _decode_expr(tp: Any, x: str, ns: dict[str, Any], depth: int) -> str | None:
    """A Python expression decoding the stored value ``x`` (a name or a subscript: it may be
    evaluated twice) of annotation ``tp``; None where the value is stored as is.  Containers
    become comprehensions inside the record's decoder, so a list of records costs one call per
    record, not one per list and per record.  Tuples of strings and named tuples (``Ty``) come out
    shared across entries (``_SHARED_TUPLES``)."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple and _strings_only(tp):
        return _shared_tuple_expr(x, ns)
    options = [a for a in args if a is not type(None)]
    if origin in (typing.Union, types.UnionType) and len(options) == 1 and len(args) == 2:
        if typing.get_origin(options[0]) is tuple and _strings_only(options[0]):
            return f"(None if {x} is None else {_shared_tuple_expr(x, ns)})"
    if codec(tp)[1] is None:
        return None
    v = f"_v{depth}"
    if origin in (typing.Union, types.UnionType) and len([a for a in args if a is not type(None)]) == 1:
        inner = _decode_expr(next(a for a in args if a is not type(None)), x, ns, depth)
        return f"(None if {x} is None else {inner})"
    if origin in (list, set, frozenset) or origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        target, inner = _element(args[0], v, ns, depth + 1)
        if origin is list:
            return f"[{inner} for {target} in {x}]"
        if origin is set:
            return f"{{{inner} for {target} in {x}}}"
        return f"{origin.__name__}([{inner} for {target} in {x}])"
    if origin is dict:
        inner = _decode_expr(args[1], v, ns, depth + 1) or v
        return f"{{_k{depth}: {inner} for _k{depth}, {v} in {x}.items()}}"
    if isinstance(tp, type) and origin is None and _RECORDS.get(tp.__name__) is tp:
        if issubclass(tp, enum.Enum):
            ns[f"_m_{tp.__name__}"] = {m.value: m for m in tp}
            return f"_m_{tp.__name__}[{x}]"
        ns[tp.__name__] = tp
        if issubclass(tp, tuple):  # immutable: one object per value (``Ty``)
            ns[f"_t_{tp.__name__}"] = _SHARED_RECORDS.setdefault(tp, {})
            ns["_new_shared"] = _new_shared
            return f"(_t_{tp.__name__}.get({x}) or _new_shared(_t_{tp.__name__}, {tp.__name__}, {x}))"
        if dataclasses.is_dataclass(tp) and all(
            codec(_hint(f.type)) == (None, None) for f in dataclasses.fields(tp)
        ):
            return f"{tp.__name__}(*{x})"
    # anything else (a record with converted fields, a tagged union, Any): its decoder
    name = f"_dec{len(ns)}"
    ns[name] = codec(tp)[1]
    return f"{name}({x})"


def _shared_tuple_expr(x: str, ns: dict[str, Any]) -> str:
    """The shared tuple for ``x``: the empty tuple as it is, a value met before by one lookup."""
    ns["_shared_get"] = _SHARED_TUPLES.get
    ns["_shared_tuple"] = _shared_tuple
    return f"({x} and (_shared_get({x}) or _shared_tuple({x})))"


def _element(tp: Any, v: str, ns: dict[str, Any], depth: int) -> tuple[str, str]:
    """(comprehension target, element expression) for the elements of a container: a fixed
    tuple is unpacked in the target, so ``list[tuple[str, str, Loc]]`` decodes in one pass."""
    args = typing.get_args(tp)
    if typing.get_origin(tp) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
        names = [f"{v}_{i}" for i in range(len(args))]
        parts = [_decode_expr(a, n, ns, depth + 1) or n for a, n in zip(args, names, strict=True)]
        return f"({', '.join(names)},)", f"({', '.join(parts)},)"
    return v, _decode_expr(tp, v, ns, depth) or v


# -- the payloads the cache stores -----------------------------------------------------------------
def encode_facts(facts: _facts.FileFacts) -> Any:
    return interned(codec(_facts.FileFacts)[0](facts))  # type: ignore[misc]


def interned(value: Any) -> Any:
    """A plain value with every string in it interned.  ``marshal`` writes an interned string as
    one and interns it again when it loads it, so the names that recur across files (qualified
    names, paths, modules, messages) are one object each in a process that loads many files'
    facts (a re-lint after one edit), instead of one per occurrence, and once per entry on disk.
    Equal integers (line and column numbers) become one object too, which ``marshal`` then writes
    once per entry and loads as one object (measured on the transformers tree's facts: 230 MiB
    held as stored before, 178 MiB with interned strings, 167 MiB with shared integers too)."""
    kind = type(value)
    if kind is str:
        return _intern(value)
    if kind is int:
        if len(_INTS) > 200_000:  # a bound for long-lived processes (the language server)
            _INTS.clear()
        return _INTS.setdefault(value, value)
    if kind is tuple:
        return tuple([interned(v) for v in value])
    if kind is list:
        return [interned(v) for v in value]
    if kind is dict:
        return {interned(k): interned(v) for k, v in value.items()}
    if kind is set or kind is frozenset:
        return kind(interned(v) for v in value)
    return value


_intern = sys.intern
_INTS: dict[int, int] = {}

# Decoded values shared across entries.  ``marshal`` shares what was one object within an entry
# only, so a process holding every file's facts (the project pass) held each file's own copies:
# on the transformers package 556,000 tuples of strings (74,000 distinct values: ``("load",)``,
# ``("#0", "tensor")``...) and 159,000 ``Ty`` (4,900 distinct), 40 of the 184 MiB of facts; held
# once each, the facts take 36 MiB less RSS and decode no slower.  Only immutable values are shared
# (tuples of strings, named tuples; never a ``Loc`` or a container), so sharing cannot change what
# any code computes.  (The 255,000 line numbers, 4,800 distinct, are not: sharing them saved 7 MiB
# and cost a third more decoding time.)
_SHARED_TUPLES: dict[tuple[Any, ...], tuple[Any, ...]] = {}
_SHARED_RECORDS: dict[type, dict[tuple[Any, ...], tuple[Any, ...]]] = {}  # named tuple class -> values
_SHARED_LIMIT = 1_000_000  # a bound for long-lived processes (the language server)


def _strings_only(tp: Any) -> bool:
    """An annotation of a tuple (fixed or variable length, optional) of strings and such tuples."""
    if tp is str or tp is type(None):
        return True
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin is tuple:
        return all(a is Ellipsis or _strings_only(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        return all(_strings_only(a) for a in args)
    return False


def _shared_tuple(value: tuple[Any, ...]) -> tuple[Any, ...]:
    """The one tuple held for this value of strings and such tuples (``value`` the first time)."""
    hit = _SHARED_TUPLES.get(value)
    if hit is None:
        if any(type(v) is tuple for v in value):
            value = tuple([_shared_tuple(v) if type(v) is tuple else v for v in value])
        hit = _SHARED_TUPLES[value] = value
    return hit


def _new_shared(table: dict[tuple[Any, ...], Any], cls: type, data: tuple[Any, ...]) -> Any:
    """A named tuple of ``cls`` for ``data``, held in ``table`` for the next entries that hold it."""
    value: Any = tuple.__new__(cls, data)
    table[data] = value
    return value


def decode_facts(data: Any) -> _facts.FileFacts:
    if type(data) is not tuple:
        raise TypeError("facts entry is not a record")
    if len(_SHARED_TUPLES) > _SHARED_LIMIT:
        _SHARED_TUPLES.clear()
        for table in _SHARED_RECORDS.values():
            table.clear()
    return codec(_facts.FileFacts)[1](data)  # type: ignore[misc]


def encode_diagnostics(diagnostics: list[_model.Diagnostic]) -> Any:
    encode = codec(_model.Diagnostic)[0]
    return [encode(d) for d in diagnostics]  # type: ignore[misc]


def decode_diagnostics(data: Any) -> list[_model.Diagnostic]:
    if type(data) is not list:
        raise TypeError("run entry is not a list")
    decode = codec(_model.Diagnostic)[1]
    return [decode(d) for d in data]  # type: ignore[misc]
