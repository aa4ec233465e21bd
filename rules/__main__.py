"""``python -m tclint.rules`` runs the CLI (the same as the ``tclint`` command)."""

import sys

from tclint.rules.cli import main

sys.exit(main())
