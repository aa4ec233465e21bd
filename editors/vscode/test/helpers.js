// Test helpers: compile a src/ module with esbuild (vscode and vscode-languageclient left
// external) and load it with fakes for those two modules (node:test's mock.module needs Node 22).
"use strict";

const esbuild = require("esbuild");
const Module = require("node:module");
const fs = require("node:fs");
const path = require("node:path");

const ROOT = path.resolve(__dirname, "..");
const BUILD = path.join(ROOT, ".test-build");

let fakes = {};
const originalLoad = Module._load;
Module._load = function (request, parent, isMain) {
  if (Object.prototype.hasOwnProperty.call(fakes, request)) {
    return fakes[request];
  }
  return originalLoad.call(this, request, parent, isMain);
};

/** Bundle src/<name>.ts and require it fresh, with `vscode` / the language client replaced by `withFakes`. */
function load(name, withFakes = {}) {
  fs.mkdirSync(BUILD, { recursive: true });
  const outfile = path.join(BUILD, `${name}.js`);
  esbuild.buildSync({
    entryPoints: [path.join(ROOT, "src", `${name}.ts`)],
    bundle: true,
    outfile,
    external: ["vscode", "vscode-languageclient", "vscode-languageclient/node"],
    format: "cjs",
    platform: "node",
    target: "node18",
    logLevel: "silent",
  });
  fakes = withFakes;
  delete require.cache[outfile];
  return require(outfile);
}

function manifest() {
  return JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
}

/** The repository's own Python environment (tclint installed editable), if there is one. */
function projectPython() {
  const candidates = [process.env.TCLINT_TEST_PYTHON, path.resolve(ROOT, "../../.venv/bin/python")].filter(Boolean);
  return candidates.find((p) => fs.existsSync(p));
}

module.exports = { load, manifest, projectPython, ROOT };
