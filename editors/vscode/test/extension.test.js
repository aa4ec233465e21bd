// The extension's activation and commands, against fake `vscode` and language-client modules:
// what it starts, what it registers, how it gates the probe, and the missing-tclint prompt.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { load, manifest, projectPython } = require("./helpers");
const { fakeVscode, fakeLanguageClient } = require("./fakeVscode");

/** A stand-in interpreter: answers the environment check as told and records pip installs. */
function fakePython(dir, { installed }) {
  const script = path.join(dir, "python");
  const record = path.join(dir, "calls.txt");
  fs.writeFileSync(
    script,
    `#!/bin/sh
echo "$@" >> '${record}'
if [ "$1" = "-c" ]; then
  if [ -f '${dir}/installed' ] || [ '${installed}' = yes ]; then
    echo '{"python":"3.11.7","executable":"${script}","tclint":"9.9.9","server":true,"error":null}'
  else
    echo '{"python":"3.11.7","executable":"${script}","tclint":null,"server":false,"error":"ModuleNotFoundError: No module named tclint"}'
  fi
  exit 0
fi
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then touch '${dir}/installed'; echo "Successfully installed tclint-torch"; exit 0; fi
exit 3
`,
  );
  fs.chmodSync(script, 0o755);
  return { script, calls: () => (fs.existsSync(record) ? fs.readFileSync(record, "utf8") : "") };
}

function context(extensionPath = "/ext") {
  return { subscriptions: [], extensionUri: { fsPath: extensionPath } };
}

function editor(fsPath, line = 6, character = 4, languageId = "python") {
  return {
    document: { uri: { scheme: "file", fsPath, toString: () => `file://${fsPath}` }, languageId, isDirty: false, save: async () => true },
    selection: { active: { line, character } },
  };
}

async function activate(options, clientOptions = {}, extensionPath = undefined) {
  const fv = fakeVscode(options);
  const fc = fakeLanguageClient(clientOptions);
  const ext = load("extension", { vscode: fv.vscode, "vscode-languageclient/node": fc.module });
  const api = await ext.activate(context(extensionPath));
  return { ext, api, ...fv, ...fc };
}

test("activation registers every command the manifest declares", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { calls } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script] } });
  const declared = manifest().contributes.commands.map((c) => c.command).sort();
  const registered = Object.keys(calls.commands).filter((c) => c !== "tclint.openLocation").sort();
  assert.deepEqual(registered, declared);
});

test("the server runs as `<interpreter> -c SERVER_BOOTSTRAP` with the settings the server reads", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { instances, calls } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script], "tclint.select": ["TC1"], "tclint.unsafeFixes": true } });
  assert.equal(instances.length, 1);
  const client = instances[0];
  assert.equal(client.id, "tclint");
  assert.equal(client.serverOptions.run.command, py.script);
  assert.deepEqual(client.serverOptions.run.args, ["-c", load("launch").SERVER_BOOTSTRAP]);
  assert.equal(client.serverOptions.run.options.cwd, dir);
  assert.deepEqual(client.clientOptions.documentSelector, [
    { scheme: "file", language: "python" },
    { scheme: "untitled", language: "python" },
    { notebook: "jupyter-notebook", language: "python" },
  ]);
  assert.equal(client.clientOptions.initializationOptions.workspaceTrusted, true);
  assert.deepEqual(client.clientOptions.initializationOptions.settings.select, ["TC1"]);
  assert.equal(client.clientOptions.initializationOptions.settings.unsafeFixes, true);
  assert.equal(client.clientOptions.synchronize.configurationSection, "tclint");
  assert.match(calls.statusItems[0].text, /\$\(check\) tclint/);
  assert.match(calls.statusItems[0].tooltip, /tclint 9\.9\.9/);
});

