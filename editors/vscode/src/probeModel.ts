// The probe result the view shows, read from what the server's `tclint.probe` / `tclint.probeFile`
// commands return (the runtime probe's JSON report).  Tolerant: missing fields become empty.

export interface ViewLocation {
  uri: string;
  line: number; // 1-based
  label?: string;
}

export interface ProbeView {
  title: string;
  summary?: string;
  error?: string;
  torchVersion?: string;
  duration?: number;
  /** How the run ended when it did not complete, hard errors, "no graph produced"... (worst first). */
  verdict?: string;
  /** false when the run did not complete (raised, timed out, crashed, inputs rejected...). */
  completed?: boolean;
  /** FX graphs produced by all compiles (undefined when the report does not say). */
  graphs?: number;
  compiles: {
    index: number;
    frame?: string;
    location?: ViewLocation;
    trigger?: string;
    failedGuard?: string;
    /** The failed guard in the user's terms ("`x` changed dtype: float32 -> float64"). */
    cause?: string;
    guardLocation?: ViewLocation;
    graphs?: number;
    /** Dynamo dropped the whole frame: it runs eagerly on every call. */
    dropped?: string;
  }[];
  /** hits undefined: not counted (the break's frame ran eagerly), never shown as a number. */
  breaks: { gbId?: string; reason: string; hits?: number; location?: ViewLocation; url?: string }[];
  /** Hard errors and the run's own exception: shown before everything else. */
  errors?: string[];
  notes: string[];
}

type Obj = Record<string, unknown>;

function obj(value: unknown): Obj {
  return value && typeof value === "object" && !Array.isArray(value) ? (value as Obj) : {};
}

function first(o: Obj, keys: string[]): unknown {
  for (const key of keys) {
    if (o[key] !== undefined && o[key] !== null) {
      return o[key];
    }
  }
  return undefined;
}

function str(o: Obj, keys: string[]): string | undefined {
  const v = first(o, keys);
  return v === undefined ? undefined : typeof v === "string" ? v : JSON.stringify(v);
}

function num(o: Obj, keys: string[]): number | undefined {
  const v = first(o, keys);
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

function list(o: Obj, keys: string[]): unknown[] {
  const v = first(o, keys);
  return Array.isArray(v) ? v : [];
}

export function toUri(path: string): string {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(path)) {
    return path;
  }
  const normal = path.replace(/\\/g, "/");
  const absolute = normal.startsWith("/") ? normal : `/${normal}`;
  return `file://${absolute.split("/").map(encodeURIComponent).join("/")}`;
}

/** "/abs/dir/serve.py::score" -> "serve.py::score": absolute folders add nothing in a view title. */
export function shortenPaths(text: string): string {
  return text.replace(/(?:[A-Za-z]:)?[\\/](?:[^\\/:\s]+[\\/])+(?=[^\\/:\s]+)/g, "");
}

export function gbUrl(gbId: string): string {
  return `https://meta-pytorch.github.io/compile-graph-break-site/gb/${gbId.toLowerCase()}.html`;
}

function location(value: unknown): ViewLocation | undefined {
  const o = obj(value);
  const path = str(o, ["uri", "path", "filename", "file"]);
  const line = num(o, ["line", "lineno", "row"]);
  if (!path || line === undefined) {
    return undefined;
  }
  return { uri: toUri(path), line, label: `${path.split(/[\\/]/).pop()}` };
}

function locationOf(o: Obj): ViewLocation | undefined {
  return location(first(o, ["location", "loc", "user_frame", "frame_location"])) ?? location(o);
}

function guardText(c: Obj): string | undefined {
  const guard = first(c, ["failed_guard", "failedGuard", "guard_failure", "guard"]);
  if (guard === undefined) {
    return undefined;
  }
  if (typeof guard === "string") {
    return guard;
  }
  const g = obj(guard);
  return str(g, ["guard", "text"]) ?? JSON.stringify(guard);
}

/** Reads the runtime probe's JSON report (tclint.runtime_probe.report.ProbeReport.to_json), bare
 * or wrapped as {report: ...} / {result: ...}; unknown fields are ignored. */
