"""tclint vs the real TorchDynamo on library models compiled from small user scripts (issue 21; dev tool).

    .venv/bin/python bench/lib_models.py --libs transformers,diffusers,xt_models   # the test extra's
    /work/venv_libmodels/bin/python bench/lib_models.py --libs timm,torchvision    # the others
    ... --fresh                                                        # re-measure Dynamo too

The venv (outside the repository, torch the CPU 2.13.0 wheel; versions as measured):

    python3.11 -m venv /work/venv_libmodels
    /work/venv_libmodels/bin/pip install torch==2.13.0 transformers timm torchvision==0.28.0 scipy

The PyPI torchvision wheel is a CUDA build: its C ops do not load next to the CPU torch, and its
``_meta_registrations`` then fails on ``torchvision::nms``/``qnms``, so ``import torchvision`` (and timm)
raises.  The venv's ``site-packages/sitecustomize.py`` declares those two schemas (no kernels) just before
torchvision is first imported, from a ``sys.meta_path`` finder that imports nothing until then; the
models measured use no torchvision C op (no detection model: those need ``nms``).  ``--baseline FILE``
writes the truth and the figures tests/bench/test_lib_models.py pins.

Each library has a user script in ``bench/lib_scripts/`` (``hf_user.py``: BERT, GPT-2, ViT, DETR, T5,
CLIP, Whisper;
``diffusers_user.py``: UNet2DModel, AutoencoderKL, DiT; ``xt_models_user.py`` (x-transformers): a
decoder LM, an encoder classifier, a ViT; ``timm_user.py``: ResNet-10t, ViT-Tiny, ConvNeXt-Atto;
``torchvision_user.py``: ResNet-18, MobileNetV3-Small, Swin-T).  transformers, diffusers and
x-transformers are in the ``test`` extra (the test venv measures them:
``--python .venv/bin/python --libs transformers,diffusers,xt_models``); timm and torchvision are not
(see above: measured with the venv below).  One *phase* is one model compiled one way: ``<model>_train`` (a
training step, labels given so the loss runs too) and ``<model>_eval`` (``.eval()`` under no_grad),
each with its own ``torch.compile`` line.  The machinery is bench/lib_eval.py's: the truth is every
graph break Dynamo reports running the phase (``backend="eager"``), attributed to the innermost frame in
the library's package; tclint runs on the script ALONE with ``--follow-libraries`` (mode ``follow``:
the library sites are those TC312 lists at the phase's compile site).  Per phase: Dynamo's distinct
sites, how many a reader could see in the source (:func:`lib_eval.visibility` and ``reach``), recall
of those at default confidence, and the precision of the sites TC312 marks hot.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import lib_eval  # noqa: E402
from lib_eval import LibSpec  # noqa: E402

DEFAULT_OUT = "/tmp/lib_models/results.json"
CACHE_DIR = "/tmp/lib_models/dynamic"

MODELS: dict[str, LibSpec] = {
    s.name: s
    for s in [
        LibSpec("transformers", "transformers", ("transformers",), "hf_user.py", ()),
        LibSpec("timm", "timm", ("timm",), "timm_user.py", ()),
        LibSpec("torchvision", "torchvision", ("torchvision",), "torchvision_user.py", ()),
        LibSpec("diffusers", "diffusers", ("diffusers",), "diffusers_user.py", ()),
        # x-transformers' models (lib_eval's "x_transformers" is its generation slice, another script)
        LibSpec("xt_models", "x-transformers", ("x_transformers",), "xt_models_user.py", ()),
    ]
}
lib_eval.LIBS.update(MODELS)  # lib_eval's dynamic side and scoring look libraries up by name


def measure(
    name: str,
    python: str = sys.executable,
    tclint_root: str = lib_eval.REPO,
    fresh: bool = False,
    timeout: int = 1800,
    log: Any = lambda s: None,
    phases: list[str] | None = None,
    cache_dir: str = CACHE_DIR,
) -> dict[str, Any]:
    """Dynamo's truth for the library's phases (cached in ``cache_dir``), tclint's follow run on the
    script alone, and the per-phase scores."""
    spec = MODELS[name]
    os.makedirs(cache_dir, exist_ok=True)
    cache = os.path.join(cache_dir, f"{name}-{lib_eval._dyn_cache_key(python, spec, phases)}.json")
    t0 = time.time()
    if fresh or not os.path.exists(cache):
        tmp = cache + ".tmp"
        cmd = [python, os.path.abspath(__file__), "--dynamic-one", name, "--dynamic-out", tmp]
        if phases:
            cmd += ["--dynamic-phases", ",".join(phases)]
        with open(cache + ".stderr", "w") as err:
            subprocess.run(cmd, check=True, timeout=timeout, stdout=subprocess.DEVNULL, stderr=err)
        os.replace(tmp, cache)
    with open(cache) as fh:
        dyn = json.load(fh)
    t1 = time.time()
    _base, dirs, _version = lib_eval.lib_location(python, spec)
    follow = lib_eval.run_tclint(python, os.path.abspath(tclint_root), spec, dirs, "follow")
    log(
        f"{name}: dynamic {t1 - t0:.0f}s{' (cached)' if t1 - t0 < 2 else ''}, tclint {follow['seconds']:.1f}s"
    )
    out = score(spec, dyn, follow)
    out["dynamic"] = dyn
    return out


def score(spec: LibSpec, dyn: dict[str, Any], follow: dict[str, Any]) -> dict[str, Any]:
    """lib_eval's scores of a follow run against Dynamo's truth, per phase."""
    stats = {
        "follow": follow,
        "follow-hot": {**follow, "diagnostics": [d for d in follow["diagnostics"] if d["hot"]]},
    }
    out = lib_eval.score_lib(spec, dyn, stats)
    out["phases"] = sorted(dyn["phases"])
    out["tclint_seconds"] = follow["seconds"]
    out["summaries"] = follow["summaries"]
    return out


def follow_only(
    spec: LibSpec, python: str = sys.executable, tclint_root: str = lib_eval.REPO
) -> dict[str, Any]:
    """tclint's follow run on the script alone (no regions run): what tests/bench/test_lib_models.py
    scores against the pinned truth."""
    alone = tempfile.mkdtemp(prefix="lib_models_")
    script = os.path.join(alone, spec.script)
    shutil.copyfile(os.path.join(lib_eval.SCRIPTS, spec.script), script)
    out_json = os.path.join(alone, "out.json")
    env = {**os.environ, "PYTHONPATH": lib_eval.tclint_shim(os.path.abspath(tclint_root))}
    cmd = [
        python,
        "-m",
        "tclint.rules",
        "check",
        script,
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
        "--follow-libraries",
    ]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=alone)
    secs = time.time() - t0
    if proc.returncode not in (0, 1) or not os.path.exists(out_json):
        raise RuntimeError(f"tclint failed ({proc.returncode}): {proc.stderr[-3000:]}")
    with open(out_json) as fh:
        diags = json.load(fh)
    shutil.rmtree(alone, ignore_errors=True)
    return {
        "diagnostics": lib_eval.library_sites(diags),
        "summaries": [d for d in diags if d["code"] == "TC312"],
        "seconds": round(secs, 1),
        "regions": None,
        "stderr": proc.stderr[-3000:],
    }


def pinned_truth(dyn: dict[str, Any]) -> dict[str, Any]:
    """The part of a dynamic result the scoring reads (breaks, traced and eager lines), for the fixture."""
    keep = ("lib", "torch", "version", "base", "packages", "traced", "eager")
    phases = {ph: {"error": pr.get("error"), "breaks": pr["breaks"]} for ph, pr in dyn["phases"].items()}
    return {**{k: dyn[k] for k in keep}, "phases": phases}


def per_model(results: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per phase (model and mode), plus the totals over all phases."""
    rows = []
    for lib, r in results.items():
        for phase, m in r.get("per_model", {}).items():
            rows.append({"lib": lib, "version": r["version"], "phase": phase, **m})
    return rows


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Recall over every phase's visible sites pooled, and hot precision pooled (sites counted per phase)."""
    vis = sum(r["visible"] for r in rows)
    vis_found = sum(round((r["visible_recall"] or 0) * r["visible"]) for r in rows)
    hot_tp = sum(r["hot_tp"] for r in rows)
    hot_scored = sum(round(r["hot_tp"] / r["hot_precision"]) for r in rows if r["hot_precision"])
    tp, fp = sum(r.get("tp", 0) for r in rows), sum(r.get("fp", 0) for r in rows)
    return {
        "phases": len(rows),
        "sites": sum(r["sites"] for r in rows),
        "visible": vis,
        "visible_recall": lib_eval.ratio(vis_found, vis),
        "hot": sum(r["hot"] for r in rows),
        "hot_precision": lib_eval.ratio(hot_tp, hot_scored),
        "tp": tp,
        "fp": fp,
        "precision": lib_eval.ratio(tp, tp + fp),
    }


