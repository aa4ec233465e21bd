"""tclint.rules: the static core (libcst + stdlib only; never torch, never pygls).

``tclint.rules.engine`` runs the pipeline; ``tclint.rules.catalog`` holds one rule per file.
"""

from tclint.rules.version import TARGET_TORCH, __version__

__all__ = ["TARGET_TORCH", "__version__"]
