"""tclint's version, and the torch release its rules were measured against."""

__version__ = "0.1.0"
TARGET_TORCH = "2.13"

# The shape of ``facts.FileFacts`` as cached on disk: bump it when the facts change shape, so that
# caches written by an installed copy with the same version are not read back wrongly.  Kept here,
# not in facts.py, so that a warm run answered from the whole-run cache never imports the facts.
FACTS_SCHEMA = 32  # 5: Fix.codemod; 6: FileFacts.variant_facts; 7: codemod positions are Spans; 8: fix alternatives; 9: VariantFacts casts/globals/buffers/fresh compiles; 10: FuncFacts.returns_declared; 11: typed Candidate (frame, severity, user_ctx, requires); 12: VariantFacts.global_writes loop flag; 13: Candidate.mode; 14: VariantFacts.loop_compiles; 15: VariantFacts.sizes; 16: VariantFacts.param_grads; 17: FileFacts.star_imports; 18: VariantFacts.param_grads module, modes; 19: getattr(self, pattern) members (types.SELF_MEMBER); 20: FunctionFacts.returns_param; 21: CompileSite target kind "funcparam"; 22: containers filled from constructor parameters (types.PARAM_ELEMENTS); 23: VariantFacts.modes (train/eval at each call); 24: arg0 of method-call edges; 25: CallEdge.on_self; 26: ClassFacts.decorators, FunctionFacts.stores_param (decorator-filled registries); 28: "param" attribute specs from setters and defaults (refs after the first two); 29: VariantFacts.param_grads loop flag; 30: registry classes bound first (`cls = MODELS[name]`, `MODELS.get(name)`: types.REGISTRY FUNC); 31: ClassFacts.attrs[types.CHILDREN] (children given through a container subclass's *args); 32: VariantFacts.param_grads "N" mark (a plain name's change) and `for p in params` of `params = list(m.parameters())`
