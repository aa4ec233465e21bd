// The Benchmark command (src/bench.ts, src/benchPanel.ts, extension.ts): the target it measures,
// the `tclint bench` command line, the report in a webview, refusal in a restricted workspace; and
// one real `tclint bench` run with the project's interpreter.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { load, projectPython } = require("./helpers");
const { fakeVscode, fakeLanguageClient } = require("./fakeVscode");

const bench = load("bench");

test("the lens argument and the lens at the cursor name the target", () => {
  assert.deepEqual(bench.parseBenchArgument({ uri: "file:///w/ops.py", target: "Block.forward" }), { uri: "file:///w/ops.py", target: "Block.forward" });
  for (const bad of [undefined, "x", { uri: "file:///w/ops.py" }, { uri: "", target: "run" }, { uri: "file:///a", target: "run; rm -rf /" }]) {
    assert.equal(bench.parseBenchArgument(bad), undefined, JSON.stringify(bad));
  }
  const lens = (line, target, command = "tclint.benchmark") => ({ range: { start: { line } }, command: { command, arguments: [{ uri: "file:///w/ops.py", target }] } });
  const lenses = [lens(3, "run"), lens(3, "run", "tclint.probe"), lens(12, "other"), lens(20, "last")];
  assert.equal(bench.targetAtLine(lenses, 2), undefined);
  assert.equal(bench.targetAtLine(lenses, 3).target, "run");
  assert.equal(bench.targetAtLine(lenses, 15).target, "other");
  assert.equal(bench.targetAtLine(lenses, 99).target, "last");
  assert.equal(bench.targetAtLine(undefined, 5), undefined);
});

test("tclint bench runs as <tclint.path> bench or <interpreter> -c bootstrap bench, with an HTML report", () => {
  assert.deepEqual(bench.benchInvocation(["/v/bin/python", "-X", "utf8"], [], "pkg/ops.py", "run", "/tmp/r.html"), {
    command: "/v/bin/python",
    args: ["-X", "utf8", "-c", bench.CLI_BOOTSTRAP, "bench", "--output-format", "html", "-o", "/tmp/r.html", "pkg/ops.py::run"],
  });
  assert.deepEqual(bench.benchInvocation(["python3"], ["/v/bin/tclint"], "ops.py", "Block", "/o.html").args, ["bench", "--output-format", "html", "-o", "/o.html", "ops.py::Block"]);
  assert.match(bench.CLI_BOOTSTRAP, /sys\.path\[:\] = \[p for p in sys\.path if p\]/); // never `-m`: no workspace shadowing
});

test("the report gets a CSP that allows its inline styles and nothing else; outcomes", () => {
  const page = bench.reportForWebview('<!doctype html><html lang="en"><head><meta charset="utf-8"><style>p{}</style></head><body>x</body></html>', "vscode-resource:");
  assert.match(page, /<head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline' vscode-resource:;/);
  assert.doesNotMatch(page, /script-src/);
  assert.equal(bench.benchOutcome(0, true, ""), undefined);
  assert.equal(bench.benchOutcome(1, true, "tclint bench --check: max-variants (default): 3 against 1").level, "warning");
  const failed = bench.benchOutcome(2, false, "noise\ntclint bench: error: cannot synthesise inputs for f\n");
  assert.equal(failed.level, "error");
  assert.match(failed.message, /exit 2\): tclint bench: error: cannot synthesise inputs for f/);
});

/** A stand-in `tclint` executable: records its arguments, writes an HTML report to -o, exits as told. */
function fakeTclint(dir, exitCode = 0) {
  const script = path.join(dir, "tclint");
  fs.writeFileSync(
    script,
    `#!/bin/sh
echo "$@" > '${dir}/args.txt'
while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then out="$2"; fi; shift; done
printf '<!doctype html><html><head><title>r</title></head><body><table id="modes"></table></body></html>' > "$out"
exit ${exitCode}
`,
  );
  fs.chmodSync(script, 0o755);
  return { script, args: () => fs.readFileSync(path.join(dir, "args.txt"), "utf8").trim() };
}

async function activate(options) {
  const fv = fakeVscode(options);
  const fc = fakeLanguageClient();
  const ext = load("extension", { vscode: fv.vscode, "vscode-languageclient/node": fc.module });
  const api = await ext.activate({ subscriptions: [], extensionUri: { fsPath: "/ext" } });
  return { api, ...fv, ...fc };
}

