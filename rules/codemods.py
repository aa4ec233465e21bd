"""Codemods: the multi-place rewrites behind some fixes, written with libcst, run only on demand.

A rule that offers a codemod fix records ``Fix(message, (), applicability, codemod=(NAME, *args))``
(places in the file as ``Span`` arguments, see ``tclint.rules.model.Fix``)
during the walk; nothing here runs then, so ``tclint check`` never imports libcst.  When a fix is
applied, previewed or sent to an editor, ``tclint.rules.fixes.resolve`` calls ``run``, which parses
the file with libcst (lossless: comments, blank lines and formatting are kept), transforms it, and
turns the difference between the old and the new text into minimal ``Edit``s (``minimal_edits``),
so every byte outside the edited ranges stays as it was and the engine applies them like any fix.

Each codemod returns ``(new text, note, applicability)`` or None when it does not apply to the code
as it is (the fix is then not offered).  ``note`` is appended to the fix's message (what to review);
``applicability`` may only be lower than the one the rule declared.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from typing import Any

from tclint.rules.model import Applicability, Edit, Span

Result = tuple[str, str, Applicability | None]


def run(codemod: tuple[str | Span, ...], text: str) -> Result | None:
    """Run the codemod named by ``codemod[0]`` with the arguments ``codemod[1:]`` on ``text``."""
    func = _CODEMODS.get(codemod[0]) if codemod and isinstance(codemod[0], str) else None
    if func is None:
        return None
    try:
        import libcst  # noqa: F401  (lazy: only a fix being computed pays for it)
    except ImportError:
        return None
    try:
        return func(text, *codemod[1:])
    except Exception as exc:  # libcst rejects what it cannot parse: no fix then
        if type(exc).__name__ in ("ParserSyntaxError", "CSTValidationError", "RecursionError"):
            return None
        raise


def minimal_edits(before: str, after: str) -> tuple[Edit, ...]:
    """The edits turning ``before`` into ``after``: changed line blocks, trimmed to the characters
    that differ, so text outside them is untouched (positions are 1-based lines, 0-based columns)."""
    old = before.splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    starts = [0]
    for line in old:
        starts.append(starts[-1] + len(line))
    edits: list[Edit] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        a = "".join(old[i1:i2])
        b = "".join(new[j1:j2])
        p = 0
        while p < len(a) and p < len(b) and a[p] == b[p]:
            p += 1
        s = 0
        while s < len(a) - p and s < len(b) - p and a[len(a) - 1 - s] == b[len(b) - 1 - s]:
            s += 1
        start = starts[i1] + p
        end = starts[i1] + len(a) - s
        edits.append(Edit(_span(before, starts, start, end), b[p : len(b) - s]))
    return tuple(edits)


def _span(text: str, starts: list[int], start: int, end: int) -> Span:
    import bisect

    def pos(offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(starts, offset) - 1
        line = min(line, len(starts) - 1)
        return line + 1, offset - starts[line]

    sl, sc = pos(start)
    el, ec = pos(end)
    return Span.of(sl, sc, el, ec)


# -- TC201: an int counter on a module -> a non-persistent 0-d buffer -----------------------------
def int_counter_to_buffer(text: str, cls_name: str, attr: str, torch_name: str) -> Result | None:  # noqa: C901 - long, not split yet (issue 16)
    """``self.ATTR = <int>`` in ``CLS.__init__`` becomes ``self.register_buffer("ATTR",
    torch.zeros((), dtype=torch.long), persistent=False)`` (``torch.full`` for other values); other
    ``self.ATTR = <int>`` in the class become ``self.ATTR.fill_(<int>)``; ``self.ATTR += ...`` stay (they
    update the buffer in place).  Reads of ``self.ATTR`` elsewhere now see a tensor: listed in the note.
    None when the class, the ``__init__`` assignment after ``super().__init__()``, or a rewrite of
    every other assignment cannot be found."""
    import libcst as cst
    import libcst.matchers as m
    from libcst.metadata import PositionProvider

    wrapper = _parsed(text)
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    classes = [n for n in _walk(module) if isinstance(n, cst.ClassDef) and n.name.value == cls_name]
    if len(classes) != 1:
        return None
    cls = classes[0]

    def int_value(expr: cst.BaseExpression) -> str | None:
        if m.matches(expr, m.Integer()):
            return expr.value  # type: ignore[attr-defined]
        if m.matches(expr, m.UnaryOperation(operator=m.Minus(), expression=m.Integer())):
            return "-" + expr.expression.value  # type: ignore[attr-defined]
        return None

    def self_attr(expr: cst.BaseExpression, self_name: str) -> bool:
        return m.matches(expr, m.Attribute(value=m.Name(self_name), attr=m.Name(attr)))

    init_stmt = None
    replace: dict[cst.CSTNode, cst.CSTNode] = {}
    reads: list[int] = []
    for fn in (n for n in cls.body.body if isinstance(n, cst.FunctionDef)):
        params = fn.params.params
        if not params:
            continue
        self_name = params[0].name.value
        saw_super = False
        for stmt in _statements(fn.body):
            if fn.name.value == "__init__" and not saw_super and "__init__(" in module.code_for_node(stmt):
                saw_super = True
                continue
            small = (
                stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 else None
            )
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and self_attr(small.targets[0].target, self_name)
            ):
                value = int_value(small.value)
                if value is None:
                    return None  # assigned something that is not an int literal: not a plain counter
                if fn.name.value == "__init__" and init_stmt is None:
                    if not saw_super:
                        return None  # before Module.__init__: register_buffer would fail there
                    init_stmt = small
                    make = (
                        f"{torch_name}.zeros((), dtype={torch_name}.long)"
                        if value == "0"
                        else f"{torch_name}.full((), {value}, dtype={torch_name}.long)"
                    )
                    call = f'{self_name}.register_buffer("{attr}", {make}, persistent=False)'
                else:
                    call = f"{self_name}.{attr}.fill_({value})"
                replace[small] = cst.parse_statement(call + "\n").body[0]  # type: ignore[attr-defined,index]  # a simple statement line
                continue
            if isinstance(small, cst.AugAssign) and self_attr(small.target, self_name):
                targets = {id(small.target.value), id(small.target)}  # type: ignore[attr-defined]  # self_attr: an Attribute
            else:
                targets = set()
            for node in _walk(stmt):
                if id(node) not in targets and isinstance(node, cst.Attribute) and self_attr(node, self_name):
                    if m.matches(node, m.Attribute()) and _is_store(stmt, node):
                        return None  # another kind of assignment (tuple target, walrus...)
                    reads.append(positions[node].start.line)
    if init_stmt is None:
        return None

    class Swap(cst.CSTTransformer):
        def on_leave(self, original, updated):  # type: ignore[override]
            return replace.get(original, updated)

    new = module.visit(Swap()).code
    note = ""
    if reads:
        lines = ", ".join(str(n) for n in sorted(set(reads)))
        note = f"; review the reads of `self.{attr}` (line{'s' if len(set(reads)) > 1 else ''} {lines}): they now get a 0-d tensor, use `int(...)` where a Python int is needed"
    return new, note, None


def _is_store(stmt: Any, node: Any) -> bool:
    import libcst as cst

    for sub in _walk(stmt):
        if isinstance(sub, cst.Assign) and any(t.target is node for t in sub.targets):
            return True
        if isinstance(sub, (cst.AnnAssign, cst.AugAssign, cst.NamedExpr)) and sub.target is node:
            return True
        if isinstance(sub, (cst.Tuple, cst.List)) and any(
            getattr(e, "value", None) is node for e in sub.elements
        ):
            parent_assign = any(
                isinstance(a, cst.Assign) and any(t.target is sub for t in a.targets) for a in _walk(stmt)
            )
            if parent_assign:
                return True
    return False


# -- TC310: `model = torch.compile(model)` -> `model.compile()` -----------------------------------
def compile_in_place(text: str, at: Span) -> Result | None:
    """The statement ``NAME = torch.compile(TARGET, **options)`` starting on ``at``'s line becomes
    ``NAME.compile(**options)`` when TARGET is NAME, else ``NAME = TARGET`` followed by
    ``NAME.compile(**options)``.  Unsafe (not safe) where another name may hold the wrapper or the
    module: TARGET is another name, or NAME is used other than by calling it or its attributes."""
    import libcst as cst
    import libcst.matchers as m
    from libcst.metadata import PositionProvider

    wrapper = _parsed(text)
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    target_line = at.start.line
    found: list[cst.SimpleStatementLine] = []
    for node in _walk(module):
        if isinstance(node, cst.SimpleStatementLine) and positions[node].start.line == target_line:
            found.append(node)
    if len(found) != 1 or len(found[0].body) != 1:
        return None
    stmt = found[0]
    assign = stmt.body[0]
    if not (
        isinstance(assign, cst.Assign)
        and len(assign.targets) == 1
        and m.matches(assign.targets[0].target, m.Name())
    ):
        return None
    name = assign.targets[0].target.value  # type: ignore[attr-defined]
    if not (
        m.matches(assign.targets[0].target, m.Name(name))
        and m.matches(assign.value, m.Call(func=m.Attribute(attr=m.Name("compile"))))
    ):
        return None
    call = assign.value
    args = list(call.args)  # type: ignore[attr-defined]
    if (
        not args
        or args[0].keyword is not None
        or args[0].star
        or any(a.keyword is None or a.star for a in args[1:])
    ):
        return None
    target = args[0].value
    options = ", ".join(module.code_for_node(a).strip().rstrip(",") for a in args[1:])
    safe = True
    if m.matches(target, m.Name()) and target.value != name:  # type: ignore[attr-defined]
        safe = False  # TARGET's own name now holds a compiled module too
    elif not m.matches(target, m.Name(name) | m.Call()):
        safe = False  # some other expression: it may be held elsewhere
    for node in _walk(module):
        if (
            isinstance(node, cst.Attribute)
            and m.matches(node.value, m.Name(name))
            and node.attr.value in ("_orig_mod", "_torchdynamo_orig_callable")
        ):
            return None  # code that unwraps the wrapper: in place there is nothing to unwrap
    if safe and _bare_uses(module, name, stmt):
        safe = False
    compile_stmt = cst.parse_statement(f"{name}.compile({options})\n")
    if m.matches(target, m.Name(name)):
        replacement: Any = stmt.with_changes(body=compile_stmt.body)  # type: ignore[attr-defined]
    else:
        first = stmt.with_changes(body=[assign.with_changes(value=target)])
        replacement = cst.FlattenSentinel([first, compile_stmt])

    class Swap(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):  # type: ignore[override]
            return replacement if original is stmt else updated

    new = module.visit(Swap()).code
    return new, "", None if safe else Applicability.UNSAFE


def _bare_uses(module: Any, name: str, skip: Any) -> bool:
    """Whether ``name`` is used other than as ``name(...)`` / ``name.attr`` / ``name = ...``: passed
    on, returned, stored in another name or container (which would then hold the wrapper)."""
    import libcst as cst

    owned: set[int] = set()
    for node in _walk(module):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == name:
            owned.add(id(node.func))
        elif (
            isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value == name
        ):
            owned.add(id(node.value))
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
            owned.add(id(node.target))  # binding the name is not holding the wrapper elsewhere
    for node in _walk(skip):
        owned.add(id(node))
    return any(
        isinstance(node, cst.Name) and node.value == name and id(node) not in owned for node in _walk(module)
    )


# -- TC101: `.item()` feeding arithmetic only -> kept as a 0-d tensor ------------------------------
_ARITH = ("Add", "Subtract", "Multiply", "Divide", "FloorDivide", "Modulo", "Power")


def item_as_tensor(text: str, at: Span) -> Result | None:
    """The call ``T.item()`` spanning ``at`` loses its ``.item()`` when its value only
    feeds arithmetic: it is an operand of ``+ - * / // % **``, or it is assigned to a name whose
    every other use in the function is such an operand (and which is bound nowhere else there).
    None otherwise (control flow, a call argument, a return, formatting need the Python number)."""
    import libcst as cst
    from libcst.metadata import ParentNodeProvider, PositionProvider

    wrapper = _parsed(text)
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    want = (at.start.line, at.start.column, at.end.line, at.end.column)
    calls = [
        n
        for n, p in positions.items()
        if isinstance(n, cst.Call)
        and (p.start.line, p.start.column, p.end.line, p.end.column) == want
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == "item"
        and not n.args
    ]
    if len(calls) != 1:
        return None
    call = calls[0]

    def arith_operand(node: cst.CSTNode) -> bool:
        parent = parents.get(node)
        return (
            isinstance(parent, cst.BinaryOperation)
            and type(parent.operator).__name__ in _ARITH
            and (parent.left is node or parent.right is node)
        )

    if not arith_operand(call):
        assign = parents.get(call)
        line_node = parents.get(assign) if assign is not None else None
        if not (
            isinstance(assign, cst.Assign)
            and assign.value is call
            and len(assign.targets) == 1
            and isinstance(assign.targets[0].target, cst.Name)
            and isinstance(line_node, cst.SimpleStatementLine)
        ):
            return None
        name = assign.targets[0].target
        func = parents.get(line_node)
        while func is not None and not isinstance(func, cst.FunctionDef):
            func = parents.get(func)
        if func is None:
            return None
        uses = [
            n for n in _walk(func.body) if isinstance(n, cst.Name) and n.value == name.value and n is not name
        ]
        if not uses or not all(arith_operand(n) for n in uses):
            return None  # bound again, or read where a Python number may be needed

    class Swap(cst.CSTTransformer):
        def leave_Call(self, original, updated):  # type: ignore[override]
            return updated.func.value if original is call else updated

    new = wrapper.module.visit(Swap()).code
    return new, "", None


# -- TC301: mark_dynamic & co. inside compiled code -> before the compiled call -------------------
def mark_before_call(text: str, at: Span) -> Result | None:
    """The statement ``torch._dynamo.mark_dynamic(P, ...)`` (or ``maybe_mark_dynamic``,
    ``mark_static``, ``mark_unbacked``) starting on ``at``'s line, at the top of function F's body with P one of
    F's parameters (not rebound before it), is removed from F and written, with P replaced by the
    argument, before every statement of this file that calls ``F(...)``.  None when a call passes
    P as anything but a name, a call is not part of a simple statement, or there is no call."""
    import libcst as cst
    from libcst.metadata import ParentNodeProvider, PositionProvider

    wrapper = _parsed(text)
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    stmts = [
        n
        for n, p in positions.items()
        if isinstance(n, cst.SimpleStatementLine) and p.start.line == at.start.line
    ]
    if len(stmts) != 1 or len(stmts[0].body) != 1 or not isinstance(stmts[0].body[0], cst.Expr):
        return None
    stmt = stmts[0]
    mark = stmt.body[0].value  # type: ignore[attr-defined]  # checked above: an Expr
    if not (
        isinstance(mark, cst.Call)
        and mark.args
        and isinstance(mark.args[0].value, cst.Name)
        and mark.args[0].keyword is None
        and not mark.args[0].star
    ):
        return None
    param = mark.args[0].value.value
    block = parents.get(stmt)
    func = parents.get(block) if block is not None else None
    if not isinstance(func, cst.FunctionDef) or not isinstance(block, cst.IndentedBlock):
        return None
    names = [p.name.value for p in (*func.params.posonly_params, *func.params.params)]
    if param not in names:
        return None
    index = names.index(param)
    for earlier in block.body[: block.body.index(stmt)]:
        if any(isinstance(n, cst.Name) and n.value == param for n in _walk(earlier)):
            return None  # P may be rebound or used before: moving the mark could change what it marks
    inserts = _marks_at_calls(module, parents, func.name.value, index, param, mark)
    if not inserts or stmt in inserts:
        return None

    class Move(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):  # type: ignore[override]
            if original is stmt:
                return (
                    cst.RemoveFromParent() if len(block.body) > 1 else updated.with_changes(body=[cst.Pass()])
                )
            if original in inserts:
                before = [cst.parse_statement(code + "\n") for code in inserts[original]]
                return cst.FlattenSentinel([*before, updated])
            return updated

    new = module.visit(Move()).code
    return new, "", None


def _marks_at_calls(module: Any, parents: Any, fname: str, index: int, param: str, mark: Any) -> dict | None:
    """For each simple statement calling ``fname(...)``: the mark call written on the argument
    passed for ``param`` there.  None if one passes something other than a name, or the call is
    part of a compound statement's header."""
    import libcst as cst

    inserts: dict[Any, list[str]] = {}
    for node in _walk(module):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == fname):
            continue
        args = [a for a in node.args if a.keyword is None and not a.star]
        keyword = [a for a in node.args if a.keyword is not None and a.keyword.value == param]
        arg = keyword[0] if keyword else (args[index] if index < len(args) else None)
        if arg is None or not isinstance(arg.value, cst.Name) or any(a.star for a in node.args):
            return None
        holder = parents.get(node)
        while holder is not None and not isinstance(
            holder, (cst.SimpleStatementLine, cst.BaseCompoundStatement)
        ):
            holder = parents.get(holder)
        if not isinstance(holder, cst.SimpleStatementLine):
            return None
        moved = mark.with_changes(
            args=[mark.args[0].with_changes(value=cst.Name(arg.value.value)), *mark.args[1:]]
        )
        inserts.setdefault(holder, []).append(cst.Module([]).code_for_node(moved))
    return inserts


