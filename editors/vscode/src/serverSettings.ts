// What the tclint server receives: the `tclint.*` settings in the server's own names, in
// `initializationOptions` at start and as the `tclint` section of `workspace/configuration`.
// The names follow the server's contract (docs/server.md "Settings" / server/settings.py).

import type { TclintSettings } from "./settings";

export interface ServerSettings {
  enable: boolean;
  args: string[];
  select: string[];
  ignore: string[];
  severity: Record<string, string>;
  lintOnChange: boolean;
  probe: { enable: boolean; timeout: number };
  configurationPreference: string;
  unsafeFixes: boolean;
}

export function serverSettings(settings: TclintSettings, trusted: boolean): ServerSettings {
  return {
    enable: settings.enable,
    args: [...settings.args],
    select: [...settings.select],
    ignore: [...settings.ignore],
    severity: { ...settings.severity },
    lintOnChange: settings.lintOnChange,
    // the server refuses to probe in a restricted workspace too: the client is not the only guard
    probe: { enable: trusted, timeout: settings.probeTimeout },
    configurationPreference: settings.configurationPreference,
    unsafeFixes: settings.unsafeFixes,
  };
}

/** Commands this extension runs itself, so the server may offer code lenses for them
 * (`tclint.benchmark`: the "Benchmark" lens, src/bench.ts). */
export const CLIENT_COMMANDS = ["tclint.benchmark"];

export function initializationOptions(
  settings: TclintSettings,
  trusted: boolean,
): { settings: ServerSettings; workspaceTrusted: boolean; clientCommands: string[] } {
  return { settings: serverSettings(settings, trusted), workspaceTrusted: trusted, clientCommands: [...CLIENT_COMMANDS] };
}
