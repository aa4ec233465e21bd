import ast
import re

from tclint.rules import types as T
from tclint.rules.model import Applicability, Severity
from tclint.rules.rule import Example, Family, Rule
from tclint.rules.ruleutil import (
    guard_compiling_fix,
    move_to_caller_fix,
    register_logging_fix,
    remove_statement_fix,
    short,
)

LOGGER_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log",
     "isEnabledFor", "warning_once", "info_once", "warning_advice", "getEffectiveLevel"}
)  # fmt: skip
MODULE_FUNCTIONS = frozenset(
    {
        "logging.debug",
        "logging.info",
        "logging.warning",
        "logging.warn",
        "logging.error",
        "logging.exception",
        "logging.critical",
        "logging.log",
    }
)
LOGGER_NAME = re.compile(r"^_*(logger|log|LOGGER|LOG|_logger|logging_?\w*|\w*_logger)$")


class LoggingInCompiledCode(Rule):
    """
    ## What it does
    Flags calls on a `logging.Logger` (`logger.info(...)`, `logger.debug(...)`, also
    `logger.isEnabledFor(...)` and wrappers installed on Logger such as transformers'
    `logger.warning_once`) and the module-level `logging.info(...)` family inside compiled code.

    ## Why is this bad?
    Dynamo does not trace into `logging`: every Logger method call breaks the graph (GB0291),
    *even when the level is disabled* and even for `isEnabledFor` itself, so guarding a debug log
    with `if logger.isEnabledFor(logging.DEBUG):` does not help.  `logging.info(...)` breaks
    inside the logging module (GB4841).  A message that is really emitted drags Dynamo through
    logging internals: several breaks and extra frame compiles.

    `torch._dynamo.config.ignore_logging_functions` (alias `ignore_logger_methods`) turns listed
    methods into no-ops under compile; tclint honours it from the code or from
    `[tool.tclint.dynamo] ignore_logging_functions = ["logging.Logger.info"]`.

    ## Example
    ```python
    @torch.compile
    def forward(self, x):
        logger.debug("input %s", x.shape)
        return self.proj(x)
    ```

    ## Use instead
    Log in the eager caller, or register the method with `ignore_logging_functions` when the
    message is not needed under compile.

    ## Fix safety
    Alternatives, all unsafe, for a call that is a statement on its own line (the first that fits
    the code is the one `--fix --unsafe-fixes` applies; an editor offers each as a quick fix):
    1. move the call to the eager caller (a libcst codemod), after the one statement
       `out = compiled(...)` of this file that calls the compiled function (or module), with the
       returned name replaced by `out`; offered only when the call reads nothing but the value
       the function returns (its only `return NAME`; nothing between the call and the return
       touches it), builtins and module-level names (the logger), and the compiled callable has
       no other call or use in the file.  It logs after the compiled call has returned: the
       order and timing of the messages change;
    2. for a standard Logger method (`debug` ... `log`), register `logging.Logger.METHOD` with
       `torch._dynamo.config.ignore_logging_functions.add(...)` after the file's imports of
       `torch` and `logging`: process-wide, and under compile that method logs nothing, for
       every logger;
    3. put the call behind `if not torch.compiler.is_compiling():`: it logs in eager runs only;
    4. remove the call: the message is lost.

    ## References
    - https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0291.html
    """

    code = "TC105"
    name = "logging-in-compiled-code"
    summary = "A logging call inside compiled code breaks the graph, even at a disabled level"
    family = Family.GRAPH_BREAK
    gb_ids = ("GB0291", "GB4841")
    default_severity = Severity.WARNING
    fix_applicability = Applicability.UNSAFE
    METHODS = LOGGER_METHODS
    CALLS = MODULE_FUNCTIONS

    def check_call(self, node, ctx, qualified, method):
        if qualified in MODULE_FUNCTIONS:
            ctx.report(
                self.code,
                node,
                f"`{qualified}(...)` inside compiled code: the graph breaks in the logging module",
                gb_ids=("GB4841",),
                data={"method": qualified},
                help="log from the eager caller",
                fix=logging_fixes(ctx, node, qualified, None),
            )
            return
        if method is None or not isinstance(node.func, ast.Attribute):
            return
        receiver = node.func.value
        ty = ctx.type_of(receiver)
        if ty.kind == T.INSTANCE and ty.ref == "logging.Logger":
            conf = T.HIGH
        elif ctx.qualify(receiver) is not None:
            return  # a module (`logging.info` handled above; `warnings.warn` etc. are other rules)
        elif ty.kind == T.UNKNOWN and _logger_like(receiver):
            conf = T.MEDIUM
        else:
            return
        if isinstance(receiver, ast.Call):
            conf = (
                T.HIGH if (ctx.qualify(receiver.func) or "").endswith(("getLogger", "get_logger")) else conf
            )
        ctx.report(
            self.code,
            node,
            f"`{short(ctx, node.func)}(...)` on a logger inside compiled code: the graph breaks here, even when the level is disabled",
            gb_ids=("GB0291",),
            confidence=conf,
            data={"method": method},
            help="log from the eager caller, or add the method to torch._dynamo.config.ignore_logging_functions",
            fix=logging_fixes(ctx, node, short(ctx, node.func), method),
        )

    def finalize(self, cand, env):
        ignored = env.flag("ignore_logging_functions", None) or env.flag("ignore_logger_methods", None)
        if isinstance(ignored, (list, tuple, set)):
            method = cand.data.get("method", "")
            for name in ignored:
                text = str(name)
                if text.endswith("." + method) or text == method:
                    return None
        return cand

    invalid = (
        Example(
            """
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    y = x.relu()
    logger.debug("activations %s", y.shape)  # expect: TC105
    return y * 2
""",
            run="out = step(torch.randn(4))",
            title="a disabled level still breaks",
            fixed="""
import logging
import torch
torch._dynamo.config.ignore_logging_functions.add(logging.Logger.debug)

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    y = x.relu()
    logger.debug("activations %s", y.shape)  # expect: TC105
    return y * 2
""",
        ),
        Example(
            """
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    y = x.relu()
    if logger.isEnabledFor(logging.DEBUG):  # expect: TC105
        y = y + 1
    return y
""",
            run="step(torch.randn(4))",
            title="isEnabledFor is a Logger method too",
        ),
        Example(
            """
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    y = x.relu() * 2
    logger.info("step mean %s", y.mean())  # expect: TC105
    return y

out = step(torch.randn(4))
""",
            title="logging only the returned value: moved after the one eager call",
            fixed="""
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    y = x.relu() * 2
    return y

out = step(torch.randn(4))
logger.info("step mean %s", out.mean())  # expect: TC105
""",
        ),
    )
    valid = (
        Example(
            """
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    return x.relu() * 2

y = step(torch.randn(4))
logger.info("done %s", y.shape)
""",
            title="logging from eager code",
        ),
        Example(
            """
import logging
import torch

logger = logging.getLogger(__name__)

@torch.compile
def step(x):
    logger.info("step")
    return x.relu()
""",
            run="step(torch.randn(4))",
            settings={"dynamo": {"ignore_logging_functions": ["logging.Logger.info"]}},
            title="method registered with ignore_logging_functions",
        ),
    )


