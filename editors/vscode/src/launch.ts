// How the server process is started: `<python> -c SERVER_BOOTSTRAP` from the project's
// environment, or `<tclint.path> server` when the user points at a tclint executable.  Never
// `<python> -m tclint.server`: `-m` puts the working folder (the workspace) first on sys.path, so a
// workspace holding a `tclint/` package would run its own code in place of the server.

/** `python -c` this: drop the working folder `-c` put first on sys.path, then start the server. */
export const SERVER_BOOTSTRAP =
  "import sys; sys.path[:] = [p for p in sys.path if p]; from tclint.server.__main__ import main; sys.exit(main())";

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
  return { command: interpreter[0], args: [...interpreter.slice(1), "-c", SERVER_BOOTSTRAP], options: { cwd, env } };
}

/** Python files (saved or not) and the Python cells of Jupyter notebooks.  The notebooks themselves
 * are synced as notebook documents (the server's `notebookDocumentSync`); listing their cells here
 * gives the cells the hovers and quick fixes ("Disable TCxxx for this line") of a file. */
export const DOCUMENT_SELECTOR = [
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
  { notebook: "jupyter-notebook", language: "python" },
];
