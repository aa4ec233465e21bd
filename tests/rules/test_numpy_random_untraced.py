"""TC108's NumPy draws Dynamo cannot trace (GB0294) are re-derived here from the installed numpy and
torch: every module-level function of ``numpy.random`` that ``torch._numpy.random`` does not
implement.  normflows' residual flows draw their power-series length with ``np.random.geometric``
inside the compiled forward (GB0294 at residual.py:405); the old table listed only the draws
torch's NumPy layer has, so that call was not flagged."""

from __future__ import annotations

import numpy.random
import pytest
from tclint.rules.catalog.tc108_untraceable_stdlib import NUMPY_RANDOM_UNTRACED, SKIPPED

from tests.helpers.lintutil import found, lint_code

torch_numpy_random = pytest.importorskip("torch._numpy.random")


def test_the_untraced_draws_are_numpys_functions_torch_does_not_implement():
    functions = {
        n
        for n in dir(numpy.random)
        if not n.startswith("_")
        and callable(getattr(numpy.random, n))
        and not isinstance(getattr(numpy.random, n), type)
    }
    derived = functions - set(torch_numpy_random.__all__) - {"test"}  # `test`: numpy's test runner
    assert derived <= NUMPY_RANDOM_UNTRACED
    assert not NUMPY_RANDOM_UNTRACED & set(torch_numpy_random.__all__)
    assert all(SKIPPED[f"numpy.random.{n}"] == "GB0294" for n in NUMPY_RANDOM_UNTRACED)


SOURCE = """\
import numpy as np
import torch


def geometric_sample(p, n):
    return np.random.geometric(p, n)


class Block(torch.nn.Module):
    def forward(self, x):
        n = geometric_sample(0.5, 1)
        m = np.random.poisson(2.0, 1)
        np.random.seed(0)
        return x * float(n.max() + m.max())


model = torch.compile(Block())
model(torch.randn(4))
"""


def test_a_numpy_draw_torch_lacks_is_flagged_where_it_is_called(tmp_path):
    tc108 = sorted(f for f in found(lint_code(tmp_path, SOURCE)) if f[1] == "TC108")
    assert tc108 == [(6, "TC108"), (12, "TC108")]  # not np.random.seed (traced)
