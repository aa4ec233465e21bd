// The probe commands: when they may run (trusted workspace, a Python file on disk), and the
// arguments the server's `tclint.probe` / `tclint.probeFile` commands take.

export const SERVER_PROBE = "tclint.probe";
export const SERVER_PROBE_FILE = "tclint.probeFile";

export interface LspPosition {
  line: number;
  character: number;
}

export interface DocumentInfo {
  uri: string;
  languageId: string;
  scheme: string;
  isDirty: boolean;
}

/** Why a probe cannot run now, or undefined when it can. */
export function probeBlocker(trusted: boolean, doc: DocumentInfo | undefined, serverRunning: boolean): string | undefined {
  if (!trusted) {
    return "The tclint probe runs this workspace's code: trust the workspace first (it is in Restricted Mode).";
  }
  if (!doc) {
    return "Open a Python file to probe.";
  }
  if (doc.languageId !== "python") {
    return "The tclint probe works on Python files.";
  }
  if (doc.scheme !== "file") {
    return "Save the file first: the probe runs it from disk.";
  }
  if (!serverRunning) {
    return "The tclint server is not running (see tclint: Show logs).";
  }
  return undefined;
}

export function probeArguments(uri: string, position: LspPosition): [{ uri: string; position: LspPosition }] {
  return [{ uri, position: { line: position.line, character: position.character } }];
}

export function probeFileArguments(uri: string): [{ uri: string }] {
  return [{ uri }];
}