# Logger methods ignore_logging_functions can take: they return None and exist on logging.Logger
IGNORABLE = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal", "log"})


def logging_fixes(ctx, node: ast.Call, shown: str, method: str | None) -> tuple | None:
    """The alternatives for a logging call, preferred first (see Fix safety): the call moved to the
    eager caller, a Logger method registered in ignore_logging_functions, the call behind
    `is_compiling()`, the call removed."""
    found = (
        move_to_caller_fix(
            ctx, node, f"Move the `{shown}` call to the eager caller, after the compiled call"
        ),
        register_logging_fix(
            ctx,
            "ignore_logging_functions",
            "{0}.Logger." + method,
            ("logging",),
            f"Register `logging.Logger.{method}` in torch._dynamo.config.ignore_logging_functions (no message under compile)",
        )
        if method in IGNORABLE
        else None,
        guard_compiling_fix(
            ctx,
            node,
            "Log only in eager runs (`if not torch.compiler.is_compiling():`)",
            Applicability.UNSAFE,
        ),
        remove_statement_fix(ctx, node, f"Remove the `{shown}` call", Applicability.UNSAFE),
    )
    return tuple(f for f in found if f is not None) or None


def _logger_like(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return bool(LOGGER_NAME.match(node.id))
    if isinstance(node, ast.Attribute):
        return bool(LOGGER_NAME.match(node.attr))
    return False
