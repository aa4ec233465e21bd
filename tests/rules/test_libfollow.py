"""Following compiled regions into installed packages (issue 21): locating a module's source on
disk without importing it, loading only what the regions reach, and TC312 at the user's line."""

from __future__ import annotations

import os
import sys
import textwrap

from tclint.rules.libfollow import LIBRARY_MEMO, Environment

from tests.helpers.lintutil import lint_tree, write_tree

# a package whose __init__ must never run (linting never runs code)
BOOBY_TRAP = "raise SystemExit('imported: linting must never run library code')\n"

LIB = {
    "fakelib/__init__.py": BOOBY_TRAP + "from .layers import Layer\n",
    "fakelib/layers.py": """
        import torch
        from torch import nn
        from fakelib.ops import scale


        class Layer(nn.Module):
            def forward(self, x):
                y = scale(x)
                return y * x.sum().item()
        """,
    "fakelib/ops.py": """
        import torch


        def scale(x):
            if x.sum() > 0:
                return x * 2
            return x
        """,
    "fakelib/unused.py": """
        import torch


        def never_reached(x):
            return x.tolist()
        """,
}

LIB = {name: textwrap.dedent(text) for name, text in LIB.items()}

USER = textwrap.dedent("""
    import torch
    import fakelib

    model = torch.compile(fakelib.Layer())
    model(torch.ones(3))
    """)


def _site(tmp_path) -> tuple[str, str]:
    """(an interpreter path, its site-packages) laid out as a venv, with fakelib installed."""
    site = os.path.join(str(tmp_path), "env", "lib", "python3.11", "site-packages")
    write_tree(site, LIB)
    return os.path.join(str(tmp_path), "env", "bin", "python"), site


def test_locate_reads_the_disk_only(tmp_path):
    python, site = _site(tmp_path)
    ns = os.path.join(str(tmp_path), "ns_root")
    write_tree(ns, {"nspkg/sub/mod.py": "X = 1\n"})  # a namespace package (no __init__.py)
    editable = os.path.join(str(tmp_path), "src", "edpkg")
    write_tree(editable, {"__init__.py": BOOBY_TRAP, "core.py": "Y = 2\n"})
    write_tree(
        site,
        {
            "ns.pth": f"import os; raise SystemExit('pth code ran')\n{ns}\n",
            "__editable__.edpkg_finder.py": f"MAPPING = {{'edpkg': {editable!r}}}\nraise SystemExit('finder ran')\n",
        },
    )
    env = Environment.for_python(python)
    assert env.locate("fakelib") == (os.path.join(site, "fakelib", "__init__.py"), True, site)
    assert env.locate("fakelib.ops") == (os.path.join(site, "fakelib", "ops.py"), False, site)
    assert env.locate("fakelib.nothing") is None
    assert env.locate("nspkg.sub.mod") == (os.path.join(ns, "nspkg", "sub", "mod.py"), False, ns)
    assert env.locate("edpkg.core") == (os.path.join(editable, "core.py"), False, os.path.dirname(editable))
    assert env.locate("edpkg")[0] == os.path.join(editable, "__init__.py")
    assert not {"fakelib", "edpkg", "nspkg"} & set(sys.modules)


def test_compile_site_into_a_library_reports_at_the_users_line(tmp_path):
    python, site = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    diags = result.diagnostics
    assert {d.path for d in diags} == {"train.py"}, [
        (d.path, d.code) for d in diags
    ]  # no library file reported
    [summary] = [d for d in diags if d.code == "TC312"]
    assert summary.line == 5
    assert "2 likely graph breaks" in summary.message
    sites = sorted(
        (os.path.relpath(r.path, site), r.span.start.line, r.message.split(" ", 1)[0])
        for r in summary.related
    )
    assert sites == [("fakelib/layers.py", 10, "TC101"), ("fakelib/ops.py", 6, "TC102")]
    assert all("train.py:5" in r.message and "Layer.forward" in r.message for r in summary.related)
    assert "TC311" not in {d.code for d in diags}  # the compile site resolved into the package
    loaded = {os.path.relpath(p, site) for p in result.project.memo[LIBRARY_MEMO]}
    assert "fakelib/unused.py" not in loaded  # only what the regions reach is loaded
    assert {"fakelib/layers.py", "fakelib/ops.py"} <= loaded


def test_without_follow_libraries_the_site_is_unresolved(tmp_path):
    python, _site_dir = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    result = lint_tree(proj, ["train.py"], {"probe": {"python": python}})
    assert "TC312" not in {d.code for d in result.diagnostics}


