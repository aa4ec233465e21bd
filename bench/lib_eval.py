"""tclint vs the real TorchDynamo on libraries from the package index other than transformers (dev tool).

    .venv/bin/python bench/lib_eval.py                      # every library below
    .venv/bin/python bench/lib_eval.py --libs torchdiffeq   # some of them
    .venv/bin/python bench/lib_eval.py --fresh              # re-measure Dynamo too

The libraries are installed in the venv next to torch 2.13.0 (CPU) with ``pip install --no-deps``
and only the pure-Python dependencies they import (so pip never brings another torch); the small
pure-Python ones are pinned in the ``test`` extra, for tests/bench/test_lib_eval.py.

Per library, a *user script* (``bench/lib_scripts/<lib>_user.py``) builds a few tiny models and
compiles them as that library's users do (``torch.compile(model)`` after ``.eval()``, a compiled
training step, a module that calls the library's functions).  Its ``PHASES`` are the truth and the
static input at once:

1. Dynamic truth, in a subprocess: every phase runs with ``backend="eager"`` on CPU; every graph
   break of the structured trace is attributed to the innermost traceback frame inside the
   library's package (bench/dynamo_truth.py, as bench/hf_eval.py does for transformers), with its
   GB id; every line Dynamo traced and every line the phases run eagerly (``torch.compile`` replaced
   by the identity) are recorded.  Cached in /tmp/lib_eval/dynamic, keyed by the versions, the
   script and the code of the dynamic side.
2. tclint on the script plus the library's package source, twice: ``script`` (the compile sites of
   the script are all tclint is told) and ``assume`` (the library's entry points declared with
   ``--assume-compiled``, the fallback a user has when a compile site does not resolve).
3. Scores per library and mode, counting each (file, statement) once: Dynamo's distinct break
   sites; how many a reader could see in the library's source (the breaking construct is in the
   library's own statement, not inside a callee in torch, another package, a generated string or
   C code: :func:`visibility`); tclint's precision over findings on statements Dynamo executed, and
   its recall over all sites and over the visible ones.

Output: the table on stdout, every site in ``--json`` (default /tmp/lib_eval/results.json) and a
readable listing beside it (``.md``); ``--baseline FILE`` writes the figures a regression test pins.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dynamo_truth import (
    LEVELS,
    BreakTrace,
    SourceIndex,
    executed,
    gb_registry,
    parse_break,
    ratio,
    record_eager_lines,
    record_traced_lines,
    score_breaks,
    source_index,
    static_break_sites,
    tclint_shim,
)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SCRIPTS = os.path.join(HERE, "lib_scripts")
DEFAULT_OUT = "/tmp/lib_eval/results.json"
CACHE_DIR = "/tmp/lib_eval/dynamic"


@dataclass(frozen=True)
class LibSpec:
    name: str
    dist: str  # distribution name, for its version
    packages: tuple[str, ...]  # import names whose folders are measured and linted
    script: str  # file in bench/lib_scripts/
    roots: tuple[str, ...]  # --assume-compiled patterns of the "assume" mode
    # calls in the library whose callee is picked at run time from data a reader cannot follow:
    # "file:line" of the call (as a traceback frame names it) -> how ("registry: ...", "string: ...")
    dispatch: tuple[tuple[str, str], ...] = ()
    slice_phases: tuple[
        str, ...
    ] = ()  # the phases of the pinned slice (tests/bench/test_lib_eval.py); () = none


_SOLVERS = "registry: `SOLVERS[method](...)`, a dict of solver classes keyed by the method string"

LIBS: dict[str, LibSpec] = {
    s.name: s
    for s in [
        LibSpec(
            "torch_geometric",
            "torch-geometric",
            ("torch_geometric",),
            "pyg_user.py",
            ("torch_geometric.nn.*:*.forward", "torch_geometric.nn.pool.glob:*", "torch_geometric.utils.*:*"),
        ),
        LibSpec(
            "x_transformers",
            "x-transformers",
            ("x_transformers",),
            "xtransformers_user.py",
            (
                "x_transformers.*:*.forward",
                "x_transformers.autoregressive_wrapper:AutoregressiveWrapper.generate",
            ),
            slice_phases=("generate_with_compiled_net",),
        ),
        LibSpec(
            "kornia",
            "kornia",
            ("kornia",),
            "kornia_user.py",
            ("kornia.*:*.forward", "kornia.enhance.adjust:equalize"),
        ),
        LibSpec(
            "torchdiffeq",
            "torchdiffeq",
            ("torchdiffeq",),
            "torchdiffeq_user.py",
            (
                "torchdiffeq._impl.odeint:odeint",
                "torchdiffeq._impl.odeint:odeint_event",
                "torchdiffeq._impl.adjoint:odeint_adjoint",
            ),
            dispatch=(
                ("torchdiffeq/_impl/odeint.py:77", _SOLVERS),
                ("torchdiffeq/_impl/odeint.py:80", _SOLVERS),
                ("torchdiffeq/_impl/odeint.py:82", _SOLVERS),
            ),
            slice_phases=("fixed_grid_train", "event_eval"),
        ),
        LibSpec(
            "vector_quantize_pytorch",
            "vector-quantize-pytorch",
            ("vector_quantize_pytorch",),
            "vq_user.py",
            ("vector_quantize_pytorch.*:*.forward",),
            slice_phases=("vq_train",),
        ),
        # not in the test extra (measured once, with --python of a venv that has it; no pinned slice)
        LibSpec("vit_pytorch", "vit-pytorch", ("vit_pytorch",), "vit_user.py", ("vit_pytorch.*:*.forward",)),
        # held out (issue 12): measured once by someone who had not tuned tclint on them, with --python
        # of a venv that has them (not in the test extra)
        LibSpec(
            "torchmetrics",
            "torchmetrics",
            ("torchmetrics",),
            "torchmetrics_user.py",
            ("torchmetrics.*:*.forward", "torchmetrics.*:*.update", "torchmetrics.functional.*:*"),
        ),
        LibSpec(
            "zuko",
            "zuko",
            ("zuko",),
            "zuko_user.py",
            ("zuko.*:*.forward", "zuko.*:*.log_prob", "zuko.*:*.rsample"),
        ),
        LibSpec(
            "gpytorch",
            "gpytorch",
            ("gpytorch", "linear_operator"),  # linear_operator: gpytorch's own operators, split out
            "gpytorch_user.py",
            ("gpytorch.*:*.forward", "gpytorch.*:*.__call__", "linear_operator.*:*"),
        ),
        LibSpec(
            "pytorch_metric_learning",
            "pytorch-metric-learning",
            ("pytorch_metric_learning",),
            "pml_user.py",
            ("pytorch_metric_learning.*:*.forward",),
        ),
        LibSpec(
            "normflows",
            "normflows",
            ("normflows",),
            "normflows_user.py",
            (
                "normflows.*:*.forward",
                "normflows.*:*.inverse",
                "normflows.core:*.forward_kld",
                "normflows.core:*.reverse_kld",
                "normflows.core:*.log_prob",
                "normflows.core:*.sample",
            ),
        ),
        LibSpec(
            "monai",
            "monai",
            ("monai",),
            "monai_user.py",
            (
                "monai.networks.*:*.forward",
                "monai.losses.*:*.forward",
                "monai.inferers.utils:sliding_window_inference",
                "monai.metrics.meandice:compute_dice",
            ),
        ),
        LibSpec(
            "nflows",
            "nflows",
            ("nflows",),
            "nflows_user.py",
            ("nflows.*:*.forward", "nflows.*:*.inverse", "nflows.*:*.log_prob", "nflows.*:*.sample"),
        ),
        LibSpec(
            "torchsde",
            "torchsde",
            ("torchsde",),
            "torchsde_user.py",
            ("torchsde._core.sdeint:sdeint", "torchsde._brownian.*:*.__call__"),
        ),
        LibSpec(
            "julius",
            "julius",
            ("julius",),
            "julius_user.py",
            (
                "julius.*:*.forward",
                "julius.*:*_filter",
                "julius.*:*_filters",
                "julius.resample:resample_frac",
            ),
        ),
        LibSpec(
            "nnAudio",
            "nnaudio",
            ("nnAudio",),
            "nnaudio_user.py",
            ("nnAudio.features.*:*.forward", "nnAudio.features.stft:*.inverse"),
        ),
        LibSpec(
            "asteroid_filterbanks",
            "asteroid-filterbanks",
            ("asteroid_filterbanks",),
            "asteroid_fb_user.py",
            ("asteroid_filterbanks.*:*.forward", "asteroid_filterbanks.griffin_lim:*"),
        ),
    ]
}

# --------------------------------------------------------------------------------------------
# dynamic side (one subprocess per library)
# --------------------------------------------------------------------------------------------


def load_script(spec: LibSpec):
    """The user script as a module (its directory on sys.path, as `python script.py` would have it)."""
    path = os.path.join(SCRIPTS, spec.script)
    if SCRIPTS not in sys.path:
        sys.path.insert(0, SCRIPTS)
    mspec = importlib.util.spec_from_file_location(spec.script[:-3], path)
    module = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(module)
    return module


def package_dirs(spec: LibSpec) -> list[str]:
    return [os.path.dirname(os.path.abspath(importlib.import_module(p).__file__)) for p in spec.packages]


@contextlib.contextmanager
def compile_is_identity():
    """``torch.compile`` (and so ``nn.Module.compile``) returns what it is given: the eager coverage run."""
    import torch

    original = torch.compile

    def identity(model=None, **_kwargs):
        return model if model is not None else (lambda fn: fn)

    torch.compile = identity
    try:
        yield
    finally:
        torch.compile = original


def dynamic_one(name: str, phases: list[str] | None = None) -> dict[str, Any]:
    """Run the library's phases (all, or those named) compiled (breaks, traced lines) and eagerly
    (executed lines)."""
    import warnings

    warnings.filterwarnings("ignore")
    import logging

    import torch
    import torch._dynamo
    from torch._dynamo.utils import clear_compilation_metrics, counters

    logging.getLogger("torch._dynamo").setLevel(logging.ERROR)
    torch.set_num_threads(1)
    gb_by_type = gb_registry()
    spec = LIBS[name]
    script = load_script(spec)
    dirs = package_dirs(spec)
    base = os.path.dirname(dirs[0])
    result: dict[str, Any] = {
        "lib": name,
        "phases": {},
        "torch": torch.__version__,
        "version": importlib.metadata.version(spec.dist),
        "base": base,
        "packages": [os.path.relpath(d, base) for d in dirs],
    }
    traced: set[tuple[str, int]] = set()
    chosen = [ph for ph in script.PHASES if phases is None or ph.__name__ in phases]
    if phases is not None and len(chosen) != len(phases):
        raise ValueError(f"unknown phases {sorted(set(phases) - {ph.__name__ for ph in chosen})}")
    for phase in chosen:
        torch._dynamo.reset()
        counters.clear()
        clear_compilation_metrics()
        torch.manual_seed(0)
        t0 = time.time()
        error = None
        with BreakTrace() as handler, record_traced_lines(dirs, traced):
            try:
                phase()
            except Exception as exc:  # a failing phase is a result
                error = f"{type(exc).__name__}: {exc}"[:1000] + "\n" + traceback.format_exc()[-3000:]
        result["phases"][phase.__name__] = {
            "seconds": round(time.time() - t0, 1),
            "error": error,
            "breaks": [parse_break(p, dirs, base, gb_by_type, depth=None) for p in handler.payloads],
        }
    torch._dynamo.reset()
    eager: set[tuple[str, int]] = set()
    with compile_is_identity():
        for phase in chosen:
            torch.manual_seed(0)
            with record_eager_lines(dirs, eager):
                try:
                    phase()
                except Exception as exc:
                    result["phases"][phase.__name__]["eager_error"] = f"{type(exc).__name__}: {exc}"[:500]
    result["traced"] = sorted([os.path.relpath(f, base), ln] for f, ln in traced)
    result["eager"] = sorted([os.path.relpath(f, base), ln] for f, ln in eager)
    return result


# --------------------------------------------------------------------------------------------
# static side
# --------------------------------------------------------------------------------------------


def lib_location(python: str, spec: LibSpec) -> tuple[str, list[str], str]:
    """(site-packages folder, the packages' folders, the library's version) in the measured venv."""
    code = (
        "import importlib, importlib.metadata, os, sys, json; "
        f"import importlib.util; d = [os.path.dirname(os.path.abspath(importlib.util.find_spec(p).origin)) for p in {list(spec.packages)!r}]; "
        f"print(json.dumps([d, importlib.metadata.version({spec.dist!r})]))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True)
    dirs, version = json.loads(out.stdout.strip().splitlines()[-1])
    return os.path.dirname(dirs[0]), dirs, version


MODES = ("script", "assume", "follow")
# "follow": the user script ALONE, with --follow-libraries (issue 21): the library sites are those TC312
# lists at the script's compile sites; "follow-hot" scores only the ones it marks hot.


def library_sites(diags: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The library sites TC312 lists as related locations, as diagnostics of their own (code, file, line,
    confidence, hot) so that they score like the other modes' findings."""
    out = []
    for d in diags:
        if d["code"] != "TC312":
            continue
        for r in d.get("related", []):
            head, _, rest = r["message"].partition("): ")
            code, _, tags = head.partition(" (")
            heat, _, conf = tags.partition(", ")
            out.append(
                {
                    "code": code.split(" ", 1)[0],
                    "filename": r["filename"],
                    "location": r["location"],
                    "severity": "error" if heat == "hot" else "warning",
                    "confidence": conf.split(" ", 1)[0],
                    "message": rest,
                    "hot": heat == "hot",
                    "site_row": d["location"]["row"],
                }
            )
    return out