# -- TC203: a float argument specialised by value -> a 0-d tensor ----------------------------------
def float_arg_as_tensor(text: str, at: Span, torch_name: str) -> Result | None:
    """The parameter P starting at ``at`` of the module-level function F: every call ``F(...)``
    in this file passes ``torch.tensor(ARG, dtype=torch.float64)`` for it (float64 keeps the
    Python float's value; a 0-d tensor takes the other operand's dtype, as the float did), and a
    ``float`` annotation becomes ``torch.Tensor``.  A 0-d tensor is an input Dynamo does not
    specialise on by value.  None unless every use of P in F is an operand of ``+ - * / // % **``
    (a Python number is needed elsewhere), every call passes P (by position or keyword, without
    ``*``/``**``), and there is at least one call."""
    import libcst as cst
    from libcst.metadata import ParentNodeProvider, PositionProvider

    wrapper = _parsed(text)
    module = wrapper.module
    positions = wrapper.resolve(PositionProvider)
    parents = wrapper.resolve(ParentNodeProvider)
    found = [
        n
        for n, pos in positions.items()
        if isinstance(n, cst.Param) and (pos.start.line, pos.start.column) == (at.start.line, at.start.column)
    ]
    if len(found) != 1:
        return None
    param = found[0]
    func = parents.get(parents.get(param))
    if not isinstance(func, cst.FunctionDef) or parents.get(func) is not module:
        return None
    ordered = [*func.params.posonly_params, *func.params.params]
    index = ordered.index(param) if param in ordered else None
    name = param.name.value

    def arith_operand(node: cst.CSTNode) -> bool:
        parent = parents.get(node)
        return (
            isinstance(parent, cst.BinaryOperation)
            and type(parent.operator).__name__ in _ARITH
            and (parent.left is node or parent.right is node)
        )

    uses = [n for n in _walk(func.body) if isinstance(n, cst.Name) and n.value == name]
    if not uses or not all(arith_operand(n) for n in uses):
        return None
    wrap: dict[cst.Arg, cst.Arg] = {}
    for node in _walk(module):
        if not (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == func.name.value
        ):
            continue
        if any(a.star for a in node.args):
            return None
        keyword = [a for a in node.args if a.keyword is not None and a.keyword.value == name]
        positional = [a for a in node.args if a.keyword is None]
        arg = (
            keyword[0]
            if keyword
            else positional[index]
            if index is not None and index < len(positional)
            else None
        )
        if arg is None:
            return None
        code = module.code_for_node(arg.value)
        value = cst.parse_expression(f"{torch_name}.tensor({code}, dtype={torch_name}.float64)")
        wrap[arg] = arg.with_changes(value=value)
    if not wrap:
        return None
    annotation = param.annotation
    retyped = None
    if annotation is not None:
        if not (isinstance(annotation.annotation, cst.Name) and annotation.annotation.value == "float"):
            return None  # some other declared type: not ours to change
        retyped = annotation.with_changes(annotation=cst.parse_expression(f"{torch_name}.Tensor"))

    class Swap(cst.CSTTransformer):
        def leave_Arg(self, original, updated):  # type: ignore[override]
            return wrap[original] if original in wrap else updated

        def leave_Annotation(self, original, updated):  # type: ignore[override]
            return retyped if retyped is not None and original is annotation else updated

    new = module.visit(Swap()).code
    return (
        new,
        "; the function now gets a 0-d tensor: code that needs the Python number (formatting, `int(...)`) must call `.item()` outside the compiled code",
        None,
    )


