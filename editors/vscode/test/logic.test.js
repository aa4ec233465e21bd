// Unit tests of the client's pure logic: settings, interpreter choice, environment check,
// server launch, probe arguments and trust gating, status bar, probe view.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const { execFileSync } = require("node:child_process");
const { load, manifest, projectPython } = require("./helpers");

const settings = load("settings");
const interpreter = load("interpreter");
const environment = load("environment");
const launch = load("launch");
const probe = load("probe");
const status = load("status");
const probeModel = load("probeModel");
const probeHtml = load("probeHtml");
const serverSettings = load("serverSettings");
const severity = load("severity");

const getter = (values) => (key, fallback) => (key in values ? values[key] : fallback);

test("settings: defaults when nothing is set", () => {
  const s = settings.readSettings(getter({}));
  assert.deepEqual(s, {
    enable: true,
    interpreter: [],
    path: [],
    args: [],
    select: [],
    ignore: [],
    severity: {},
    lintOnChange: true,
    probeTimeout: 120,
    configurationPreference: "filesystemFirst",
    unsafeFixes: false,
    showNotifications: "onError",
  });
});

test("settings: variables are resolved and bad values fall back", () => {
  const s = settings.readSettings(
    getter({
      interpreter: ["${workspaceFolder}/.venv/bin/python", "-X", "utf8"],
      path: "~/bin/tclint",
      args: ["--config=${env:CFG}"],
      severity: { TC101: "error", TC1: "Hint", bogus: "loud" },
      "probe.timeout": -3,
      configurationPreference: "nonsense",
      unsafeFixes: true,
    }),
    { workspaceFolder: "/ws", userHome: "/home/u", env: { CFG: "/ws/t.toml" } },
  );
  assert.deepEqual(s.interpreter, ["/ws/.venv/bin/python", "-X", "utf8"]);
  assert.deepEqual(s.path, ["/home/u/bin/tclint"]);
  assert.deepEqual(s.args, ["--config=/ws/t.toml"]);
  assert.deepEqual(s.severity, { TC101: "Error", TC1: "Hint" });
  assert.equal(s.probeTimeout, 120);
  assert.equal(s.configurationPreference, "filesystemFirst");
  assert.equal(s.unsafeFixes, true);
});

test("settings: only process-level settings restart the server", () => {
  const affects = (changed) => (section) => changed.includes(section);
  assert.equal(settings.needsRestart(affects(["tclint.interpreter"])), true);
  assert.equal(settings.needsRestart(affects(["tclint.path"])), true);
  assert.equal(settings.needsRestart(affects(["tclint.select", "tclint.severity", "tclint.args"])), false);
});

test("settings: every tclint.* setting in package.json is read, and nothing else", () => {
  const declared = Object.keys(manifest().contributes.configuration.properties)
    .filter((k) => k !== "tclint.trace.server")
    .map((k) => k.slice("tclint.".length));
  const read = [];
  settings.readSettings((key, fallback) => (read.push(key), fallback));
  assert.deepEqual([...read].sort(), [...declared].sort());
});

test("server settings: names and the trust flag the server receives", () => {
  const s = settings.readSettings(getter({ select: ["TC1"], "probe.timeout": 30 }));
  assert.deepEqual(serverSettings.serverSettings(s, false).probe, { enable: false, timeout: 30 });
  const init = serverSettings.initializationOptions(s, true);
  assert.equal(init.workspaceTrusted, true);
  assert.deepEqual(init.settings.select, ["TC1"]);
  assert.equal(init.settings.configurationPreference, "filesystemFirst");
});

