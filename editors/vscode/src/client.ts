// The language client's lifecycle: pick the interpreter, check tclint is there (prompt to install
// it when not), start the server (`<python> -c` with launch.ts's bootstrap), restart on setting
// or interpreter changes.

import * as vscode from "vscode";
import { LanguageClient, RevealOutputChannelOn, State, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { execFile } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import {
  checkArgs,
  chooseInstallSource,
  installArgs,
  installCommandLine,
  isTclintCheckout,
  missingMessage,
  newestWheel,
  parseCheck,
  WHEEL_DIR,
  type EnvironmentState,
  type InstallSource,
} from "./environment";
import { chooseInterpreter, describeInterpreter, pythonExtensionInterpreter, type InterpreterChoice, type PythonExtensionApi } from "./interpreter";
import { DOCUMENT_SELECTOR, serverExecutable } from "./launch";
import { readSettings, type TclintSettings } from "./settings";
import { initializationOptions, serverSettings } from "./serverSettings";
import { applySeverityMap } from "./severity";
import { statusView, type ClientStatus } from "./status";

export const PYTHON_EXTENSION_ID = "ms-python.python";

export function workspaceRoot(): vscode.WorkspaceFolder | undefined {
  const active = vscode.window.activeTextEditor?.document.uri;
  return (active && vscode.workspace.getWorkspaceFolder(active)) || vscode.workspace.workspaceFolders?.[0];
}

export function settingsFor(folder: vscode.WorkspaceFolder | undefined): TclintSettings {
  const config = vscode.workspace.getConfiguration("tclint", folder?.uri);
  return readSettings(<T>(key: string, fallback: T) => config.get<T>(key, fallback) as T, {
    workspaceFolder: folder?.uri.fsPath,
    userHome: os.homedir(),
    env: process.env,
  });
}

export async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined;
  }
}

