// The status bar item: what the text, icon and tooltip say in each state of the client.

export type ClientStatus =
  | { kind: "starting"; interpreter: string }
  | { kind: "running"; interpreter: string; version: string; trusted: boolean }
  | { kind: "probing"; what: string }
  | { kind: "missing"; interpreter: string; detail: string }
  | { kind: "error"; detail: string }
  | { kind: "disabled" }
  | { kind: "stopped" };

export interface StatusView {
  text: string;
  tooltip: string;
  /** "error" | "warning" | undefined: the background colour theme key to use. */
  severity?: "error" | "warning";
  /** Command run on click. */
  command: string;
}

export function statusView(status: ClientStatus): StatusView {
  switch (status.kind) {
    case "starting":
      return { text: "$(sync~spin) tclint", tooltip: `tclint: starting with ${status.interpreter}`, command: "tclint.showLogs" };
    case "running": {
      const probe = status.trusted ? "" : "\nRestricted mode: the probe is disabled until you trust this workspace.";
      return {
        text: status.trusted ? "$(check) tclint" : "$(shield) tclint",
        tooltip: `tclint ${status.version}\n${status.interpreter}${probe}`,
        command: "tclint.showLogs",
      };
    }
    case "probing":
      return { text: "$(loading~spin) tclint probe", tooltip: `tclint: probing ${status.what}`, command: "tclint.showLogs" };
    case "missing":
      return {
        text: "$(warning) tclint",
        tooltip: `tclint is not available in ${status.interpreter}: ${status.detail}\nClick to install it.`,
        severity: "warning",
        command: "tclint.installInEnvironment",
      };
    case "error":
      return { text: "$(error) tclint", tooltip: `tclint: ${status.detail}`, severity: "error", command: "tclint.showLogs" };
    case "disabled":
      return { text: "$(circle-slash) tclint", tooltip: "tclint is disabled (tclint.enable)", command: "tclint.showLogs" };
    case "stopped":
      return { text: "$(debug-stop) tclint", tooltip: "tclint: server stopped", command: "tclint.restartServer" };
  }
}