# -- TC207: `dynamic=False` -> `dynamic=True`, or the option removed ------------------------------
def compile_keyword(text: str, at: Span, keyword: str, value: str) -> Result | None:
    """In the ``torch.compile(...)`` call starting at ``at`` (a call of a function named
    ``compile``), the argument ``KEYWORD=...`` gets the value ``value``, or is removed when
    ``value`` is empty (with its comma; comments elsewhere in the call stay).  None when the call
    or the keyword is not there."""
    import libcst as cst
    from libcst.metadata import PositionProvider

    wrapper = _parsed(text)
    positions = wrapper.resolve(PositionProvider)
    calls = [
        n
        for n, p in positions.items()
        if isinstance(n, cst.Call)
        and (p.start.line, p.start.column) == (at.start.line, at.start.column)
        and (
            isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "compile"
            or isinstance(n.func, cst.Name)
            and n.func.value == "compile"
        )
    ]
    if len(calls) != 1:
        return None
    call = calls[0]
    found = [a for a in call.args if a.keyword is not None and a.keyword.value == keyword]
    if len(found) != 1:
        return None
    arg = found[0]
    if value:
        args = [a.with_changes(value=cst.parse_expression(value)) if a is arg else a for a in call.args]

        class Swap(cst.CSTTransformer):
            def leave_Call(self, original, updated):  # type: ignore[override]
                return updated.with_changes(args=args) if original is call else updated

        return wrapper.module.visit(Swap()).code, "", None
    return _without_argument(text, positions, call, arg), "", None