test("the Python extension's interpreter is used when tclint.interpreter is empty", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const pythonExt = {
    isActive: true,
    exports: {
      environments: {
        getActiveEnvironmentPath: () => ({ id: "venv", path: dir }),
        resolveEnvironment: async () => ({ executable: { uri: { fsPath: py.script } } }),
        onDidChangeActiveEnvironmentPath: () => ({ dispose() {} }),
      },
    },
  };
  const { instances } = await activate({ folder: dir, extensions: { "ms-python.python": pythonExt } });
  assert.equal(instances[0].serverOptions.run.command, py.script);
});

test("missing tclint: a prompt, and Install runs pip install tclint-torch[server] then starts the server", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "no" });
  const { instances, calls } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script] }, answers: ["Install"] });
  // the prompt is not awaited by activation: let it run
  for (let i = 0; i < 50 && instances.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(calls.warnings[0].msg, /tclint is not installed in .*python.*tclint-torch\[server\]/);
  assert.deepEqual(calls.warnings[0].items, ["Install", "Select Interpreter", "Open Settings"]);
  assert.match(py.calls(), /-m pip install --upgrade tclint-torch\[server\]/);
  assert.equal(instances.length, 1, "the server starts once tclint is installed");
});

async function installWith(folder, extensionPath) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "no" });
  const { instances, calls } = await activate({ folder, config: { "tclint.interpreter": [py.script] }, answers: ["Install"] }, {}, extensionPath);
  for (let i = 0; i < 50 && instances.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return { py, instances, calls };
}

test("missing tclint: Install installs the wheel bundled in the extension (no release on PyPI needed)", async () => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-vsix-"));
  fs.mkdirSync(path.join(ext, "wheel"));
  const wheel = path.join(ext, "wheel", "tclint_torch-0.1.0-py3-none-any.whl");
  fs.writeFileSync(wheel, "");
  const { py, instances, calls } = await installWith(fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ws-")), ext);
  assert.match(calls.warnings[0].msg, /from the wheel bundled with the extension/);
  assert.ok(py.calls().includes(`-m pip install --upgrade ${wheel}[server]`), py.calls());
  assert.equal(instances.length, 1);
});

test("missing tclint: in a workspace that is tclint's checkout, Install installs that checkout (editable)", async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ws-"));
  fs.writeFileSync(path.join(ws, "pyproject.toml"), '[project]\nname = "tclint-torch"\nversion = "0.1.0"\n');
  const { py, calls } = await installWith(ws, "/ext");
  assert.match(calls.warnings[0].msg, /from the workspace's checkout/);
  assert.ok(py.calls().includes(`-m pip install --upgrade -e ${ws}[server]`), py.calls());
});

