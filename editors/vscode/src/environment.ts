// Is tclint (with its server extra) installed in the chosen interpreter?  One short Python run
// answers with a JSON line; a missing install gets a prompt and a one-click `pip install` from a
// source that works without a release on PyPI (the workspace's checkout, or the bundled wheel).

export const DISTRIBUTION = "tclint-torch";
export const INSTALL_REQUIREMENT = `${DISTRIBUTION}[server]`;

/** Printed as one JSON object: {"python": "3.11.7", "tclint": "0.1.0" | null, "server": bool, "error": str | null}. */
export const CHECK_SCRIPT = [
  // `python -c` puts the current folder (the workspace) first on sys.path: drop it before any
  // import, so a workspace `json.py` or `tclint/` folder is never imported (no surprise execution)
  "import sys",
  "if sys.path and sys.path[0] in ('', __import__('os').getcwd()): del sys.path[0]",
  "import json",
  "out = {'python': '%d.%d.%d' % sys.version_info[:3], 'executable': sys.executable, 'tclint': None, 'server': False, 'error': None}",
  "try:",
  "    from tclint.rules.version import __version__",
  "    out['tclint'] = __version__",
  "    import importlib.util",
  "    out['server'] = importlib.util.find_spec('pygls') is not None and importlib.util.find_spec('tclint.server') is not None",
  "except Exception as exc:",
  "    out['error'] = '%s: %s' % (type(exc).__name__, exc)",
  "print(json.dumps(out))",
].join("\n");

export type EnvironmentState =
  | { kind: "ok"; python: string; executable: string; version: string }
  | { kind: "missing"; python?: string; executable?: string; detail: string }
  | { kind: "no-server"; python: string; executable: string; version: string; detail: string }
  | { kind: "no-python"; detail: string };

export function checkArgs(interpreter: readonly string[]): { command: string; args: string[] } {
  return { command: interpreter[0], args: [...interpreter.slice(1), "-c", CHECK_SCRIPT] };
}

/** Interpret the check's outcome: exit code / spawn error, stdout, stderr. */
export function parseCheck(result: { spawnError?: string; code: number | null; stdout: string; stderr: string }): EnvironmentState {
  if (result.spawnError) {
    return { kind: "no-python", detail: result.spawnError };
  }
  const line = result.stdout.trim().split(/\r?\n/).pop() ?? "";
  let parsed: { python?: string; executable?: string; tclint?: string | null; server?: boolean; error?: string | null };
  try {
    parsed = JSON.parse(line);
  } catch {
    const detail = (result.stderr || result.stdout).trim() || `exit code ${result.code}`;
    return { kind: "no-python", detail: `not a working Python interpreter: ${detail}` };
  }
  const python = parsed.python ?? "?";
  const executable = parsed.executable ?? "";
  if (!parsed.tclint) {
    return { kind: "missing", python, executable, detail: parsed.error ?? "tclint is not installed" };
  }
  if (!parsed.server) {
    return {
      kind: "no-server",
      python,
      executable,
      version: parsed.tclint,
      detail: "tclint is installed without its server extra (pygls)",
    };
  }
  return { kind: "ok", python, executable, version: parsed.tclint };
}

/** Where the Install prompt takes tclint from, best first: no release is on PyPI yet. */
export type InstallSource =
  | { kind: "checkout"; path: string } // a workspace folder that is a tclint checkout: installed editable
  | { kind: "wheel"; path: string } // the wheel `make dist` bundles into the extension (wheel/)
  | { kind: "index"; path?: undefined }; // the distribution's name, from the package index

/** The folder of the extension that holds the bundled wheel. */
export const WHEEL_DIR = "wheel";

/** Whether a pyproject.toml is tclint's own (its [project] name is the distribution's). */
export function isTclintCheckout(pyprojectText: string): boolean {
  return new RegExp(`^\\s*name\\s*=\\s*["']${DISTRIBUTION}["']\\s*$`, "m").test(pyprojectText);
}

/** The newest tclint wheel among file names (the bundled folder normally holds exactly one). */
export function newestWheel(names: readonly string[]): string | undefined {
  const wheels = names.filter((n) => /^tclint_torch-[^-]+-.+\.whl$/.test(n));
  return wheels.sort((a, b) => a.localeCompare(b, "en", { numeric: true })).pop();
}

/** The workspace's checkout first (what a tclint developer edits), then the bundled wheel. */
export function chooseInstallSource(checkouts: readonly string[], bundledWheel: string | undefined): InstallSource {
  if (checkouts.length > 0) {
    return { kind: "checkout", path: checkouts[0] };
  }
  return bundledWheel ? { kind: "wheel", path: bundledWheel } : { kind: "index" };
}

/** What pip installs: the source with the server extra (pip accepts extras on paths and wheels). */
export function installRequirement(source: InstallSource): string[] {
  switch (source.kind) {
    case "checkout":
      return ["-e", `${source.path}[server]`];
    case "wheel":
      return [`${source.path}[server]`];
    case "index":
      return [INSTALL_REQUIREMENT];
  }
}

export function installArgs(interpreter: readonly string[], source: InstallSource = { kind: "index" }): { command: string; args: string[] } {
  return { command: interpreter[0], args: [...interpreter.slice(1), "-m", "pip", "install", "--upgrade", ...installRequirement(source)] };
}

/** The shell line shown to the user (and run in a terminal) for the install. */
export function installCommandLine(interpreter: readonly string[], source: InstallSource = { kind: "index" }): string {
  const { command, args } = installArgs(interpreter, source);
  return [command, ...args].map(shellQuote).join(" ");
}

/** The install source in words, for the prompt. */
export function describeSource(source: InstallSource): string {
  switch (source.kind) {
    case "checkout":
      return `${INSTALL_REQUIREMENT} from the workspace's checkout (${source.path})`;
    case "wheel":
      return `${INSTALL_REQUIREMENT} from the wheel bundled with the extension`;
    case "index":
      return INSTALL_REQUIREMENT;
  }
}

export function shellQuote(word: string): string {
  return /^[\w@%+=:,./\[\]-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

export function missingMessage(state: EnvironmentState, interpreterLabel: string, source: InstallSource = { kind: "index" }): string {
  switch (state.kind) {
    case "missing":
      return `tclint is not installed in ${interpreterLabel}. Install ${describeSource(source)} there to lint torch.compile hazards?`;
    case "no-server":
      return `tclint ${state.version} in ${interpreterLabel} lacks its language-server extra. Install ${describeSource(source)}?`;
    case "no-python":
      return `tclint could not run ${interpreterLabel}: ${state.detail}. Select a Python interpreter or set tclint.interpreter.`;
    case "ok":
      return "";
  }
}
