// One webview panel, reused, that shows the latest probe result.

import * as vscode from "vscode";
import { randomBytes } from "node:crypto";

import { renderProbeHtml } from "./probeHtml";
import type { ProbeView } from "./probeModel";

export class ProbePanel {
  private static current: ProbePanel | undefined;
  lastView: ProbeView | undefined;

  private constructor(private readonly panel: vscode.WebviewPanel) {
    panel.onDidDispose(() => {
      if (ProbePanel.current === this) {
        ProbePanel.current = undefined;
      }
    });
  }

  static show(view: ProbeView): ProbePanel {
    let current = ProbePanel.current;
    if (!current) {
      const panel = vscode.window.createWebviewPanel("tclint.probe", "tclint probe", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: false,
        enableCommandUris: ["tclint.openLocation"],
        localResourceRoots: [],
      });
      current = ProbePanel.current = new ProbePanel(panel);
    }
    current.lastView = view;
    current.panel.title = `tclint probe: ${view.title}`;
    current.panel.webview.html = renderProbeHtml(view, { cspSource: current.panel.webview.cspSource, nonce: randomBytes(16).toString("hex") });
    current.panel.reveal(undefined, true);
    return current;
  }
}
