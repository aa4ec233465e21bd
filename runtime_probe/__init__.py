"""tclint.runtime_probe: run code under TorchDynamo in a separate process and explain every
compilation.  The parent side never imports torch; the worker (``worker.py`` and its
``worker_*.py`` siblings) needs only the standard library and torch.  The API for editors is in
``tclint.runtime_probe.api``; the CLI in ``tclint.runtime_probe.cli``."""
