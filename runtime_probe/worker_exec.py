"""Worker side (stdlib + torch only): run the user's program or function under the capture.

Program mode behaves like ``python script.py ARGS`` / ``python -m module ARGS`` (``runpy``, the
same ``sys.argv`` and ``sys.path[0]``); every ``torch.compile`` in it is routed to the probe's
backend with ``set_stance(force_backend=...)`` (measured on torch 2.13), so an Inductor-compiled model
is probed with the cheap ``eager`` backend unless the user asks otherwise.

Function mode imports the target's module, builds the calls (``worker_inputs``), compiles the
target once, and compares each call with eager (``worker_compare``).
"""

from __future__ import annotations

import contextlib
import copy
import importlib
import importlib.util
import os
import runpy
import sys
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

from . import worker_capture as cap  # siblings are loaded under private names
from . import worker_compare as cmp
from . import worker_inputs as inp

DEVICE_MARKERS = (
    "Torch not compiled with CUDA enabled", "Found no NVIDIA driver", "No CUDA GPUs are available",
    "Accelerator expected", "CUDA driver", "no CUDA-capable device", "not linked with support for cuda",
)  # fmt: skip
MEMORY_MARKERS = ("can't allocate memory", "DefaultCPUAllocator", "out of memory")


# ---------------------------------------------------------------------------------------------
# describing exceptions


def frames_of(tb: Any) -> list[dict[str, Any]]:
    out = []
    for fs in traceback.extract_tb(tb):
        name = cap.original_name(fs.name) or fs.name
        out.append({**cap.frame_dict(fs.filename, fs.lineno or 0, name), "code": (fs.line or "").strip()})
    return out


def describe(exc: BaseException) -> dict[str, Any]:
    """Kind (hard-error / device / memory / exception), GB id, the user frame it came from."""
    text = str(exc)
    module = type(exc).__module__ or ""
    gb_type = getattr(exc, "gb_type", None)
    kind = "exception"
    if module.startswith("torch._dynamo") or type(exc).__name__ in (
        "TorchRuntimeError", "BackendCompilerFailed", "InternalTorchDynamoError", "RecompileError",
        "FailOnRecompileLimitHit", "Unsupported", "UserError",
    ):  # fmt: skip
        kind = "hard-error"
    if (
        "Attempt to trace forbidden callable" in text
        or "Detected recompile when torch.compile stance" in text
    ):
        kind = "hard-error"
    if any(m in text for m in DEVICE_MARKERS):
        kind = "device"
    if isinstance(exc, MemoryError) or any(m in text for m in MEMORY_MARKERS):
        kind = "memory"
    frames = frames_of(exc.__traceback__)
    user = [f for f in frames if f["user"]]
    dynamo_user = [f for f in cap.from_user_code(text) if f["user"]]  # where Dynamo was when it failed
    return {
        "kind": kind,
        "gb_type": gb_type,
        "gb_id": cap.gb_id_for(gb_type or (text.strip().splitlines() or [""])[0], text),
        "detail": cap.error_detail(text),
        "frames": frames[-30:],
        "user_frame": dynamo_user[-1] if dynamo_user else (user[-1] if user else None),
    }