def run_tclint(python: str, tclint_root: str, spec: LibSpec, dirs: list[str], mode: str) -> dict[str, Any]:
    """tclint's JSON findings (all confidences) on the user script and the library, and its regions."""
    paths = [os.path.join(SCRIPTS, spec.script), *dirs]
    extra = [a for r in spec.roots for a in ("--assume-compiled", r)] if mode == "assume" else []
    if mode == "follow":  # the script alone, copied out of the repository (no project around it)
        alone = tempfile.mkdtemp(prefix="lib_eval_follow_")
        paths = [os.path.join(alone, spec.script)]
        with open(os.path.join(SCRIPTS, spec.script), "rb") as src, open(paths[0], "wb") as dst:
            dst.write(src.read())
        extra = ["--follow-libraries"]
    out_json = os.path.join(tempfile.gettempdir(), f"lib_eval_{spec.name}_{mode}.json")
    env = {**os.environ, "PYTHONPATH": tclint_shim(tclint_root)}
    cmd = [
        python,
        "-m",
        "tclint.rules",
        "check",
        *paths,
        "--isolated",
        "--no-cache",
        "--output-format",
        "json",
        "-o",
        out_json,
        "--exit-zero",
        "-q",
        "--min-confidence",
        "low",
        *extra,
    ]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
    secs = time.time() - t0
    if proc.returncode not in (0, 1) or not os.path.exists(out_json):
        raise RuntimeError(f"tclint failed ({proc.returncode}): {proc.stderr[-3000:]}")
    with open(out_json) as fh:
        diags = json.load(fh)
    os.remove(out_json)
    summaries = None
    if mode == "follow":
        summaries = [d for d in diags if d["code"] == "TC312"]
        diags = library_sites(diags)
    regions = subprocess.run(
        [python, "-m", "tclint.rules", "regions", *paths, "--output-format", "json", *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
    )
    reg = None
    with contextlib.suppress(ValueError):
        reg = json.loads(regions.stdout)
    return {
        "diagnostics": diags,
        "stderr": proc.stderr[-3000:],
        "seconds": round(secs, 1),
        "regions": reg,
        "summaries": summaries,
    }


# --------------------------------------------------------------------------------------------
# scoring
# --------------------------------------------------------------------------------------------


# GB ids of Dynamo's own limits, not of anything the statement does: no reader can see them coming
DYNAMO_INTERNAL = {
    "GB0092": "a method reached through a graph break in its callee cannot be rebuilt (Reconstruction failure)",
    "GB4347": "next() on a list iterator inside a list comprehension (Missing tp_iternext)",
}


def visibility(event: dict[str, Any], packages: list[str]) -> str:
    """Could a reader of the library's source see this break at its site?

    "source": the innermost frame of Dynamo's traceback is the library's own statement (the break is
    that statement: ``.item()``, a tensor in an ``if``, ``print``, a data-dependent op).  Otherwise
    the break happens inside what that statement calls: "callee:torch" (torch's Python code),
    "callee:<package>" (another installed package), "generated" (code the library writes from
    strings at run time: no file, or a file outside every package) -- none of which the library's
    source shows; "dynamo-internal" for a break that is one of Dynamo's own limits (:data:`DYNAMO_INTERNAL`).
    """
    if event.get("gb_id") in DYNAMO_INTERNAL:
        return "dynamo-internal"
    inner = event.get("innermost")
    if not inner:
        return "generated"
    path = inner.rsplit(":", 2)[0]
    if any(path == p or path.startswith(p + "/") for p in packages):
        return "source"
    if not os.path.isabs(path):
        return "callee:" + path.split("/", 1)[0]
    parts = path.split(os.sep)
    if "site-packages" in parts:
        return "callee:" + parts[parts.index("site-packages") + 1]
    return "generated"


def reach(event: dict[str, Any], dispatch: dict[str, str], packages: list[str]) -> str:
    """How the compiled code got to this break: "static" (every call on Dynamo's traceback is one a
    reader can follow), or the first run-time dispatch on it: a call in the library's ``dispatch``
    table, or a frame of code the library generated (a file outside every installed package and the
    user scripts, after the first library frame)."""
    in_lib = False
    for frame in event.get("stack", []):
        where = frame.rsplit(":", 1)[0]
        path = where.rsplit(":", 1)[0]
        if where in dispatch:
            return dispatch[where]
        if not os.path.isabs(path):
            in_lib = in_lib or any(path == p or path.startswith(p + "/") for p in packages)
        elif in_lib and "site-packages" not in path.split(os.sep) and os.path.dirname(path) != SCRIPTS:
            return f"generated: code the library wrote at run time ({os.path.basename(path)})"
    return "static"


def region_functions(
    regions: dict[str, Any] | None, base: str, idx: Callable[[str], SourceIndex]
) -> set[tuple[str, int]]:
    """(file, first line) of every library function in tclint's compiled regions."""
    out = set()
    for reg in (regions or {}).get("regions", []):
        f = os.path.relpath(os.path.abspath(reg["path"]), base)
        if f.startswith(".."):
            continue
        fn = idx(f).func(reg["line"])
        if fn:
            out.add((f, fn[0]))
    return out


def score_lib(spec: LibSpec, dyn: dict[str, Any], stats: dict[str, dict[str, Any]]) -> dict[str, Any]:
    base, packages = dyn["base"], dyn["packages"]

    def idx(relpath: str) -> SourceIndex:
        return source_index(os.path.join(base, relpath))

    def in_lib(relpath: str) -> bool:
        return any(relpath == p or relpath.startswith(p + "/") for p in packages)

    actual: dict[tuple[str, int], list[dict[str, Any]]] = {}
    unattributed: list[dict[str, Any]] = []
    for phase, pr in dyn["phases"].items():
        for b in pr.get("breaks", []):
            if b["file"] is None:
                unattributed.append({**b, "phase": phase})
                continue
            actual.setdefault((b["file"], idx(b["file"]).stmt(b["line"])), []).append({**b, "phase": phase})
    dispatch = dict(spec.dispatch)
    # a site a reader could see: one of its events breaks in the library's own statement and is
    # reached by calls a reader can follow
    how = {
        k: sorted({f"{visibility(e, packages)}; reached {reach(e, dispatch, packages)}" for e in evs})
        for k, evs in actual.items()
    }
    visible = {
        k
        for k, evs in actual.items()
        if any(visibility(e, packages) == "source" and reach(e, dispatch, packages) == "static" for e in evs)
    }
    own = {k for k, evs in actual.items() if any(visibility(e, packages) == "source" for e in evs)}
    ran = executed(dyn["traced"], dyn["eager"], idx)
    out: dict[str, Any] = {
        "lib": spec.name,
        "version": dyn["version"],
        "torch": dyn["torch"],
        "errors": {ph: pr["error"] for ph, pr in dyn["phases"].items() if pr.get("error")},
        "eager_errors": {ph: pr["eager_error"] for ph, pr in dyn["phases"].items() if pr.get("eager_error")},
        "unattributed_breaks": unattributed,
        "how": {f"{k[0]}:{k[1]}": v for k, v in how.items()},
        "modes": {},
    }
    for mode, stat in stats.items():
        diags = [
            d for d in stat["diagnostics"] if in_lib(os.path.relpath(os.path.abspath(d["filename"]), base))
        ]
        static = static_break_sites(diags, lambda p: os.path.relpath(os.path.abspath(p), base), idx)
        unresolved = [
            f"{os.path.basename(u['path'])}:{u['line']}"
            for u in (stat.get("regions") or {}).get("unresolved", [])
            if os.path.basename(u["path"]) == spec.script
        ]
        res: dict[str, Any] = {"unresolved_script_sites": unresolved, "seconds": stat["seconds"]}
        in_region = region_functions(stat.get("regions"), base, idx)
        for lv in LEVELS:
            sc = score_breaks(static[lv], actual, ran, idx)
            for site in sc["sites"]:
                if site["status"] in ("tp", "fn"):
                    key = (site["file"], site["line"])
                    fn = idx(key[0]).func(key[1])
                    site["how"] = how[key]
                    site["visible"] = key in visible
                    site["in_region"] = bool(fn) and (key[0], fn[0]) in in_region
            for name, keys in (("own", own), ("visible", visible)):
                tp = [k for k in keys if k in static[lv]]
                sc[name] = len(keys)
                sc[f"{name}_tp"] = len(tp)
                sc[f"{name}_recall"] = ratio(len(tp), len(keys))
            res[lv] = sc
        out["modes"][mode] = res
    if "follow" in stats:
        out["per_model"] = per_model_scores(spec, dyn, stats["follow"], actual, visible, ran, idx)
    return out


def per_model_scores(
    spec: LibSpec,
    dyn: dict[str, Any],
    follow: dict[str, Any],
    actual: dict[Any, list[dict[str, Any]]],
    visible: set[Any],
    ran: Any,
    idx: Callable[[str], SourceIndex],
) -> dict[str, Any]:
    """Per phase of the script (one model compiled one way): Dynamo's sites in that phase against the
    library sites TC312 lists at the compile sites written in that phase's function -- recall of all
    and of the visible sites (default confidence), precision of the sites marked hot and of all."""
    base = dyn["base"]
    script = source_index(os.path.join(SCRIPTS, spec.script))

    def phase_of(row: int) -> str:
        fn = script.func(row)
        return fn[1].split(".", 1)[0] if fn else "<module>"

    def rel(p: str) -> str:
        return os.path.relpath(os.path.abspath(p), base)

    out = {}
    for phase in sorted(dyn["phases"]):
        act = {k: evs for k, evs in actual.items() if any(e["phase"] == phase for e in evs)}
        mine = [d for d in follow["diagnostics"] if phase_of(d["site_row"]) == phase]
        static = static_break_sites(mine, rel, idx)["default"]
        hot = static_break_sites([d for d in mine if d["hot"]], rel, idx)["default"]
        vis = [k for k in act if k in visible]
        hot_sc = score_breaks(hot, act, ran, idx)
        all_sc = score_breaks(static, act, ran, idx)
        out[phase] = {
            "sites": len(act),
            "visible": len(vis),
            "found": len(static),
            "hot": len(hot),
            "recall": ratio(len([k for k in act if k in static]), len(act)),
            "visible_recall": ratio(len([k for k in vis if k in static]), len(vis)),
            "hot_precision": hot_sc["precision"],
            "hot_tp": hot_sc["counts"]["tp"],
            # every TC312 site (hot or not) on a statement Dynamo traced: broke there (tp) or not (fp)
            "precision": all_sc["precision"],
            "tp": all_sc["counts"]["tp"],
            "fp": all_sc["counts"]["fp-traced"] + all_sc["counts"]["fp-compile-dead"],
        }
    return out


# --------------------------------------------------------------------------------------------
# driver
# --------------------------------------------------------------------------------------------


def _dyn_cache_key(python: str, spec: LibSpec, phases: list[str] | None) -> str:
    h = hashlib.sha1(repr((spec.packages, spec.script, phases)).encode())
    with open(os.path.abspath(__file__), "rb") as fh:  # the dynamic side's code, not the LIBS table
        h.update(fh.read().split(b"# dynamic side")[1].split(b"# static side")[0])
    with open(os.path.join(HERE, "dynamo_truth.py"), "rb") as fh:
        h.update(fh.read().split(b"# scoring side")[0])
    with open(os.path.join(SCRIPTS, spec.script), "rb") as fh:
        h.update(fh.read())
    ver = subprocess.run(
        [
            python,
            "-c",
            f"import importlib.metadata as m, torch; print(torch.__version__, m.version({spec.dist!r}))",
        ],
        capture_output=True,
        text=True,
    ).stdout
    h.update(ver.encode())
    return h.hexdigest()[:12]


def measure(
    name: str,
    python: str = sys.executable,
    tclint_root: str = REPO,
    fresh: bool = False,
    timeout: int = 900,
    log: Callable[[str], None] = lambda s: None,
    phases: Sequence[str] | None = None,
    cache_dir: str = CACHE_DIR,
    modes: Sequence[str] = MODES,
) -> dict[str, Any]:
    """The dynamic truth of the library's phases (all, or those named; cached in ``cache_dir`` unless
    fresh), the static runs (``modes``, all by default), and the scores of one library."""
    spec = LIBS[name]
    phases = list(phases) if phases is not None else None
    os.makedirs(cache_dir, exist_ok=True)
    cache = os.path.join(cache_dir, f"{name}-{_dyn_cache_key(python, spec, phases)}.json")
    t0 = time.time()
    if fresh or not os.path.exists(cache):
        tmp = cache + ".tmp"
        cmd = [python, os.path.abspath(__file__), "--dynamic-one", name, "--dynamic-out", tmp]
        if phases is not None:
            cmd += ["--dynamic-phases", ",".join(phases)]
        with open(cache + ".stderr", "w") as err:
            subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL, stderr=err)
        os.replace(tmp, cache)
    with open(cache) as fh:
        dyn = json.load(fh)
    t1 = time.time()
    _base, dirs, _version = lib_location(python, spec)
    stats = {mode: run_tclint(python, os.path.abspath(tclint_root), spec, dirs, mode) for mode in modes}
    if "follow" in stats:
        stats["follow-hot"] = {
            **stats["follow"],
            "diagnostics": [d for d in stats["follow"]["diagnostics"] if d["hot"]],
        }
    log(
        f"{name}: dynamic {t1 - t0:.0f}s{' (cached)' if t1 - t0 < 2 else ''}, static "
        + ", ".join(f"{m} {s['seconds']:.0f}s" for m, s in stats.items())
    )
    out = score_lib(spec, dyn, stats)
    out["phases"] = sorted(dyn["phases"])
    return out