def _without_argument(text: str, positions: Any, call: Any, arg: Any) -> str:
    """``text`` without the argument ``arg`` of ``call``, cut as text so that every comment in the
    call stays: the argument and its own comma; for a last argument without one, the comma before
    it; a line left blank goes, and so do the spaces after a comma the cut leaves on its line."""
    import libcst as cst
    from tclint.rules.source import LineIndex

    index = LineIndex(text)

    def off(p: Any) -> int:
        return index.offset(p.line, p.column)

    cuts: list[tuple[int, int]] = []
    start = off(positions[arg].start)
    if isinstance(arg.comma, cst.Comma):
        end = off(positions[arg.comma].end)
        while end < len(text) and text[end] in " \t":
            end += 1
    else:
        end = off(positions[arg].end)
        at = list(call.args).index(arg)
        if at > 0 and isinstance(call.args[at - 1].comma, cst.Comma):
            comma = off(positions[call.args[at - 1].comma].start)
            between = text[comma + 1 : start]
            if between.strip(" \t"):
                cuts.append((comma, comma + 1))  # a comment or line break: only the comma goes
            else:
                start = comma
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end + 1
    if not text[line_start:start].strip() and not text[end:line_end].strip():
        start, end = line_start, line_end
    cuts.append((start, end))
    for s, e in sorted(cuts, reverse=True):
        text = text[:s] + text[e:]
    return text


# -- a break in a loop body that drops the whole frame -> the body in a helper function ------------
_NO_EXTRACT = (
    "Break",
    "Continue",
    "Return",
    "Yield",
    "Await",
    "Global",
    "Nonlocal",
    "FunctionDef",
    "ClassDef",
    "Lambda",
    "ListComp",
    "SetComp",
    "DictComp",
    "GeneratorExp",
    "NamedExpr",
)


def extract_loop_body(text: str, at: Span) -> Result | None:
    """``_extract_loop_body`` run on the top-level ``def``/``class`` holding ``at``'s line only (with
    the blank lines and comments above it), spliced back into ``text``: libcst's metadata passes
    over a whole 2,000-line model file cost about a second per finding, paid for every loop break
    a JSON report lists; the statement alone costs what it holds.  The helper goes where the
    whole-module transform puts it (after the previous top-level statement, before the comments
    above the function); the names the helper must not shadow are every identifier of the file."""
    import ast
    import re

    tree = _ast_module(text)
    if tree is None:
        return None
    line = at.start.line
    firsts = [min([st.lineno, *(d.lineno for d in getattr(st, "decorator_list", ()))]) for st in tree.body]
    holding = [k for k, st in enumerate(tree.body) if firsts[k] <= line <= (st.end_lineno or st.lineno)]
    if not holding:
        return None
    i = holding[0]
    stmt, first = tree.body[i], firsts[i]
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return None  # the loop is not in a module-level function or a top-level class's method
    start = (tree.body[i - 1].end_lineno or first) + 1 if i else first
    starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    end_line = stmt.end_lineno or stmt.lineno
    lo = starts[start - 1]
    hi = starts[end_line] if end_line < len(starts) else len(text)
    shift = start - 1
    at_chunk = Span(
        type(at.start)(at.start.line - shift, at.start.column),
        type(at.end)(at.end.line - shift, at.end.column),
    )
    taken = set(re.findall(r"[^\W\d]\w*", text))
    out = _extract_loop_body(text[lo:hi], at_chunk, taken, first_statement=i == 0)
    if out is None:
        return None
    new_chunk, title, applicability = out
    return text[:lo] + new_chunk + text[hi:], title, applicability


