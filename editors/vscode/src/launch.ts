// How the server process is started: `<python> -m tclint.server` from the project's environment,
// or `<tclint.path> server` when the user points at a tclint executable.

export const SERVER_MODULE = "tclint.server";

export interface Executable {
  command: string;
  args: string[];
  options: { cwd?: string; env: Record<string, string | undefined> };
}

export function serverExecutable(
  interpreter: readonly string[],
  tclintPath: readonly string[],
  cwd: string | undefined,
  baseEnv: Record<string, string | undefined>,
): Executable {
  const env = { ...baseEnv, PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8" };
  if (tclintPath.length > 0) {
    return { command: tclintPath[0], args: [...tclintPath.slice(1), "server"], options: { cwd, env } };
  }
  return { command: interpreter[0], args: [...interpreter.slice(1), "-m", SERVER_MODULE], options: { cwd, env } };
}

/** Python files (saved or not) and, for servers that sync notebook documents, Jupyter notebooks. */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
];
