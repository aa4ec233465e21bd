"""Declared probe inputs, parent side: where they live, and the stub ``--init-inputs`` writes.

The inputs for ``pkg/model.py::Block`` are looked for, in order, in:

1. the files listed in ``[tool.tclint.probe] inputs = [...]`` (relative to the config file);
2. ``pkg/model_probe_inputs.py`` (beside the target);
3. ``probe_inputs.py`` in the target's folder or any parent folder up to the project root.

The first file that defines ``inputs_<target>`` or ``make_<Class>`` wins (the worker decides;
``worker_inputs.py`` documents the format).  These files are plain Python with no tclint import,
because the worker runs in the user's environment, where tclint may not be installed.
"""

from __future__ import annotations

import ast
import os

from tclint.rules.config import project_root
from tclint.runtime_probe.targets import Target, class_init_params

CONVENTION_SUFFIX = "_probe_inputs.py"
SHARED_NAME = "probe_inputs.py"


def convention_path(target_file: str) -> str:
    stem = os.path.splitext(os.path.basename(target_file))[0]
    return os.path.join(os.path.dirname(os.path.abspath(target_file)), stem + CONVENTION_SUFFIX)


def candidate_files(target_file: str, configured: list[str] | None = None) -> list[str]:
    """Every place inputs may be declared for ``target_file``, in lookup order (existing only)."""
    out: list[str] = []
    for path in configured or []:
        if os.path.isfile(path) and path not in out:
            out.append(os.path.abspath(path))
    beside = convention_path(target_file)
    if os.path.isfile(beside):
        out.append(beside)
    root = project_root([target_file])
    folder = os.path.dirname(os.path.abspath(target_file))
    while True:
        shared = os.path.join(folder, SHARED_NAME)
        if os.path.isfile(shared) and shared not in out:
            out.append(shared)
        parent = os.path.dirname(folder)
        if parent == folder or (root is not None and os.path.abspath(folder) == os.path.abspath(root)):
            break
        folder = parent
    return out


def function_names(target: Target) -> tuple[str | None, str]:
    """(make function or None, inputs function) names for a target."""
    key = target.qualname.replace(".", "__")
    make = f"make_{target.qualname.split('.')[0]}" if target.kind in ("class", "method") else None
    return make, f"inputs_{key}"


def defined_names(path: str) -> set[str]:
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


def bound_names(path: str) -> set[str]:
    """Every module-level name the file binds: defs, classes, imports, assignments."""
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _imports_needed(target: Target, path: str) -> list[str]:
    """The imports a stub appended to ``path`` needs that the file lacks (the class, torch)."""
    names = bound_names(path)
    lines = []
    if "torch" not in names:
        lines.append("import torch")
    symbol = target.qualname.split(".")[0]
    if target.module and symbol not in names:
        lines.append(f"from {target.module} import {symbol}")
    return lines


def _value_for(name: str, annotation: str | None) -> str:
    ann = (annotation or "").replace(" ", "")
    if "Tensor" in ann or "Float[" in ann or ann.startswith(("Int[", "Bool[", "Shaped[")):
        return "torch.randn(2, 8)  # TODO: the real shape and dtype"
    if ann == "bool":
        return "True"
    if ann == "int":
        return "1  # TODO"
    if ann == "float":
        return "0.5  # TODO"
    if ann == "str":
        return '"TODO"'
    return "None  # TODO: a real value"


def stub_text(target: Target, include_header: bool) -> str:
    """A ready-to-fill declaration for ``target`` (appended to an existing inputs file as-is)."""
    make, inputs_fn = function_names(target)
    lines: list[str] = []
    if include_header:
        lines += [
            f'"""Probe inputs for `tclint probe {target.display}`.',
            "",
            "Plain Python: tclint need not be installed where this runs.  Each item `inputs_*` yields is",
            "one call: a tuple of positional arguments, or a dict with `args`, `kwargs`, `label` and",
            '`mode` ("train" / "eval", for modules).  Yield several items to probe an input matrix',
            "(shapes, dtypes, train/eval, flags): recompiles between them are what the probe reports.",
            '"""',
            "",
            "import torch",
            "",
        ]
        if target.module:
            symbol = target.qualname.split(".")[0]
            lines += [f"from {target.module} import {symbol}", ""]
    if make is not None:
        init = class_init_params(target)
        cls = target.qualname.split(".")[0]
        args = ", ".join(
            f"{n}={_value_for(n, a).split('  #')[0]}" for n, a, has_default in init if not has_default
        )
        lines += [
            "",
            f"def {make}():",
            f'    """The `{cls}` instance to probe."""',
            f"    return {cls}({args})",
            "",
        ]
    params = [p for p in target.params]
    call_args = []
    for name, annotation, has_default in params:
        if has_default:
            continue
        call_args.append((name, _value_for(name, annotation)))
    takes = "model" if make is not None else ""
    lines += [
        "",
        f"def {inputs_fn}({takes}):",
        '    """One item per call; vary what changes in production."""',
    ]
    if call_args:
        lines.append("    for batch in (2, 4):")
        lines.append("        yield {")
        lines.append('            "args": (')
        for name, value in call_args:
            value = value.replace("torch.randn(2,", "torch.randn(batch,")
            comment = ""
            if "  #" in value:
                value, comment = value.split("  #", 1)
                comment = f"  #{comment}"
            lines.append(f"                {value},  # {name}{comment.replace('  # ', ': ')}")
        lines.append("            ),")
        lines.append('            "label": f"batch={batch}",')
        lines.append("        }")
    else:
        lines.append("    yield ()  # no arguments")
    return "\n".join(lines).rstrip() + "\n"


def write_stub(target: Target, path: str | None = None) -> tuple[str, bool]:
    """Write (or append) the stub; returns (path, written).  Never overwrites a declaration."""
    path = path or convention_path(target.file)
    make, inputs_fn = function_names(target)
    exists = os.path.isfile(path)
    names = defined_names(path) if exists else set()
    if inputs_fn in names:
        return path, False
    text = stub_text(target, include_header=not exists)
    if exists and make in names:
        text = text.replace(text[text.index(f"def {make}()") : text.index(f"def {inputs_fn}(")], "")
    if exists:
        needed = _imports_needed(target, path)
        if needed:
            text = "\n".join(needed) + "\n\n" + text
    mode = "a" if exists else "w"
    with open(path, mode, encoding="utf-8") as fh:
        if exists:
            fh.write("\n")
        fh.write(text)
    return path, True


def missing_inputs_help(target: Target, searched: list[str], reason: str) -> str:
    """The message for a target with neither declared nor synthesisable inputs."""
    make, inputs_fn = function_names(target)
    where = convention_path(target.file)
    rel = os.path.relpath(where) if not os.path.relpath(where).startswith("..") else where
    what = f"`{inputs_fn}()`" + (f" (and `{make}()` to build the instance)" if make else "")
    looked = ", ".join(os.path.relpath(p) for p in searched) if searched else "no inputs file found"
    return (
        f"{reason}.\n"
        f"Declare the calls in {what} in {rel} (looked in: {looked}); for example:\n\n"
        + "\n".join(
            "    " + line for line in stub_text(target, include_header=False).strip("\n").splitlines()
        )
        + f"\n\nRun `tclint probe --init-inputs {target.display}` to write this stub."
    )