def _extract_loop_body(  # noqa: C901 - the name analysis is one piece
    text: str, at: Span, taken: set[str], first_statement: bool
) -> Result | None:
    """The body of the ``for``/``while`` loop starting on ``at``'s line, in a module-level function
    or a method, becomes a module-level helper ``_F_loop_body(...)`` written before the function
    (or its class), and the loop calls it: a graph break in the body then breaks the helper's own
    frame, which Dynamo compiles around the break, instead of making Dynamo run the whole
    function eagerly.  The helper takes the names the body reads before it assigns them (locals
    of the function only) and returns the ones it assigns that are read after it or in the next
    iteration.  None when the body has ``break``/``continue``/``return``/``yield``, a nested
    function, class, lambda or comprehension, ``super()``, or a name it may leave unassigned
    that is needed after it."""
    import libcst as cst
    from libcst.metadata import ExpressionContext

    module, positions, parents, contexts = _name_analysis(text)
    loops = [
        n
        for n, p in positions.items()
        if isinstance(n, (cst.For, cst.While)) and p.start.line == at.start.line
    ]
    if len(loops) != 1 or not isinstance(loops[0].body, cst.IndentedBlock):
        return None
    loop = loops[0]
    func = parents.get(loop)
    while func is not None and not isinstance(func, cst.FunctionDef):
        func = parents.get(func)
    if func is None:
        return None
    outer = parents.get(parents.get(func))  # FunctionDef -> IndentedBlock/Module -> ...
    top: Any = (
        func
        if parents.get(func) is module
        else outer
        if isinstance(outer, cst.ClassDef) and parents.get(outer) is module
        else None
    )
    if top is None:
        return None  # a nested function: its closure would not reach a module-level helper
    body = loop.body.body
    nodes = [n for stmt in body for n in _walk(stmt)]
    if any(type(n).__name__ in _NO_EXTRACT for n in nodes):
        return None
    if any(isinstance(n, cst.Name) and n.value in ("super", "__class__", "locals", "vars") for n in nodes):
        return None

    def names(node: Any, ctx: Any) -> set[str]:
        out = set()
        for n in _walk(node):
            if isinstance(n, cst.Name) and contexts.get(n) == ctx:
                out.add(n.value)
            if (
                ctx == ExpressionContext.LOAD
                and isinstance(n, cst.AugAssign)
                and isinstance(n.target, cst.Name)
            ):
                out.add(n.target.value)  # `t += 1` reads t first
        return out

    params = [
        p.name.value for p in (*func.params.posonly_params, *func.params.params, *func.params.kwonly_params)
    ]
    for star in (func.params.star_arg, func.params.star_kwarg):
        if isinstance(star, cst.Param):
            params.append(star.name.value)
    local = set(params) | names(func.body, ExpressionContext.STORE)
    stored: set[str] = set()
    maybe: set[str] = set()
    needs: list[str] = []
    for stmt in body:
        for name in sorted(names(stmt, ExpressionContext.LOAD)):
            if name in local and name not in stored and name not in needs:
                needs.append(name)
        (stored if isinstance(stmt, cst.SimpleStatementLine) else maybe).update(
            names(stmt, ExpressionContext.STORE)
        )
    order = list(needs)
    needs.sort(
        key=lambda n: (params.index(n) if n in params else len(params), order.index(n))
    )  # `self` first
    written = stored | maybe
    body_ids = {id(n) for n in nodes}
    read_elsewhere = {
        n.value
        for n in _walk(func.body)
        if isinstance(n, cst.Name) and id(n) not in body_ids and contexts.get(n) == ExpressionContext.LOAD
    }
    returns = sorted(n for n in written if n in read_elsewhere or n in needs)
    if any(n in maybe and n not in stored and n not in needs for n in returns):
        return None  # assigned on some paths only, and needed after the body
    helper_name = f"_{func.name.value}_loop_body"
    while helper_name in taken:
        helper_name += "_"
    args = ", ".join(needs)
    call = f"{helper_name}({args})"
    if returns:
        call = f"{', '.join(returns)} = {call}"
    ret = [cst.parse_statement(f"return {', '.join(returns)}\n")] if returns else []
    parsed = cst.parse_statement(f"def {helper_name}({args}):\n    pass\n")
    assert isinstance(parsed, cst.FunctionDef) and isinstance(parsed.body, cst.IndentedBlock)
    helper = parsed.with_changes(
        body=parsed.body.with_changes(body=[*body, *ret]),
        leading_lines=[] if first_statement else [cst.EmptyLine(), cst.EmptyLine()],
    )
    new_body = loop.body.with_changes(body=[cst.parse_statement(call + "\n")])

    class Extract(cst.CSTTransformer):
        def leave_IndentedBlock(self, original, updated):  # type: ignore[override]
            return new_body if original is loop.body else updated

    # ``text`` is the top-level statement with what lies above it: the helper comes first
    new = module.code_for_node(helper) + module.visit(Extract()).code
    return (
        new,
        f"; the loop calls `{helper_name}`, whose frame Dynamo compiles around the break (the loop's own frame still runs eagerly)",
        None,
    )


