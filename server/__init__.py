"""tclint's language server (``tclint server`` / ``python -m tclint.server``)."""
