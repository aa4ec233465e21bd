// The diagnostics VS Code holds (the Problems view's markers), written to a JSON file when the
// environment variable TCLINT_E2E_MARKERS names one.  The end-to-end test reads them there: the
// Problems view renders only the rows that fit on screen, so a test that looks for a row by its
// code misses findings below the fold, while `vscode.languages.getDiagnostics()` has them all.

import * as fs from "node:fs";
import * as vscode from "vscode";

export const MARKERS_ENV = "TCLINT_E2E_MARKERS";

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
      });
    }
  }
  return rows.sort((a, b) => a.uri.localeCompare(b.uri) || a.line - b.line || a.column - b.column || a.code.localeCompare(b.code));
}

/** Keep ``file`` up to date with every change of the diagnostics (written whole, then renamed). */
export function exportMarkers(file: string): vscode.Disposable {
  const write = () => {
    const tmp = `${file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(markerRows(vscode.languages.getDiagnostics()), null, 1));
    fs.renameSync(tmp, file);
  };
  write();
  return vscode.languages.onDidChangeDiagnostics(() => write());
}
