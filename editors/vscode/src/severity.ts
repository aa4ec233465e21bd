// The `tclint.severity` map, applied by the client to every tclint diagnostic it receives (push
// or pull), so it works whatever the server does with the setting.  Keys: a rule code ("TC101"),
// a code prefix ("TC1"; the longest matching prefix wins), or tclint's own level ("error",
// "warning", "info", "hint") as the server reported it.  Values: VS Code's severity names.

import type { EditorSeverity } from "./settings";

/** VS Code's DiagnosticSeverity numbering (vscode.DiagnosticSeverity): Error 0 … Hint 3. */
export const SEVERITY_VALUE: Record<EditorSeverity, number> = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
const LEVEL_OF_VALUE = ["error", "warning", "info", "hint"];

export function codeOf(code: unknown): string | undefined {
  if (typeof code === "string" || typeof code === "number") {
    return String(code);
  }
  if (code && typeof code === "object" && "value" in code) {
    return String((code as { value: unknown }).value);
  }
  return undefined;
}

/** The severity to show for a diagnostic with `code` and current severity `current` (VS Code numbering). */
export function mapSeverity(code: string | undefined, current: number, map: Record<string, EditorSeverity>): number {
  const keys = Object.keys(map);
  if (keys.length === 0) {
    return current;
  }
  if (code) {
    if (map[code]) {
      return SEVERITY_VALUE[map[code]];
    }
    const prefix = keys.filter((k) => /^[A-Z]/.test(k) && code.startsWith(k)).sort((a, b) => b.length - a.length)[0];
    if (prefix) {
      return SEVERITY_VALUE[map[prefix]];
    }
  }
  const level = LEVEL_OF_VALUE[current];
  const byLevel = keys.find((k) => k.toLowerCase() === level || (level === "info" && k.toLowerCase() === "information"));
  return byLevel ? SEVERITY_VALUE[map[byLevel]] : current;
}

/** Apply the map to diagnostics in place-free fashion (only tclint's: source "tclint" or a TC code). */
export function applySeverityMap<D extends { code?: unknown; severity: number; source?: string }>(
  diagnostics: readonly D[],
  map: Record<string, EditorSeverity>,
): D[] {
  return diagnostics.map((d) => {
    const code = codeOf(d.code);
    if (d.source !== undefined && d.source !== "tclint" && !(code && /^TC\d/.test(code))) {
      return d;
    }
    const severity = mapSeverity(code, d.severity, map);
    if (severity === d.severity) {
      return d;
    }
    const copy = Object.assign(Object.create(Object.getPrototypeOf(d)), d) as D;
    copy.severity = severity;
    return copy;
  });
}
