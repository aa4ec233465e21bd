"""Library models (13 in the test extra's three libraries) compiled from small user scripts (issue 21):
tclint's TC312 summaries with --follow-libraries against the graph breaks Dynamo reported running them.

tests/fixtures/lib_models_baseline.json holds what ``bench/lib_models.py --baseline`` measured (the
Dynamo side takes about ten minutes on two cores, so the truth is pinned, not re-run): per library
its version, every phase's break sites with the lines Dynamo traced and the script ran eagerly, and
tclint's figures then.  The test re-lints each script alone with --follow-libraries (static only:
no library code runs) and scores it with the bench's own scorer: recall of the sites a reader could
see in the source at least 0.85, precision of the sites marked hot at least 0.90 (pooled over the
phases), neither below the pinned figures, and no more false sites on traced lines than pinned.  A library the ``test`` extra of pyproject.toml pins
(transformers, diffusers, x-transformers) must be installed at the version measured, or the test
fails; timm and torchvision are not in the extra (the PyPI torchvision wheel is a CUDA build whose C
ops do not load next to the CPU torch, and timm requires torchvision), so their cases skip when the
library is absent or at another version.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re

import pytest
import tomllib

from tests.helpers import FIXTURES, ROOT
from tests.helpers.bench_scripts import load

BASELINE = os.path.join(FIXTURES, "lib_models_baseline.json")
lib_models = load("lib_models")

with open(BASELINE) as _fh:
    _PINNED = json.load(_fh)

pytestmark = [pytest.mark.slow]


def _test_extra_pins() -> dict[str, str]:
    """distribution name -> version, for the ``name==version`` entries of the ``test`` extra."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        extra = tomllib.load(fh)["project"]["optional-dependencies"]["test"]
    pins = (re.fullmatch(r"([A-Za-z0-9_.-]+)==([^;\s]+)", e.strip()) for e in extra)
    return {m.group(1).lower(): m.group(2) for m in pins if m}


PINNED_IN_TEST_EXTRA = _test_extra_pins()


def _installed(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)  # reads the metadata only: nothing is imported
    except importlib.metadata.PackageNotFoundError:
        return None


@pytest.mark.parametrize("lib", sorted(_PINNED))
def test_library_models_against_pinned_dynamo_truth(lib):
    pinned = _PINNED[lib]
    spec = lib_models.MODELS[lib]
    version = _installed(spec.dist)
    required = PINNED_IN_TEST_EXTRA.get(spec.dist.lower())
    if required is not None and required != pinned["version"]:
        pytest.fail(
            f"the test extra pins {spec.dist}=={required}, the truth was measured on {pinned['version']}"
        )
    if version != pinned["version"]:
        if required is not None:
            pytest.fail(f"the test extra pins {spec.dist}=={required}, {version or 'nothing'} is installed")
        pytest.skip(f"{spec.dist} {version or 'is not installed'}, {pinned['version']} measured")
    truth = dict(pinned["truth"])
    truth["base"] = os.path.dirname(os.path.dirname(_package_init(spec.packages[0])))
    follow = lib_models.follow_only(spec)
    result = lib_models.score(spec, truth, follow)
    rows = lib_models.per_model({lib: result})
    got = lib_models.totals(rows)
    figures = pinned["figures"]
    assert sorted(r["phase"] for r in rows) == sorted(figures["phases"]), "the script's phases changed"
    if figures["visible"]:
        assert got["visible_recall"] >= max(0.85, figures["visible_recall"]) - 1e-9, rows
    if got["hot"]:
        assert got["hot_precision"] is not None and got["hot_precision"] >= 0.90, rows
    if figures["hot_precision"] is not None:
        assert got["hot_precision"] is not None and got["hot_precision"] >= figures["hot_precision"] - 1e-9, (
            rows
        )
    # every TC312 site on a statement Dynamo traced (hot or not): no more false ones than pinned
    if figures.get("precision") is not None:
        assert got["precision"] is not None and got["precision"] >= figures["precision"] - 1e-9, rows
        assert got["fp"] <= figures["fp"], rows


def test_at_least_ten_models_in_three_libraries_run_in_ci():
    """issue 21's bar: the libraries the test extra installs hold ten models (train and eval each)."""
    in_ci = {
        lib: p for lib, p in _PINNED.items() if lib_models.MODELS[lib].dist.lower() in PINNED_IN_TEST_EXTRA
    }
    models = {(lib, phase.rsplit("_", 1)[0]) for lib, p in in_ci.items() for phase in p["figures"]["phases"]}
    assert len(in_ci) >= 3 and len(models) >= 10, sorted(models)
    for lib, p in in_ci.items():
        phases = set(p["figures"]["phases"])
        assert all({f"{m}_train", f"{m}_eval"} <= phases for li, m in models if li == lib), (lib, phases)


def _package_init(package: str) -> str:
    """The installed package's ``__init__.py``, found from the distribution's file list (not imported)."""
    dist = importlib.metadata.distribution(package)
    for f in dist.files or ():
        if str(f) == f"{package}/__init__.py":
            return str(f.locate())
    raise AssertionError(f"{package}/__init__.py not in its distribution")
