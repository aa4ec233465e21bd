"""Types flow into helpers (issue 12 item 2), isinstance narrowing, and frames dropped by a break in
a callee called from a loop (item 4).

The programs marked "Dynamo:" were run under Dynamo 2.13 (backend "eager", TORCH_LOGS=graph_breaks):
the lines expected as breaks are where Dynamo breaks, and the lines expected shadowed or absent are
lines Dynamo never traced (their frame ran eagerly) or traced without a break.
"""

from __future__ import annotations

from tclint.rules import types as T
from tclint.rules.argflow import _join, _site_kinds
from tclint.rules.facts import CallEdge, FunctionFacts, Loc, Param
from tclint.rules.model import Confidence

from tests.helpers.lintutil import lint_tree, write_tree

LOW = {"min-confidence": "low"}


def _lint(tmp_path, files, settings=None):
    write_tree(str(tmp_path), files)
    return lint_tree(str(tmp_path), sorted(files), settings)


def _by_line(result, path_end="", code=None):
    return {
        d.span.start.line: d
        for d in result.diagnostics
        if d.path.endswith(path_end) and (code is None or d.code == code)
    }


HELPER = """\
import torch
import torch.nn as nn


def first_after(t, t0):
    if t[0] > t0:
        return t[1:]
    return t


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        h = self.lin(x)
        return first_after(h, 0.5)


model = torch.compile(Net())
"""


def test_a_helper_takes_the_tensor_it_is_called_with(tmp_path):
    # Dynamo: GB0170 at line 6 (inlined first_after, Data-dependent branching)
    got = _by_line(_lint(tmp_path, {"m.py": HELPER}), code="TC102")
    assert 6 in got
    assert got[6].confidence == Confidence.MEDIUM  # the argument is a tensor; the helper is not annotated


def test_types_flow_across_files_and_through_a_chain_of_helpers(tmp_path):
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": "def outer(a, k):\n    return inner(a * 2, k)\n\n\ndef inner(b, k):\n    if b[0] > k:\n        return b\n    return -b\n",
        "pkg/model.py": (
            "import torch\nimport torch.nn as nn\nfrom pkg.ops import outer\n\n\nclass Net(nn.Module):\n"
            "    def __init__(self):\n        super().__init__()\n        self.lin = nn.Linear(4, 4)\n\n"
            "    def forward(self, x):\n        return outer(self.lin(x), 0)\n\n\nmodel = torch.compile(Net())\n"
        ),
    }
    got = _by_line(_lint(tmp_path, files), "ops.py", "TC102")
    assert 6 in got  # inner's `b` is `a * 2`, a tensor once outer's `a` is


def test_a_known_non_tensor_argument_seeds_nothing_and_an_unknown_one_lowers_confidence(tmp_path):
    code = HELPER.replace(
        "        return first_after(h, 0.5)\n",
        "        first_after('ab', 'a')\n        return first_after(h, 0.5)\n",
    )
    assert 6 not in _by_line(_lint(tmp_path, {"m.py": code}, LOW), code="TC102")
    code = HELPER.replace(
        "        return first_after(h, 0.5)\n",
        "        first_after(self.table, 0)\n        return first_after(h, 0.5)\n",
    )
    result = _lint(tmp_path, {"m.py": code}, LOW)
    assert _by_line(result, code="TC102")[6].confidence == Confidence.LOW
    assert 6 not in _by_line(_lint(tmp_path, {"m.py": code}), code="TC102")  # hidden by default


def test_a_helper_returning_a_tensor_types_its_callers_values(tmp_path):
    code = HELPER.replace(
        "        return first_after(h, 0.5)\n", "        n = first_after(h, 0.5)\n        return h * int(n)\n"
    )
    got = _by_line(_lint(tmp_path, {"m.py": code}), code="TC101")
    assert 19 in got  # int() of what first_after returns: a tensor slice of its tensor argument


PASSTHROUGH = """\
import torch
import torch.nn as nn


def default(val, d):
    return val if val is not None else d


class Net(nn.Module):
    def __init__(self, learnable=None):
        super().__init__()
        self.learnable = default(learnable, False)
        self.lin = nn.Linear(4, 4)

    def forward(self, x, mask=None):
        mask = default(mask, x > 0)
        h = self.lin(x)
        keep = torch.detach if not self.learnable else torch.clone
        if mask.any():
            h = h * 2
        return keep(h)


model = torch.compile(Net())
"""


def test_a_helper_returning_its_argument_returns_a_tensor_only_where_given_one(tmp_path):
    # Dynamo: one break, GB0170 at line 19 (`mask.any()`); line 18 is traced without a break:
    # `default(learnable, False)` in __init__ is a bool, although `default` returns a tensor in forward
    got = _by_line(_lint(tmp_path, {"m.py": PASSTHROUGH}, LOW), code="TC102")
    assert sorted(got) == [19]


