"""Code lenses on compiled entry points and on the functions of compiled regions.

A compile site gets its predicted variant set ("≈ 4 variants: train/eval × grad/no_grad —
bounded", from ``tclint.rules.variants``): static, so it shows whether or not the probe may run.

"Probe" runs ``tclint.probe`` on the function; once it has been probed the lens says what the
probe saw ("2 graphs · 1 break · 3 compiles") and probes again when clicked.  A
``torch.compile(...)`` call at module level gets "Probe file" (the script is what runs it).

"Benchmark" (only for a client that runs ``tclint bench`` itself and says so in
``initializationOptions.clientCommands``, e.g. VS Code's ``tclint.benchmark``) sits on an entry
point whose inputs are declared (``inputs_<target>`` in one of its probe-inputs files: the bench's
buckets), with the arguments ``[{"uri": URI, "target": QUALNAME}]``.  The inputs files are read,
never run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

if TYPE_CHECKING:
    from tclint.server.server import TclintServer


def register(ls: TclintServer) -> None:
    @ls.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    def code_lens(ls: TclintServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        pub = ls.published.get(params.text_document.uri)
        doc = ls.docs.get(params.text_document.uri)
        if pub is None or doc is None or pub.lines is None or doc.path is None:
            return []
        lenses: list[types.CodeLens] = []
        for entry in pub.entries:
            if entry.kind == "site" and entry.variants:
                # the static variant prediction: shown everywhere, it runs nothing
                line0 = entry.line - 1
                rng = types.Range(
                    pub.lines.to_lsp(line0, 0, ls.encoding), pub.lines.to_lsp(line0, 0, ls.encoding)
                )
                lenses.append(
                    types.CodeLens(range=rng, command=types.Command(title=entry.variants, command=""))
                )
        editor = ls.editor_for_path(pub.path)
        if not (editor.probe.enable and editor.trusted):
            return lenses  # the probe runs the workspace's code: no probe lens where it may not
        summaries: dict[str, Any] = ls.probes.summaries(pub.path) if ls.probes is not None else {}
        seen: set[int] = set()
        for entry in pub.entries:
            if entry.line in seen:
                continue
            line0 = entry.line - 1
            rng = types.Range(
                pub.lines.to_lsp(line0, 0, ls.encoding), pub.lines.to_lsp(line0, 0, ls.encoding)
            )
            if entry.kind == "function" and entry.qualname:
                target = entry.qualname.split(".<locals>.")[0]
                summary = summaries.get(target)
                title = f"Probe: {summary}" if summary else "Probe"
                pos = pub.lines.to_lsp(entry.span.start.line - 1, entry.span.start.column, ls.encoding)
                command = types.Command(
                    title=title,
                    command="tclint.probe",
                    arguments=[{"uri": pub.uri, "position": {"line": pos.line, "character": pos.character}}],
                )
            elif entry.kind == "site" and entry.module_level:
                summary = summaries.get("")
                title = f"Probe file: {summary}" if summary else "Probe file"
                command = types.Command(title=title, command="tclint.probeFile", arguments=[{"uri": pub.uri}])
            else:
                continue
            seen.add(entry.line)
            lenses.append(types.CodeLens(range=rng, command=command))
            if entry.kind == "function" and entry.qualname and BENCH_COMMAND in ls.client_commands:
                target = entry.qualname.split(".<locals>.")[0]
                if "<" not in target and declares_inputs(pub.path, target):
                    lenses.append(
                        types.CodeLens(
                            range=rng,
                            command=types.Command(
                                title="Benchmark",
                                command=BENCH_COMMAND,
                                arguments=[{"uri": pub.uri, "target": target}],
                            ),
                        )
                    )
        return lenses


BENCH_COMMAND = "tclint.benchmark"


def declares_inputs(path: str, qualname: str) -> bool:
    """Whether a probe-inputs file of ``path`` defines ``inputs_<qualname>`` (``inputs_<Class>``
    for a method or a module's forward): what ``tclint bench`` takes as the buckets."""
    from tclint.runtime_probe.inputs import candidate_files, defined_names

    wanted = {f"inputs_{qualname.replace('.', '__')}"}
    if qualname.endswith(".forward"):
        wanted.add(f"inputs_{qualname.split('.')[0]}")
    return any(wanted & defined_names(f) for f in candidate_files(path))