# -- TC313: `torch.compile(f)` re-made on every iteration of a loop -> made once before it ---------
def hoist_compile(text: str, at: Span) -> Result | None:  # noqa: C901 - the name analysis is one piece
    """The call ``torch.compile(TARGET, k=V...)`` starting at ``at``, in the body of a ``for`` or
    ``while`` loop, moves before the outermost enclosing loop (of the same function) that binds
    none of the names or ``a.b`` paths it reads, into a fresh name ``compiled_<target>`` (no
    identifier of the file clashes); the loop uses that name.  Dynamo compiles the code object
    once either way, so what goes is the wrapper (and the backend Dynamo keeps alive) made per
    iteration.  Safe when the wrapper is only called (``torch.compile(m)(x)``, or ``f = ...``
    with ``f`` only called) and TARGET and the option values are names bound once in the
    function or the module; unsafe otherwise (an attribute may be rebound by code the loop
    calls; a wrapper kept or passed on is now one object, not one per iteration).  None when
    the call is not in a loop body, reads something every enclosing loop binds, or has other
    arguments than TARGET and keyword options (names, attribute paths, constants)."""
    import re

    import libcst as cst
    from libcst.metadata import ExpressionContext

    module, positions, parents, contexts = _name_analysis(text)
    calls = [
        n
        for n, p in positions.items()
        if isinstance(n, cst.Call)
        and (p.start.line, p.start.column) == (at.start.line, at.start.column)
        and isinstance(n.func, cst.Attribute)
        and n.func.attr.value == "compile"
    ]
    if len(calls) != 1:
        return None
    call = calls[0]
    args = list(call.args)
    if not args or args[0].keyword is not None or any(a.star for a in args):
        return None
    if any(a.keyword is None for a in args[1:]):
        return None

    def path(expr: Any) -> str | None:
        parts = []
        while isinstance(expr, cst.Attribute):
            parts.append(expr.attr.value)
            expr = expr.value
        return ".".join([expr.value, *reversed(parts)]) if isinstance(expr, cst.Name) else None

    reads: list[str] = []
    for i, a in enumerate(args):
        if i and (
            isinstance(a.value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString))
            or isinstance(a.value, cst.Name)
            and a.value.value in ("True", "False", "None")
        ):
            continue
        found = path(a.value)
        if found is None:
            return None
        reads.append(found)
    assert isinstance(call.func, cst.Attribute)
    reads.append(path(call.func.value) or "")  # `torch` itself
    # the loops around the call, innermost first, up to the enclosing function
    loops: list[Any] = []
    child: Any = call
    node = parents.get(call)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Module)):
        if isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            return None  # runs somewhere else, or per element of a comprehension
        if isinstance(node, (cst.For, cst.While)):
            if child is not node.body:
                if loops:
                    break  # the header or the `else:` of an outer loop: not per iteration of it
                return None
            loops.append(node)
        child, node = node, parents.get(node)
    if not loops:
        return None
    func = node if isinstance(node, cst.FunctionDef) else None

    def stores(root: Any) -> set[str]:
        out: set[str] = set()
        for n in _walk(root):
            if isinstance(n, (cst.Name, cst.Attribute)) and contexts.get(n) in (
                ExpressionContext.STORE,
                ExpressionContext.DEL,
            ):
                found = path(n)
                if found is not None:
                    out.add(found)
            elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
                out.add(n.name.value)
            elif isinstance(n, cst.ImportAlias):
                name = n.asname.name if n.asname is not None else n.name
                out.add(module.code_for_node(name).split(".")[0])
            elif isinstance(n, (cst.Global, cst.Nonlocal)):
                out.update(item.name.value for item in n.names)
        return out

    def bound_in(paths: set[str], name: str) -> bool:
        parts = name.split(".")
        return any(".".join(parts[: i + 1]) in paths for i in range(len(parts)))

    free = [loop for loop in loops if not any(bound_in(stores(loop), r) for r in reads)]
    if not free or free[0] is not loops[0]:
        return None  # the innermost loop binds something the call reads: it is not the same each time
    outer = free[-1]
    taken = set(re.findall(r"[^\W\d]\w*", text))
    base = (path(args[0].value) or "fn").split(".")[-1].lstrip("_") or "fn"
    name = f"compiled_{base}"
    n = 2
    while name in taken:
        name, n = f"compiled_{base}_{n}", n + 1
    safe = _hoist_is_safe(module, parents, contexts, call, func, reads, path, stores)
    hoisted = cst.parse_statement(f"{name} = {module.code_for_node(call)}\n")
    hoisted = hoisted.with_changes(leading_lines=outer.leading_lines)

    class Hoist(cst.CSTTransformer):
        def leave_Call(self, original, updated):  # type: ignore[override]
            return cst.Name(name) if original is call else updated

        def on_leave(self, original, updated):  # type: ignore[override]
            done = super().on_leave(original, updated)
            if original is outer:
                return cst.FlattenSentinel([hoisted, done.with_changes(leading_lines=[])])  # type: ignore[union-attr]
            return done

    new = module.visit(Hoist()).code
    line = positions[outer].start.line
    return (
        new,
        f"; `{name}` is made once, before the loop at line {line}: Dynamo compiled the code once either way, "
        "what goes is the wrapper (and the backend Dynamo keeps alive) made per iteration",
        None if safe else Applicability.UNSAFE,
    )


def _hoist_is_safe(
    module: Any, parents: Any, contexts: Any, call: Any, func: Any, reads, path, stores
) -> bool:  # type: ignore[no-untyped-def]
    """Whether hoisting ``call`` keeps the program's meaning: its wrapper is only called, and each
    name it reads is bound once (a parameter or one assignment of ``func``, or one module-level
    binding with no ``global`` declaration anywhere), never an attribute path."""
    import libcst as cst
    from libcst.metadata import ExpressionContext

    parent = parents.get(call)
    if isinstance(parent, cst.Call) and parent.func is call:
        pass  # torch.compile(m)(x): the wrapper is called once and dropped
    elif (
        isinstance(parent, cst.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0].target, cst.Name)
        and func is not None
    ):
        held = parent.targets[0].target.value
        for n in _walk(func.body):
            if isinstance(n, cst.Name) and n.value == held and contexts.get(n) == ExpressionContext.LOAD:
                up = parents.get(n)
                if not (isinstance(up, cst.Call) and up.func is n):
                    return False  # the wrapper is kept or passed on: one object now, not one per iteration
    else:
        return False
    module_stores = [stores(stmt) for stmt in module.body]
    has_global = any(isinstance(n, cst.Global) for n in _walk(module))
    for read in reads:
        if "." in read:
            if read.split(".")[0] == module.code_for_node(call.func.value):
                continue  # torch.compile itself
            return False
        if func is not None:
            params = {p.name.value for p in _walk(func.params) if isinstance(p, cst.Param)}
            local = sum(
                1
                for n in _walk(func.body)
                if isinstance(n, cst.Name) and n.value == read and contexts.get(n) == ExpressionContext.STORE
            )
            if read in params and not local or read not in params and local == 1:
                continue
            if read in params or local:
                return False
        if has_global or sum(1 for s in module_stores if read in s) != 1:
            return False
    return True


