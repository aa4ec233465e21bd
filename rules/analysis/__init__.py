"""The single walk over one file: structure for the region pass, candidates from every rule.

One ``ast`` parse, one walk in statement order.  Along the way the walker keeps a small abstract
environment per function (which names hold tensors, modules, compiled callables, loop counters),
so rules can ask ``ctx.type_of(expr)`` and ``ctx.qualify(expr)`` cheaply, and it records what the
region pass needs: calls, submodules, compile and disable sites.

Layout, one module per job:

- ``api`` -- the rule API, the one file a rule author reads: ``RuleContext`` (what a rule sees and
  how it reports), ``Scope``, ``RuleSet`` (dispatch tables) and the ``Condition`` pseudo-node
  (listed in ``PSEUDO_NODES``; ``visit_Condition`` sees every if/while/filter test).
- ``types_infer`` -- expression, call and annotation types (``TypeInference``), plus the pure
  ``binop_type`` / ``element_type``.
- ``callgraph`` -- call edges, compile/disable sites, compile decorators (``CallGraph``).
- ``walker`` -- statements, expressions, scopes and definitions in source order (``Walker``).
- ``submodules`` -- what ``self.x = ...`` holds (``SubmoduleSpec``) and the type it reads back as.
- ``common`` -- the torch API tables (``COMPILE_FUNCS``...), node helpers, and ``AnalyzerBase``:
  the shared walk state and the list of methods one job calls on another.
- ``analyzer`` -- ``Analyzer``: the state, the entry point ``run`` and ``add_candidate``.

Why mixins and not collaborator objects: the jobs are not independent.  Type inference reads the
scope the walker is in, the walker asks types of every node, the call graph walks lambda bodies
and asks types, and all of them write the same ``FileFacts``.  Collaborators would each hold a
back-reference to the same state and call each other through it; mixins of one ``Analyzer`` keep
one ``self`` (no extra indirection on the hot path: this walk is most of a lint's time) while each
job lives, and is read and tested, in its own module.  ``AnalyzerBase`` writes the cross-job
contract down so each mixin type-checks on its own.

Why ``ast`` and not libcst here: positions come for free (libcst needs a metadata pass costing
~1.5x a parse), CPython's parser is ~3x faster than libcst's, and it is the grammar of the
interpreter that will run the code.  (Fixes are text edits at these positions.)
"""

from __future__ import annotations

from tclint.rules.analysis.analyzer import Analyzer
from tclint.rules.analysis.api import PSEUDO_NODES, Condition, RuleContext, RuleSet, Scope

__all__ = ["PSEUDO_NODES", "Analyzer", "Condition", "RuleContext", "RuleSet", "Scope"]
