// tclint for VS Code: entry point.  Wires the controller (server lifecycle), the commands and the
// events; the logic lives in small modules (settings, interpreter, environment, launch, probe*, status).

import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";

import { BENCH_COMMAND, benchInvocation, benchOutcome, type Invocation, parseBenchArgument, targetAtLine } from "./bench";
import { BenchPanel } from "./benchPanel";
import { Controller, pythonEnvironmentEvents, pythonExtensionApi, settingsFor, workspaceRoot } from "./client";
import { exportMarkers, MARKERS_ENV } from "./markers";
import { probeArguments, probeBlocker, probeFileArguments, SERVER_PROBE, SERVER_PROBE_FILE } from "./probe";
import { normalizeProbeResult, type ProbeView } from "./probeModel";
import { ProbePanel } from "./probePanel";
import { needsRestart } from "./settings";

let controller: Controller | undefined;

export interface TclintApi {
  controller: Controller;
  /** The last probe result shown (for tests and other extensions). */
  lastProbe(): ProbeView | undefined;
  /** The last benchmark run (for tests and other extensions). */
  lastBench(): BenchRun | undefined;
}

/** One `tclint bench` run from the editor: what ran, its exit status, the report it wrote. */
export interface BenchRun {
  target: string;
  command: string[];
  code: number | null;
  html: string | undefined;
}

let lastProbe: ProbeView | undefined;
let lastBench: BenchRun | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<TclintApi> {
  const log = vscode.window.createOutputChannel("tclint", { log: true });
  const ctrl = (controller = new Controller(log, context.extensionUri?.fsPath));
  context.subscriptions.push(log, ctrl);
  const markersFile = process.env[MARKERS_ENV];
  if (markersFile) {
    context.subscriptions.push(exportMarkers(markersFile)); // for the end-to-end test (src/markers.ts)
  }

  const register = (id: string, fn: (...args: any[]) => unknown) => context.subscriptions.push(vscode.commands.registerCommand(id, fn));
  register("tclint.restartServer", () => ctrl.restart("restart command"));
  register("tclint.showLogs", () => log.show());
  register("tclint.installInEnvironment", () => ctrl.install());
  register("tclint.probeFunctionAtCursor", () => probe(ctrl, "function"));
  register("tclint.probeCurrentFile", () => probe(ctrl, "file"));
  register(BENCH_COMMAND, (arg?: unknown) => benchmark(ctrl, arg));
  register("tclint.openLocation", async (uri: string, line: number) => {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const pos = new vscode.Position(Math.max(0, line - 1), 0);
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(pos, pos), viewColumn: vscode.ViewColumn.One });
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (needsRestart((section) => e.affectsConfiguration(section))) {
        void ctrl.restart("settings changed");
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void ctrl.restart("workspace trusted")),
  );
  const api = await pythonExtensionApi();
  const sub = pythonEnvironmentEvents(api, () => {
    if (settingsFor(workspaceRoot()).interpreter.length === 0) {
      void ctrl.restart("the Python extension's interpreter changed");
    }
  });
  if (sub) {
    context.subscriptions.push(sub);
  }

  await ctrl.restart("activation");
  return { controller: ctrl, lastProbe: () => lastProbe, lastBench: () => lastBench };
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}

async function probe(ctrl: Controller, kind: "function" | "file"): Promise<ProbeView | undefined> {
  const editor = vscode.window.activeTextEditor;
  const doc = editor?.document;
  const blocker = probeBlocker(
    vscode.workspace.isTrusted,
    doc && { uri: doc.uri.toString(), languageId: doc.languageId, scheme: doc.uri.scheme, isDirty: doc.isDirty },
    ctrl.running,
  );
  if (blocker || !editor || !doc || !ctrl.client) {
    void vscode.window.showWarningMessage(`tclint: ${blocker ?? "nothing to probe"}`);
    return undefined;
  }
  if (doc.isDirty) {
    await doc.save();
  }
  const uri = doc.uri.toString();
  const pos = editor.selection.active;
  const command = kind === "function" ? SERVER_PROBE : SERVER_PROBE_FILE;
  const args = kind === "function" ? probeArguments(uri, { line: pos.line, character: pos.character }) : probeFileArguments(uri);
  const name = vscode.workspace.asRelativePath(doc.uri);
  const what = kind === "function" ? `the function at ${name}:${pos.line + 1}` : name;
  ctrl.setStatus({ kind: "probing", what });
  const client = ctrl.client;
  try {
    const raw = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `tclint: probing ${what}…`, cancellable: true },
      (_progress, token) => client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args }, token),
    );
    const view = normalizeProbeResult(raw, what);
    lastProbe = view;
    ProbePanel.show(view);
    ctrl.log.info(`probe of ${what}: ${view.compiles.length} compilation(s), ${view.breaks.length} graph break(s)${view.error ? `, error: ${view.error}` : ""}`);
    return view;
  } catch (err) {
    ctrl.log.error(`probe of ${what} failed: ${String(err)}`);
    void vscode.window.showErrorMessage(`tclint: the probe of ${what} failed: ${String((err as Error)?.message ?? err)}`);
    return undefined;
  } finally {
    const env = ctrl.environment;
    ctrl.setStatus(
      ctrl.running
        ? { kind: "running", interpreter: ctrl.interpreter ? ctrl.interpreter.command.join(" ") : "", version: env?.kind === "ok" ? env.version : "", trusted: vscode.workspace.isTrusted }
        : { kind: "stopped" },
    );
  }
}

