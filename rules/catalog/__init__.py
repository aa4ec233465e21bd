"""The rule catalog: one rule per module, named ``tcNNN_<name>.py``; see ``tclint.rules.rule``."""
