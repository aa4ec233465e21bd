// One webview panel, reused, that shows the latest `tclint bench` HTML report.

import * as vscode from "vscode";

import { reportForWebview } from "./bench";

export class BenchPanel {
  private static current: BenchPanel | undefined;
  lastHtml: string | undefined;

  private constructor(private readonly panel: vscode.WebviewPanel) {
    panel.onDidDispose(() => {
      if (BenchPanel.current === this) {
        BenchPanel.current = undefined;
      }
    });
  }

  static show(html: string, title: string): BenchPanel {
    let current = BenchPanel.current;
    if (!current) {
      const panel = vscode.window.createWebviewPanel("tclint.bench", "tclint bench", { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: false,
        localResourceRoots: [],
      });
      current = BenchPanel.current = new BenchPanel(panel);
    }
    current.lastHtml = html;
    current.panel.title = `tclint bench: ${title}`;
    current.panel.webview.html = reportForWebview(html, current.panel.webview.cspSource);
    current.panel.reveal(undefined, true);
    return current;
  }
}