test("interpreter: the setting, then the Python extension, then python3", async () => {
  assert.deepEqual(interpreter.chooseInterpreter(["/a/python", "-E"], "/b/python"), { command: ["/a/python", "-E"], source: "setting" });
  assert.deepEqual(interpreter.chooseInterpreter(["  "], "/b/python"), { command: ["/b/python"], source: "python-extension" });
  assert.deepEqual(interpreter.chooseInterpreter([], undefined), { command: ["python3"], source: "default" });
  const api = {
    environments: {
      getActiveEnvironmentPath: (resource) => ({ id: "x", path: `/envs/${resource}` }),
      resolveEnvironment: async (env) => ({ executable: { uri: { fsPath: `${env.path}/bin/python` } } }),
      onDidChangeActiveEnvironmentPath: () => ({ dispose() {} }),
    },
  };
  assert.equal(await interpreter.pythonExtensionInterpreter(api, "ws"), "/envs/ws/bin/python");
  assert.equal(await interpreter.pythonExtensionInterpreter(undefined, "ws"), undefined);
  const broken = { environments: { ...api.environments, resolveEnvironment: async () => { throw new Error("boom"); } } };
  assert.equal(await interpreter.pythonExtensionInterpreter(broken, "ws"), undefined);
  assert.match(interpreter.describeInterpreter({ command: ["python3"], source: "default" }), /python3 from PATH/);
});

test("environment: parsing the check's output", () => {
  const ok = environment.parseCheck({ code: 0, stdout: '{"python":"3.11.7","executable":"/v/bin/python","tclint":"0.1.0","server":true,"error":null}\n', stderr: "" });
  assert.deepEqual(ok, { kind: "ok", python: "3.11.7", executable: "/v/bin/python", version: "0.1.0" });
  const missing = environment.parseCheck({ code: 0, stdout: '{"python":"3.11.7","tclint":null,"server":false,"error":"ModuleNotFoundError: No module named \'tclint\'"}', stderr: "" });
  assert.equal(missing.kind, "missing");
  assert.match(missing.detail, /No module named/);
  assert.equal(environment.parseCheck({ code: 0, stdout: '{"python":"3.11.7","tclint":"0.1.0","server":false}', stderr: "" }).kind, "no-server");
  assert.equal(environment.parseCheck({ spawnError: "ENOENT: spawn nope", code: null, stdout: "", stderr: "" }).kind, "no-python");
  const garbage = environment.parseCheck({ code: 1, stdout: "", stderr: "SyntaxError: invalid syntax" });
  assert.equal(garbage.kind, "no-python");
  assert.match(garbage.detail, /SyntaxError/);
});

test("environment: the install command is pip install tclint-torch[server] into that interpreter", () => {
  assert.deepEqual(environment.installArgs(["/v/bin/python", "-E"]), {
    command: "/v/bin/python",
    args: ["-E", "-m", "pip", "install", "--upgrade", "tclint-torch[server]"],
  });
  assert.equal(environment.installCommandLine(["/my env/python"]), "'/my env/python' -m pip install --upgrade tclint-torch[server]");
  assert.match(environment.missingMessage({ kind: "missing", detail: "x" }, "/v/bin/python"), /not installed in \/v\/bin\/python.*tclint-torch\[server\]/);
  assert.match(environment.missingMessage({ kind: "no-python", detail: "ENOENT" }, "py"), /Select a Python interpreter/);
});

