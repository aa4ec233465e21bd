// The `tclint.*` settings: read them (with ${workspaceFolder}-style variables resolved), decide
// which changes need a server restart, and shape what the server receives.

export type ConfigurationPreference = "filesystemFirst" | "editorFirst" | "editorOnly";
export type EditorSeverity = "Error" | "Warning" | "Information" | "Hint";

export interface TclintSettings {
  enable: boolean;
  interpreter: string[];
  path: string[];
  args: string[];
  select: string[];
  ignore: string[];
  severity: Record<string, EditorSeverity>;
  lintOnChange: boolean;
  probeTimeout: number;
  configurationPreference: ConfigurationPreference;
  unsafeFixes: boolean;
  showNotifications: "off" | "onError" | "always";
}

/** Reads one key of the `tclint` section, with its default: `vscode.workspace.getConfiguration("tclint", resource).get`. */
export type Getter = <T>(key: string, fallback: T) => T;

export interface Variables {
  workspaceFolder?: string;
  userHome?: string;
  env?: Record<string, string | undefined>;
}

const PREFERENCES: ConfigurationPreference[] = ["filesystemFirst", "editorFirst", "editorOnly"];
const SEVERITIES: EditorSeverity[] = ["Error", "Warning", "Information", "Hint"];

export function readSettings(get: Getter, vars: Variables = {}): TclintSettings {
  const list = (key: string) => resolveVariables(stringList(get<unknown>(key, [])), vars);
  const preference = get<string>("configurationPreference", "filesystemFirst");
  const timeout = Number(get<number>("probe.timeout", 120));
  const notifications = get<string>("showNotifications", "onError");
  return {
    enable: get<boolean>("enable", true) !== false,
    interpreter: list("interpreter"),
    path: list("path"),
    args: list("args"),
    select: stringList(get<unknown>("select", [])),
    ignore: stringList(get<unknown>("ignore", [])),
    severity: severityMap(get<unknown>("severity", {})),
    lintOnChange: get<boolean>("lintOnChange", true) !== false,
    probeTimeout: Number.isFinite(timeout) && timeout > 0 ? timeout : 120,
    configurationPreference: PREFERENCES.includes(preference as ConfigurationPreference)
      ? (preference as ConfigurationPreference)
      : "filesystemFirst",
    unsafeFixes: get<boolean>("unsafeFixes", false) === true,
    showNotifications: (["off", "onError", "always"].includes(notifications) ? notifications : "onError") as TclintSettings["showNotifications"],
  };
}

function stringList(value: unknown): string[] {
  if (typeof value === "string") {
    return value.trim() ? [value] : [];
  }
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function severityMap(value: unknown): Record<string, EditorSeverity> {
  const out: Record<string, EditorSeverity> = {};
  if (value && typeof value === "object") {
    for (const [key, level] of Object.entries(value as Record<string, unknown>)) {
      const match = SEVERITIES.find((s) => typeof level === "string" && s.toLowerCase() === level.toLowerCase());
      if (match) {
        out[key] = match;
      }
    }
  }
  return out;
}

/** `${workspaceFolder}`, `${userHome}`, `${env:NAME}` and a leading `~/`, as VS Code users expect. */
export function resolveVariables(values: string[], vars: Variables): string[] {
  return values.map((value) => {
    let out = value.replace(/\$\{(workspaceFolder|userHome|env:([A-Za-z_][A-Za-z0-9_]*))\}/g, (whole, name: string, envName?: string) => {
      if (envName) {
        return vars.env?.[envName] ?? "";
      }
      const replacement = name === "workspaceFolder" ? vars.workspaceFolder : vars.userHome;
      return replacement ?? whole;
    });
    if (vars.userHome && (out === "~" || out.startsWith("~/"))) {
      out = vars.userHome + out.slice(1);
    }
    return out;
  });
}

/** Settings whose change means a new server process (the rest reach the running server). */
export const RESTART_KEYS = ["enable", "interpreter", "path"] as const;

export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_KEYS.some((key) => affects(`tclint.${key}`));
}
