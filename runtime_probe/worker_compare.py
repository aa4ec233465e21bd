"""Worker side (stdlib + torch only): eager vs compiled, one call at a time.

The diagnosis starts with correctness: the same inputs, the same RNG seed, the
eager function on a copy of the inputs (and of the module, so state updated by the call, such as
BatchNorm running stats, does not leak from one run into the other), then the compiled one.
Outputs are compared leaf by leaf with tolerances that depend on the dtype (fusion reorders
rounding: bfloat16 needs far looser bounds than float64); inputs mutated in place must match too;
an exception is a result like any other (same type and message on both sides is a match, and so
is Dynamo's wrapper of the eager exception), except with inputs the probe made up: an eager
exception then means the inputs were wrong, and the call is not compiled (``inputs-rejected``).
"""

from __future__ import annotations

import copy
import random
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch

# (rtol, atol): torch.testing's defaults, loosened for float32 to allow for fused reductions.
TOLERANCES = {
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
    torch.float32: (1e-5, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1e-5, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def seed_all(seed: int) -> None:
    torch.manual_seed(seed)
    random.seed(seed)
    np = sys.modules.get("numpy")
    if np is not None:
        try:
            np.random.seed(seed)
        except Exception:
            pass


def clone_tree(value: Any) -> Any:
    """A copy whose tensors do not share storage with the original (grad flags kept)."""
    import torch.utils._pytree as pytree

    def clone(t: Any) -> Any:
        if isinstance(t, torch.Tensor):
            c = t.detach().clone()
            if t.requires_grad and c.is_leaf:
                c.requires_grad_(True)
            return c
        return t

    try:
        return pytree.tree_map(clone, value)
    except Exception:
        try:
            return copy.deepcopy(value)
        except Exception:
            return value


def error_info(
    exc: BaseException, describe: Callable[[BaseException], dict[str, Any]] | None = None
) -> dict[str, Any]:
    info = {"type": f"{type(exc).__module__}.{type(exc).__qualname__}", "message": str(exc).strip()[:2000]}
    if describe is not None:
        info.update(describe(exc))
    return info


def run_side(
    fn: Callable[..., Any], args: tuple, kwargs: dict, seed: int
) -> tuple[Any, BaseException | None, float]:
    seed_all(seed)
    start = time.perf_counter()
    try:
        out = fn(*args, **kwargs)
        return out, None, time.perf_counter() - start
    except Exception as exc:  # BaseException (SystemExit, KeyboardInterrupt) is not a result
        return None, exc, time.perf_counter() - start


def compare_values(eager: Any, compiled: Any, path: str = "output") -> dict[str, Any]:
    """{"ok": bool, "detail": str, "max_abs_diff": float | None, "dtype": str | None, tolerances}."""
    import torch.utils._pytree as pytree

    e_leaves, e_spec = pytree.tree_flatten(eager)
    c_leaves, c_spec = pytree.tree_flatten(compiled)
    if e_spec != c_spec:
        return {"ok": False, "detail": f"{path}: structure differs (eager {e_spec}, compiled {c_spec})"}
    worst: dict[str, Any] = {"ok": True, "detail": "", "max_abs_diff": None, "dtype": None}
    for i, (a, b) in enumerate(zip(e_leaves, c_leaves, strict=False)):
        where = f"{path}[{i}]" if len(e_leaves) > 1 else path
        if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
            result = compare_tensors(a, b, where)
            if not result["ok"]:
                return result
            if result.get("max_abs_diff") is not None and (
                worst["max_abs_diff"] is None or result["max_abs_diff"] > worst["max_abs_diff"]
            ):
                worst.update({k: result[k] for k in ("max_abs_diff", "dtype", "rtol", "atol")})
        elif isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
            return {
                "ok": False,
                "detail": f"{where}: eager gave {type(a).__name__}, compiled gave {type(b).__name__}",
            }
        else:
            try:
                same = bool(a == b) or (a != a and b != b)  # NaN == NaN
            except Exception:
                same = a is b
            if not same:
                return {"ok": False, "detail": f"{where}: eager {a!r:.80} != compiled {b!r:.80}"}
    return worst


def compare_tensors(a: torch.Tensor, b: torch.Tensor, where: str) -> dict[str, Any]:
    if a.shape != b.shape:
        return {
            "ok": False,
            "detail": f"{where}: shape {tuple(b.shape)} (compiled) != {tuple(a.shape)} (eager)",
        }
    if a.dtype != b.dtype:
        return {"ok": False, "detail": f"{where}: dtype {b.dtype} (compiled) != {a.dtype} (eager)"}
    if a.device != b.device:
        return {"ok": False, "detail": f"{where}: device {b.device} (compiled) != {a.device} (eager)"}
    a_d, b_d = a.detach(), b.detach()
    if a_d.is_floating_point() or a_d.is_complex():
        rtol, atol = TOLERANCES.get(a.dtype, (1e-5, 1e-5))
        try:
            torch.testing.assert_close(b_d, a_d, rtol=rtol, atol=atol, equal_nan=True)
            ok, msg = True, ""
        except AssertionError as exc:
            ok, msg = False, " ".join(line.strip() for line in str(exc).strip().splitlines()[:4])
        diff = None
        if a_d.numel():
            finite = torch.isfinite(a_d) & torch.isfinite(b_d)
            if finite.any():
                diff = float((a_d[finite] - b_d[finite]).abs().max().item())
        return {
            "ok": ok,
            "detail": f"{where}: {msg}" if msg else "",
            "max_abs_diff": diff,
            "dtype": str(a.dtype).replace("torch.", ""),
            "rtol": rtol,
            "atol": atol,
        }
    same = bool(torch.equal(a_d, b_d))
    return {
        "ok": same,
        "detail": "" if same else f"{where}: values differ ({a.dtype}, exact comparison)",
        "max_abs_diff": None,
        "dtype": str(a.dtype).replace("torch.", ""),
    }


def same_error(a: BaseException, b: BaseException) -> bool:
    """``b`` (compiled) is ``a`` (eager): the same type and first line, or Dynamo's wrapper of it
    (``TorchRuntimeError: ... got RuntimeError('<the eager message>')``, or a ``__cause__`` chain)."""
    first = lambda e: (str(e).strip().splitlines() or [""])[0]  # noqa: E731
    if type(a) is type(b) and first(a) == first(b):
        return True
    seen: set[int] = set()
    cur: BaseException | None = b
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if type(cur) is type(a) and first(cur) == first(a):
            return True
        cur = cur.__cause__ or cur.__context__
    wrapped = type(b).__module__.startswith("torch._dynamo") or type(b).__name__ == "TorchRuntimeError"
    head = first(a)
    return wrapped and bool(head) and (head in str(b) or repr(head)[1:-1] in str(b))


def compare_call(  # noqa: C901 - long, not split yet (issue 16)
    eager_fn: Callable[..., Any],
    compiled_fn: Callable[..., Any],
    args: tuple,
    kwargs: dict,
    seed: int,
    describe: Callable[[BaseException], dict[str, Any]],
    eager_guard: Callable[[], Any] | None = None,
    reject_on_eager_error: bool = False,
) -> dict[str, Any]:
    """Run both sides on separate copies of the inputs and say how they compare.

    ``reject_on_eager_error`` (inputs the probe made up): when eager raises, the inputs are what is
    wrong, not the code: the compiled side is not run and the call is ``inputs-rejected``."""
    e_args, e_kwargs = clone_tree(args), clone_tree(kwargs)
    c_args, c_kwargs = clone_tree(args), clone_tree(kwargs)
    if eager_guard is not None:
        with eager_guard():
            e_out, e_exc, e_time = run_side(eager_fn, e_args, e_kwargs, seed)
    else:
        e_out, e_exc, e_time = run_side(eager_fn, e_args, e_kwargs, seed)
    if e_exc is not None and reject_on_eager_error:
        info = error_info(e_exc, describe)
        if info.get("kind") not in ("device", "memory"):  # a missing GPU or RAM is no fault of the inputs
            return {
                "time_eager_s": round(e_time, 6),
                "time_compiled_s": None,
                "eager_error": info,
                "compiled_error": None,
                "status": "inputs-rejected",
                "detail": f"eager code rejected the synthesised inputs: {type(e_exc).__name__}: {_short(e_exc)}",
            }
    c_out, c_exc, c_time = run_side(compiled_fn, c_args, c_kwargs, seed)
    entry: dict[str, Any] = {
        "time_eager_s": round(e_time, 6),
        "time_compiled_s": round(c_time, 6),
        "eager_error": None,
        "compiled_error": None,
    }
    if e_exc is not None:
        entry["eager_error"] = error_info(e_exc, describe)
    if c_exc is not None:
        entry["compiled_error"] = error_info(c_exc, describe)
        entry["compiled_traceback"] = "".join(
            traceback.format_exception(type(c_exc), c_exc, c_exc.__traceback__)
        )[-6000:]
    if e_exc is not None and c_exc is not None:
        if same_error(e_exc, c_exc):
            entry.update(status="both-raised", detail=f"both raised {type(e_exc).__name__}: {_short(e_exc)}")
        else:
            entry.update(
                status="mismatch",
                detail=f"eager raised {type(e_exc).__name__}: {_short(e_exc)}; "
                f"compiled raised {type(c_exc).__name__}: {_short(c_exc)}",
            )
        return entry
    if c_exc is not None:
        entry.update(
            status="compiled-raised",
            detail=f"eager returned; compiled raised {type(c_exc).__name__}: {_short(c_exc)}",
        )
        return entry
    if e_exc is not None:
        entry.update(
            status="eager-raised",
            detail=f"compiled returned; eager raised {type(e_exc).__name__}: {_short(e_exc)}",
        )
        return entry
    try:
        out = compare_values(e_out, c_out, "output")
        if out["ok"]:
            mutated = compare_values(e_args, c_args, "input")
            if not mutated["ok"]:
                out = {**mutated, "detail": mutated["detail"] + " (after in-place mutation)"}
            elif e_kwargs:
                mutated = compare_values(e_kwargs, c_kwargs, "keyword input")
                if not mutated["ok"]:
                    out = mutated
    except Exception as exc:  # an output type the comparison cannot handle
        entry.update(status="skipped", detail=f"outputs could not be compared: {type(exc).__name__}: {exc}")
        return entry
    entry.update({k: v for k, v in out.items() if k not in ("ok",)})
    entry["status"] = "match" if out["ok"] else "mismatch"
    if out["ok"]:
        entry["detail"] = "outputs match" + (
            f" (max |diff| {out['max_abs_diff']:.3g})" if out.get("max_abs_diff") else ""
        )
    return entry


def _short(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [""])[0]
    return text[:200]