TUPLE_RETURN = """\
from typing import Optional, Tuple
import torch
from torch import Tensor


def to_edge_index(adj: Tensor) -> Tuple[Tensor, Tensor]:
    return adj.indices(), adj.values()


def remove_self_loops(edge_index: Tensor, edge_attr: Optional[Tensor] = None):
    value: Optional[Tensor] = None
    if edge_index.is_sparse:
        edge_index, value = to_edge_index(edge_index)
    mask = edge_index[0] != edge_index[1]
    edge_index = edge_index[:, mask]
    if edge_attr is None:
        return edge_index, None
    return edge_index, edge_attr[mask]


@torch.compile
def f(ei):
    return remove_self_loops(ei)
"""


def test_a_tuple_of_tensors_returned_by_a_helper_keeps_its_items_tensors(tmp_path):
    # Dynamo (f(torch.tensor([[0, 1, 2], [0, 2, 1]]))): GB at line 15, the boolean-mask selection
    # (torch_geometric's remove_self_loops); the rebinding from to_edge_index's items must not hide it
    got = _by_line(_lint(tmp_path, {"m.py": TUPLE_RETURN}), code="TC109")
    assert 15 in got


def test_join_of_argument_kinds():
    assert _join(["T", "T", "0"]) == T.Ty(T.TENSOR, T.MEDIUM)
    assert _join(["T", "U"]) == T.Ty(T.TENSOR, T.LOW)
    assert _join(["T", "N"]) is None
    assert _join(["U", "0"]) is None
    fn = FunctionFacts(
        "f",
        "f",
        Loc(1, 0, 1, 0),
        Loc(1, 0, 1, 0),
        None,
        params=[
            Param("a", T.T_UNKNOWN, None, None),
            Param("b", T.T_UNKNOWN, None, "None"),
            Param("c", T.T_UNKNOWN, None, "3"),
        ],
    )
    edge = CallEdge("name", "m.f", "__call__", Loc(1, 0, 1, 0), args=(("#0", "tensor"),))
    assert _site_kinds(edge, fn) == {"a": "T", "b": "0", "c": "N"}
    starred = CallEdge("name", "m.f", "__call__", Loc(1, 0, 1, 0), args=(("#0", "starred"),))
    assert _site_kinds(starred, fn)["a"] == "U"


NARROW = """\
from typing import Union

import torch


@torch.compile
def kern(x, sigma: Union[float, torch.Tensor]):
    if isinstance(sigma, (int, float)):
        sigma = torch.tensor([[float(sigma)]])
    return x * sigma


@torch.compile
def sel(edge_index, flag: bool):
    if flag:
        edge_index = (edge_index, edge_index)
    if isinstance(edge_index, torch.Tensor):
        return edge_index[:, edge_index[0] > 0]
    return edge_index
"""


def test_isinstance_narrows_scalars_and_tensors(tmp_path):
    # Dynamo: no break at line 9 (kern(x, 0.5)); GB0036 at line 18 (sel(x, False))
    got = _by_line(_lint(tmp_path, {"m.py": NARROW}, LOW))
    assert 9 not in got
    assert got[18].code == "TC109"


DROP = """\
import torch
import torch.nn as nn


class Blk(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        x = self.lin(x)
        if x.sum() > 0:
            x = x + 1
        print("blk after")
        return x


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Blk(), Blk()])
        self.calls = 0

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        print("forward after")
        self.calls += 1
        return x


m = torch.compile(M())
"""


def test_a_break_in_a_callee_in_a_loop_drops_the_callers_later_hazards(tmp_path):
    # Dynamo: M.forward is skipped (the break at line 12 cannot resume in the loop); Blk.forward is
    # compiled as a frame of its own and breaks at lines 12 and 14; lines 27 and 28 never run compiled.
    got = _by_line(_lint(tmp_path, {"m.py": DROP}, LOW))
    assert got[12].confidence == Confidence.HIGH and got[14].confidence != Confidence.LOW
    for line in (27, 28):
        assert got[line].confidence == Confidence.LOW and "[shadowed:" in got[line].message, line
    assert {d.span.start.line for d in _lint(tmp_path, {"m.py": DROP}).diagnostics} == {12, 14}


def test_the_language_server_flows_types_from_an_open_buffer(tmp_path):
    from tclint.server.workspace import Workspace

    (tmp_path / "pyproject.toml").write_text("[tool.tclint]\n")
    path = str(tmp_path / "m.py")
    (tmp_path / "m.py").write_text("x = 1\n")  # the disk copy knows nothing: the buffer is what counts
    ws = Workspace()
    ws.set_folders([str(tmp_path)])
    out = ws.lint(path, HELPER, 1)
    assert 6 in {d.span.start.line for d in out.diagnostics if d.code == "TC102"}