test("environment: Install takes the workspace's checkout, else the bundled wheel, else the index", () => {
  const fs = require("node:fs");
  const path = require("node:path");
  const pyproject = fs.readFileSync(path.join(__dirname, "..", "..", "..", "pyproject.toml"), "utf8");
  assert.equal(environment.isTclintCheckout(pyproject), true, "tclint's own pyproject.toml");
  assert.equal(environment.isTclintCheckout('[project]\nname = "mymodel"\ndependencies = ["tclint-torch"]\n'), false);
  assert.equal(environment.newestWheel(["x.txt", "tclint_torch-0.1.0-py3-none-any.whl", "tclint_torch-0.10.0-py3-none-any.whl"]), "tclint_torch-0.10.0-py3-none-any.whl");
  assert.equal(environment.newestWheel(["other-1.0-py3-none-any.whl"]), undefined);
  const wheel = "/ext/wheel/tclint_torch-0.1.0-py3-none-any.whl";
  assert.deepEqual(environment.chooseInstallSource(["/ws/tclint"], wheel), { kind: "checkout", path: "/ws/tclint" });
  assert.deepEqual(environment.chooseInstallSource([], wheel), { kind: "wheel", path: wheel });
  assert.deepEqual(environment.chooseInstallSource([], undefined), { kind: "index" });
  assert.deepEqual(environment.installArgs(["/v/bin/python"], { kind: "wheel", path: wheel }).args, ["-m", "pip", "install", "--upgrade", `${wheel}[server]`]);
  assert.deepEqual(environment.installArgs(["/v/bin/python"], { kind: "checkout", path: "/ws/tclint" }).args, ["-m", "pip", "install", "--upgrade", "-e", "/ws/tclint[server]"]);
  assert.match(environment.missingMessage({ kind: "missing", detail: "x" }, "py", { kind: "wheel", path: wheel }), /tclint-torch\[server\] from the wheel bundled with the extension/);
  assert.match(environment.missingMessage({ kind: "missing", detail: "x" }, "py", { kind: "checkout", path: "/ws/tclint" }), /from the workspace's checkout \(\/ws\/tclint\)/);
});

test("environment: the check script runs in real interpreters", (t) => {
  const run = (python) => {
    const { command, args } = environment.checkArgs([python]);
    return environment.parseCheck({ code: 0, stdout: execFileSync(command, args, { encoding: "utf8" }), stderr: "" });
  };
  // a bare interpreter without tclint (isolated mode: no user site, no PYTHONPATH)
  const bare = environment.parseCheck({
    code: 0,
    stdout: execFileSync("python3", ["-I", ...environment.checkArgs(["python3"]).args], { encoding: "utf8", cwd: "/" }),
    stderr: "",
  });
  assert.ok(["missing", "ok"].includes(bare.kind));
  const venv = projectPython();
  if (!venv) {
    t.skip("no project .venv");
    return;
  }
  const state = run(venv);
  assert.equal(state.kind, "ok", JSON.stringify(state));
  assert.match(state.version, /^\d+\.\d+/);
});

test("launch: python -c with the bootstrap (never -m), or the tclint executable's server subcommand", () => {
  const a = launch.serverExecutable(["/v/bin/python", "-X", "utf8"], [], "/ws", { PATH: "/bin" });
  assert.equal(a.command, "/v/bin/python");
  assert.deepEqual(a.args, ["-X", "utf8", "-c", launch.SERVER_BOOTSTRAP]);
  assert.ok(!a.args.includes("-m"));
  assert.equal(a.options.cwd, "/ws");
  assert.equal(a.options.env.PATH, "/bin");
  assert.equal(a.options.env.PYTHONUNBUFFERED, "1");
  const b = launch.serverExecutable(["/v/bin/python"], ["/v/bin/tclint"], undefined, {});
  assert.deepEqual([b.command, ...b.args], ["/v/bin/tclint", "server"]);
  assert.deepEqual(launch.DOCUMENT_SELECTOR.map((d) => d.scheme ?? `notebook:${d.notebook}`), ["file", "untitled", "notebook:jupyter-notebook"]);
});

test("probe: trust and document gate the probe commands", () => {
  const doc = { uri: "file:///ws/m.py", languageId: "python", scheme: "file", isDirty: false };
  assert.match(probe.probeBlocker(false, doc, true), /trust the workspace/);
  assert.match(probe.probeBlocker(true, undefined, true), /Open a Python file/);
  assert.match(probe.probeBlocker(true, { ...doc, languageId: "markdown" }, true), /Python files/);
  assert.match(probe.probeBlocker(true, { ...doc, scheme: "untitled" }, true), /Save the file/);
  assert.match(probe.probeBlocker(true, doc, false), /not running/);
  assert.equal(probe.probeBlocker(true, doc, true), undefined);
  assert.deepEqual(probe.probeArguments("file:///ws/m.py", { line: 4, character: 2, extra: 1 }), [
    { uri: "file:///ws/m.py", position: { line: 4, character: 2 } },
  ]);
  assert.deepEqual(probe.probeFileArguments("file:///ws/m.py"), [{ uri: "file:///ws/m.py" }]);
});

test("status bar: each state has a text, a tooltip and a click", () => {
  const kinds = [
    { kind: "starting", interpreter: "py" },
    { kind: "running", interpreter: "py", version: "0.1.0", trusted: true },
    { kind: "running", interpreter: "py", version: "0.1.0", trusted: false },
    { kind: "probing", what: "m.py" },
    { kind: "missing", interpreter: "py", detail: "no module" },
    { kind: "error", detail: "boom" },
    { kind: "disabled" },
    { kind: "stopped" },
  ];
  const commands = new Set(manifest().contributes.commands.map((c) => c.command));
  for (const k of kinds) {
    const v = status.statusView(k);
    assert.match(v.text, /tclint/);
    assert.ok(v.tooltip.length > 0);
    assert.ok(commands.has(v.command), v.command);
  }
  assert.equal(status.statusView(kinds[4]).command, "tclint.installInEnvironment");
  assert.equal(status.statusView(kinds[4]).severity, "warning");
  assert.match(status.statusView(kinds[2]).tooltip, /Restricted mode/);
});

test("probe view: the report is normalised (compiles, breaks, links)", () => {
  const view = probeModel.normalizeProbeResult(
    {
      report: {
        target: "model.py::step",
        torch_version: "2.13.0",
        duration_s: 3.25,
        compiles: [
          { frame: "step", location: { path: "/ws/model.py", line: 3 }, trigger: "first call" },
          { frame: "step", trigger: "guard failed", failed_guard: "x.size()[0] == 4" },
        ],
        graph_breaks: [{ gb_id: "GB0124", reason: "Tensor.item() call", count: 3, location: { path: "/ws/model.py", line: 7 } }],
      },
    },
    "fallback",
  );
  assert.equal(view.title, "model.py::step");
  assert.equal(view.compiles.length, 2);
  assert.equal(view.compiles[1].failedGuard, "x.size()[0] == 4");
  assert.equal(view.compiles[1].trigger, "guard failed");
  assert.deepEqual(view.compiles[0].location, { uri: "file:///ws/model.py", line: 3, label: "model.py" });
  assert.deepEqual(view.breaks[0], {
    gbId: "GB0124",
    reason: "Tensor.item() call",
    hits: 3,
    location: { uri: "file:///ws/model.py", line: 7, label: "model.py" },
    url: "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html",
  });
  const empty = probeModel.normalizeProbeResult(null, "fallback");
  assert.deepEqual(empty, { title: "fallback", summary: undefined, error: undefined, verdict: undefined, completed: undefined, graphs: undefined, errors: [], torchVersion: undefined, duration: undefined, compiles: [], breaks: [], notes: [] });
  assert.equal(probeModel.normalizeProbeResult({ error: { message: "ImportError: torch" } }, "f").error, "ImportError: torch");
  assert.equal(probeModel.toUri("C:\\a b\\m.py"), "file:///C%3A/a%20b/m.py");
  assert.equal(probeModel.shortenPaths("/tmp/x/ws/serve.py"), "serve.py");
  assert.equal(probeModel.shortenPaths("/ws/tinylm/model.py::Block.forward"), "model.py::Block.forward");
  assert.equal(probeModel.shortenPaths("C:\\ws\\m.py::f"), "m.py::f");
  assert.equal(probeModel.shortenPaths("serve.py"), "serve.py");
  assert.equal(probeModel.normalizeProbeResult({ target: "/abs/ws/serve.py", mode: "program" }, "f").title, "serve.py");
});

test("probe view: a real runtime-probe report (serve.py as a program)", () => {
  const report = JSON.parse(require("node:fs").readFileSync(require("node:path").join(__dirname, "fixtures", "probe-report.json"), "utf8"));
  for (const raw of [report, { report }]) {
    const view = probeModel.normalizeProbeResult(raw, "fallback");
    assert.equal(view.title, "serve.py");
    assert.equal(view.torchVersion, "2.13.0+cpu");
    assert.equal(view.error, undefined);
    assert.equal(view.summary, "completed");
    assert.equal(view.compiles.length, 8);
    assert.deepEqual(view.compiles[0], { index: 1, frame: "decode_step", location: { uri: "file:///ws/serve.py", line: 11, label: "serve.py" }, trigger: "first call", failedGuard: undefined, cause: undefined, guardLocation: undefined, graphs: 0, dropped: undefined });
    const recompile = view.compiles[1];
    assert.equal(recompile.trigger, "guard failed");
    assert.equal(recompile.failedGuard, "tensor 'tokens' size mismatch at index 1. expected 5, actual 6");
    assert.deepEqual(recompile.guardLocation, { uri: "file:///ws/serve.py", line: 12, label: "serve.py" });
    assert.match(view.compiles[5].trigger, /continuation after the graph break/);
    assert.equal(view.compiles[5].failedGuard, undefined);
    const item = view.breaks.find((b) => b.gbId === "GB0124");
    assert.equal(item.hits, 3);
    assert.match(item.reason, /^Unsupported Tensor\.item\(\) call/);
    assert.equal(item.url, "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html");
    assert.deepEqual(item.location, { uri: "file:///ws/serve.py", line: 34, label: "serve.py" });
  }
  const failed = probeModel.normalizeProbeResult({ ...report, status: "need-inputs", message: "cannot synthesise inputs" }, "f");
  assert.equal(failed.error, "cannot synthesise inputs");
  const html = probeHtml.renderProbeHtml(probeModel.normalizeProbeResult(report, "f"), { cspSource: "x", nonce: "n" });
  assert.match(html, /Compilations \(8\)/);
  assert.match(html, /Graph breaks \(2\)/);
  assert.match(html, /torch 2\.13\.0\+cpu/);
});

test("probe view: HTML shows trigger, failed guard, GB link and hits, escaped", () => {
  const html = probeHtml.renderProbeHtml(
    {
      title: "<step>",
      compiles: [{ index: 2, frame: "step", trigger: "guard failed", failedGuard: "L['x'].size()[0] == 4" }],
      breaks: [{ gbId: "GB0124", reason: "Tensor.item() & co", hits: 3, url: "https://example.org/gb0124.html", location: { uri: "file:///ws/m.py", line: 7, label: "m.py" } }],
      notes: ["javascript:alert(1)"],
    },
    { cspSource: "vscode-resource:", nonce: "abc" },
  );
  assert.match(html, /tclint probe: &lt;step&gt;/);
  assert.match(html, /guard failed/);
  assert.match(html, /<code>L\[&#39;x&#39;\]\.size\(\)\[0\] == 4<\/code>/);
  assert.match(html, /<a href="https:\/\/example.org\/gb0124.html">GB0124<\/a>/);
  assert.match(html, /Tensor.item\(\) &amp; co/);
  assert.match(html, /<td class="num">3<\/td>/);
  assert.match(html, /command:tclint\.openLocation\?/);
  assert.match(html, /default-src &#39;none&#39;/);
  assert.doesNotMatch(html, /<script/);
  const bad = probeHtml.renderProbeHtml({ title: "t", compiles: [], breaks: [{ gbId: "GB1", reason: "r", hits: 1, url: "javascript:alert(1)" }], notes: [] }, { cspSource: "x", nonce: "n" });
  assert.doesNotMatch(bad, /href="javascript/);
  assert.match(bad, /No compilation was recorded/);
});

test("severity map: code, longest prefix, then tclint level; other sources untouched", () => {
  const map = { TC101: "Error", TC1: "Hint", TC10: "Information", info: "Warning" };
  assert.equal(severity.mapSeverity("TC101", 1, map), 0);
  assert.equal(severity.mapSeverity("TC104", 1, map), 2); // TC10 beats TC1
  assert.equal(severity.mapSeverity("TC120", 1, map), 3);
  assert.equal(severity.mapSeverity("TC201", 2, map), 1); // by level: info -> Warning
  assert.equal(severity.mapSeverity("TC201", 1, map), 1);
  assert.equal(severity.mapSeverity("TC201", 1, {}), 1);
  assert.equal(severity.codeOf({ value: "TC101", target: "x" }), "TC101");
  const diags = [
    { code: "TC101", severity: 1, source: "tclint", message: "a" },
    { code: "E501", severity: 1, source: "ruff", message: "b" },
    { code: { value: "TC104" }, severity: 1, message: "c" },
  ];
  const out = severity.applySeverityMap(diags, map);
  assert.deepEqual(out.map((d) => d.severity), [0, 1, 2]);
  assert.equal(diags[0].severity, 1, "the input is not modified");
  assert.equal(out[1], diags[1]);
});

test("markers: every diagnostic VS Code holds, written to TCLINT_E2E_MARKERS's file as it changes", () => {
  const fs = require("node:fs");
  const os = require("node:os");
  const path = require("node:path");
  const listeners = [];
  let all = [];
  const diag = (line, character, code, message) => ({ range: { start: { line, character } }, code, message, source: "tclint", severity: 1 });
  const cell = { toString: () => "vscode-notebook-cell:/ws/nb.ipynb#W2sZmlsZQ%3D%3D", scheme: "vscode-notebook-cell" };
  const file = { toString: () => "file:///ws/serve.py", scheme: "file" };
  const editorListeners = [];
  const on = (list) => (fn) => {
    list.push(fn);
    return { dispose: () => list.splice(list.indexOf(fn), 1) };
  };
  const fakeVscode = {
    languages: { getDiagnostics: () => all, onDidChangeDiagnostics: on(listeners) },
    window: { activeTextEditor: undefined, onDidChangeActiveTextEditor: on(editorListeners), onDidChangeTextEditorSelection: on(editorListeners) },
  };
  const markers = load("markers", { vscode: fakeVscode });
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tclint-markers-")), "markers.json");
  const sub = markers.exportMarkers(out);
  assert.deepEqual(JSON.parse(fs.readFileSync(out, "utf8")), []);
  const editorOut = path.join(path.dirname(out), "active-editor.json");
  assert.equal(JSON.parse(fs.readFileSync(editorOut, "utf8")), null);
  const lib = { toString: () => "file:///venv/site-packages/transformers/loss/loss_for_object_detection.py" };
  const summary = diag(15, 11, "TC312", "compiled library code meets 2 likely graph breaks");
  summary.relatedInformation = [
    { location: { uri: lib, range: { start: { line: 122, character: 8 } } }, message: "TC101 `.item()`" },
    { location: { uri: lib, range: { start: { line: 40, character: 0 } } }, message: "TC102 branch" },
  ];
  all = [[file, [diag(40, 4, { value: "TC204", target: "x" }, "b"), diag(11, 58, "TC101", "a"), summary]], [cell, [diag(3, 11, "TC101", "c")]]];
  listeners.forEach((fn) => fn({}));
  const rows = JSON.parse(fs.readFileSync(out, "utf8"));
  assert.deepEqual(rows.map((r) => [r.scheme, r.code, r.line, r.column]), [
    ["file", "TC101", 12, 59],
    ["file", "TC312", 16, 12],
    ["file", "TC204", 41, 5],
    ["vscode-notebook-cell", "TC101", 4, 12],
  ]);
  // the related locations, 1-based as the Problems view lists them under the marker
  assert.deepEqual(rows[1].related, [
    { uri: lib.toString(), line: 123, column: 9, message: "TC101 `.item()`" },
    { uri: lib.toString(), line: 41, column: 1, message: "TC102 branch" },
  ]);
  assert.deepEqual(rows[0].related, []);
  // the active editor and its cursor, as opening a related location leaves them
  fakeVscode.window.activeTextEditor = {
    document: { uri: lib, lineAt: (n) => ({ text: n === 122 ? "        x.item()" : "" }) },
    selection: { start: { line: 122, character: 8 }, end: { line: 122, character: 16 }, active: { line: 122, character: 16 } },
  };
  editorListeners.forEach((fn) => fn({}));
  assert.deepEqual(JSON.parse(fs.readFileSync(editorOut, "utf8")), {
    uri: lib.toString(),
    line: 123,
    column: 9,
    endLine: 123,
    endColumn: 17,
    text: "        x.item()",
  });
  sub.dispose();
  assert.equal(listeners.length, 0);
  assert.equal(editorListeners.length, 0);
});
