from tclint.rules.model import Applicability, Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import (
    builtin_call,
    guard_compiling_fix,
    move_to_caller_fix,
    register_logging_fix,
    remove_statement_fix,
)


class PrintInCompiledCode(Rule):
    """
    ## What it does
    Flags `print(...)` inside compiled code.

    ## Why is this bad?
    `print` is a side effect Dynamo cannot put in a graph: the graph stops before it and restarts
    after it (GB0059), on every call, even for a constant string.  Inside a loop body, Dynamo
    gives up on the whole function.

    `torch._dynamo.config.reorderable_logging_functions = {print}` (or
    `[tool.tclint.dynamo] reorderable_logging_functions = ["print"]`) lets Dynamo move the call
    after the graph instead; tclint then stays quiet.

    ## Example
    ```python
    @torch.compile
    def step(x):
        y = x.relu()
        print("activations:", y.shape)
        return y * 2
    ```

    ## Use instead
    Log from the eager code around the compiled function, or register `print` as reorderable.
    ```python
    @torch.compile
    def step(x):
        y = x.relu()
        return y * 2

    y = step(x)
    print("activations:", y.shape)
    ```

    ## Fix safety
    Alternatives, all unsafe, for a call that is a statement on its own line (the first that fits
    the code is the one `--fix --unsafe-fixes` applies; an editor offers each as a quick fix):
    1. move the call to the eager caller (a libcst codemod), after the one statement
       `out = compiled(...)` of this file that calls the compiled function (or module), with the
       returned name replaced by `out`; offered only when the call reads nothing but the value
       the function returns (its only `return NAME`; nothing between the call and the return
       touches it), builtins and module-level names, and the compiled callable has no other
       call or use in the file (not passed on).  It prints after the compiled call has
       returned: the output's order and timing change, and a caller in another file would no
       longer print it;
    2. register `print` with `torch._dynamo.config.reorderable_logging_functions.add(print)` after
       the file's `import torch`: the setting is process-wide, and under compile the call runs
       after the graph (an object mutated after the `print` is printed as it is then);
    3. put the call behind `if not torch.compiler.is_compiling():`: it prints in eager runs only;
    4. remove the call: the output it printed is lost.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    """

    code = "TC104"
    name = "print-in-compiled-code"
    summary = "`print` inside compiled code breaks the graph"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0059",)
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE
    CALLS = frozenset({"builtins.print"})

    def check_call(self, node, ctx, qualified, method):
        if not builtin_call(node, ctx, "print"):
            return
        ctx.report(
            self.code,
            node,
            "`print` inside compiled code: the graph breaks here",
            help="print from the eager caller, or add print to torch._dynamo.config.reorderable_logging_functions",
            fix=print_fixes(ctx, node),
        )

    def finalize(self, cand, env):
        reorderable = env.flag("reorderable_logging_functions", None)
        if isinstance(reorderable, (list, tuple, set)) and any(
            str(x).split(".")[-1] == "print" for x in reorderable
        ):
            return None
        return cand

    invalid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    y = x.relu()
    print("activations:", y.shape)  # expect: TC104
    return y * 2
""",
            run="out = step(torch.randn(4))",
            fixed="""
import torch
torch._dynamo.config.reorderable_logging_functions.add(print)

@torch.compile
def step(x):
    y = x.relu()
    print("activations:", y.shape)  # expect: TC104
    return y * 2
""",
        ),
        Example(
            """
import torch

def helper(y):
    print("in helper")  # expect: TC104
    return y + 1

@torch.compile
def outer(x):
    return helper(x * 2)
""",
            run="outer(torch.randn(4))",
            title="in a helper the compiled function calls",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        x = self.lin(x)
        if x.sum() > 0:  # expect: TC102
            x = x + 1
        print("block done")  # expect: TC104
        return x

class Stack(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList([Block(), Block()])

    def forward(self, x):
        for blk in self.blocks:
            x = blk(x)
        print("stack done")
        return x

model = torch.compile(Stack())
""",
            run="model(torch.randn(2, 4))",
            title="a break in a block called from a loop: Stack.forward runs eagerly (its print is only "
            "shadowed, at low confidence), each Block.forward is a frame of its own and breaks twice",
        ),
        Example(
            """
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x):
        y = self.net(x).relu()
        print("block out:", y.shape)  # expect: TC104
        return y

model = torch.compile(Block())
out = model(torch.randn(2, 4))
""",
            title="printing only the returned value: moved to the one eager call of the compiled module",
            fixed="""
import torch
import torch.nn as nn

class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Linear(4, 4)

    def forward(self, x):
        y = self.net(x).relu()
        return y

model = torch.compile(Block())
out = model(torch.randn(2, 4))
print("block out:", out.shape)  # expect: TC104
""",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    return x.relu() * 2

y = step(torch.randn(4))
print("activations:", y.shape)
""",
            title="printing from eager code",
        ),
        Example(
            """
import torch

@torch.compile
def step(x):
    return x.relu() * 2
""",
            run="step(torch.randn(4))",
            settings={"dynamo": {"reorderable_logging_functions": ["print"]}},
            title="print registered as reorderable",
        ),
    )


def print_fixes(ctx, node) -> tuple | None:
    """The alternatives for a `print` statement, preferred first (see Fix safety): move it to the
    eager caller, register it as reorderable, guard it with `is_compiling()`, remove it; those that
    fit the code."""
    from tclint.rules.model import Applicability

    found = (
        move_to_caller_fix(ctx, node, "Move the `print` to the eager caller, after the compiled call"),
        register_logging_fix(
            ctx,
            "reorderable_logging_functions",
            "print",
            (),
            "Register `print` in torch._dynamo.config.reorderable_logging_functions (printed after the graph)",
        ),
        guard_compiling_fix(
            ctx,
            node,
            "Print only in eager runs (`if not torch.compiler.is_compiling():`)",
            Applicability.UNSAFE,
        ),
        remove_statement_fix(ctx, node, "Remove the `print` call", Applicability.UNSAFE),
    )
    return tuple(f for f in found if f is not None) or None
