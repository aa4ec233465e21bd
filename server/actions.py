"""Code actions, answered from what was published (never by re-linting).

* quick fixes: the diagnostic's fix and each of its alternatives as a quick fix of its own (safe
  ones always, unsafe ones with ``unsafeFixes``; the preferred safe one is marked preferred);
* "Disable TCxxx for this line": adds (or extends) ``# noqa: TCxxx``;
* ``source.fixAll.tclint``: every finding's preferred safe fix of the document at once (overlapping
  fixes are left for the next run, as ``tclint check --fix`` does);
* "Create probe inputs for this function": runs the command ``tclint.createProbeInputs``, which
  writes the probe's ``--init-inputs`` stub for the function under the cursor.

The client's copy of a diagnostic is matched back to the published one by code and range, so
clients that drop ``data`` (Neovim 0.7) still get the edits; edits are versioned where the client
supports it, so an action computed for an older version is refused instead of misapplied.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from tclint.rules.fixes import apply_fixes, resolve
from tclint.server.convert import PROBE_SOURCE, SOURCE, first_fix, structure
from tclint.server.positions import Lines, minimal_edit

if TYPE_CHECKING:
    from tclint.server.server import Published, TclintServer

FIX_ALL = "source.fixAll.tclint"
PROBE_INPUTS = "refactor.tclint.probeInputs"
KINDS = [types.CodeActionKind.QuickFix, FIX_ALL, PROBE_INPUTS]


def register(ls: TclintServer) -> None:
    @ls.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=KINDS, resolve_provider=False),
    )
    def code_action(ls: TclintServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        pub = ls.published.get(params.text_document.uri)
        doc = ls.docs.get(params.text_document.uri)
        if pub is None or pub.lines is None or (doc is None and not pub.notebook):
            return []
        return code_actions(ls, pub, params)


def _wanted(only: Sequence[str] | None, kind: str) -> bool:
    if not only:
        return True
    return any(kind == o or kind.startswith(o + ".") for o in only)


def _key(rng: Any) -> tuple[int, int, int, int]:
    """A range (lsprotocol object or JSON) as a tuple."""
    if isinstance(rng, dict):
        return (rng["start"]["line"], rng["start"]["character"], rng["end"]["line"], rng["end"]["character"])
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character)


def _overlaps(a: Any, b: Any) -> bool:
    ka, kb = _key(a), _key(b)
    return ka[:2] <= kb[2:] and kb[:2] <= ka[2:]


def matched(
    pub: Published, params: types.CodeActionParams
) -> list[tuple[dict[str, Any], types.Diagnostic | None]]:
    """(our published diagnostic, the client's copy) for each diagnostic the request is about."""
    ours = [d for d in pub.lsp if d.get("source") in (SOURCE, PROBE_SOURCE)]
    context = params.context.diagnostics if params.context is not None else []
    if not context:
        return [(d, None) for d in ours if _overlaps(d["range"], params.range)]
    out: list[tuple[dict[str, Any], types.Diagnostic | None]] = []
    seen: set[int] = set()
    for theirs in context:
        code = str(theirs.code) if theirs.code is not None else None
        key = _key(theirs.range)
        for d in ours:
            if d["code"] == code and _key(d["range"]) == key and id(d) not in seen:
                seen.add(id(d))
                out.append((d, theirs))
    return out


def _as_object(ls: TclintServer, ours: dict[str, Any], theirs: types.Diagnostic | None) -> types.Diagnostic:
    return theirs if theirs is not None else structure(ls.protocol._converter, ours)


def _workspace_edit(
    ls: TclintServer, uri: str, version: int | None, edits: list[dict[str, Any]]
) -> types.WorkspaceEdit:
    text_edits = [
        types.TextEdit(
            range=types.Range(
                start=types.Position(
                    line=e["range"]["start"]["line"], character=e["range"]["start"]["character"]
                ),
                end=types.Position(line=e["range"]["end"]["line"], character=e["range"]["end"]["character"]),
            ),
            new_text=e["newText"],
        )
        for e in edits
    ]
    ws_caps = getattr(ls.capabilities, "workspace", None)
    if version is not None and getattr(getattr(ws_caps, "workspace_edit", None), "document_changes", False):
        return types.WorkspaceEdit(
            document_changes=[
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                    edits=text_edits,  # type: ignore[arg-type]
                )
            ]
        )
    return types.WorkspaceEdit(changes={uri: text_edits})


