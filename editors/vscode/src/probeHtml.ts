// Probe results as HTML for a webview: per compilation its trigger and failed guard, per graph
// break its GB id (linked to PyTorch's page), hit count and location.  Pure: no `vscode` import.

import type { ProbeView } from "./probeModel";

export function escapeHtml(text: unknown): string {
  return String(text ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

function safeHref(url: string | undefined): string | undefined {
  return url && /^(https?:|file:|command:)/.test(url) ? url : undefined;
}

function link(text: string, url: string | undefined): string {
  const href = safeHref(url);
  return href ? `<a href="${escapeHtml(href)}">${escapeHtml(text)}</a>` : escapeHtml(text);
}

/** A `command:` link that opens `uri` at a 1-based line through tclint's own open command. */
export function openLocationHref(uri: string, line: number): string {
  const args = encodeURIComponent(JSON.stringify([uri, line]));
  return `command:tclint.openLocation?${args}`;
}

function locationCell(loc: ProbeView["breaks"][number]["location"]): string {
  if (!loc) {
    return "";
  }
  const label = `${loc.label ?? loc.uri.split("/").pop()}:${loc.line}`;
  return `<a href="${escapeHtml(openLocationHref(loc.uri, loc.line))}">${escapeHtml(label)}</a>`;
}

/** What "no graph break" means for this run: only a completed run that produced graphs and no
 * error compiled into whole graphs. */
export function noBreakText(view: ProbeView): string {
  if (view.completed === false) {
    return "No graph break was seen before the run stopped (see above): this is not a clean result.";
  }
  if (view.compiles.length === 0) {
    return "No graph break, and nothing was compiled: the probe saw no compiled code.";
  }
  if (view.graphs === 0 || view.compiles.every((c) => c.graphs === 0)) {
    return "No graph break, but no graph was produced either: nothing ran compiled.";
  }
  if ((view.errors ?? []).length > 0) {
    return "No graph break, but the run had errors (see Errors).";
  }
  return "No graph break: the code compiled into whole graphs.";
}

export function renderProbeHtml(view: ProbeView, opts: { cspSource: string; nonce: string }): string {
  const parts: string[] = [];
  parts.push(`<h1>tclint probe: ${escapeHtml(view.title)}</h1>`);
  if (view.torchVersion) {
    parts.push(`<p class="meta">torch ${escapeHtml(view.torchVersion)}${view.duration !== undefined ? ` · ${escapeHtml(view.duration.toFixed(1))} s` : ""}</p>`);
  }
  if (view.error) {
    parts.push(`<div class="error" role="alert"><strong>Probe failed:</strong> <pre>${escapeHtml(view.error)}</pre></div>`);
  }
  if (view.verdict && view.verdict !== view.error) {
    parts.push(`<p class="verdict"><strong>${escapeHtml(view.verdict)}</strong></p>`);
  }
  if (view.summary && view.summary !== view.error) {
    parts.push(`<p class="summary">${escapeHtml(view.summary)}</p>`);
  }
  const errors = view.errors ?? [];
  if (errors.length > 0) {
    // errors come first: a view that lists compiles and "no graph break" above them would read as a success
    parts.push(`<h2 class="error">Errors (${errors.length})</h2><ul class="error">${errors.map((e) => `<li>${escapeHtml(e)}</li>`).join("")}</ul>`);
  }

  parts.push(`<h2>Compilations (${view.compiles.length})</h2>`);
  if (view.compiles.length === 0) {
    parts.push(`<p class="empty">No compilation was recorded.</p>`);
  } else {
    parts.push(`<table class="compiles"><thead><tr><th>#</th><th>Frame</th><th>Trigger</th><th>Failed guard</th><th>Graphs</th></tr></thead><tbody>`);
    for (const c of view.compiles) {
      parts.push(
        `<tr><td>${escapeHtml(c.index)}</td><td>${escapeHtml(c.frame ?? "")}${c.location ? ` (${locationCell(c.location)})` : ""}</td>` +
          `<td>${escapeHtml(c.trigger ?? "first call")}${c.dropped ? `<br><strong>Dropped by Dynamo: runs eagerly on every call</strong> (${escapeHtml(c.dropped)})` : ""}</td>` +
          `<td>${c.failedGuard ? `${c.cause ? `${escapeHtml(c.cause)}<br>` : ""}<code>${escapeHtml(c.failedGuard)}</code>${c.guardLocation ? ` (${locationCell(c.guardLocation)})` : ""}` : "—"}</td>` +
          `<td>${escapeHtml(c.graphs ?? "")}</td></tr>`,
      );
    }
    parts.push(`</tbody></table>`);
  }

  parts.push(`<h2>Graph breaks (${view.breaks.length})</h2>`);
  if (view.breaks.length === 0) {
    parts.push(`<p class="empty">${escapeHtml(noBreakText(view))}</p>`);
  } else {
    parts.push(`<table class="breaks"><thead><tr><th>GB id</th><th>Reason</th><th>Hits</th><th>Where</th></tr></thead><tbody>`);
    for (const b of view.breaks) {
      parts.push(
        `<tr><td>${b.gbId ? link(b.gbId, b.url) : "—"}</td><td>${escapeHtml(b.reason)}</td>` +
          `<td class="num">${b.hits === undefined ? "not counted" : escapeHtml(b.hits)}</td><td>${locationCell(b.location)}</td></tr>`,
      );
    }
    parts.push(`</tbody></table>`);
  }
  if (view.notes.length > 0) {
    parts.push(`<h2>Notes</h2><ul>${view.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join("")}</ul>`);
  }

  const csp = [
    "default-src 'none'",
    `style-src ${opts.cspSource} 'nonce-${opts.nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>tclint probe</title>
<style nonce="${escapeHtml(opts.nonce)}">
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1em; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--vscode-panel-border); vertical-align: top; }
td.num { text-align: right; }
.meta, .empty { opacity: 0.8; }
.error { color: var(--vscode-errorForeground); }
code, pre { font-family: var(--vscode-editor-font-family); white-space: pre-wrap; }
</style></head>
<body>
${parts.join("\n")}
</body></html>
`;
}
