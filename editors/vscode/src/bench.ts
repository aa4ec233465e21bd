// The "Benchmark" command: which entry point it measures (the server's "Benchmark" code lens, or
// the one at the cursor), the `tclint bench` command line it runs, and how its HTML report is shown.
// The bench runs the workspace's code, so like the probe it needs a trusted workspace.

export const BENCH_COMMAND = "tclint.benchmark";

/** `python -c` this: drop the working folder `-c` put first on sys.path, then run the tclint CLI
 * (as the server's bootstrap does: a workspace `tclint/` package must not shadow tclint). */
export const CLI_BOOTSTRAP =
  "import sys; sys.path[:] = [p for p in sys.path if p]; from tclint.rules.cli import main; sys.exit(main())";

/** What the server's Benchmark lens passes: the document and the target's qualified name. */
export interface BenchTarget {
  uri: string;
  target: string;
}

export function parseBenchArgument(arg: unknown): BenchTarget | undefined {
  if (!arg || typeof arg !== "object") {
    return undefined;
  }
  const { uri, target } = arg as Record<string, unknown>;
  if (typeof uri !== "string" || !uri || typeof target !== "string" || !/^[A-Za-z_][\w.]*$/.test(target)) {
    return undefined;
  }
  return { uri, target };
}

interface LensLike {
  range: { start: { line: number } };
  command?: { command: string; arguments?: unknown[] };
}

/** The Benchmark lens of the entry point holding ``line`` (0-based): the nearest one at or above it. */
export function targetAtLine(lenses: readonly LensLike[] | undefined, line: number): BenchTarget | undefined {
  let best: { line: number; target: BenchTarget } | undefined;
  for (const lens of lenses ?? []) {
    if (lens.command?.command !== BENCH_COMMAND || lens.range.start.line > line) {
      continue;
    }
    const target = parseBenchArgument(lens.command.arguments?.[0]);
    if (target && (!best || lens.range.start.line > best.line)) {
      best = { line: lens.range.start.line, target };
    }
  }
  return best?.target;
}

export interface Invocation {
  command: string;
  args: string[];
}

/** `tclint bench --output-format html -o OUT FILE::TARGET`, run as `<tclint.path> bench ...` or
 * `<interpreter> -c CLI_BOOTSTRAP bench ...`.  ``file`` is relative to the working folder when it
 * is below it (the report names the target as the user would type it). */
export function benchInvocation(
  interpreter: readonly string[],
  tclintPath: readonly string[],
  file: string,
  target: string,
  htmlOut: string,
): Invocation {
  const bench = ["bench", "--output-format", "html", "-o", htmlOut, `${file}::${target}`];
  if (tclintPath.length > 0) {
    return { command: tclintPath[0], args: [...tclintPath.slice(1), ...bench] };
  }
  return { command: interpreter[0], args: [...interpreter.slice(1), "-c", CLI_BOOTSTRAP, ...bench] };
}

/** What to tell the user about a finished run (undefined: nothing beyond the report). */
export function benchOutcome(code: number | null, reportWritten: boolean, stderr: string): { level: "error" | "warning"; message: string } | undefined {
  const tail = stderr.trim().split("\n").filter((l) => l.startsWith("tclint bench")).slice(-3).join(" ") || stderr.trim().split("\n").slice(-3).join(" ");
  if (!reportWritten) {
    return { level: "error", message: `tclint bench failed (exit ${code}): ${tail || "no report was written"}` };
  }
  if (code === 1) {
    return { level: "warning", message: `tclint bench: ${tail || "a budget is broken or a mode could not be measured"} (see the report)` };
  }
  return undefined;
}

/** The report page with a Content-Security-Policy that allows its inline styles only: the report
 * has no script and fetches nothing, and the webview must not let it. */
export function reportForWebview(html: string, cspSource: string): string {
  const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline' ${cspSource}; img-src data: ${cspSource};">`;
  const m = /<head[^>]*>/i.exec(html);
  return m ? html.slice(0, m.index + m[0].length) + csp + html.slice(m.index + m[0].length) : csp + html;
}