def print_rows(rows: list[dict[str, Any]]) -> None:
    f = lib_eval._fmt
    print(
        f"{'library':<13} {'phase':<18} | {'sites':>5} {'visbl':>5} | {'found':>5} {'hot':>4} |"
        f" {'recall':>6} {'vis.rec':>7} {'hot.prec':>8} {'prec':>5}"
    )
    for r in rows:
        print(
            f"{r['lib']:<13} {r['phase']:<18} | {r['sites']:>5} {r['visible']:>5} | {r['found']:>5} {r['hot']:>4} |"
            f" {f(r['recall']):>6} {f(r['visible_recall']):>7} {f(r['hot_precision']):>8} {f(r['precision']):>5}"
        )
    t = totals(rows)
    print(
        f"{'all':<13} {str(t['phases']) + ' phases':<18} | {t['sites']:>5} {t['visible']:>5} | {'':>5} {t['hot']:>4} |"
        f" {'':>6} {f(t['visible_recall']):>7} {f(t['hot_precision']):>8} {f(t['precision']):>5}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libs", default=",".join(MODELS), help="comma-separated: " + ",".join(MODELS))
    ap.add_argument("--phases", help="comma-separated phase names (default: every phase of each script)")
    ap.add_argument("--json", default=DEFAULT_OUT, help="where to write every site (default %(default)s)")
    ap.add_argument("--fresh", action="store_true", help="re-measure Dynamo even if a cached result exists")
    ap.add_argument(
        "--tclint-root", default=lib_eval.REPO, help="tclint source tree to measure (default: this repo)"
    )
    ap.add_argument("--python", default=sys.executable, help="the venv's python (torch + the libraries)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per library's dynamic run")
    ap.add_argument(
        "--baseline",
        help="also write Dynamo's truth and tclint's figures for tests/bench/test_lib_models.py (the"
        " libraries measured replace theirs; the file's other libraries are kept)",
    )
    ap.add_argument("--dynamic-one", help=argparse.SUPPRESS)
    ap.add_argument("--dynamic-out", help=argparse.SUPPRESS)
    ap.add_argument("--dynamic-phases", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.dynamic_one:
        res = lib_eval.dynamic_one(
            args.dynamic_one, args.dynamic_phases.split(",") if args.dynamic_phases else None
        )
        with open(args.dynamic_out, "w") as fh:
            json.dump(res, fh)
        return 0
    results = {}
    phases = args.phases.split(",") if args.phases else None
    for name in [n.strip() for n in args.libs.split(",") if n.strip()]:
        try:
            results[name] = measure(
                name,
                args.python,
                args.tclint_root,
                args.fresh,
                args.timeout,
                log=lambda s: print(s, file=sys.stderr),
                phases=phases,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            print(f"{name}: dynamic run failed: {exc} (see {CACHE_DIR})", file=sys.stderr)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    if args.baseline:
        rows = per_model(results)
        kept: dict[str, Any] = {}
        if os.path.exists(args.baseline):  # the libraries not measured in this run stay as pinned
            with open(args.baseline) as fh:
                kept = json.load(fh)
        with open(args.baseline, "w") as fh:
            json.dump(
                kept
                | {
                    name: {
                        "version": r["version"],
                        "truth": pinned_truth(r["dynamic"]),
                        "figures": {
                            **totals([x for x in rows if x["lib"] == name]),
                            "phases": {
                                x["phase"]: {
                                    k: x[k]
                                    for k in (
                                        "sites",
                                        "visible",
                                        "found",
                                        "hot",
                                        "visible_recall",
                                        "hot_precision",
                                        "tp",
                                        "fp",
                                        "precision",
                                    )
                                }
                                for x in rows
                                if x["lib"] == name
                            },
                        },
                    }
                    for name, r in results.items()
                },
                fh,
                sort_keys=True,
                separators=(",", ":"),
            )
            fh.write("\n")
    with open(args.json, "w") as fh:
        json.dump(
            {"libs": results, "tclint_commit": lib_eval._git_head(args.tclint_root)},
            fh,
            indent=1,
            default=list,
        )
    print_rows(per_model(results))
    report = os.path.splitext(args.json)[0] + ".md"
    lib_eval.write_report(report, results, lib_eval._git_head(args.tclint_root))
    print(f"\nall sites: {args.json}\nreadable listing: {report}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
