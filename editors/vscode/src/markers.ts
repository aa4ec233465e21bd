// The diagnostics VS Code holds (the Problems view's markers), written to a JSON file when the
// environment variable TCLINT_E2E_MARKERS names one.  The end-to-end test reads them there: the
// Problems view renders only the rows that fit on screen, so a test that looks for a row by its
// code misses findings below the fold, while `vscode.languages.getDiagnostics()` has them all.
// Each row carries the diagnostic's related locations (TC312's library sites), and the active
// editor (file and cursor, as a related location opened from the Problems view leaves it) is kept
// in active-editor.json next to the markers file.

import * as fs from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

export const MARKERS_ENV = "TCLINT_E2E_MARKERS";

/** A related location (1-based line and column), as the Problems view lists it under its marker. */
export interface RelatedRow {
  uri: string;
  line: number;
  column: number;
  message: string;
}

/** One marker as the test reads it: 1-based line and column, as the Problems view shows them. */
export interface MarkerRow {
  uri: string;
  scheme: string;
  code: string;
  message: string;
  source: string;
  severity: number;
  line: number;
  column: number;
  related: RelatedRow[];
}

/** The markers of every document, in a stable order (URI, then position). */
export function markerRows(all: ReadonlyArray<readonly [{ toString(): string; scheme: string }, readonly vscode.Diagnostic[]]>): MarkerRow[] {
  const rows: MarkerRow[] = [];
  for (const [uri, diagnostics] of all) {
    for (const d of diagnostics) {
      const code = typeof d.code === "object" && d.code !== null ? String(d.code.value) : String(d.code ?? "");
      rows.push({
        uri: uri.toString(),
        scheme: uri.scheme,
        code,
        message: d.message,
        source: d.source ?? "",
        severity: d.severity,
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        related: (d.relatedInformation ?? []).map((r) => ({
          uri: r.location.uri.toString(),
          line: r.location.range.start.line + 1,
          column: r.location.range.start.character + 1,
          message: r.message,
        })),
      });
    }
  }
  return rows.sort((a, b) => a.uri.localeCompare(b.uri) || a.line - b.line || a.column - b.column || a.code.localeCompare(b.code));
}

/** The active text editor's file, its selection (1-based; opening a location selects its range)
 * and the text of the selection's first line (null: no editor). */
export function activeEditorRow(
  editor: vscode.TextEditor | undefined,
): { uri: string; line: number; column: number; endLine: number; endColumn: number; text: string } | null {
  if (!editor) return null;
  const { start, end } = editor.selection;
  return {
    uri: editor.document.uri.toString(),
    line: start.line + 1,
    column: start.character + 1,
    endLine: end.line + 1,
    endColumn: end.character + 1,
    text: editor.document.lineAt(start.line).text,
  };
}

function writeJson(file: string, value: unknown): void {
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(value, null, 1)); // written whole, then renamed
  fs.renameSync(tmp, file);
}

/** Keep ``file`` up to date with every change of the diagnostics, and active-editor.json beside it
 * with every change of the active editor or its cursor. */
export function exportMarkers(file: string): vscode.Disposable {
  const editorFile = path.join(path.dirname(file), "active-editor.json");
  const write = () => writeJson(file, markerRows(vscode.languages.getDiagnostics()));
  const writeEditor = () => writeJson(editorFile, activeEditorRow(vscode.window.activeTextEditor));
  write();
  writeEditor();
  const subs = [
    vscode.languages.onDidChangeDiagnostics(() => write()),
    vscode.window.onDidChangeActiveTextEditor(() => writeEditor()),
    vscode.window.onDidChangeTextEditorSelection(() => writeEditor()),
  ];
  return { dispose: () => subs.forEach((s) => s.dispose()) };
}