/** `tclint bench` on the entry point the lens names (or the one at the cursor, from the server's
 * Benchmark lenses); the HTML report in a webview panel. */
async function benchmark(ctrl: Controller, arg?: unknown): Promise<BenchRun | undefined> {
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage("tclint: the benchmark runs this workspace's code: trust the workspace first (it is in Restricted Mode).");
    return undefined;
  }
  let target = parseBenchArgument(arg);
  const editor = vscode.window.activeTextEditor;
  if (!target) {
    if (!editor || editor.document.languageId !== "python") {
      void vscode.window.showWarningMessage("tclint: open the Python file of a compiled entry point to benchmark.");
      return undefined;
    }
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>("vscode.executeCodeLensProvider", editor.document.uri);
    target = targetAtLine(lenses, editor.selection.active.line);
    if (!target) {
      void vscode.window.showWarningMessage(
        "tclint: no compiled entry point with declared inputs at the cursor (the benchmark's buckets are the inputs_<name> of its probe-inputs file; see tclint probe --init-inputs).",
      );
      return undefined;
    }
  }
  const uri = vscode.Uri.parse(target.uri);
  if (uri.scheme !== "file") {
    void vscode.window.showWarningMessage("tclint: save the file first: the benchmark runs it from disk.");
    return undefined;
  }
  const open = (vscode.workspace.textDocuments ?? []).find((d) => d.uri.toString() === target.uri);
  if (open?.isDirty) {
    await open.save();
  }
  const folder = vscode.workspace.getWorkspaceFolder(uri) ?? workspaceRoot();
  const settings = settingsFor(folder);
  const cwd = folder?.uri.fsPath ?? path.dirname(uri.fsPath);
  const rel = path.relative(cwd, uri.fsPath);
  const file = rel.startsWith("..") || path.isAbsolute(rel) ? uri.fsPath : rel;
  const interpreter = ctrl.interpreter?.command ?? (settings.interpreter.length > 0 ? settings.interpreter : ["python3"]);
  const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-bench-"));
  const out = path.join(outDir, "report.html");
  const inv = benchInvocation(interpreter, settings.path, file, target.target, out);
  const what = `${file}::${target.target}`;
  ctrl.log.info(`benchmark: ${[inv.command, ...inv.args].join(" ")}`);
  const result = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `tclint: benchmarking ${what} (fresh processes: cold start, warm-up, steady state)…`, cancellable: true },
    (_progress, token) => runCancellable(inv, cwd, token),
  );
  const html = fs.existsSync(out) ? fs.readFileSync(out, "utf8") : undefined;
  fs.rmSync(outDir, { recursive: true, force: true });
  ctrl.log.info(`benchmark of ${what}: exit ${result.code}${result.stderr ? `\n${result.stderr.trim()}` : ""}`);
  if (html !== undefined) {
    BenchPanel.show(html, what);
  }
  const outcome = benchOutcome(result.code, html !== undefined, result.stderr);
  if (outcome?.level === "error") {
    void vscode.window.showErrorMessage(outcome.message);
  } else if (outcome) {
    void vscode.window.showWarningMessage(outcome.message);
  }
  lastBench = { target: what, command: [inv.command, ...inv.args], code: result.code, html };
  return lastBench;
}

/** Run ``inv`` to its end; cancelling sends SIGINT (tclint bench then stops its worker processes). */
function runCancellable(inv: Invocation, cwd: string, token: vscode.CancellationToken): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    let stderr = "";
    const child = spawn(inv.command, inv.args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr = (stderr + chunk.toString("utf8")).slice(-20_000);
    });
    token.onCancellationRequested(() => child.kill("SIGINT"));
    child.on("error", (err) => resolve({ code: null, stderr: `${stderr}${String(err)}` }));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}
