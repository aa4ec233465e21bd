// Which Python runs the tclint server.  Order, as in Microsoft's Python-tools extension template:
// 1. the `tclint.interpreter` setting, when the user set one;
// 2. the interpreter selected in the Python extension (ms-python.python), when it is installed;
// 3. `python3` from PATH.
// The project's own environment is the natural home: libcst wheels are per Python version, and
// the probe needs the project's torch.

export type InterpreterSource = "setting" | "python-extension" | "default";

export interface InterpreterChoice {
  /** argv prefix: the interpreter and any arguments it needs before `-m`. */
  command: string[];
  source: InterpreterSource;
}

export const DEFAULT_PYTHON = "python3";

export function chooseInterpreter(setting: readonly string[], fromPythonExtension: string | undefined): InterpreterChoice {
  const explicit = setting.filter((part) => part.trim() !== "");
  if (explicit.length > 0) {
    return { command: explicit, source: "setting" };
  }
  if (fromPythonExtension) {
    return { command: [fromPythonExtension], source: "python-extension" };
  }
  return { command: [DEFAULT_PYTHON], source: "default" };
}

export function describeInterpreter(choice: InterpreterChoice): string {
  const where = {
    setting: "from the tclint.interpreter setting",
    "python-extension": "selected in the Python extension",
    default: "python3 from PATH (no interpreter selected)",
  }[choice.source];
  return `${choice.command.join(" ")} (${where})`;
}

// --- The Python extension's public API (the subset we use; @vscode/python-extension types it). ---

export interface Disposable {
  dispose(): unknown;
}

export interface EnvironmentPath {
  id: string;
  path: string;
}

export interface ResolvedEnvironment {
  executable: { uri?: { fsPath: string } | undefined };
  version?: { major?: number; minor?: number } | undefined;
}

export interface PythonExtensionApi {
  environments: {
    getActiveEnvironmentPath(resource?: unknown): EnvironmentPath;
    resolveEnvironment(env: EnvironmentPath | string): Promise<ResolvedEnvironment | undefined>;
    onDidChangeActiveEnvironmentPath(listener: (e: unknown) => unknown): Disposable;
  };
}

/** The executable the Python extension has selected for `resource`, or undefined. */
export async function pythonExtensionInterpreter(
  api: PythonExtensionApi | undefined,
  resource: unknown,
): Promise<string | undefined> {
  if (!api?.environments) {
    return undefined;
  }
  try {
    const active = api.environments.getActiveEnvironmentPath(resource);
    const resolved = await api.environments.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath || undefined;
  } catch {
    return undefined;
  }
}