test("restricted workspace: no Install button, the probe is refused and the server is told", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { calls, instances } = await activate({ folder: dir, trusted: false, config: { "tclint.interpreter": [py.script] }, editor: editor(path.join(dir, "m.py")) });
  assert.equal(instances[0].clientOptions.initializationOptions.workspaceTrusted, false);
  assert.equal(instances[0].clientOptions.initializationOptions.settings.probe.enable, false);
  assert.match(calls.statusItems[0].text, /shield/);
  await calls.commands["tclint.probeFunctionAtCursor"]();
  assert.match(calls.warnings.at(-1).msg, /trust the workspace/);
  assert.equal(instances[0].requests.length, 0, "no probe request reached the server");
  const m = manifest();
  assert.equal(m.capabilities.untrustedWorkspaces.supported, "limited");
  for (const id of ["tclint.probeFunctionAtCursor", "tclint.probeCurrentFile"]) {
    assert.match(m.contributes.commands.find((c) => c.command === id).enablement, /isWorkspaceTrusted/);
  }
  assert.deepEqual(m.capabilities.untrustedWorkspaces.restrictedConfigurations.sort(), ["tclint.args", "tclint.interpreter", "tclint.path"]);

  const fv2 = await activate({ folder: dir, trusted: false, config: { "tclint.interpreter": [fakePython(fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-")), { installed: "no" }).script] } });
  await new Promise((r) => setTimeout(r, 50));
  assert.ok(!fv2.calls.warnings[0].items.includes("Install"));
});

test("probe at cursor sends tclint.probe [{uri, position}] and shows the result in a webview", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const file = path.join(dir, "model.py");
  const reply = (method, params) => ({
    report: {
      target: "model.py::step",
      compiles: [{ frame: "step", trigger: "first call" }],
      breaks: [{ gb_id: "GB0124", reason: "Tensor.item()", hits: 2, location: { path: file, line: 7 } }],
      echo: params,
    },
  });
  const { calls, instances, api } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script] }, editor: editor(file, 6, 4) }, { reply });
  const view = await calls.commands["tclint.probeFunctionAtCursor"]();
  const req = instances[0].requests[0];
  assert.equal(req.method, "workspace/executeCommand");
  assert.deepEqual(req.params, { command: "tclint.probe", arguments: [{ uri: `file://${file}`, position: { line: 6, character: 4 } }] });
  assert.equal(view.breaks[0].gbId, "GB0124");
  assert.equal(api.lastProbe(), view);
  assert.equal(calls.webviews.length, 1);
  assert.match(calls.webviews[0].webview.html, /GB0124/);
  assert.match(calls.webviews[0].webview.html, /first call/);

  await calls.commands["tclint.probeCurrentFile"]();
  assert.deepEqual(instances[0].requests[1].params, { command: "tclint.probeFile", arguments: [{ uri: `file://${file}` }] });
  assert.equal(calls.webviews.length, 1, "the panel is reused");
});

test("tclint.severity is applied to pushed and pulled diagnostics", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { instances } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script], "tclint.severity": { TC101: "Error" } } });
  const mw = instances[0].clientOptions.middleware;
  let pushed;
  mw.handleDiagnostics("file:///ws/m.py", [{ code: "TC101", severity: 1, source: "tclint" }, { code: "TC104", severity: 1, source: "tclint" }], (_u, d) => (pushed = d));
  assert.deepEqual(pushed.map((d) => d.severity), [0, 1]);
  const report = await mw.provideDiagnostics({ uri: { fsPath: "/ws/m.py" } }, undefined, {}, async () => ({ kind: "full", items: [{ code: "TC101", severity: 2, source: "tclint" }] }));
  assert.equal(report.items[0].severity, 0);
});

test("restart, show logs and settings changes", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { calls, instances, events, config } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script] } });
  await calls.commands["tclint.restartServer"]();
  assert.equal(instances.length, 2);
  assert.equal(instances[0].stopped, true);
  calls.commands["tclint.showLogs"]();
  assert.equal(calls.logShown, true);
  events.emit("config", { affectsConfiguration: (s) => s === "tclint.severity" });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(instances.length, 2, "a severity change reaches the running server without a restart");
  config["tclint.enable"] = false;
  events.emit("config", { affectsConfiguration: (s) => s === "tclint.enable" });
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(instances[1].stopped, true);
  assert.match(calls.statusItems[0].text, /circle-slash/);
});

test("a server that fails to start shows an error with the logs", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-ext-"));
  const py = fakePython(dir, { installed: "yes" });
  const { calls } = await activate({ folder: dir, config: { "tclint.interpreter": [py.script] } }, { failStart: "exit code 1" });
  assert.match(calls.errors[0].msg, /failed to start/);
  assert.match(calls.statusItems[0].text, /error/);
});

test("the project's real interpreter passes the environment check", { skip: !projectPython() && "no project .venv" }, async () => {
  const { instances } = await activate({ folder: path.resolve(__dirname, "../../.."), config: { "tclint.interpreter": [projectPython()] } });
  assert.equal(instances.length, 1);
  assert.deepEqual(instances[0].serverOptions.run.args, ["-c", load("launch").SERVER_BOOTSTRAP]);
});
