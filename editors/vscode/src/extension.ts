// tclint for VS Code: entry point.  Wires the controller (server lifecycle), the commands and the
// events; the logic lives in small modules (settings, interpreter, environment, launch, probe*, status).

import * as vscode from "vscode";
import { ExecuteCommandRequest } from "vscode-languageclient/node";

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
}

let lastProbe: ProbeView | undefined;

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
  return { controller: ctrl, lastProbe: () => lastProbe };
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