function run(command: string, args: string[], cwd: string | undefined, timeoutMs: number): Promise<{ spawnError?: string; code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      const err = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      if (err && typeof err.code === "string") {
        resolve({ spawnError: `${err.code}: ${err.message}`, code: null, stdout: String(stdout), stderr: String(stderr) });
        return;
      }
      resolve({ code: err ? ((err.code as number | undefined) ?? 1) : 0, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

export class Controller implements vscode.Disposable {
  client: LanguageClient | undefined;
  interpreter: InterpreterChoice | undefined;
  environment: EnvironmentState | undefined;
  private readonly statusItem: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private starting: Promise<void> | undefined;

  /** ``extensionPath``: the installed extension's folder (it holds the bundled wheel). */
  constructor(readonly log: vscode.LogOutputChannel, readonly extensionPath?: string) {
    this.statusItem = vscode.window.createStatusBarItem("tclint.status", vscode.StatusBarAlignment.Right, 100);
    this.statusItem.name = "tclint";
    this.setStatus({ kind: "stopped" });
    this.statusItem.show();
  }

  setStatus(status: ClientStatus): void {
    const view = statusView(status);
    this.statusItem.text = view.text;
    this.statusItem.tooltip = view.tooltip;
    this.statusItem.command = view.command;
    this.statusItem.backgroundColor = view.severity ? new vscode.ThemeColor(`statusBarItem.${view.severity}Background`) : undefined;
  }

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Start (or restart) the server; concurrent calls share one start. */
  restart(reason: string): Promise<void> {
    const previous = this.starting ?? Promise.resolve();
    this.starting = previous.then(() => this.doRestart(reason)).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async doRestart(reason: string): Promise<void> {
    this.log.info(`(re)starting the server: ${reason}`);
    await this.stop();
    const folder = workspaceRoot();
    const settings = settingsFor(folder);
    if (!settings.enable) {
      this.setStatus({ kind: "disabled" });
      this.log.info("tclint.enable is false: not starting");
      return;
    }
    const api = await pythonExtensionApi();
    const fromPython = await pythonExtensionInterpreter(api, folder?.uri);
    this.interpreter = chooseInterpreter(settings.interpreter, fromPython);
    const label = describeInterpreter(this.interpreter);
    this.setStatus({ kind: "starting", interpreter: label });
    this.log.info(`interpreter: ${label}`);

    if (settings.path.length === 0) {
      const check = checkArgs(this.interpreter.command);
      this.environment = parseCheck(await run(check.command, check.args, folder?.uri.fsPath, 30_000));
      if (this.environment.kind !== "ok") {
        this.log.warn(`tclint is not usable in ${label}: ${this.environment.detail}`);
        this.setStatus({ kind: "missing", interpreter: label, detail: this.environment.detail });
        void this.promptInstall(this.environment, label);
        return;
      }
      this.log.info(`tclint ${this.environment.version} on Python ${this.environment.python} (${this.environment.executable})`);
    }

    const exe = serverExecutable(this.interpreter.command, settings.path, folder?.uri.fsPath, process.env);
    this.log.info(`server: ${[exe.command, ...exe.args].join(" ")}`);
    const serverOptions: ServerOptions = { run: exe, debug: exe };
    const trusted = vscode.workspace.isTrusted;
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      traceOutputChannel: this.log,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: initializationOptions(settings, trusted),
      synchronize: { configurationSection: "tclint" },
      middleware: {
        // tclint.severity, applied here so that it holds whatever the server does with it
        handleDiagnostics: (uri, diagnostics, next) => {
          next(uri, applySeverityMap(diagnostics, settingsFor(vscode.workspace.getWorkspaceFolder(uri) ?? folder).severity));
        },
        provideDiagnostics: async (document, previousResultId, token, next) => {
          const report = await next(document, previousResultId, token);
          if (report && report.kind === "full") {
            const uri = document instanceof vscode.Uri ? document : document.uri;
            report.items = applySeverityMap(report.items, settingsFor(vscode.workspace.getWorkspaceFolder(uri) ?? folder).severity);
          }
          return report;
        },
        workspace: {
          // pull model: the server asks for `tclint` per scope; answer with the shaped settings
          configuration: async (params, token, next) => {
            const raw = await next(params, token);
            if (!Array.isArray(raw)) {
              return raw;
            }
            return params.items.map((item, i) => {
              if (item.section !== "tclint") {
                return raw[i];
              }
              const scope = item.scopeUri ? vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(item.scopeUri)) : folder;
              return serverSettings(settingsFor(scope), vscode.workspace.isTrusted);
            });
          },
        },
      },
    };
    const client = new LanguageClient("tclint", "tclint", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped && this.client === client) {
        this.setStatus({ kind: "stopped" });
      }
    });
    try {
      await client.start();
    } catch (err) {
      this.log.error(`the server failed to start: ${String(err)}`);
      this.setStatus({ kind: "error", detail: `the server failed to start (${String(err)})` });
      if (settings.showNotifications !== "off") {
        void vscode.window.showErrorMessage(`tclint: the server failed to start. ${String(err)}`, "Show logs").then((choice) => {
          if (choice) {
            this.log.show();
          }
        });
      }
      return;
    }
    const version = this.environment?.kind === "ok" ? this.environment.version : client.initializeResult?.serverInfo?.version ?? "";
    this.setStatus({ kind: "running", interpreter: label, version, trusted });
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (err) {
        this.log.warn(`stopping the server: ${String(err)}`);
      }
      await client.dispose().catch(() => undefined);
    }
  }

  /** What Install installs: a workspace folder that is tclint's checkout, else the bundled wheel. */
  installSource(): InstallSource {
    const checkouts = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath).filter((folder) => {
      try {
        return isTclintCheckout(fs.readFileSync(path.join(folder, "pyproject.toml"), "utf8"));
      } catch {
        return false;
      }
    });
    let wheel: string | undefined;
    if (this.extensionPath) {
      const dir = path.join(this.extensionPath, WHEEL_DIR);
      try {
        const name = newestWheel(fs.readdirSync(dir));
        wheel = name && path.join(dir, name);
      } catch {
        wheel = undefined; // no bundled wheel: a .vsix built without `make dist`
      }
    }
    return chooseInstallSource(checkouts, wheel);
  }

  async promptInstall(state: EnvironmentState, label: string): Promise<void> {
    const message = missingMessage(state, label, this.installSource());
    const actions = state.kind === "no-python" ? ["Select Interpreter", "Open Settings"] : ["Install", "Select Interpreter", "Open Settings"];
    if (!vscode.workspace.isTrusted && state.kind !== "no-python") {
      actions.shift(); // never pip-install into a restricted workspace's environment
    }
    const choice = await vscode.window.showWarningMessage(message, ...actions);
    if (choice === "Install") {
      await vscode.commands.executeCommand("tclint.installInEnvironment");
    } else if (choice === "Select Interpreter") {
      await vscode.commands.executeCommand("python.setInterpreter");
    } else if (choice === "Open Settings") {
      await vscode.commands.executeCommand("workbench.action.openSettings", "tclint.interpreter");
    }
  }

  /** `pip install` tclint with its server extra (from ``installSource()``) into the chosen interpreter, then restart. */
  async install(): Promise<boolean> {
    if (!vscode.workspace.isTrusted) {
      void vscode.window.showWarningMessage("tclint: trust this workspace before installing packages into its environment.");
      return false;
    }
    const folder = workspaceRoot();
    const interpreter = this.interpreter ?? chooseInterpreter(settingsFor(folder).interpreter, await pythonExtensionInterpreter(await pythonExtensionApi(), folder?.uri));
    const source = this.installSource();
    const { command, args } = installArgs(interpreter.command, source);
    const line = installCommandLine(interpreter.command, source);
    this.log.info(`installing: ${line}`);
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `tclint: ${line}` },
      () => run(command, args, folder?.uri.fsPath, 15 * 60_000),
    );
    this.log.info(result.stdout);
    if (result.spawnError || result.code !== 0) {
      this.log.error(result.stderr || result.spawnError || `exit code ${result.code}`);
      const choice = await vscode.window.showErrorMessage(
        `tclint: the install failed (${result.spawnError ?? `exit code ${result.code}`}). Run \`${line}\` yourself, or see the logs.`,
        "Show logs",
      );
      if (choice) {
        this.log.show();
      }
      return false;
    }
    void vscode.window.showInformationMessage("tclint: installed; starting the server.");
    await this.restart("installed tclint");
    return true;
  }

  dispose(): void {
    void this.stop();
    this.statusItem.dispose();
    this.disposables.forEach((d) => d.dispose());
  }
}

export function pythonEnvironmentEvents(api: PythonExtensionApi | undefined, onChange: () => void): vscode.Disposable | undefined {
  return api?.environments?.onDidChangeActiveEnvironmentPath?.(() => onChange()) as vscode.Disposable | undefined;
}