def summary_rows(results: dict[str, Any], level: str = "default") -> list[dict[str, Any]]:
    rows = []
    for name, r in results.items():
        for mode, res in r["modes"].items():
            sc = res[level]
            c = sc["counts"]
            rows.append(
                {
                    "lib": name,
                    "version": r["version"],
                    "mode": mode,
                    "sites": sc["actual"],
                    "own": sc["own"],
                    "visible": sc["visible"],
                    "own_recall": sc["own_recall"],
                    "tp": c["tp"],
                    "fp": c["fp-traced"] + c["fp-compile-dead"],
                    "eager_only": c["eager-only"],
                    "unexecuted": c["unexecuted"],
                    "fn": c["fn"],
                    "precision": sc["precision"],
                    "recall": sc["recall"],
                    "visible_recall": sc["visible_recall"],
                    "unresolved": len(res["unresolved_script_sites"]),
                }
            )
    return rows


def _fmt(x: float | None) -> str:
    return "  -  " if x is None else f"{x:.2f}"


def print_table(results: dict[str, Any]) -> None:
    for lv in LEVELS:
        print(f"\n== min-confidence {'medium (default)' if lv == 'default' else 'low'} ==")
        print(
            f"{'library':<18} {'mode':<7} | {'sites':>5} {'own':>4} {'visbl':>5} | {'TP':>3} {'FP':>3} {'eagr':>4}"
            f" {'unex':>4} {'FN':>3} | {'prec':>5} {'recall':>6} {'own.rec':>7} {'vis.rec':>7} | unresolved"
        )
        for r in summary_rows(results, lv):
            print(
                f"{r['lib']:<18} {r['mode']:<7} | {r['sites']:>5} {r['own']:>4} {r['visible']:>5} | {r['tp']:>3}"
                f" {r['fp']:>3} {r['eager_only']:>4} {r['unexecuted']:>4} {r['fn']:>3} | {_fmt(r['precision']):>5}"
                f" {_fmt(r['recall']):>6} {_fmt(r['own_recall']):>7} {_fmt(r['visible_recall']):>7} | {r['unresolved']}"
            )


