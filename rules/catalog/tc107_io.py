import ast

from tclint.rules import types as T
from tclint.rules.model import Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import builtin_call

FILE_METHODS = frozenset({"write", "read", "readline", "readlines", "writelines", "flush", "close", "seek"})
BUILTINS = {"open": "GB0059", "input": "GB0059", "breakpoint": "GB0059"}
CALLS = {
    "pdb.set_trace": "GB0007",
    "ipdb.set_trace": "GB0007",
    "sys.stdout.write": "GB0156",
    "sys.stderr.write": "GB0156",
    "sys.stdout.flush": "GB0156",
    "sys.stderr.flush": "GB0156",
    "os.system": "GB0007",
    "subprocess.run": "GB0007",
    "subprocess.check_output": "GB0007",
    "subprocess.Popen": "GB0007",
    "torch.save": "GB0007",
    "torch.load": "GB0007",
}


class IOInCompiledCode(Rule):
    """
    ## What it does
    Flags file and terminal I/O and interactive debugging inside compiled code: `open(...)` and
    methods of the file it returns, `input()`, `breakpoint()`, `pdb.set_trace()`,
    `sys.stdout.write(...)`, `os.system` / `subprocess`, `torch.save` / `torch.load`.

    ## Why is this bad?
    None of these can be part of a graph.  `open`, `input` and `breakpoint` break on the builtin
    (GB0059); a `with open(...)` block then also fails as an unsupported context manager (GB0142),
    so the rest of the function runs eagerly; file methods and `sys.stdout.write` are unsupported
    method calls (GB0156); `pdb.set_trace` breaks inside pdb itself (GB0007) and still stops the
    program.

    ## Example
    ```python
    @torch.compile
    def step(x):
        y = x * 2
        with open("debug.txt", "a") as f:
            f.write(str(y.shape))
        return y
    ```

    ## Use instead
    Do I/O in eager code around the compiled function; for debugging, run the function eagerly
    (`torch.compiler.set_stance("force_eager")`) or use `torch._dynamo.config` logging.

    ## Fix safety
    No automatic fix.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0156.html
    """

    code = "TC107"
    name = "io-in-compiled-code"
    summary = "File/terminal I/O or a debugger call inside compiled code"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0059", "GB0156", "GB0007", "GB0142")
    default_severity = Severity.WARNING
    CALLS = frozenset({*CALLS, *(f"builtins.{b}" for b in BUILTINS)})
    METHODS = FILE_METHODS

    def check_call(self, node, ctx, qualified, method):
        if qualified in CALLS:
            ctx.report(
                self.code,
                node,
                f"`{qualified}(...)` inside compiled code: the graph breaks here",
                gb_ids=(CALLS[qualified],),
                help="do I/O in the eager caller",
            )
            return
        if isinstance(node.func, ast.Name) and node.func.id in BUILTINS:
            if not builtin_call(node, ctx, node.func.id):
                return
            what = {
                "open": "opening a file",
                "input": "reading from the terminal",
                "breakpoint": "a debugger breakpoint",
            }[node.func.id]
            ctx.report(
                self.code,
                node,
                f"`{node.func.id}()` ({what}) inside compiled code: the graph breaks here",
                gb_ids=(BUILTINS[node.func.id],),
                help="do I/O in the eager caller",
            )
            return
        if (
            method in FILE_METHODS
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        ):
            ty = ctx.type_of(node.func.value)
            if ty.kind == T.INSTANCE and ty.ref == "<file>":
                ctx.report(
                    self.code,
                    node,
                    f"`{node.func.value.id}.{method}(...)` on a file inside compiled code: the graph breaks here",
                    gb_ids=("GB0156",),
                    help="do I/O in the eager caller",
                )

    invalid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    y = x * 2
    f = open("/dev/null", "w")  # expect: TC107
    f.close()  # expect: TC107
    return y
""",
            run="step(torch.randn(4))",
        ),
        Example(
            """
import sys
import torch

@torch.compile
def step(x):
    y = x * 2
    sys.stdout.write("tick\\n")  # expect: TC107
    return y
""",
            run="step(torch.randn(4))",
        ),
    )
    valid = (
        Example(
            """
import torch

@torch.compile
def step(x):
    return x * 2

y = step(torch.randn(4))
with open("/dev/null", "w") as f:
    f.write(str(y.shape))
""",
            title="I/O in eager code",
        ),
    )