def exception_record(exc: BaseException) -> dict[str, Any]:
    rec = cmp.error_info(exc, describe)
    rec["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-8000:]
    return rec


# ---------------------------------------------------------------------------------------------
# device mapping (opt-in)


def cuda_to_cpu_mode() -> Any:
    """A TorchFunctionMode that sends every "cuda" device argument to the CPU.  Dynamo traces
    through the mode (measured: no extra break or compile), so breaks and recompiles are the
    ones of the CPU run; CUDA-only APIs (streams, torch.cuda.*) still fail and are reported."""
    from torch.overrides import TorchFunctionMode

    def remap(d: Any) -> Any:
        if isinstance(d, str) and d.startswith("cuda"):
            return "cpu"
        if isinstance(d, torch.device) and d.type == "cuda":
            return torch.device("cpu")
        if isinstance(d, int) and not isinstance(d, bool):
            return d
        return d

    class CudaToCpu(TorchFunctionMode):
        def __torch_function__(
            self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None
        ) -> Any:
            kwargs = dict(kwargs or {})
            if "device" in kwargs:
                kwargs["device"] = remap(kwargs["device"])
            if func is torch.Tensor.cuda:
                return args[0].to("cpu")
            if func is torch.Tensor.to:
                args = tuple(remap(a) for a in args)
            return func(*args, **kwargs)

    return CudaToCpu()


def environment(spec: dict[str, Any]) -> dict[str, Any]:
    import platform

    cuda = torch.cuda.is_available()
    return {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "cuda_available": cuda,
        "cuda_devices": torch.cuda.device_count() if cuda else 0,
        "device": inp.default_device(spec.get("device")),
        "map_cuda_to_cpu": bool(spec.get("map_cuda_to_cpu")),
        "backend": spec.get("backend") or "eager",
        "compile_options": spec.get("compile_options") or {},
        "config": cap.config_in_force(),
        "config_requested": spec.get("dynamo_config") or {},
        "env": {
            k: v
            for k, v in os.environ.items()
            if k.startswith(("TORCH_LOGS", "TORCHDYNAMO", "TORCHINDUCTOR", "TORCH_COMPILE"))
        },
        "threads": torch.get_num_threads(),
    }


@contextlib.contextmanager
def probe_context(spec: dict[str, Any], program: bool) -> Any:
    """Config patches, backend routing and device mapping around the user's code."""
    with contextlib.ExitStack() as stack:
        config = dict(spec.get("dynamo_config") or {})
        if config:
            stack.enter_context(torch._dynamo.config.patch(**config))
        backend = spec.get("backend") or "eager"
        if backend == "inductor":
            with contextlib.suppress(Exception):
                import torch._inductor.config as ind

                stack.enter_context(ind.patch(fallback_random=True))
        if program and hasattr(torch.compiler, "set_stance"):
            stack.enter_context(torch.compiler.set_stance("default", force_backend=backend))
        if spec.get("map_cuda_to_cpu"):
            stack.enter_context(cuda_to_cpu_mode())
        yield


# ---------------------------------------------------------------------------------------------
# program mode


def run_program(spec: dict[str, Any], capture: cap.Capture) -> dict[str, Any]:
    prog = spec["program"]
    argv = list(prog.get("argv") or [])
    result: dict[str, Any] = {"status": "ok", "exit_code": 0, "exception": None}
    if prog["kind"] == "module":
        sys.argv = [prog["target"], *argv]
        sys.path.insert(0, os.getcwd())
        runner: Callable[[], Any] = lambda: runpy.run_module(  # noqa: E731
            prog["target"], run_name="__main__", alter_sys=True
        )
    else:
        script = os.path.abspath(prog["target"])
        sys.argv = [script, *argv]
        sys.path.insert(0, os.path.dirname(script))
        runner = lambda: runpy.run_path(script, run_name="__main__")  # noqa: E731
    try:
        with probe_context(spec, program=True):
            runner()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            code = 0
        elif not isinstance(code, int):
            print(code, file=sys.stderr)
            code = 1
        result.update(status="exit" if code else "ok", exit_code=code)
    except BaseException as exc:  # KeyboardInterrupt included: the program's own failure
        result.update(status="exception", exit_code=1, exception=exception_record(exc))
    return result


# ---------------------------------------------------------------------------------------------
# function mode


def import_target(fspec: dict[str, Any]) -> Any:
    """Import the target's module as the project would (package modules by dotted name, so their
    relative imports work); a loose file, or a name that resolves elsewhere, by path."""
    root = fspec.get("import_root")
    if root and root not in sys.path:
        sys.path.insert(0, root)
    path = os.path.realpath(fspec["file"])
    module_name = fspec.get("module")
    if module_name and "." in module_name:
        try:
            module = importlib.import_module(module_name)
            if os.path.realpath(getattr(module, "__file__", "") or "") == path:
                return module
        except ModuleNotFoundError as exc:
            if exc.name and not module_name.startswith(exc.name):
                raise
    name = module_name or os.path.splitext(os.path.basename(path))[0]
    if name in sys.modules and os.path.realpath(getattr(sys.modules[name], "__file__", "") or "") != path:
        name = "_tclint_target_" + name.replace(".", "_")
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _unwrap_compiled(obj: Any) -> Any:
    """The user's own ``@torch.compile`` on the target: probe the original with our settings."""
    orig = getattr(obj, "_torchdynamo_orig_callable", None)
    if orig is not None:
        return orig
    return getattr(obj, "_orig_mod", obj)


def resolve(module: Any, qualname: str) -> tuple[Any, type | None, str | None]:
    """(object, class or None, method name or None) for ``fn``, ``Class`` or ``Class.method``."""
    parts = qualname.split(".")
    obj = module
    for part in parts:
        if not hasattr(obj, part):
            raise AttributeError(f"`{module.__name__}` has no `{qualname}` (missing `{part}`)")
        obj = getattr(obj, part)
    if len(parts) == 1:
        obj = _unwrap_compiled(obj)
        return obj, obj if isinstance(obj, type) else None, None
    owner = getattr(module, parts[0])
    owner = _unwrap_compiled(owner)
    return obj, owner if isinstance(owner, type) else None, parts[-1]


def run_function(  # noqa: C901 - long, not split yet (issue 16)
    spec: dict[str, Any], capture: cap.Capture, emit: Callable[[dict[str, Any]], None]
) -> dict[str, Any]:
    fspec = spec["function"]
    qual = fspec["qualname"]
    what = f"`{os.path.basename(fspec['file'])}::{qual}`"
    result: dict[str, Any] = {
        "status": "ok",
        "exit_code": 0,
        "exception": None,
        "correctness": [],
        "inputs": None,
    }
    try:
        with probe_context(spec, program=False):
            module = import_target(fspec)
            target, cls, method = resolve(module, qual)
    except BaseException as exc:
        result.update(status="exception", exit_code=1, exception=exception_record(exc), phase="import")
        return result
    try:
        declared = inp.find_declared(inp.existing(fspec.get("inputs_files") or []), qual)
        make_fn, inputs_fn, source = declared if declared else (None, None, None)
        instance = None
        if cls is not None:
            instance = inp.instance_for(cls, make_fn, source or what)
            instance = _unwrap_compiled(instance)
        if cls is not None and method is None:
            callee = instance  # an nn.Module (or any callable object): call it
        elif cls is not None and method is not None:
            callee = getattr(instance, method)
        else:
            callee = target
        if inputs_fn is not None:
            calls = inp.declared_calls(inputs_fn, instance, source or what)
            result["inputs"] = {"source": "declared", "file": source, "function": inputs_fn.__name__}
        else:
            sig_target = (
                callee.forward
                if callee is not None and cls is not None and method is None and hasattr(callee, "forward")
                else callee
            )
            calls = inp.synthesize(sig_target, inp.default_device(spec.get("device")), what)
            result["inputs"] = {
                "source": "synthesised",
                "file": None,
                "function": None,
                "parameters": dict(calls[0].synthesised) if calls else {},
            }
    except inp.NeedInputs as exc:
        result.update(status="need-inputs", exit_code=2, message=str(exc), missing=exc.missing)
        return result
    except inp.InputsError as exc:
        result.update(status="inputs-error", exit_code=2, message=str(exc))
        return result
    except BaseException as exc:
        result.update(status="exception", exit_code=1, exception=exception_record(exc), phase="inputs")
        return result
    result["inputs"]["calls"] = [c.label for c in calls]
    opts = dict(spec.get("compile_options") or {})
    opts = {k: v for k, v in opts.items() if v is not None}
    backend = spec.get("backend") or "eager"
    with probe_context(spec, program=False):
        compiled = torch.compile(callee, backend=backend, **opts)
        for i, call in enumerate(calls):
            emit({"t": "progress", "call": i + 1, "of": len(calls), "label": call.label})
            eager_callee = callee
            if instance is not None:
                try:
                    twin = copy.deepcopy(instance)
                except Exception:
                    twin = instance
                eager_callee = twin if method is None else getattr(twin, method)
                if call.mode is not None and hasattr(instance, "train"):
                    instance.train(call.mode == "train")
                    if twin is not instance:
                        twin.train(call.mode == "train")
            entry = cmp.compare_call(
                eager_callee,  # type: ignore[arg-type]  # resolved above: a callable
                compiled,
                call.args,
                call.kwargs,
                seed=i,
                describe=describe,
                eager_guard=lambda: _eager_only(capture),
                reject_on_eager_error=result["inputs"]["source"] == "synthesised",
            )
            entry.update(index=i, label=call.label, mode=call.mode)
            if call.synthesised:
                entry["synthesised"] = dict(call.synthesised)
            result["correctness"].append(entry)
            emit({"t": "call", **{k: v for k, v in entry.items() if k != "compiled_traceback"}})
    if result["correctness"] and all(c["status"] == "inputs-rejected" for c in result["correctness"]):
        result.update(status="inputs-rejected", exit_code=2)
    return result


@contextlib.contextmanager
def _eager_only(capture: cap.Capture) -> Any:
    """The eager reference must not compile anything (a target calling another compiled
    function would otherwise add compiles that the probed code never made), and its calls of
    compiled wrappers are not calls of compiled code."""
    capture.paused = True
    try:
        if hasattr(torch.compiler, "set_stance"):
            with torch.compiler.set_stance("force_eager"):
                yield
        else:  # pragma: no cover - torch < 2.6: nested compiled wrappers may compile
            yield
    finally:
        capture.paused = False