test("Benchmark from the lens runs tclint bench on that target and shows its report in a webview", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-bench-ext-"));
  const tclint = fakeTclint(dir);
  const { calls, instances } = await activate({ folder: dir, config: { "tclint.path": [tclint.script] } });
  assert.deepEqual(instances[0].clientOptions.initializationOptions.clientCommands, ["tclint.benchmark"]); // the server's lens needs it
  const run = await calls.commands["tclint.benchmark"]({ uri: `file://${dir}/pkg/ops.py`, target: "run" });
  assert.equal(run.code, 0);
  assert.match(tclint.args(), /^bench --output-format html -o \S+report\.html pkg\/ops\.py::run$/);
  const panel = calls.webviews.find((w) => w.viewType === "tclint.bench");
  assert.equal(panel.title, "tclint bench: pkg/ops.py::run");
  assert.match(panel.webview.html, /Content-Security-Policy/);
  assert.match(panel.webview.html, /<table id="modes">/);
  assert.equal(calls.errors.length + calls.warnings.length, 0);
});

test("Benchmark from the palette uses the server's Benchmark lens at the cursor; a broken budget warns", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-bench-ext-"));
  const tclint = fakeTclint(dir, 1);
  const doc = { uri: { scheme: "file", fsPath: `${dir}/ops.py`, toString: () => `file://${dir}/ops.py` }, languageId: "python", isDirty: false };
  const { calls } = await activate({ folder: dir, config: { "tclint.path": [tclint.script] }, editor: { document: doc, selection: { active: { line: 9, character: 0 } } } });
  calls.commands["vscode.executeCodeLensProvider"] = async () => [
    { range: { start: { line: 4 } }, command: { command: "tclint.benchmark", arguments: [{ uri: `file://${dir}/ops.py`, target: "run" }] } },
    { range: { start: { line: 20 } }, command: { command: "tclint.benchmark", arguments: [{ uri: `file://${dir}/ops.py`, target: "later" }] } },
  ];
  const run = await calls.commands["tclint.benchmark"]();
  assert.equal(run.target, "ops.py::run");
  assert.equal(run.code, 1);
  assert.match(calls.warnings[0].msg, /see the report/);
  calls.commands["vscode.executeCodeLensProvider"] = async () => [];
  assert.equal(await calls.commands["tclint.benchmark"](), undefined);
  assert.match(calls.warnings[1].msg, /no compiled entry point with declared inputs at the cursor/);
});

test("restricted workspace: Benchmark runs nothing", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-bench-ext-"));
  const tclint = fakeTclint(dir);
  const { calls } = await activate({ folder: dir, trusted: false, config: { "tclint.path": [tclint.script] } });
  assert.equal(await calls.commands["tclint.benchmark"]({ uri: `file://${dir}/ops.py`, target: "run" }), undefined);
  assert.match(calls.warnings.at(-1).msg, /trust the workspace/);
  assert.ok(!fs.existsSync(path.join(dir, "args.txt")), "tclint bench was not started");
});

test("a real tclint bench run (backend eager) shows the timeline and the mode table", { skip: !projectPython() && "no project .venv", timeout: 300_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tclint-bench-real-"));
  fs.writeFileSync(path.join(dir, "ops.py"), "import torch\n\n\ndef run(x: torch.Tensor) -> torch.Tensor:\n    return x.sin() + 1\n");
  fs.writeFileSync(path.join(dir, "ops_probe_inputs.py"), "import torch\n\n\ndef inputs_run():\n    for n in (4, 8):\n        yield {'args': (torch.randn(n),), 'label': f'n={n}'}\n");
  fs.writeFileSync(path.join(dir, "pyproject.toml"), '[project]\nname = "w"\n\n[tool.tclint.bench]\nbackend = "eager"\niterations = 5\ncache-run = false\n');
  const { calls } = await activate({ folder: dir, config: { "tclint.interpreter": [projectPython()] } });
  const run = await calls.commands["tclint.benchmark"]({ uri: `file://${dir}/ops.py`, target: "run" });
  assert.equal(run.code, 0, run.html);
  const html = calls.webviews.find((w) => w.viewType === "tclint.bench").webview.html;
  assert.match(html, /<svg class="timeline"/);
  assert.match(html, /<table id="modes">/);
  assert.match(html, /n=8/);
});