# -- TC104/TC105: a print / logging call in compiled code -> after the eager call -----------------
def move_to_caller(text: str, at: Span) -> Result | None:  # noqa: C901 - the name analysis is one piece
    """The statement ``print(...)`` / ``logger.info(...)`` whose call starts at ``at``, a statement
    of the body of a compiled function F (``@torch.compile`` or ``G = torch.compile(F)`` at module
    level), or of ``forward`` of a module-level class C compiled in this file
    (``torch.compile(C(...))``, ``m = C(...)`` then ``torch.compile(m)`` / ``m.compile()``), moves
    after the one eager statement ``OUT = <compiled>(...)`` of this file, with the name F returns
    (``return R``, its only return) replaced by ``OUT``.  None unless the call reads only R,
    builtins and names bound once at module level; the statements between it and the return
    touch neither R nor a name bound from it; the compiled callable has exactly one call in the
    file, in a statement of that form in eager code (module level, or a function nothing here
    compiles), and is not passed on or called otherwise (a call tclint cannot see would lose the
    message)."""
    import builtins

    import libcst as cst
    from libcst.metadata import ExpressionContext

    module, positions, parents, contexts = _name_analysis(text)
    found = [
        n
        for n, p in positions.items()
        if isinstance(n, cst.Call) and (p.start.line, p.start.column) == (at.start.line, at.start.column)
    ]
    if len(found) != 1:
        return None
    call = found[0]
    expr, stmt = parents.get(call), None
    if isinstance(expr, cst.Expr):
        stmt = parents.get(expr)
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    block = parents.get(stmt)
    func = parents.get(block)
    if not isinstance(block, cst.IndentedBlock) or not isinstance(func, cst.FunctionDef):
        return None
    body = list(block.body)
    last = body[-1]
    if not (
        isinstance(last, cst.SimpleStatementLine)
        and len(last.body) == 1
        and isinstance(last.body[0], cst.Return)
        and isinstance(last.body[0].value, cst.Name)
    ):
        return None
    ret = last.body[0].value.value
    if sum(1 for n in _walk(func.body) if isinstance(n, (cst.Return, cst.Yield, cst.Await))) != 1:
        return None  # another way out of F (or a generator): the caller's result is not always R
    module_bound: dict[str, int] = {}
    for top in module.body:
        for name in _bound_names(top, contexts):
            module_bound[name] = module_bound.get(name, 0) + 1
    if any(isinstance(n, (cst.Global, cst.Nonlocal)) for n in _walk(module)):
        return None
    local = set(_bound_names(func.body, contexts)) | {
        p.name.value for p in _walk(func.params) if isinstance(p, cst.Param)
    }
    globals_read: set[str] = set()
    for n in _walk(call):
        if not (isinstance(n, cst.Name) and contexts.get(n) == ExpressionContext.LOAD):
            continue
        if n.value == ret:
            continue
        if n.value in local:
            return None  # reads another local of the compiled frame (or self, a parameter)
        if module_bound.get(n.value) == 1 or n.value not in module_bound and hasattr(builtins, n.value):
            globals_read.add(n.value)
            continue
        return None
    index = body.index(stmt)
    aliases = {ret}
    changed = True
    while changed:
        changed = False
        for other in body:
            for n in _walk(other):
                if isinstance(n, cst.Assign) and any(
                    isinstance(m, cst.Name) and m.value in aliases for m in _walk(n.value)
                ):
                    for t in n.targets:
                        for m in _walk(t.target):
                            if isinstance(m, cst.Name) and m.value not in aliases:
                                aliases.add(m.value)
                                changed = True
    for other in body[index + 1 : -1]:
        if any(isinstance(n, cst.Name) and n.value in aliases for n in _walk(other)):
            return None  # R (or a name bound from it) is used after the message: it may change
    callees, held = _compiled_names(module, parents, func)
    if not callees:
        return None
    sites = [
        n
        for n in _walk(module)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in callees
    ]
    if len(sites) != 1:
        return None
    for n in _walk(module):  # the compiled callable (or the instance) used other than called / compiled
        if (
            isinstance(n, cst.Name)
            and n.value in callees | held
            and contexts.get(n) == ExpressionContext.LOAD
        ):
            up = parents.get(n)
            if isinstance(up, cst.Call) and up.func is n and n.value in callees:
                continue  # (a call of the function or module itself runs it eagerly, message lost)
            if isinstance(up, cst.Arg) and _is_compile_call(parents.get(up)):
                continue
            if (
                isinstance(up, cst.Attribute)
                and up.value is n
                and up.attr.value not in ("forward", "__call__")
            ):
                continue
            if isinstance(up, cst.Decorator):
                continue
            return None
    site = sites[0]
    assign = parents.get(site)
    caller_stmt = parents.get(assign) if assign is not None else None
    if not (
        isinstance(assign, cst.Assign)
        and assign.value is site
        and len(assign.targets) == 1
        and isinstance(assign.targets[0].target, cst.Name)
        and isinstance(caller_stmt, cst.SimpleStatementLine)
        and len(caller_stmt.body) == 1
    ):
        return None
    out = assign.targets[0].target.value
    owner = parents.get(caller_stmt)
    while owner is not None and not isinstance(owner, (cst.FunctionDef, cst.Module)):
        owner = parents.get(owner)
    if isinstance(owner, cst.FunctionDef):
        if owner is func or owner.name.value == "forward" or _compiled_here(module, owner):
            return None  # not eager code (or F itself)
        if globals_read & set(_bound_names(owner.body, contexts)) or out in globals_read:
            return None  # a name the message reads means something else there
    elif out in globals_read:
        return None

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original, updated):  # type: ignore[override]
            if original.value == ret and contexts.get(original) == ExpressionContext.LOAD:
                return updated.with_changes(value=out)
            return updated

    moved_call = call.visit(Rename())
    moved = stmt.with_changes(body=[expr.with_changes(value=moved_call)])  # type: ignore[union-attr]

    class Move(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):  # type: ignore[override]
            if original is stmt:
                return cst.RemoveFromParent()
            if original is caller_stmt:
                return cst.FlattenSentinel([updated, moved])
            return updated

    new = module.visit(Move()).code
    line = positions[caller_stmt].start.line
    return (
        new,
        f"; it now runs in the eager caller after line {line}, once the compiled call has returned "
        "(output order and timing change: it comes after everything the compiled code prints)",
        None,
    )


def _bound_names(root: Any, contexts: Any) -> list[str]:
    """The names ``root`` binds (each binding once): assignment and loop targets, imports,
    ``def``/``class`` names."""
    import libcst as cst
    from libcst.metadata import ExpressionContext

    out = []
    for n in _walk(root):
        if isinstance(n, cst.Name) and contexts.get(n) == ExpressionContext.STORE:
            out.append(n.value)
        elif isinstance(n, (cst.FunctionDef, cst.ClassDef)):
            out.append(n.name.value)
        elif isinstance(n, cst.ImportAlias):
            name = n.asname.name if n.asname is not None else n.name
            out.append(cst.Module([]).code_for_node(name).split(".")[0])
    return out


def _is_compile_call(node: Any) -> bool:
    import libcst as cst

    return isinstance(node, cst.Call) and (
        isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "compile"
        and isinstance(node.func.value, cst.Name)
        and node.func.value.value == "torch"
    )


def _compiled_here(module: Any, func: Any) -> bool:
    """Whether this file compiles ``func`` (a decorator mentioning ``compile``, or its name given
    to ``torch.compile``)."""
    import libcst as cst

    if any("compile" in cst.Module([]).code_for_node(d.decorator) for d in func.decorators):
        return True
    return any(
        _is_compile_call(n)
        and n.args
        and isinstance(n.args[0].value, cst.Name)
        and n.args[0].value.value == func.name.value
        for n in _walk(module)
    )


