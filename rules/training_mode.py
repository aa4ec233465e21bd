"""The training mode a compiled function runs in, as far as the project's code shows it.

A break behind ``if self.training and ...:`` only happens in train mode: in a module the user puts
in eval mode (``Model().eval()`` before it is called) it never runs, so a whole-frame break there
drops nothing and the hazards after it are real breaks (measured under torch 2.13, backend
"eager": eval mode reports the later ``.item()`` and ``print``, train mode only the loop break).

``region_mode`` answers, for a function of a compiled region:

* ``"train"``: no ``.eval()`` / ``.train(False)`` reaches its module (a module is built in train
  mode), or only ``.train()``;
* ``"eval"``: every mode set on it is eval and is set before the compiled module can have been
  called (``torch.compile(Model().eval())``, ``m.eval()`` before the compile site);
* ``ANY``: not a method of a compiled module: callers treat its guarded breaks as they always did;
* ``None``: both modes, or an eval set later (after calls that may have run in train mode): the
  mode the frame first runs in, which decides what Dynamo keeps, is not known.

Which modules a ``.train()`` / ``.eval()`` reaches comes from ``variants`` (the train/eval
dimension of issue 13): the call's receiver classes, their bases and subclasses, and their
submodules (``model.eval()`` sets every submodule's flag).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tclint.rules.project import Project


ANY = "any"  # not a method of a compiled module (or not in a region): the mode says nothing


def region_mode(project: Project, func_key: str) -> str | None:
    """ "train", "eval", None (not known) or ``ANY`` for the function ``func_key`` (memoised)."""
    memo: dict[str, str | None] = project.memo.setdefault("training_modes", {})
    if func_key in memo:
        return memo[func_key]
    memo[func_key] = found = _mode(project, func_key)
    return found


def _mode(project: Project, func_key: str) -> str | None:
    from tclint.rules import variants

    region = project.regions.get(func_key)
    if region is None:
        return ANY
    root = region
    while root.parent is not None:
        root = root.parent
    classes = {c for key in {func_key, root.func_key} for c in _classes_of(project, key)}
    if not classes:
        return ANY
    edges = project.memo.get("training_mode_edges")
    if edges is None:
        edges = project.memo["training_mode_edges"] = variants._mode_edges(project)
    modes: set[str] = set()
    for cls_key, mode, mff, edge, caller in edges:
        if not _reaches(project, cls_key, classes):
            continue
        for m in mode.split("|"):
            if m == "eval" and not variants._before_any_call(project, root.func_key, mff, caller, edge):
                modes.add("train")  # calls before it may have run in train mode
            modes.add(m)
    if not modes:
        return "train"
    return modes.pop() if len(modes) == 1 else None


def _classes_of(project: Project, func_key: str) -> set[str]:
    found = project.functions.get(func_key)
    if found is None:
        return set()
    ff, fn = found
    if fn.cls is None:
        return set()
    key = f"{ff.path}::{fn.cls}"
    region = project.regions.get(func_key)
    out = set(project.mro(key) or [key]) | {key}
    if region is not None and region.receiver:
        out.add(region.receiver)
    return out


def _reaches(project: Project, cls_key: str, classes: set[str]) -> bool:
    """Whether a mode set on ``cls_key`` sets the flag of a module of one of ``classes``."""
    related = set(project.mro(cls_key) or [cls_key]) | {cls_key}
    if related & classes:
        return True
    if any(cls_key in (project.mro(c) or ()) for c in classes):
        return True  # set on a base class's instance that may be this subclass
    memo: dict[str, set[str]] = project.memo.setdefault("training_mode_subs", {})
    subs = memo.get(cls_key)
    if subs is None:
        subs = memo[cls_key] = (
            set(project.submodule_classes(cls_key, True)) if cls_key in project.classes else set()
        )
    return bool(subs & classes)