def test_a_warm_run_walks_no_library_file_again(tmp_path, monkeypatch):
    """Library facts (plain and refined) come from the user-level cache the second time: an edit in
    the user's file re-walks only the user's file."""
    from tclint.rules import engine, libfollow
    from tclint.rules.cache import Cache
    from tclint.rules.config import parse_table

    from tests.helpers.lintutil import _FixedResolver

    python, site = _site(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    settings = parse_table({"follow-libraries": True, "probe": {"python": python}}, None)
    settings.root = proj
    walked: list[str] = []
    real = engine.analyze_source

    def counting(src, *args, **kwargs):
        walked.append(
            os.path.relpath(src.path, site) if src.path.startswith(site) else os.path.basename(src.path)
        )
        return real(src, *args, **kwargs)

    monkeypatch.setattr(engine, "analyze_source", counting)
    monkeypatch.chdir(proj)

    def run() -> list[str]:
        walked.clear()
        libfollow._MEMO.clear()  # a new process: only the user-level cache on disk is left
        cache = Cache(os.path.join(proj, ".tclint_cache"))
        result = engine.Linter(_FixedResolver(settings), cache=cache, jobs=1, index_project=False).lint_paths(
            ["train.py"]
        )
        cache.flush()
        assert [d.code for d in result.diagnostics] == ["TC312"]
        return sorted(walked)

    first = run()
    assert {"fakelib/layers.py", "fakelib/ops.py"} <= set(first)
    with open(os.path.join(proj, "train.py"), "a") as fh:
        fh.write("# an edit\n")
    assert [w for w in run() if w.startswith("fakelib/")] == []


def test_regions_lists_the_library_part_of_the_chain(tmp_path, monkeypatch, capsys):
    import json

    from tclint.rules.cli import run_regions

    python, site = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER, "pyproject.toml": f'[tool.tclint.probe]\npython = "{python}"\n'})
    monkeypatch.chdir(proj)
    assert run_regions(["train.py", "--follow-libraries", "--output-format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)["regions"]
    lib = sorted((os.path.relpath(r["path"], site), r["function"]) for r in rows if r["library"])
    assert lib == [("fakelib/layers.py", "Layer.forward"), ("fakelib/ops.py", "scale")]
    assert all("train.py:5" in r["via"] for r in rows if r["library"])


def test_severity_follows_heat(tmp_path):
    from tclint.rules.model import Severity

    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "stacklib/__init__.py": BOOBY_TRAP,
            "stacklib/stack.py": textwrap.dedent("""
        from torch import nn


        class Block(nn.Module):
            def forward(self, x):
                return x * x.sum().item()


        class Stack(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([Block() for _ in range(4)])

            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x


        class Gate(nn.Module):
            def forward(self, x):
                if x.dim() > 2:
                    return x * x.sum().item()
                return x
        """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = "import torch\nfrom stacklib.stack import Gate, Stack\n\nwarm = torch.compile(Gate())\n"
    write_tree(proj, {"train.py": user + "hot = torch.compile(Stack())\n"})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    # behind a condition on the input tclint cannot evaluate: listed, not hot
    assert by_line[4].severity == Severity.WARNING and "(none hot)" in by_line[4].message
    assert by_line[5].severity == Severity.ERROR and "(1 hot)" in by_line[5].message
    assert "(hot, " in by_line[5].related[0].message


def test_a_site_behind_a_value_the_library_computes_from_its_settings_is_never_hot(tmp_path):
    """transformers' output capture: ``collected = {k: [] for k, v in wanted.items() if v}`` with
    ``wanted`` read from ``**kwargs`` / ``self.config``, then ``if len(collected) > 0:`` -- tclint
    cannot evaluate it, and whether the branch runs is the user's setting (listed, never hot).  The
    same length check on an input parameter stays hot."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "caplib/__init__.py": BOOBY_TRAP,
            "caplib/net.py": textwrap.dedent("""
        from torch import nn


        class Block(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.config = config

            def forward(self, x, extra, **kwargs):
                wanted = {k: kwargs.get(k, getattr(self.config, k, False)) for k in ("hidden", "attn")}
                collected = {k: [] for k, v in wanted.items() if v}
                if len(collected) > 0:
                    x = x * x.sum().item()
                if len(extra) > 0:
                    x = x * x.max().item()
                return x


        class Net(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.blocks = nn.ModuleList([Block(config) for _ in range(4)])

            def forward(self, x, extra):
                for block in self.blocks:
                    x = block(x, extra)
                return x
        """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = "import torch\nfrom caplib.net import Net\nmodel = torch.compile(Net(None))\n"
    write_tree(proj, {"train.py": user + "model(torch.ones(2), [1])\n"})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    heat = {s["line"]: (s["hot"], s["depends_on"]) for s in summary.extra["library_sites"]}
    assert heat[14] == (False, ["len(collected)"])  # derived from kwargs / self.config: a setting
    assert heat[16] == (True, ["len(extra)"])  # an input's length: as hot as the loop makes it


def test_a_rebinding_below_a_condition_and_a_known_dicts_get_are_judged(tmp_path):
    """diffusers' BasicTransformerBlock: ``if cross_attention_kwargs is not None:`` at the top, and
    ``cross_attention_kwargs = ... if cross_attention_kwargs is not None else {}`` further down: the
    condition sees the argument (None: pruned), not the rebinding below it.  A rebinding above it
    gives ``{}``, whose ``.get("scale", None)`` is None: pruned too."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "optlib/__init__.py": BOOBY_TRAP,
            "optlib/net.py": textwrap.dedent("""
        import logging

        from torch import nn

        logger = logging.getLogger(__name__)


        class Block(nn.Module):
            def forward(self, x, opts=None):
                if opts is not None:
                    if opts.get("scale", None) is not None:
                        logger.warning("scale is deprecated")
                opts = opts.copy() if opts is not None else {}
                return x * 2

            def later(self, x, opts=None):
                opts = opts if opts is not None else {}
                if opts.get("scale", None) is not None:
                    logger.warning("scale is deprecated")
                return x


        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x, opts=None):
                x = self.block(x, opts=opts)
                return self.block.later(x, opts=opts) * x.sum().item()
        """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = "import torch\nfrom optlib.net import Net\nmodel = torch.compile(Net())\nmodel(torch.ones(2))\n"
    write_tree(proj, {"train.py": user})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert [(s["line"], s["depends_on"]) for s in summary.extra["library_sites"]] == [(31, [])]
    why = {s["line"]: s["why"][0] for s in summary.extra["pruned_sites"]}
    assert sorted(why) == [13, 20], why
    assert why[13].startswith("`opts is not None` is False")
    assert why[20].startswith("`opts.get('scale', None) is not None` is False")


def test_an_upgraded_library_is_seen_by_an_unchanged_rerun(tmp_path, monkeypatch):
    """The whole-run cache is keyed by the project's files only: it is not used while following."""
    from tclint.rules import engine
    from tclint.rules.cache import Cache
    from tclint.rules.config import parse_table

    from tests.helpers.lintutil import _FixedResolver

    python, site = _site(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    settings = parse_table({"follow-libraries": True, "probe": {"python": python}}, None)
    settings.root = proj
    monkeypatch.chdir(proj)

    def run() -> str:
        cache = Cache(os.path.join(proj, ".tclint_cache"))
        result = engine.Linter(_FixedResolver(settings), cache=cache, jobs=1, index_project=False).lint_paths(
            ["train.py"]
        )
        cache.flush()
        return result.diagnostics[0].message

    assert "2 likely graph breaks" in run()
    write_tree(site, {"fakelib/ops.py": "def scale(x):\n    return x * 2\n"})  # the new version has no branch
    assert "1 likely graph break " in run()


def test_the_projects_selection_applies_to_library_sites(tmp_path):
    python, _site_dir = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    result = lint_tree(
        proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}, "ignore": ["TC102"]}
    )
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert "1 likely graph break " in summary.message
    assert [r.message.split(" ", 1)[0] for r in summary.related] == ["TC101"]


def test_every_compile_site_reaching_the_library_code_gets_its_summary(tmp_path):
    python, _site_dir = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    two = USER + "evaluated = torch.compile(fakelib.Layer().eval())\n"
    write_tree(proj, {"train.py": two})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    summaries = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    assert sorted(summaries) == [5, 7]
    assert all("2 likely graph breaks" in d.message for d in summaries.values())


LAZY = {
    # transformers' layout: every package level re-exports with star imports under TYPE_CHECKING and
    # swaps itself for a lazy module otherwise
    "lazylib/__init__.py": BOOBY_TRAP
    + textwrap.dedent("""
        from typing import TYPE_CHECKING
        if TYPE_CHECKING:
            from .models import *
        else:
            import sys
            sys.modules[__name__] = object()
        """),
    "lazylib/models/__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .albert import *\n    from .bert import *\n",
    "lazylib/models/albert/__init__.py": "from .modeling_albert import *\n",
    "lazylib/models/albert/modeling_albert.py": "from torch import nn\n__all__ = ['AlbertModel']\n\n\nclass AlbertModel(nn.Module):\n    pass\n",
    "lazylib/models/bert/__init__.py": "from .modeling_bert import *\n",
    "lazylib/models/bert/modeling_bert.py": textwrap.dedent("""
        from torch import nn

        __all__ = ["BertModel"]


        class BertModel(nn.Module):
            def forward(self, x):
                return x * x.sum().item()


        class NotExported(nn.Module):
            pass
        """),
}


def test_names_re_exported_by_star_imports_resolve(tmp_path):
    python, site = _site(tmp_path)
    write_tree(site, LAZY)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(
        proj,
        {
            "train.py": textwrap.dedent("""
        import torch
        from lazylib import BertModel

        model = torch.compile(BertModel())
        """)
        },
    )
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert summary.line == 5
    assert [(os.path.relpath(r.path, site), r.span.start.line) for r in summary.related] == [
        ("lazylib/models/bert/modeling_bert.py", 9)
    ]
    loaded = {os.path.relpath(p, site) for p in result.project.memo[LIBRARY_MEMO]}
    assert "lazylib/models/albert/modeling_albert.py" not in loaded  # the name's own module only


def test_star_imports_take_only_what_all_lists():
    from tclint.rules.libfollow import StarExports

    class Env:
        def locate(self, module):
            return None

    import ast as _ast

    from tclint.rules.libfollow import _module_bindings

    stars, bound, exported = _module_bindings(
        _ast.parse(LAZY["lazylib/models/bert/modeling_bert.py"]), "lazylib.models.bert.modeling_bert", False
    )
    assert stars == [] and {"BertModel", "NotExported", "nn"} <= bound and exported == {"BertModel"}
    assert StarExports(Env()).source_of("lazylib", "BertModel") is None  # nothing installed: nothing found


def test_a_factory_declared_to_return_a_class_is_followed(tmp_path):
    """timm's layout: ``resnet10t() -> ResNet`` returns ``build_model_with_cfg(ResNet, ...)``, a builder
    whose ``model_cls(**kwargs)`` no walk can type: the declared return type is the class compiled."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "factlib/__init__.py": BOOBY_TRAP,
            "factlib/builder.py": "def build(model_cls, **kwargs):\n    model = model_cls(**kwargs)\n    return model\n",
            "factlib/net.py": textwrap.dedent("""
            from torch import nn
            from factlib.builder import build


            class Net(nn.Module):
                def forward(self, x):
                    return x * x.sum().item()


            def tiny(**kwargs) -> Net:
                return build(Net, **kwargs)
            """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(
        proj, {"train.py": "import torch\nfrom factlib.net import tiny\n\nmodel = torch.compile(tiny())\n"}
    )
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    codes = {d.code for d in result.diagnostics}
    assert "TC311" not in codes
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert [(os.path.relpath(r.path, site), r.span.start.line) for r in summary.related] == [
        ("factlib/net.py", 8)
    ]


def _fakelib_summary(tmp_path):
    """USER's TC312 over fakelib, its layers.py and the GB ids of the site at line 10, the project."""
    python, site = _site(tmp_path)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    layer = os.path.join(site, "fakelib", "layers.py")
    gb = next(s["gb_ids"] for s in summary.extra["library_sites"] if s["line"] == 10)
    return summary, layer, gb, proj


def test_the_probe_confirms_the_library_sites_it_saw_break(tmp_path):
    from tclint.runtime_probe.diagnostics import _diag
    from tclint.runtime_probe.merge import merge

    summary, layer, gb, proj = _fakelib_summary(tmp_path)
    seen = _diag(
        "TC901", "Graph break", layer, 10, gb_ids=tuple(gb[:1]), extra={"hits": 2, "in_library": True}
    )
    elsewhere = _diag("TC901", "Graph break", layer, 9, gb_ids=tuple(gb[:1]), extra={"hits": 1})
    merged = merge([summary], [seen, elsewhere])
    [after] = [d for d in merged if d.code == "TC312"]
    assert after.extra["confirmed"] and after.extra["confirmed_sites"] == 1
    marks = {s["line"]: s.get("confirmed", False) for s in after.extra["library_sites"]}
    assert marks == {10: True, 6: False}
    assert [r.message.endswith("(confirmed by the probe, hit 2 times)") for r in after.related] == [
        r.path == layer for r in after.related
    ]
    # the confirmed break is said once (by the summary); the one on another line stays the probe's own
    assert [(d.code, d.span.start.line) for d in merged if d.code == "TC901"] == [("TC901", 9)]


def test_a_break_at_the_users_call_confirms_the_library_site_dynamo_reported(tmp_path):
    """A break inside the library whose stack holds a user frame is the probe's TC901 at the user's
    line (the call into the library); Dynamo's own report names the library line, which is what the
    summary's site is matched with (found on a GPT-2 training script: the loss warning's break was
    a 'probe only' TC901 at the script's call and the TC312 stayed unconfirmed)."""
    from tclint.runtime_probe.diagnostics import _diag
    from tclint.runtime_probe.merge import merge

    summary, layer, gb, proj = _fakelib_summary(tmp_path)
    train = os.path.join(proj, "train.py")
    at_call = _diag(
        "TC901", "Graph break", train, 4, gb_ids=tuple(gb[:1]), extra={"hits": 3, "reported_at": [layer, 10]}
    )
    merged = merge([summary], [at_call])
    [after] = [d for d in merged if d.code == "TC312"]
    assert after.extra["confirmed_sites"] == 1
    assert {s["line"]: s.get("confirmed", False) for s in after.extra["library_sites"]} == {
        10: True,
        6: False,
    }
    assert not [d for d in merged if d.code == "TC901"]  # said once, by the summary
    elsewhere = _diag(
        "TC901", "Graph break", train, 4, gb_ids=tuple(gb[:1]), extra={"hits": 3, "reported_at": [layer, 9]}
    )
    assert [d.code for d in merge([summary], [elsewhere]) if d.code == "TC901"] == ["TC901"]


def test_compiled_library_frames_are_not_the_users_files():
    """The probe lints the files its report names; a compiled frame of an installed package (a
    library model's forward) is reached through the user's compile site instead (TC312)."""
    from tclint.runtime_probe.report import installed

    assert installed(os.path.join(os.sep, "env", "lib", "python3.11", "site-packages", "lib", "m.py"))
    assert installed(os.path.join(os.sep, "usr", "lib", "python3", "dist-packages", "m.py"))
    assert not installed(os.path.join(os.sep, "work", "proj", "train.py"))


CONFIGLIB = {
    "cfglib/__init__.py": BOOBY_TRAP,
    "cfglib/config.py": textwrap.dedent("""
        class ModelConfig:
            debug: bool = False

            def __init__(self, check_finite=False, **kwargs):
                self.check_finite = check_finite
        """),
    "cfglib/model.py": textwrap.dedent("""
        from torch import nn


        class Model(nn.Module):
            def __init__(self, config):
                super().__init__()
                self.config = config
                self.checks = config.check_finite

            def forward(self, x, labels=None):
                if self.training:
                    if x.sum() > 0:
                        x = x * 2
                if labels is not None:
                    x = self.loss(x, labels)
                if self.config.debug:
                    print("debug")
                if self.checks:
                    x = x * x.sum().item()
                if self.config.mystery:
                    x = x * x.max().item()
                return x

            def loss(self, x, labels):
                return x * (x - labels).abs().sum().item()
        """),
}

CONFIG_USER = textwrap.dedent("""
    import torch
    from cfglib.config import ModelConfig
    from cfglib.model import Model


    def train():
        model = Model(ModelConfig(check_finite=True))
        model.train()
        step = torch.compile(model)
        step(torch.ones(3), labels=torch.ones(3))


    def evaluate():
        model = torch.compile(Model(ModelConfig()).eval())
        model(torch.ones(3))
    """)


def test_the_users_configuration_prunes_library_branches(tmp_path):
    """labels given or not, .train()/.eval(), a config keyword and a config class default decide which
    library sites the compiled model meets; a value tclint cannot see is said, and never hot."""
    python, site = _site(tmp_path)
    write_tree(site, CONFIGLIB)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": CONFIG_USER})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    assert sorted(by_line) == [10, 15]

    def lines(d):
        return sorted(s["line"] for s in d.extra["library_sites"])

    train, evaluate = by_line[10], by_line[15]
    # train: the training-only branch, the loss (labels given), check_finite=True and the unseen value;
    # not the debug print (the class's declared default debug = False)
    assert lines(train) == [13, 20, 22, 26]
    assert [s["line"] for s in train.extra["pruned_sites"]] == [18]
    # eval: only the site behind a value tclint could not see
    assert lines(evaluate) == [22]
    assert sorted(s["line"] for s in evaluate.extra["pruned_sites"]) == [13, 18, 20, 26]
    [unseen] = [s for s in evaluate.extra["library_sites"]]
    assert unseen["depends_on"] == ["config.mystery"] and not unseen["hot"]
    assert "1 depends on values tclint could not see" in evaluate.message
    assert "4 more behind branches your configuration does not take" in evaluate.message
    why = {s["line"]: s["why"][0] for s in evaluate.extra["pruned_sites"]}
    assert why[13].startswith("`self.training` is False") and why[26].startswith(
        "`labels is not None` is False"
    )
    assert why[20].startswith("`self.checks` is False") and why[18].startswith("`self.config.debug` is False")
    # the advice names the config flag the library branches on, and the probe run for this script
    assert (
        "set `check_finite=False` in the model's config (the library then skips 1 of these sites)"
        in train.help
    )
    assert "`tclint probe train.py`" in train.help and "torch.compiler.disable" in train.help
    assert "depends on `config.mystery`, which tclint could not see" in next(
        r.message for r in evaluate.related if r.span.start.line == 22
    )


def test_the_loss_a_model_class_dispatches_to_is_followed(tmp_path):
    """transformers' ``self.loss_function(...)`` returns ``LOSS_MAPPING[key]``, the key found in the class
    name: the table is read as data and the dispatched loss is part of the region."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "transformers/__init__.py": BOOBY_TRAP,
            "transformers/loss/__init__.py": "",
            "transformers/loss/loss_utils.py": textwrap.dedent("""
            from .loss_detect import ForObjectDetectionLoss


            def ForCausalLMLoss(logits, labels):
                return logits.sum()


            LOSS_MAPPING = {"ForCausalLM": ForCausalLMLoss, "ForObjectDetection": ForObjectDetectionLoss}
            """),
            "transformers/loss/loss_detect.py": textwrap.dedent("""
            def ForObjectDetectionLoss(logits, labels):
                return logits * logits.sum().item()
            """),
            "transformers/modeling.py": textwrap.dedent("""
            from torch import nn
            from transformers.loss.loss_utils import LOSS_MAPPING


            class PreTrainedModel(nn.Module):
                @property
                def loss_function(self):
                    return LOSS_MAPPING[self.loss_type]


            class TinyForObjectDetection(PreTrainedModel):
                def forward(self, x, labels=None):
                    if labels is not None:
                        return self.loss_function(x, labels)
                    return x
            """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = textwrap.dedent("""
        import torch
        from transformers.modeling import TinyForObjectDetection

        step = torch.compile(TinyForObjectDetection())
        step(torch.ones(2), labels=torch.ones(2))
        """)
    write_tree(proj, {"train.py": user})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert [(os.path.relpath(r.path, site), r.span.start.line) for r in summary.related] == [
        ("transformers/loss/loss_detect.py", 3)
    ]
    loaded = {os.path.relpath(p, site) for p in result.project.memo[LIBRARY_MEMO]}
    assert "transformers/loss/loss_detect.py" in loaded


def test_dispatch_key_is_the_first_key_in_the_class_name():
    from tclint.rules.libfollow import _dispatch_key

    keys = ["ForCausalLM", "ForObjectDetection", "DetrForObjectDetection", "ForSequenceClassification"]
    assert _dispatch_key("DetrForObjectDetection", keys, "ForCausalLM") == "DetrForObjectDetection"
    assert _dispatch_key("YolosForObjectDetection", keys, "ForCausalLM") == "ForObjectDetection"
    assert _dispatch_key("GPT2LMHeadModel", keys, "ForCausalLM") == "ForCausalLM"


def test_a_warm_run_loads_the_last_runs_library_files_at_once(tmp_path, monkeypatch):
    """The user-level cache keeps which library modules a run with these project files loaded: the
    next run loads them before its first round, so it builds the project twice instead of once per
    round of imports, with the same findings."""
    from tclint.rules import libfollow

    python, _site_dir = _site(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", os.path.join(str(tmp_path), "xdg"))
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": USER})
    builds = []
    real = libfollow.RecordingProject.build

    def counting(self):
        builds.append(1)
        return real(self)

    monkeypatch.setattr(libfollow.RecordingProject, "build", counting)
    settings = {"follow-libraries": True, "probe": {"python": python}}

    from tclint.rules import engine
    from tclint.rules.cache import Cache
    from tclint.rules.config import parse_table

    from tests.helpers.lintutil import _FixedResolver

    parsed = parse_table(settings, None)
    parsed.root = proj
    monkeypatch.chdir(proj)

    def run():
        builds.clear()
        libfollow._MEMO.clear()  # a new process: only the user-level cache on disk is left
        cache = Cache(os.path.join(proj, ".tclint_cache"))
        result = engine.Linter(_FixedResolver(parsed), cache=cache, jobs=1, index_project=False).lint_paths(
            ["train.py"]
        )
        cache.flush()
        return len(builds), [(d.code, d.line, d.message) for d in result.diagnostics]

    cold_builds, cold = run()
    warm_builds, warm = run()
    assert warm == cold and cold_builds >= 3
    assert warm_builds == 2


def test_library_state_changes_do_not_make_the_users_variants_unbounded(tmp_path):
    """A counter bumped inside a library's forward is one of the hazards TC312 lists (with the
    library's configuration and heat); it does not turn the user's TC208 into 'unbounded: state
    mutated inside the compiled code' (seen on BERT: transformers' cache_utils counters, on a cache
    object BERT never builds in that configuration).  The old code said unbounded."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "fakelib/counting.py": textwrap.dedent("""
                import torch
                from torch import nn


                class Counting(nn.Module):
                    def __init__(self):
                        super().__init__()
                        self.calls = 0

                    def forward(self, x):
                        self.calls += 1
                        return x * 2
                """)
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = textwrap.dedent("""
        import torch
        from fakelib.counting import Counting

        model = torch.compile(Counting())
        model(torch.ones(3))
        with torch.no_grad():
            model(torch.ones(3))
        """)
    write_tree(proj, {"train.py": user})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    [tc208] = [d for d in result.diagnostics if d.code == "TC208"]
    assert "≈ 2 variants" in tc208.message and "unbounded" not in tc208.message
    [summary] = [d for d in result.diagnostics if d.code == "TC312"]
    assert any(r.message.startswith("TC201") for r in summary.related)  # listed there instead


STEPLIB = {
    "steplib/__init__.py": BOOBY_TRAP,
    "steplib/net.py": textwrap.dedent("""
        from torch import nn


        def loss_fn(x, labels):
            return (x - labels).abs().sum().item()


        class Net(nn.Module):
            def forward(self, x, labels=None, mode=None):
                x = x * x.max().item()
                if labels is None:
                    return x
                if not (x >= 0).all():
                    raise ValueError("negative input")
                loss = loss_fn(x, labels)
                if mode == "debug":
                    print("loss", loss)
                try:
                    x = x.relu()
                except RuntimeError:
                    x = x.tolist()
                return x, loss
        """),
}


def test_a_site_the_users_configuration_runs_at_every_step_is_hot(tmp_path):
    """Hot means 'runs at every step in the user's configuration': a likely break on the compiled
    model's path whose every condition tclint evaluated as taken at each call (no loop, no block
    repetition needed); a check that raises above it (``if not (x >= 0).all(): raise``) does not
    make it conditional: a step that raises is no step.  Not hot: a site after an early ``return``
    the user's calls take (pruned), one behind a branch some calls take and others do not, one in
    an ``except`` clause."""
    python, site = _site(tmp_path)
    write_tree(site, STEPLIB)
    proj = os.path.join(str(tmp_path), "proj")
    user = textwrap.dedent("""
        import torch
        from steplib.net import Net

        step = torch.compile(Net())
        for i in range(3):
            step(torch.ones(2), labels=torch.zeros(2), mode="debug" if i else None)
        infer = torch.compile(Net())
        infer(torch.ones(2))
        """)
    write_tree(proj, {"train.py": user})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    train = {s["line"]: s["hot"] for s in by_line[5].extra["library_sites"]}
    # the first .item() and the loss run at every training call; the print only at some calls
    # (mode is None at the first), the except clause only when relu raised
    assert train == {6: True, 11: True, 14: True, 18: False, 22: False}, train
    assert "(3 hot)" in by_line[5].message
    assert any("(hot: runs at every step of your configuration)" in r.message for r in by_line[5].related)
    # no labels: `if labels is None: return x` leaves before the loss (pruned, with why)
    infer = {s["line"]: s["hot"] for s in by_line[8].extra["library_sites"]}
    assert infer == {11: True}, infer
    why = {s["line"]: s["why"][0] for s in by_line[8].extra["pruned_sites"]}
    assert why[6].startswith("`labels is None` is True") and {14, 22} <= set(why)


def test_the_dispatch_key_of_the_users_model_class_prunes_the_fallback_warning(tmp_path):
    """transformers' ``loss_function``: ``loss_type = getattr(self, "loss_type", None)`` (set in
    ``__init__`` from the class name and ``LOSS_MAPPING``), then ``if loss_type is None or loss_type
    not in LOSS_MAPPING: logger.warning_once(...)``.  A class whose name holds a key never warns
    (pruned, measured: DETR and ViT do not break there); one without a key does (GPT-2 breaks on it
    under Dynamo)."""
    python, site = _site(tmp_path)
    write_tree(
        site,
        {
            "transformers/__init__.py": BOOBY_TRAP,
            "transformers/loss/__init__.py": "",
            "transformers/loss/loss_utils.py": textwrap.dedent("""
            def ForCausalLMLoss(logits, labels):
                return (logits - labels).sum()


            def ForObjectDetectionLoss(logits, labels):
                return (logits - labels).mean()


            LOSS_MAPPING = {"ForCausalLM": ForCausalLMLoss, "ForObjectDetection": ForObjectDetectionLoss}
            """),
            "transformers/modeling.py": textwrap.dedent("""
            import logging

            from torch import nn
            from transformers.loss.loss_utils import LOSS_MAPPING

            logger = logging.getLogger(__name__)


            class PreTrainedModel(nn.Module):
                @property
                def loss_function(self):
                    if hasattr(self, "_loss_function"):
                        return self._loss_function
                    loss_type = getattr(self, "loss_type", None)
                    if loss_type is None or loss_type not in LOSS_MAPPING:
                        logger.warning("unrecognized loss_type")
                        loss_type = "ForCausalLM"
                    return LOSS_MAPPING[loss_type]


            class TinyForObjectDetection(PreTrainedModel):
                def forward(self, x, labels=None):
                    if labels is not None:
                        return self.loss_function(x, labels)
                    return x


            class TinyLMHeadModel(TinyForObjectDetection):
                def forward(self, x, labels=None):
                    if labels is not None:
                        return self.loss_function(x, labels)
                    return x
            """),
        },
    )
    proj = os.path.join(str(tmp_path), "proj")
    user = textwrap.dedent("""
        import torch
        from transformers.modeling import TinyForObjectDetection, TinyLMHeadModel

        detect = torch.compile(TinyForObjectDetection())
        detect(torch.ones(2), labels=torch.ones(2))
        lm = torch.compile(TinyLMHeadModel())
        lm(torch.ones(2), labels=torch.ones(2))
        """)
    write_tree(proj, {"train.py": user})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    assert 5 not in by_line or not by_line[5].extra["library_sites"], by_line[5].extra
    [warn] = by_line[7].extra["library_sites"]
    assert warn["line"] == 17 and warn["code"] == "TC105", warn
    # what is left unseen is the early return above it (a loss function set on the instance)
    assert warn["depends_on"] == ["hasattr(self, '_loss_function')"], warn


def test_getattr_on_the_config_reads_the_config_classs_default(tmp_path):
    """``if getattr(self.config, "debug", True):`` (transformers' Whisper:
    ``getattr(self.config, "apply_spec_augment", True)``) is the config's value: the class declares
    ``debug = False`` and the user does not set it, so the branch is pruned in both modes."""
    python, site = _site(tmp_path)
    lib = dict(CONFIGLIB)
    lib["cfglib/model.py"] = lib["cfglib/model.py"].replace(
        "if self.config.debug:", 'if getattr(self.config, "debug", True):'
    )
    write_tree(site, lib)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": CONFIG_USER})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    for summary in by_line.values():
        why = {s["line"]: s["why"][0] for s in summary.extra["pruned_sites"]}
        assert why[18].startswith("`getattr(self.config, 'debug', True)` is False"), why


def test_an_order_comparison_of_config_numbers_is_judged(tmp_path):
    """``if self.layerdrop > 0.0:`` with ``self.layerdrop = config.layerdrop`` (transformers'
    Whisper layer drop): the config class declares ``layerdrop = 0.0``, so the branch is pruned."""
    python, site = _site(tmp_path)
    lib = dict(CONFIGLIB)
    lib["cfglib/config.py"] = lib["cfglib/config.py"].replace(
        "debug: bool = False", "debug: bool = False\n    layerdrop: float = 0.0"
    )
    lib["cfglib/model.py"] = (
        lib["cfglib/model.py"]
        .replace(
            "self.checks = config.check_finite",
            "self.checks = config.check_finite\n        self.layerdrop = config.layerdrop",
        )
        .replace("if self.config.debug:", "if self.layerdrop > 0.0:")
    )
    write_tree(site, lib)
    proj = os.path.join(str(tmp_path), "proj")
    write_tree(proj, {"train.py": CONFIG_USER})
    result = lint_tree(proj, ["train.py"], {"follow-libraries": True, "probe": {"python": python}})
    by_line = {d.line: d for d in result.diagnostics if d.code == "TC312"}
    for summary in by_line.values():
        why = {s["line"]: s["why"][0] for s in summary.extra["pruned_sites"]}
        assert why[19].startswith("`self.layerdrop > 0.0` is False"), why