def print_per_model(results: dict[str, Any]) -> None:
    print("\n== follow mode per model (phase): the script alone, library sites from TC312 ==")
    print(
        f"{'library':<18} {'phase':<28} | {'sites':>5} {'visbl':>5} | {'found':>5} {'hot':>4} | {'recall':>6} {'vis.rec':>7} {'hot.prec':>8}"
    )
    for name, r in results.items():
        for phase, m in r.get("per_model", {}).items():
            print(
                f"{name:<18} {phase:<28} | {m['sites']:>5} {m['visible']:>5} | {m['found']:>5} {m['hot']:>4} |"
                f" {_fmt(m['recall']):>6} {_fmt(m['visible_recall']):>7} {_fmt(m['hot_precision']):>8}"
            )


def _chain(event: dict[str, Any], packages: list[str]) -> str:
    """The library and user-script calls Dynamo was inside when it broke, outermost first."""
    out = []
    for f in event.get("stack", []):
        path, line, func = f.rsplit(":", 2)
        if any(path.startswith(p + "/") for p in packages) or os.path.dirname(path) == SCRIPTS:
            out.append(f"{func} ({os.path.basename(path)}:{line})")
    return " → ".join(out)


def write_report(path: str, results: dict[str, Any], commit: str) -> None:
    """Markdown listing of every site per library and mode."""
    lines = [f"# lib_eval sites (tclint {commit})", ""]
    for name, r in results.items():
        packages = list(LIBS[name].packages)
        lines += [f"## {name} {r['version']} (torch {r['torch']})", ""]
        for ph, err in {**r["errors"], **{f"{k} (eager)": v for k, v in r["eager_errors"].items()}}.items():
            lines.append(f"- phase {ph} failed: `{err.splitlines()[0][:200]}`")
        if r["unattributed_breaks"]:
            lines.append(
                f"- {len(r['unattributed_breaks'])} break events outside the library (user script or "
                "generated code): "
                + "; ".join(
                    sorted({f"{b['gb_id']} at {b['reported_at']}" for b in r["unattributed_breaks"]})
                )[:600]
            )
        for mode, res in r["modes"].items():
            lines += [
                "",
                f"### mode {mode}: unresolved compile sites in the script: "
                f"{', '.join(res['unresolved_script_sites']) or 'none'}",
                "",
            ]
            for site in res["default"]["sites"]:
                if site["status"] == "unexecuted":
                    continue
                lines.append(
                    f"- **{site['status']}** `{site['file']}:{site['line']}` in `{site['function']}`:"
                    f" `{site['source'][:110]}`"
                    + (
                        f" ({' | '.join(site['how'])}; {'in' if site['in_region'] else 'NOT in'}"
                        " tclint's regions)"
                        if site.get("how")
                        else ""
                    )
                )
                for item in {(i["code"], i["confidence"], i["message"][:150]) for i in site["static"]}:
                    lines.append(f"  - tclint {item[0]} ({item[1]}): {item[2]}")
                chains: dict[tuple[str, str, str], str] = {}
                for e in site["dynamic"]:
                    chains.setdefault(
                        (e["gb_id"], e["gb_type"][:70], e.get("innermost") or ""), _chain(e, packages)
                    )
                for (gb, gb_type, inner), chain in sorted(chains.items()):
                    lines.append(f"  - Dynamo {gb} `{gb_type}`, innermost frame `{inner}`, via {chain}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def baseline(results: dict[str, Any]) -> dict[str, Any]:
    """What tests/bench/test_lib_eval.py pins: Dynamo's sites and tclint's default-confidence figures (ratios
    and true/false positive counts), per library and mode."""
    out = {}
    for name, r in results.items():
        any_mode = next(iter(r["modes"].values()))["default"]
        out[name] = {
            "version": r["version"],
            "phases": r["phases"],
            "sites": sorted(
                f"{s['file']}:{s['line']}" for s in any_mode["sites"] if s["status"] in ("tp", "fn")
            ),
            "modes": {
                mode: {
                    **{k: res["default"][k] for k in ("precision", "recall", "own_recall", "visible_recall")},
                    "tp": res["default"]["counts"]["tp"],
                    "fp": res["default"]["counts"]["fp-traced"] + res["default"]["counts"]["fp-compile-dead"],
                }
                for mode, res in r["modes"].items()
            },
        }
    return out


def _git_head(root: str) -> str:
    try:
        return subprocess.run(
            ["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
    except OSError:
        return "?"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libs", default=",".join(LIBS), help="comma-separated: " + ",".join(LIBS))
    ap.add_argument("--json", default=DEFAULT_OUT, help="where to write every site (default %(default)s)")
    ap.add_argument("--fresh", action="store_true", help="re-measure Dynamo even if a cached result exists")
    ap.add_argument("--tclint-root", default=REPO, help="tclint source tree to measure (default: this repo)")
    ap.add_argument("--python", default=sys.executable, help="the venv's python (torch + the libraries)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per library's dynamic run")
    ap.add_argument(
        "--slice",
        action="store_true",
        help="only the pinned slice: each library's slice phases (libraries without one are left out)",
    )
    ap.add_argument("--baseline", help="also write the pinned figures for tests/bench/test_lib_eval.py here")
    ap.add_argument(
        "--modes", default=",".join(MODES), help="static runs to score, comma-separated (default %(default)s)"
    )
    ap.add_argument("--dynamic-one", help=argparse.SUPPRESS)
    ap.add_argument("--dynamic-out", help=argparse.SUPPRESS)
    ap.add_argument("--dynamic-phases", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.dynamic_one:
        res = dynamic_one(args.dynamic_one, args.dynamic_phases.split(",") if args.dynamic_phases else None)
        with open(args.dynamic_out, "w") as fh:
            json.dump(res, fh)
        return 0
    names = [n.strip() for n in args.libs.split(",") if n.strip()]
    unknown = [n for n in names if n not in LIBS]
    if unknown:
        ap.error(f"unknown libraries {unknown}; known: {','.join(LIBS)}")
    if args.slice:
        names = [n for n in names if LIBS[n].slice_phases]
    results = {}
    for name in names:
        try:
            results[name] = measure(
                name,
                args.python,
                args.tclint_root,
                args.fresh,
                args.timeout,
                log=lambda s: print(s, file=sys.stderr),
                phases=LIBS[name].slice_phases if args.slice else None,
                modes=[m for m in args.modes.split(",") if m],
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            print(f"{name}: dynamic run failed: {exc} (see {CACHE_DIR})", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as fh:
        json.dump({"libs": results, "tclint_commit": _git_head(args.tclint_root)}, fh, indent=1, default=list)
    print_table(results)
    print_per_model(results)
    report = os.path.splitext(args.json)[0] + ".md"
    write_report(report, results, _git_head(args.tclint_root))
    if args.baseline:
        with open(args.baseline, "w") as fh:
            json.dump(baseline(results), fh, indent=1, sort_keys=True)
            fh.write("\n")
    print(f"\nall sites: {args.json}\nreadable listing: {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