def code_actions(ls: TclintServer, pub: Published, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only if params.context is not None else None
    uri = params.text_document.uri
    actions: list[types.CodeAction] = []
    version: int | None = None if pub.notebook else pub.version  # cells: unversioned edits
    if _wanted(only, types.CodeActionKind.QuickFix):
        pairs = matched(pub, params)
        for d, theirs in pairs:
            preferred_given = False
            for fix in _fixes(d):
                safe = fix.get("applicability") == "safe"
                actions.append(
                    types.CodeAction(
                        title=f"{fix['title']} ({d['code']})"
                        + (" — unsafe" if fix.get("applicability") == "unsafe" else ""),
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[_as_object(ls, d, theirs)],
                        edit=_workspace_edit(ls, uri, version, fix["edits"]),
                        is_preferred=safe and not preferred_given,
                    )
                )
                preferred_given = preferred_given or safe
        for d, theirs in pairs:
            noqa = d["data"].get("noqa")
            if noqa:
                actions.append(
                    types.CodeAction(
                        title=f"Disable {d['code']} for this line",
                        kind=types.CodeActionKind.QuickFix,
                        diagnostics=[_as_object(ls, d, theirs)],
                        edit=_workspace_edit(ls, uri, version, [noqa]),
                    )
                )
    if _wanted(only, FIX_ALL) and (only or actions or any(_has_safe_fix(d) for d in pub.lsp)):
        fix_all = fix_all_edit(pub, ls.encoding)
        if fix_all is not None:
            actions.append(
                types.CodeAction(
                    title="tclint: apply all safe fixes",
                    kind=FIX_ALL,
                    edit=_workspace_edit(ls, uri, version, [fix_all]),
                )
            )
    if _wanted(only, PROBE_INPUTS) and not only:
        action = probe_inputs_action(ls, pub, params)
        if action is not None:
            actions.append(action)
    return actions


def _fixes(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The published fixes of a diagnostic (its ``data``): the preferred one, then the alternatives."""
    data = d["data"]
    found = [data["fix"]] if data.get("fix") else []
    return [f for f in (*found, *data.get("alternatives", ())) if f.get("edits")]


def _has_safe_fix(d: dict[str, Any]) -> bool:
    return any(f.get("applicability") == "safe" for f in _fixes(d))


def fix_all_edit(pub: Published, encoding: str) -> dict[str, Any] | None:
    """One edit applying, for every published diagnostic, its preferred safe fix (the first safe
    one of its alternatives)."""
    fixes = []
    for d in pub.model:  # a notebook cell's fixes are in the cell's own lines (CellMap.map_fix)
        for alt in (first_fix(d.fix), *d.alternatives):
            fix = resolve(alt, pub.text)  # codemod fixes: computed here
            if fix is not None and fix.edits and fix.applicability.value == "safe":
                fixes.append(fix)
                break
    if not fixes:
        return None
    new_text, applied = apply_fixes(pub.text, fixes)
    if not applied or new_text == pub.text:
        return None
    start, end, replacement = minimal_edit(pub.text, new_text)
    lines = pub.lines or Lines.of(pub.text)
    s, e = lines.position_at(start, encoding), lines.position_at(end, encoding)
    return {
        "range": {
            "start": {"line": s.line, "character": s.character},
            "end": {"line": e.line, "character": e.character},
        },
        "newText": replacement,
    }


def probe_inputs_action(
    ls: TclintServer, pub: Published, params: types.CodeActionParams
) -> types.CodeAction | None:
    """ "Create probe inputs for this function" when the cursor is in a function or class."""
    editor = ls.editor_for_path(pub.path)
    if not (editor.probe.enable and editor.trusted) or ls.docs.get(pub.uri) is None:
        return None
    doc = ls.docs.get(pub.uri)
    if doc is None or doc.path is None:
        return None
    from tclint.server.commands import target_for_line

    target = target_for_line(pub, params.range.start.line + 1)
    compiled = {e.qualname.split(".<locals>.")[0] for e in pub.entries if e.kind == "function" and e.qualname}
    if target is None or target not in compiled:
        return None  # offered on compiled functions (the ones with a "Probe" lens), not everywhere
    return types.CodeAction(
        title=f"Create probe inputs for {target}",
        kind=PROBE_INPUTS,
        command=types.Command(
            title=f"Create probe inputs for {target}",
            command="tclint.createProbeInputs",
            arguments=[
                {
                    "uri": pub.uri,
                    "position": {"line": params.range.start.line, "character": params.range.start.character},
                }
            ],
        ),
    )