export function normalizeProbeResult(raw: unknown, fallbackTitle: string): ProbeView {
  const top = obj(raw);
  const report = Object.keys(obj(top.report)).length ? obj(top.report) : Object.keys(obj(top.result)).length ? obj(top.result) : top;
  const compiles = list(report, ["compiles", "compilations"]).map((c, i) => {
    const o = obj(c);
    const frame = first(o, ["frame", "function", "name", "qualname"]);
    const frameObj = obj(frame);
    const kind = str(o, ["kind"]);
    const guardLoc = location(first(o, ["guard_location"]));
    const failedGuard = kind === undefined || kind === "recompile" ? guardText(o) : undefined;
    const cause = failedGuard ? str(obj(o.cause), ["text"]) : undefined;
    const dropped = o.dropped === true ? `${str(o, ["fail_type"]) ?? "failed"}: ${str(o, ["fail_reason"]) ?? ""}`.trim() : undefined;
    return {
      index: i + 1,
      frame: typeof frame === "string" ? frame : str(frameObj, ["qualname", "function", "name", "code_name"]),
      location: location(frameObj) ?? locationOf(o),
      // the failed guard has its own column: the trigger then just says so
      trigger: failedGuard ? "guard failed" : typeof o.trigger === "string" ? o.trigger : str(o, ["reason"]) ?? kind,
      failedGuard,
      cause,
      guardLocation: guardLoc,
      graphs: num(o, ["graphs", "graph_count", "num_graphs"]),
      dropped,
    };
  });
  const breaks = list(report, ["graph_breaks", "breaks", "graphBreaks"]).map((b) => {
    const o = obj(b);
    const gbId = str(o, ["gb_id", "gbId", "gb"]);
    const title = str(o, ["gb_type"]);
    const explanation = str(o, ["explanation"]);
    const reason = title ? (explanation ? `${title}: ${explanation}` : title) : str(o, ["reason", "message", "explanation", "msg"]) ?? "";
    return {
      gbId,
      reason,
      hits: num(o, ["hits", "count", "occurrences"]) ?? (o.hits_counted === false ? undefined : num(o, ["events"]) ?? 1),
      location: locationOf(o),
      url: str(o, ["url", "link", "doc_url"]) ?? (gbId && /^GB\d+$/i.test(gbId) ? gbUrl(gbId) : undefined),
    };
  });
  const notes: string[] = [];
  for (const hit of list(report, ["recompile_limit_hits"])) {
    const m = str(obj(hit), ["message"]);
    if (m) notes.push(m);
  }
  const errors: string[] = [];
  for (const e of list(report, ["errors"])) {
    const o = obj(e);
    const where = o.file ? ` (${String(o.file).split(/[\\/]/).pop()}:${o.line ?? "?"})` : "";
    const type = (str(o, ["type"]) ?? "").split(".").pop();
    errors.push(`${str(o, ["kind"]) ?? "error"}: ${type} ${str(o, ["message"]) ?? ""}${where}`.replace(/\s+/g, " ").trim());
  }
  for (const n of list(report, ["notes", "warnings"])) {
    notes.push(typeof n === "string" ? n : JSON.stringify(n));
  }
  const errorValue = first(top, ["error"]) ?? first(report, ["error"]);
  let error = errorValue === undefined ? undefined : typeof errorValue === "string" ? errorValue : str(obj(errorValue), ["message", "text"]) ?? JSON.stringify(errorValue);
  const status = str(report, ["status"]);
  const message = str(report, ["message", "summary"]);
  if (!error && status && !["ok", "stopped"].includes(status) && message) {
    error = message; // the run did not complete: say how it ended, prominently
  }
  const env = obj(report.environment);
  const graphs = num(report, ["graphs"]) ?? (compiles.length ? compiles.reduce((n, c) => n + (c.graphs ?? 0), 0) : undefined);
  return {
    title: shortenPaths(str(report, ["title", "target", "function", "qualname", "program", "path"]) ?? fallbackTitle),
    summary: message,
    error,
    verdict: str(report, ["verdict"]) ?? str(top, ["summary"]),
    completed: status === undefined ? undefined : ["ok", "stopped"].includes(status),
    graphs,
    errors,
    torchVersion: str(env, ["torch"]) ?? str(report, ["torch_version", "torchVersion", "torch"]),
    duration: num(obj(report.run), ["wall_s"]) ?? num(report, ["duration", "duration_s", "seconds", "elapsed"]),
    compiles,
    breaks,
    notes,
  };
}