def _compiled_names(module: Any, parents: Any, func: Any) -> tuple[set[str], set[str]]:  # noqa: C901 - one case per compile idiom
    """(the names whose call runs the compiled ``func``, the instance names that only compiling
    may use): ``func`` itself when decorated with ``torch.compile``; ``G`` for ``G =
    torch.compile(func)``; for ``forward`` of a module-level class C constructed once: ``NAME``
    for ``NAME = torch.compile(C(...))``, ``NAME = torch.compile(INST)`` after ``INST = C(...)``,
    or ``INST`` compiled in place (``INST.compile()``).  Empty when there is no such name."""
    import libcst as cst

    def assigned(node: Any) -> str | None:
        up = parents.get(node)
        if isinstance(up, cst.Assign) and up.value is node and len(up.targets) == 1:
            target = up.targets[0].target
            if isinstance(target, cst.Name) and isinstance(parents.get(up), cst.SimpleStatementLine):
                return target.value
        return None

    owner = parents.get(parents.get(func))  # FunctionDef -> IndentedBlock -> ClassDef
    if parents.get(func) is module:
        name = func.name.value
        if any(_is_compile_decorator(d.decorator) for d in func.decorators):
            return {name}, set()
        names = {
            assigned(n)
            for n in _walk(module)
            if _is_compile_call(n)
            and n.args
            and isinstance(n.args[0].value, cst.Name)
            and n.args[0].value.value == name
        }
        names.discard(None)
        return (set(names), {name}) if len(names) == 1 else (set(), set())  # type: ignore[arg-type]
    if func.name.value != "forward" or func.decorators:
        return set(), set()
    cls = owner
    if not isinstance(cls, cst.ClassDef) or cls not in module.body:
        return set(), set()
    ctors = [
        n
        for n in _walk(module)
        if isinstance(n, cst.Name) and n.value == cls.name.value and n is not cls.name
    ]
    if len(ctors) != 1:
        return set(), set()  # constructed (or subclassed, passed on) more than once
    ctor = parents.get(ctors[0])
    if not (isinstance(ctor, cst.Call) and ctor.func is ctors[0]):
        return set(), set()
    arg = parents.get(ctor)
    if isinstance(arg, cst.Arg) and _is_compile_call(parents.get(arg)):
        name = assigned(parents.get(arg))
        return ({name}, set()) if name else (set(), set())
    inst = assigned(ctor)
    if inst is None:
        return set(), set()
    names = set()
    for n in _walk(module):
        if (
            _is_compile_call(n)
            and n.args
            and isinstance(n.args[0].value, cst.Name)
            and n.args[0].value.value == inst
        ):
            names.add(assigned(n))
        elif (
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "compile"
            and isinstance(n.func.value, cst.Name)
            and n.func.value.value == inst
        ):
            names.add(inst)
    if len(names) != 1 or None in names:
        return set(), set()
    return set(names), {inst} - set(names)  # type: ignore[arg-type]


def _is_compile_decorator(node: Any) -> bool:
    """``@torch.compile`` or ``@torch.compile(...)``."""
    import libcst as cst

    if isinstance(node, cst.Call):
        return _is_compile_call(node)
    return (
        isinstance(node, cst.Attribute)
        and node.attr.value == "compile"
        and isinstance(node.value, cst.Name)
        and node.value.value == "torch"
    )


# -- TC104/TC105: a logging function registered in torch._dynamo.config ---------------------------
def add_after_imports(text: str, line: str, *modules: str) -> Result | None:
    """The statement ``line`` written after the module's top-level ``import torch`` and ``import
    M`` for each of ``modules`` (after the last of them, so the names it uses exist when it runs).
    None when one of them is not imported that way at the top level, or ``line`` is already there."""
    import libcst as cst

    module = _parsed(text).module
    wanted = {"torch", *modules}
    last: dict[str, int] = {}
    for i, stmt in enumerate(module.body):
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = module.code_for_node(alias.name)
                    if name in wanted:
                        last[name] = i
    if set(last) != wanted:
        return None
    if any(module.code_for_node(stmt).strip() == line for stmt in module.body):
        return None
    at = max(last.values())
    while at + 1 < len(module.body) and _is_import(module.body[at + 1]):
        at += 1  # after the rest of that import block, not inside it
    after = module.body[at]
    new_stmt = cst.parse_statement(line + "\n")

    class Insert(cst.CSTTransformer):
        def leave_SimpleStatementLine(self, original, updated):  # type: ignore[override]
            return cst.FlattenSentinel([updated, new_stmt]) if original is after else updated

    return module.visit(Insert()).code, "", None


# -- helpers ----
def _is_import(stmt: Any) -> bool:
    import libcst as cst

    return isinstance(stmt, cst.SimpleStatementLine) and all(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body
    )


def forget_parses() -> None:
    """Drop the trees ``_parsed`` and ``_ast_module`` keep (a libcst tree with its metadata is
    many times its text; with every reported text, a cold JSON run of the transformers package
    grew from 384 MiB after its project pass to 505 MiB in the report): ``fixes.resolve_fixes``
    calls it when it moves on to another file."""
    _parsed.cache_clear()
    _ast_module.cache_clear()


@functools.lru_cache(maxsize=4)
def _ast_module(text: str) -> Any:
    """``ast.parse(text)`` shared by the loop-body extractions of one text (one per loop break of
    the file), None when it does not parse; never mutated."""
    import ast

    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=4)
def _parsed(text: str) -> Any:
    """The libcst tree of ``text`` with its metadata wrapper, shared by the codemods of one text
    (several findings of one file, one editor publish): one libcst parse per text, not per fix.
    Codemods never mutate it (libcst transforms return new trees)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper

    return MetadataWrapper(cst.parse_module(text), unsafe_skip_copy=True)


def _name_analysis(text: str) -> tuple[Any, Any, Any, Any]:
    """(module, positions, parents, expression contexts) of ``text``'s shared libcst tree: what the
    codemods that move or rename code read (where a node is, what holds it, load or store)."""
    from libcst.metadata import ExpressionContextProvider, ParentNodeProvider, PositionProvider

    wrapper = _parsed(text)
    return (
        wrapper.module,
        wrapper.resolve(PositionProvider),
        wrapper.resolve(ParentNodeProvider),
        wrapper.resolve(ExpressionContextProvider),
    )


def _walk(node: Any):
    """Every node under ``node`` (itself included), depth first."""
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(reversed(cur.children))


def _statements(body: Any):
    """The statements of a function body, nested blocks included, in order."""
    import libcst as cst

    for node in _walk(body):
        if isinstance(node, (cst.SimpleStatementLine,)):
            yield node


_CODEMODS: dict[str, Callable[..., Result | None]] = {
    "int-counter-to-buffer": int_counter_to_buffer,
    "compile-in-place": compile_in_place,
    "item-as-tensor": item_as_tensor,
    "mark-before-call": mark_before_call,
    "add-after-imports": add_after_imports,
    "float-arg-as-tensor": float_arg_as_tensor,
    "compile-keyword": compile_keyword,
    "extract-loop-body": extract_loop_body,
    "hoist-compile": hoist_compile,
    "move-to-caller": move_to_caller,
}
