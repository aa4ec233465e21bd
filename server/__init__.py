"""tclint's language server (``tclint server`` / ``python -m tclint.server``)."""

# Editors start `python -m tclint.server` from the workspace folder, which `-m` puts first on
# sys.path: drop it before anything else is imported, so the workspace's own `logging.py` or
# `json.py` never runs inside the server.  (A plain library import leaves sys.path alone.)
from tclint.rules.safepath import drop_cwd_when_run_with_m

drop_cwd_when_run_with_m()
