// The probe view says the truth in the worst cases (issue 15): a run that raised, timed out,
// crashed, produced no graph, whose synthesised inputs were rejected, or whose every compile failed
// with a hard error.  The reports are real ones, stored by tests/helpers/make_verdict_reports.py as
// the server's `tclint.probe` command returns them.
"use strict";

const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { load } = require("./helpers");

const probeModel = load("probeModel");
const probeHtml = load("probeHtml");
const VERDICTS = path.resolve(__dirname, "..", "..", "..", "tests", "fixtures", "runtime_probe", "verdicts");

function render(name) {
  const raw = JSON.parse(fs.readFileSync(path.join(VERDICTS, `${name}.json`), "utf8"));
  const view = probeModel.normalizeProbeResult(raw, "fallback");
  const html = probeHtml.renderProbeHtml(view, { cspSource: "x", nonce: "n" });
  return { raw, view, html, text: html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ") };
}

const CLEAN = /No graph break: the code compiled into whole graphs/;

for (const [name, said] of [
  ["raised", /Probe failed:.*raised ValueError at .*fault\.py:\d+: the user&#39;s own bug/s],
  ["timeout", /Probe failed:.*timed out after 4 s/s],
  ["crashed", /Probe failed:.*the process crashed \(SIGSEGV\)/s],
  ["inputs_rejected", /Probe failed:.*the synthesised inputs were rejected by eager code/s],
]) {
  test(`probe view: a run that did not complete (${name}) says how it ended, first`, () => {
    const { view, html } = render(name);
    assert.equal(view.completed, false);
    assert.match(html, said);
    assert.ok(html.indexOf("Probe failed:") < html.indexOf("<h2>Compilations"), "the failure comes before the tables");
    assert.doesNotMatch(html, CLEAN);
    if (view.breaks.length === 0) {
      assert.match(html, /No graph break was seen before the run stopped/);
    }
  });
}

test("probe view: a run that produced no graph does not claim whole graphs", () => {
  const { view, html } = render("no_graph");
  assert.equal(view.completed, true);
  assert.equal(view.graphs, 0);
  assert.match(html, /<strong>no graph produced<\/strong>/);
  assert.match(html, /Dropped by Dynamo: runs eagerly on every call/);
  assert.equal(view.breaks[0].hits, undefined); // not counted: the frame ran eagerly
  assert.match(html, /<td class="num">not counted<\/td>/);
  assert.doesNotMatch(html, CLEAN);
});

test("probe view: hard errors come first and 0 graphs is not a success (issue 15, point 3)", () => {
  const { view, html } = render("hard_error");
  assert.equal(view.breaks.length, 0);
  assert.deepEqual(view.errors.length, 1);
  assert.match(html, /<strong>1 hard error<\/strong>/);
  assert.ok(html.indexOf("Errors (1)") < html.indexOf("<h2>Compilations"), "errors before the compilations");
  assert.match(html, /hard-error: AssertionError Attempt to trace forbidden callable/);
  assert.match(html, /No graph break, but no graph was produced either/);
  assert.doesNotMatch(html, CLEAN);
});

test("probe view: a clean run still says so", () => {
  const view = {
    title: "m.py::f", completed: true, graphs: 1, errors: [], notes: [], breaks: [],
    compiles: [{ index: 1, frame: "f", trigger: "first call", graphs: 1 }],
  };
  assert.match(probeHtml.renderProbeHtml(view, { cspSource: "x", nonce: "n" }), CLEAN);
  assert.equal(probeHtml.noBreakText({ ...view, errors: ["hard-error: x"] }), "No graph break, but the run had errors (see Errors).");
});

test("probe view: a failed guard is shown in the user's terms, Dynamo's text beside it", () => {
  const view = probeModel.normalizeProbeResult({
    status: "ok",
    compiles: [{ kind: "recompile", frame: { function: "forward", qualname: "MyModel.forward", file: "/ws/m.py", line: 3 },
                 guard: { guard: "self._modules['drop'].training == True" },
                 cause: { kind: "train-eval", text: "train/eval mode changed (compiled in train mode)" }, graphs: 1 }],
  }, "f");
  assert.equal(view.compiles[0].frame, "MyModel.forward");
  assert.equal(view.compiles[0].cause, "train/eval mode changed (compiled in train mode)");
  const html = probeHtml.renderProbeHtml(view, { cspSource: "x", nonce: "n" });
  assert.match(html, /train\/eval mode changed \(compiled in train mode\)<br><code>self\._modules\[&#39;drop&#39;\]\.training == True<\/code>/);
});
