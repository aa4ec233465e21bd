"""What kind of rule a rule is: its ``Family`` (what it is about) and its ``Lifecycle`` (whether it
is on by default).  A module of its own, without dependencies, so that the engine can name them at
import time without importing the rule framework."""

from __future__ import annotations

import enum


class Family(str, enum.Enum):
    """The hazard a rule is about; ``str(f)`` is its value (as in docs, SARIF tags, JSON)."""

    GRAPH_BREAK = "graph-break"  # Dynamo breaks the graph (a frame may then run eagerly)
    RECOMPILE = "recompile"  # a guard fails: the function compiles again
    COMPILE_API = "compile-api"  # misuse of torch.compile and its APIs, hard errors
    TCLINT = "tclint"  # tclint's own findings (parse errors, unreadable files, unused suppressions)
    PROBE = "probe"  # what `tclint probe` observed under the real Dynamo

    def __str__(self) -> str:
        return self.value


class Lifecycle(str, enum.Enum):
    """``PREVIEW`` rules run only with ``--preview`` (or when selected by code)."""

    STABLE = "stable"
    PREVIEW = "preview"

    def __str__(self) -> str:
        return self.value
