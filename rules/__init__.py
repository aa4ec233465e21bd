"""tclint.rules: the static core (stdlib only, plus libcst for codemod fixes, imported when a fix is
computed; never torch, never pygls).

``tclint.rules.engine`` runs the pipeline; ``tclint.rules.catalog`` holds one rule per file.
"""

from tclint.rules.safepath import drop_cwd_when_run_with_m

drop_cwd_when_run_with_m()  # before anything else is imported: see tclint.rules.safepath

from tclint.rules.version import TARGET_TORCH, __version__  # noqa: E402

__all__ = ["TARGET_TORCH", "__version__"]
