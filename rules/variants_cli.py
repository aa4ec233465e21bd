"""``tclint variants [PATH...]``: the predicted variant set of every compiled callable (issue 13).

For each compiled root the static core finds, prints its guard dimensions (what differs between
its calls, with the lines that make it differ), whether each is bounded, and the predicted
variant count: the set to warm up before traffic.  Text by default, ``--output-format json`` for
tools.  Nothing is run: the numbers come from ``tclint.rules.variants``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from tclint.rules.printable import printable
from tclint.rules.variants import Variants, variants


def run_variants(argv: list[str]) -> int:
    from tclint.rules.cli import _Parser
    from tclint.rules.config import ConfigError, ConfigResolver
    from tclint.rules.discovery import named_path_problem
    from tclint.rules.engine import Linter

    p = _Parser(
        prog="tclint variants",
        description="Predict the compiled variants of every compiled callable, from how it is called.",
    )
    p.add_argument("paths", nargs="*", default=["."])
    p.add_argument("--config")
    p.add_argument("--assume-compiled", action="append", default=[])
    p.add_argument("--assume-compiled-forward", action="store_true")
    p.add_argument("--output-format", choices=("text", "json"), default="text")
    args = p.parse_args(argv)
    overrides: dict[str, Any] = {}
    if args.assume_compiled:
        overrides["extend:assume_compiled"] = args.assume_compiled
    if args.assume_compiled_forward:
        overrides["assume_compiled_forward"] = True
    for path in args.paths:
        problem = named_path_problem(path)
        if problem is not None:
            print(f"tclint: error: {printable(path)}: {problem}", file=sys.stderr)
            return 2
    try:
        result = Linter(ConfigResolver(args.config, overrides)).lint_paths(args.paths, need_project=True)
    except ConfigError as exc:
        print(f"tclint: configuration error: {exc}", file=sys.stderr)
        return 2
    project = result.project
    assert project is not None
    shown = {os.path.abspath(f) for f in result.files}
    rows = [v for _k, v in sorted(variants(project).items()) if os.path.abspath(v.path) in shown]
    if args.output_format == "json":
        print(json.dumps({"callables": [v.as_json() for v in rows]}, indent=2, ensure_ascii=False))
        return 0
    for v in rows:
        print(render_text(v, project.functions[v.key][1].name_loc.line))
    unbounded = sum(1 for v in rows if not v.bounded)
    print(
        f"{len(rows)} compiled callable{'s' if len(rows) != 1 else ''}, {unbounded} with unbounded variants."
    )
    return 0


def render_text(v: Variants, line: int) -> str:
    """One callable: ``path:line: qualname: summary``, then a line per dimension and its sources."""
    out = [f"{printable(v.path)}:{line}: {v.qualname}: {v.summary()}"]
    for d in v.dims:
        what = f"{len(d.values)} variants" if d.bounded else "unbounded"
        out.append(f"    {d.guard}: {what} ({', '.join(d.values)})")
        for s in d.sources[:6]:
            out.append(f"        {printable(s.path)}:{s.loc.line}:{s.loc.col + 1}: {s.note}")
        if d.advice:
            out.append(f"        advice: {d.advice}")
    return "\n".join(out)
