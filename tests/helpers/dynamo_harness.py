"""Run code under the real TorchDynamo (CPU, backend "eager") and report what really happened.

The reference every rule is proven against: graph-break events come from the structured trace
(``torch.__trace`` handler, ``dynamo_graph_break_reason`` artifacts) — not ``explain()``, which
misses breaks (see shared docs probe-api.md) — each attributed to the innermost frame in the
example's own file, with its GB id (exact Gb_type match in torch's registry, or the doc link).
Frame compiles come from ``get_compilation_metrics()``.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
import traceback
import types
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
import torch._dynamo
from torch._dynamo.utils import clear_compilation_metrics, counters, get_compilation_metrics

_REGISTRY = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
with open(_REGISTRY) as _fh:
    _GB_BY_TYPE = {e["Gb_type"]: gid for gid, entries in json.load(_fh).items() for e in entries}
_LINK = re.compile(r"compile-graph-break-site/gb/gb(\d+)\.html")
_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)')


@dataclass
class BreakEvent:
    gb_id: str | None  # None: a UserError with no GB id
    gb_type: str
    line: int | None  # innermost frame in the example file
    reported_at: str


@dataclass
class RunResult:
    breaks: list[BreakEvent] = field(default_factory=list)
    compiles: dict[str, int] = field(default_factory=dict)  # function name -> frame compiles
    frames: dict[tuple[str, int], int] = field(default_factory=dict)  # (name, co_firstlineno) -> compiles
    fallbacks: list[str] = field(default_factory=list)  # frames compiled with no graph (whole frame eager)
    error: BaseException | None = None
    error_text: str = ""
    recompile_reasons: list[str] = field(default_factory=list)
    wrappers: int = 0  # torch.compile(...) calls the code made (each builds a wrapper and a backend)

    def lines_with(self, gb_ids: tuple[str, ...]) -> set[int]:
        out = set()
        for b in self.breaks:
            if b.line is None:
                continue
            if not gb_ids or (b.gb_id in gb_ids) or ("UserError" in gb_ids and b.gb_id is None):
                out.add(b.line)
        return out


class _Trace(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.payloads: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        md = getattr(record, "metadata", None) or {}
        art = md.get("artifact") if isinstance(md, dict) else None
        if art and art.get("name") == "dynamo_graph_break_reason":
            self.payloads.append(getattr(record, "payload", "") or "")


def _parse(payload: str, path: str) -> BreakEvent:
    lines = payload.splitlines()
    reported = lines[0].split(" at ", 1)[1] if lines and " at " in lines[0] else ""
    reason = (
        lines[1].split("Graph Break Reason: ", 1)[1]
        if len(lines) > 1 and "Graph Break Reason: " in lines[1]
        else ""
    )
    gb_type = reason
    if reason.endswith(":"):
        gb_type = next((ln.strip() for ln in lines[2:] if ln.strip()), "")
    gb = _GB_BY_TYPE.get(gb_type)
    if gb is None:
        m = _LINK.search(payload)
        gb = f"GB{m.group(1)}" if m else None
    user_line = None
    if "User code traceback:" in payload:
        tb = payload.split("User code traceback:", 1)[1]
        tb = tb.lstrip("\n").split("\n\n", 1)[0]  # the block ends at the first blank line
        for m in _FRAME.finditer(tb):
            if os.path.abspath(m.group("file")) == os.path.abspath(path):
                user_line = int(m.group("line"))
    if user_line is None and reported.startswith(path):
        try:
            user_line = int(reported.rsplit(":", 1)[1])
        except ValueError:
            pass
    return BreakEvent(gb, gb_type, user_line, reported)


@contextlib.contextmanager
def _eager_backend(result: RunResult | None = None):
    """Make `torch.compile(...)` default to backend="eager" (fast, and breaks are the same), and
    count its calls in ``result.wrappers``."""
    original = torch.compile

    def compile(model=None, *args: Any, **kwargs: Any):
        if result is not None:
            result.wrappers += 1
        kwargs.setdefault("backend", "eager")
        if model is None:
            return lambda m: original(m, *args, **kwargs)
        return original(model, *args, **kwargs)

    torch.compile = compile  # type: ignore[assignment]
    try:
        yield
    finally:
        torch.compile = original  # type: ignore[assignment]


def run_example(path: str, code: str, run: str = "", dynamo: dict[str, Any] | None = None) -> RunResult:
    """Execute ``code`` (saved at ``path`` so frames carry its lines), then ``run``."""
    result = RunResult()
    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()
    handler = _Trace()
    tl = logging.getLogger("torch.__trace")
    old_level = tl.level
    tl.setLevel(logging.DEBUG)
    tl.addHandler(handler)
    config = dict(dynamo or {})
    patch: dict[str, Any] = {}
    for key, value in config.items():
        if key in ("reorderable_logging_functions", "ignore_logging_functions"):
            funcs = set()
            for name in value:
                if name == "print":
                    funcs.add(print)
                else:
                    mod, _, attr = name.rpartition(".")
                    obj: Any = __import__(mod.split(".")[0])
                    for part in mod.split(".")[1:] + [attr]:
                        obj = getattr(obj, part)
                    funcs.add(obj)
            patch[key] = funcs
        else:
            patch[key] = value
    module = types.ModuleType("tclint_example")
    module.__file__ = path
    sys.modules["tclint_example"] = module
    saved_config = torch._dynamo.config.get_config_copy()  # examples may set config themselves
    try:
        with _eager_backend(result), torch._dynamo.config.patch(**patch), _quiet():
            exec(compile(code, path, "exec"), module.__dict__)
            if run:
                exec(compile(run, "<run>", "exec"), module.__dict__)
    except BaseException as exc:  # hard errors are results
        result.error = exc
        result.error_text = f"{type(exc).__name__}: {exc}"
        result.error_text += "\n" + "".join(traceback.format_exception_only(type(exc), exc))
    finally:
        tl.removeHandler(handler)
        tl.setLevel(old_level)
        sys.modules.pop("tclint_example", None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch._dynamo.config.load_config(saved_config)
    result.breaks = [_parse(p, path) for p in handler.payloads]
    for m in get_compilation_metrics():
        if os.path.abspath(m.co_filename or "") != os.path.abspath(path):
            continue
        result.compiles[m.co_name] = result.compiles.get(m.co_name, 0) + 1
        frame = (m.co_name, m.co_firstlineno)
        result.frames[frame] = result.frames.get(frame, 0) + 1
        if m.recompile_reason:
            result.recompile_reasons.append(m.recompile_reason)
        if m.fail_type and not getattr(m, "has_guarded_code", True):
            result.fallbacks.append(m.co_name)
    torch._dynamo.reset()
    return result


@contextlib.contextmanager
def _quiet():
    import io
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stdout(io.StringIO()):
            yield


def eager_values(path: str, code: str, run: str = "") -> dict[str, Any]:
    """Execute ``code`` then ``run`` with every compiled function running eagerly
    (``set_stance("force_eager")``, seed 0), and return the plain values the run left in the
    module: tensors, numbers, strings and tuples/lists/dicts of them (the probe's comparison is on
    values, not on objects).  Used to check a fix keeps what the code computes."""
    module = types.ModuleType("tclint_example")
    module.__file__ = path
    sys.modules["tclint_example"] = module
    torch._dynamo.reset()
    torch.manual_seed(0)
    saved_config = torch._dynamo.config.get_config_copy()  # a fix may register functions there
    try:
        with torch.compiler.set_stance("force_eager"), _quiet():
            exec(compile(code, path, "exec"), module.__dict__)
            if run:
                exec(compile(run, "<run>", "exec"), module.__dict__)
    finally:
        sys.modules.pop("tclint_example", None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch._dynamo.config.load_config(saved_config)
        torch._dynamo.reset()
    return {k: v for k, v in module.__dict__.items() if not k.startswith("_") and _plain(v)}


def _plain(value: Any) -> bool:
    if isinstance(value, (torch.Tensor, int, float, complex, str, bool)) or value is None:
        return True
    if isinstance(value, (tuple, list)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def same_values(a: Any, b: Any) -> bool:
    """Equal values (tensors: same dtype, shape and elements, NaN equal to NaN)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(torch.equal(a, b) or torch.allclose(a, b, rtol=0, atol=0, equal_nan=True))
        )
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return (
            type(a) is type(b)
            and len(a) == len(b)
            and all(same_values(x, y) for x, y in zip(a, b, strict=True))
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b
