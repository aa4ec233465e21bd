// End-to-end test of the packaged extension in a real VS Code: code-server (VS Code 1.100 for the
// browser) driven by Debian's Chromium through playwright-core.  It installs the .vsix, opens a
// workspace, waits for tclint's squiggles and markers, applies a quick fix, runs
// "tclint: Probe function at cursor" and reads the probe view.  Writes result.json + screenshots.
// The markers are read through the extension API (vscode.languages.getDiagnostics, written to
// OUT/markers.json by the extension when TCLINT_E2E_MARKERS is set: src/markers.ts), never from
// the Problems view, which renders only the rows that fit on screen.
//
// Env: CS_DIR (editors/scripts/setup-code-server.sh's folder), VSIX, WS (workspace folder, a copy:
// the quick fix edits it), FILE (relative path to open), PYTHON (interpreter with tclint[server]),
// OUT (results folder), FIX_LINE / FIX_COL / FIX_CODE / FIX_TITLE (the quick fix to apply),
// PROBE_COMMAND (a command title, e.g. "tclint: Probe current file as a program"), PROBE_LINE,
// PORT (default: a free one), CHROMIUM (default /usr/bin/chromium), TIMEOUT_MS (per step),
// EXTRA_SETTINGS (JSON merged into the user settings), EXPECT_MISSING (PYTHON lacks tclint: check
// the install prompt instead), NOTEBOOK_CODE (FILE is a notebook: wait for a finding with this
// code on one of its cells, and for its squiggle in the notebook editor, then stop), BENCH_LENS (click
// the "Benchmark" code lens in FILE and read the tclint bench report's webview; BENCH_PALETTE_LINE:
// then run "tclint: Benchmark" from the palette with the cursor on that line; then stop),
// VARIANT_LENS (wait for the static variant code lens on FILE's compile site, "≈ N variants: ...",
// record every lens text and stop), RELATED_CODE (wait for a finding with this code in FILE that has
// related locations, list them in the Problems view, click the RELATED_JUMP-th (1-based) and record
// where the editor landed (active-editor.json, src/markers.ts), then stop).
"use strict";

const { spawn, execFileSync } = require("node:child_process");
const fs = require("node:fs");
const net = require("node:net");
const path = require("node:path");

const env = process.env;
const CS_DIR = env.CS_DIR;
const OUT = env.OUT;
const STEP = Number(env.TIMEOUT_MS || 60000);
const result = { steps: [], errors: [] };
const log = (msg) => {
  const line = `[${new Date().toISOString().slice(11, 19)}] ${msg}`;
  result.steps.push(line);
  console.log(line);
};

const { chromium } = require(path.join(CS_DIR, "node_modules", "playwright-core"));
const CODE_SERVER = path.join(CS_DIR, "node_modules", ".bin", "code-server");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

async function waitHttp(url, ms) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer at ${url}`);
}

function prepareProfile(run) {
  for (const dir of ["data/User", "exts"]) fs.mkdirSync(path.join(run, dir), { recursive: true });
  fs.writeFileSync(path.join(run, "config.yaml"), "bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n");
  const settings = {
    "tclint.interpreter": [env.PYTHON],
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.welcomePage.walkthroughs.openOnInstall": false,
    "security.workspace.trust.enabled": false,
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "editor.minimap.enabled": false,
    "editor.hover.enabled": false,
    "files.autoSave": "off",
    "window.restoreWindows": "none",
    ...JSON.parse(env.EXTRA_SETTINGS || "{}"),
  };
  fs.writeFileSync(path.join(run, "data/User/settings.json"), JSON.stringify(settings, null, 2));
  // --config keeps code-server from writing ~/.config/code-server/config.yaml
  execFileSync(CODE_SERVER, ["--config", path.join(run, "config.yaml"), "--user-data-dir", path.join(run, "data"),
    "--extensions-dir", path.join(run, "exts"), "--install-extension", env.VSIX], { stdio: "inherit" });
}

async function editorText(page) {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll(".editor-instance .view-lines .view-line")];
    return lines
      .map((l) => ({ top: parseFloat(l.style.top || "0"), text: l.textContent.replace(/\u00a0/g, " ") }))
      .sort((a, b) => a.top - b.top)
      .map((l) => l.text)
      .join("\n");
  });
}

const MARKERS = () => path.join(OUT, "markers.json");

/** The extension's view of every diagnostic (src/markers.ts), [] until it has written one. */
function readMarkers() {
  try {
    return JSON.parse(fs.readFileSync(MARKERS(), "utf8"));
  } catch {
    return [];
  }
}

/** The markers once ``predicate(markers)`` holds (polling the file the extension keeps). */
async function waitMarkers(predicate, what, ms = STEP) {
  const deadline = Date.now() + ms;
  for (;;) {
    const markers = readMarkers();
    if (predicate(markers)) return markers;
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for markers: ${what}; have ${JSON.stringify(markers.map((m) => [m.uri.split("/").pop(), m.code, m.line]))}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

const inFile = (m) => m.scheme === "file" && m.uri.endsWith("/" + env.FILE);

async function problemRows(page) {
  return page.$$eval(".markers-panel .monaco-list-row", (rows) => rows.map((r) => r.textContent.replace(/\s+/g, " ").trim()));
}

async function gotoLine(page, line, column) {
  await page.keyboard.press("Control+g");
  await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: STEP });
  await page.keyboard.type(`${line}:${column}`);
  await page.keyboard.press("Enter");
  await page.waitForTimeout(300);
}

async function runCommand(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget input", { state: "visible", timeout: STEP });
  await page.keyboard.type(title);
  await page.waitForFunction(
    (t) => [...document.querySelectorAll(".quick-input-list .monaco-list-row")].some((r) => r.textContent.includes(t)),
    title,
    { timeout: STEP },
  );
  await page.keyboard.press("Enter");
}

async function main() {
  fs.mkdirSync(OUT, { recursive: true });
  const run = fs.mkdtempSync(path.join(OUT, "run-"));
  prepareProfile(run);
  log("extension installed");
  result.installed = fs.readdirSync(path.join(run, "exts")).filter((n) => n.includes("tclint"));

  const port = Number(env.PORT || (await freePort()));
  const server = spawn(CODE_SERVER, [
    "--config", path.join(run, "config.yaml"), "--user-data-dir", path.join(run, "data"),
    "--extensions-dir", path.join(run, "exts"), "--bind-addr", `127.0.0.1:${port}`, "--auth", "none",
    "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override",
  ], { env: { ...env, TCLINT_E2E_MARKERS: MARKERS() }, stdio: ["ignore", "pipe", "pipe"] });
  const serverLog = fs.createWriteStream(path.join(OUT, "code-server.log"));
  server.stdout.pipe(serverLog);
  server.stderr.pipe(serverLog);

  let browser;
  try {
    await waitHttp(`http://127.0.0.1:${port}/healthz`, 60000);
    log(`code-server up on ${port}`);
    browser = await chromium.launch({
      executablePath: env.CHROMIUM || "/usr/bin/chromium",
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking", "--no-first-run"],
    });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on("console", (m) => {
      if (m.type() === "error") result.errors.push(`console: ${m.text().slice(0, 300)}`);
    });
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(env.WS)}`, { timeout: STEP });
    await page.waitForSelector(".explorer-folders-view .monaco-list-row", { timeout: STEP });
    log("workbench loaded");

    // open the file from the Explorer (Quick Open + Enter is racy while indexing)
    const parts = env.FILE.split("/");
    for (const [i, name] of parts.entries()) {
      const row = page.locator(`.explorer-folders-view .monaco-list-row[aria-label^="${name}"]`).first();
      await row.waitFor({ timeout: STEP });
      await row.click();
      if (i < parts.length - 1) await page.waitForTimeout(300);
    }
    await page.waitForSelector(".editor-instance .view-lines", { timeout: STEP });
    log(`opened ${env.FILE}`);

    if (env.EXPECT_MISSING) {
      // an interpreter without tclint: the prompt with its one-click install, and the status item
      const toast = page.locator(".notification-toast", { hasText: "tclint is not installed" }).first();
      await toast.waitFor({ timeout: STEP });
      result.notification = (await toast.innerText()).replace(/\s+/g, " ").trim();
      result.notificationButtons = await toast.locator(".monaco-button").allInnerTexts();
      result.statusBar = await page.$$eval(".statusbar-item", (items) =>
        items.map((i) => i.getAttribute("aria-label") || i.textContent.trim()).filter((t) => t.includes("tclint")));
      await page.screenshot({ path: path.join(OUT, "missing.png") });
      log(`prompt: ${result.notification}`);
      result.ok = true;
      return;
    }

    if (env.NOTEBOOK_CODE) {
      // a notebook: VS Code may first show an .ipynb as JSON text (code-server does, before its
      // notebook serializer is up); reopen it in the notebook editor as a user would
      const notebookShown = (ms) => page.waitForFunction(
        () => [...document.querySelectorAll(".notebook-editor .monaco-editor .view-lines")].some((e) => e.offsetParent !== null),
        null, { timeout: ms });
      if (!(await notebookShown(5000).catch(() => null))) {
        await runCommand(page, "View: Reopen Editor With...");
        await page.waitForFunction(() => [...document.querySelectorAll(".quick-input-list .monaco-list-row")].some((r) => r.textContent.includes("Jupyter Notebook")), null, { timeout: STEP });
        await page.keyboard.type("Jupyter Notebook");
        await page.keyboard.press("Enter");
        await notebookShown(STEP);
        log("reopened in the notebook editor");
      }
      // the finding on its cell (a vscode-notebook-cell: document), then its squiggle
      const markers = await waitMarkers(
        (ms) => ms.some((m) => m.scheme === "vscode-notebook-cell" && m.uri.includes(path.basename(env.FILE)) && m.code === env.NOTEBOOK_CODE),
        `${env.NOTEBOOK_CODE} on a cell of ${env.FILE}`, STEP * 2);
      result.notebookMarkers = markers.filter((m) => m.scheme === "vscode-notebook-cell");
      log(`notebook markers: ${result.notebookMarkers.map((m) => `${m.code}@${m.line}:${m.column}`).join(", ")}`);
      await page.waitForSelector(".notebook-editor .squiggly-warning, .notebook-editor .squiggly-error", { timeout: STEP });
      result.notebookSquiggles = await page.$$eval(".notebook-editor .squiggly-warning, .notebook-editor .squiggly-error", (els) => els.length);
      // the squiggle sits in the cell that holds the finding's line
      result.squiggledCellText = await page.$eval(".notebook-editor .squiggly-warning, .notebook-editor .squiggly-error", (el) => {
        const cell = el.closest(".cell-inner-container, .code-cell-row, .monaco-list-row");
        return cell ? cell.textContent.replace(/\u00a0/g, " ") : "";
      });
      await page.screenshot({ path: path.join(OUT, "notebook.png") });
      log(`notebook squiggles: ${result.notebookSquiggles}`);
      result.ok = true;
      return;
    }

    if (env.RELATED_CODE) {
      // a summary with related locations (TC312: the installed library's sites); following a
      // library can take the server a while on a cold cache
      const withRelated = (m) => inFile(m) && m.code === env.RELATED_CODE && m.related && m.related.length > 0;
      const markers = await waitMarkers((ms) => ms.some(withRelated), `${env.RELATED_CODE} with related locations in ${env.FILE}`,
        Number(env.RELATED_TIMEOUT_MS || STEP * 4));
      result.markers = markers.filter(inFile);
      result.relatedMarker = markers.find(withRelated);
      log(`${env.RELATED_CODE} at ${result.relatedMarker.line}: ${result.relatedMarker.related.length} related locations`);
      // the Problems view, maximized so that every related row is rendered
      await page.keyboard.press("Control+Shift+M");
      await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: STEP });
      await runCommand(page, "View: Toggle Maximized Panel");
      await page.waitForTimeout(500);
      const relatedRows = () => page.$$eval(".markers-panel .monaco-list-row", (rows) => rows
        .filter((r) => r.querySelector(".related-info-resource"))
        .map((r) => ({
          file: r.querySelector(".related-info-resource").textContent.trim(),
          at: (r.querySelector(".marker-line") || { textContent: "" }).textContent.trim(),
          text: r.textContent.replace(/\s+/g, " ").trim(),
        })));
      if (!(await relatedRows()).length) {
        // collapsed: expand the summary's row
        await page.locator(".markers-panel .monaco-list-row", { hasText: env.RELATED_CODE }).first().click();
        await page.keyboard.press("ArrowRight");
        await page.waitForSelector(".markers-panel .related-info-resource", { timeout: STEP });
      }
      result.relatedRows = await relatedRows();
      result.problems = await problemRows(page);
      await page.screenshot({ path: path.join(OUT, "related.png") });
      log(`related rows in the Problems view: ${result.relatedRows.length}`);
      if (env.RELATED_JUMP) {
        const target = result.relatedMarker.related[Number(env.RELATED_JUMP) - 1];
        const base = decodeURIComponent(target.uri.split("/").pop());
        const row = page.locator(".markers-panel .monaco-list-row")
          .filter({ has: page.locator(".related-info-resource", { hasText: base }) })
          .filter({ has: page.locator(".marker-line", { hasText: `Ln ${target.line}, Col ${target.column}` }) })
          .first();
        await row.scrollIntoViewIfNeeded({ timeout: STEP });
        await row.click();
        await page.keyboard.press("Enter");
        const editorFile = path.join(OUT, "active-editor.json");
        const deadline = Date.now() + STEP;
        for (;;) {
          let active = null;
          try {
            active = JSON.parse(fs.readFileSync(editorFile, "utf8"));
          } catch {
            /* not written yet */
          }
          if (active && active.uri === target.uri && active.line === target.line) {
            result.jumped = active;
            break;
          }
          if (Date.now() > deadline) throw new Error(`the related location did not open: ${JSON.stringify(active)} for ${JSON.stringify(target)}`);
          await page.waitForTimeout(250);
        }
        result.tabs = await page.$$eval(".tabs-container .tab", (tabs) => tabs.map((t) => t.getAttribute("aria-label") || t.textContent.trim()));
        await page.screenshot({ path: path.join(OUT, "related-opened.png") });
        log(`opened ${result.jumped.uri}:${result.jumped.line}`);
      }
      result.ok = true;
      return;
    }

    if (env.VARIANT_LENS) {
      // the static variant prediction the server shows on each compile site (server/lens.py)
      const lens = page.locator(".codelens-decoration", { hasText: /variants?/ }).first();
      await lens.waitFor({ timeout: STEP * 2 });
      result.lenses = await page.$$eval(".codelens-decoration", (els) => els.map((e) => e.textContent.trim()));
      log(`code lenses: ${JSON.stringify(result.lenses)}`);
      await page.screenshot({ path: path.join(OUT, "variants.png") });
      result.ok = true;
      return;
    }

    if (env.BENCH_LENS) {
      // the server's "Benchmark" code lens on FILE's compiled entry point: click it, then read the
      // tclint bench report in its webview panel (BENCH_TIMEOUT_MS: the bench runs fresh processes)
      const lens = page.locator(".codelens-decoration a", { hasText: /^Benchmark$/ }).first();
      await lens.waitFor({ timeout: STEP * 2 });
      result.lenses = await page.$$eval(".codelens-decoration a", (as) => as.map((a) => a.textContent.trim()));
      log(`code lenses: ${JSON.stringify(result.lenses)}`);
      await lens.click();
      const deadline = Date.now() + Number(env.BENCH_TIMEOUT_MS || 300000);
      while (Date.now() < deadline && !result.benchView) {
        for (const frame of page.frames()) {
          const seen = await frame.evaluate(() => document.querySelector("table#modes") && {
            text: document.body.innerText,
            timelines: document.querySelectorAll("svg.timeline").length,
            calls: document.querySelectorAll("circle.call").length,
          }).catch(() => null);
          if (seen) result.benchView = seen;
        }
        const failed = await page.$$eval(".notification-toast", (ts) => ts.map((t) => t.innerText).filter((t) => /tclint bench failed/.test(t)));
        if (failed.length) throw new Error(failed[0].replace(/\s+/g, " "));
        if (!result.benchView) await page.waitForTimeout(500);
      }
      if (!result.benchView) throw new Error("the bench report did not appear");
      result.tabs = await page.$$eval(".tabs-container .tab", (tabs) => tabs.map((t) => t.getAttribute("aria-label") || t.textContent.trim()));
      await page.screenshot({ path: path.join(OUT, "bench.png") });
      log("bench report shown");
      if (env.BENCH_PALETTE_LINE) {
        // the palette command with the cursor inside the entry point: it finds the target from the
        // server's lenses (vscode.executeCodeLensProvider) and says so in its progress notification
        await page.click(".editor-instance .view-lines");
        await gotoLine(page, Number(env.BENCH_PALETTE_LINE), 5);
        await runCommand(page, "tclint: Benchmark");
        const toast = page.locator(".notification-toast", { hasText: "benchmarking" }).first();
        await toast.waitFor({ timeout: STEP });
        result.paletteToast = (await toast.innerText()).replace(/\s+/g, " ").trim();
        log(`palette: ${result.paletteToast}`);
        await toast.waitFor({ state: "detached", timeout: Number(env.BENCH_TIMEOUT_MS || 300000) });
        result.paletteErrors = await page.$$eval(".notification-toast", (ts) => ts.map((t) => t.innerText).filter((t) => /tclint bench/.test(t)));
        log("palette benchmark finished");
      }
      result.ok = true;
      return;
    }

    // squiggles (the extension starts the server with the configured interpreter)
    await page.waitForSelector(".squiggly-warning, .squiggly-error, .squiggly-info", { timeout: STEP * 2 });
    result.squiggles = await page.$$eval(".squiggly-warning, .squiggly-error, .squiggly-info", (els) => els.length);
    log(`squiggles: ${result.squiggles}`);
    result.statusBar = await page.$$eval(".statusbar-item", (items) =>
      items.map((i) => i.textContent.trim()).filter((t) => t.includes("tclint")));

    // the markers of FILE, wherever they would sit in the Problems list
    const fixLine = Number(env.FIX_LINE);
    const markers = await waitMarkers((ms) => ms.some((m) => inFile(m) && m.code === env.FIX_CODE && m.line === fixLine),
      `${env.FIX_CODE} at ${env.FILE}:${fixLine}`);
    result.markers = markers.filter(inFile);
    log(`markers: ${result.markers.length} in ${env.FILE}`);
    // the Problems panel, for the screenshot (rows below the fold are not rendered: not read here)
    await page.keyboard.press("Control+Shift+M");
    const filter = page.locator(".viewpane-filter input, .markers-panel-action-filter input").first();
    await filter.waitFor({ timeout: STEP });
    await filter.fill(`**/${path.basename(env.FILE)}`);
    await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: STEP });
    result.problems = await problemRows(page);
    await page.screenshot({ path: path.join(OUT, "1-diagnostics.png") });

    // quick fix: cursor on the diagnostic, Ctrl+. and pick the tclint fix for FIX_CODE
    await page.click(".editor-instance .view-lines");
    await gotoLine(page, Number(env.FIX_LINE), Number(env.FIX_COL || 1));
    await page.keyboard.press("Control+.");
    await page.waitForSelector(".action-widget .monaco-list-row", { timeout: STEP });
    result.quickFixes = await page.$$eval(".action-widget .monaco-list-row", (rows) => rows.map((r) => r.textContent.trim()));
    log(`quick fixes: ${JSON.stringify(result.quickFixes)}`);
    const wanted = new RegExp(env.FIX_TITLE || env.FIX_CODE);
    if (!result.quickFixes.some((t) => wanted.test(t))) {
      throw new Error(`no quick fix matching ${wanted} in ${JSON.stringify(result.quickFixes)}`);
    }
    // walk the focus down the list until the wanted action is focused (clicking a row is
    // intercepted by the context view's pointer block)
    for (let i = 0; i <= result.quickFixes.length; i++) {
      const focused = await page.$eval(".action-widget .monaco-list-row.focused", (r) => r.textContent.trim()).catch(() => "");
      if (wanted.test(focused)) {
        result.appliedFix = focused;
        break;
      }
      await page.keyboard.press("ArrowDown");
    }
    if (!result.appliedFix) throw new Error("could not focus the quick fix");
    await page.keyboard.press("Enter");
    const after = await waitMarkers((ms) => !ms.some((m) => inFile(m) && m.code === env.FIX_CODE && m.line === fixLine),
      `${env.FIX_CODE} at ${env.FILE}:${fixLine} to go`);
    result.afterFixMarkers = after.filter(inFile);
    result.editorText = await editorText(page);
    log(`applied: ${result.appliedFix}`);
    await page.screenshot({ path: path.join(OUT, "2-fixed.png") });

    // the probe: the function at the cursor (PROBE_LINE) or the file as a program
    if (env.PROBE_COMMAND) {
      await page.click(".editor-instance .view-lines");
      if (env.PROBE_LINE) await gotoLine(page, Number(env.PROBE_LINE), 5);
      await runCommand(page, env.PROBE_COMMAND);
      log(`probe command sent: ${env.PROBE_COMMAND}`);
      const deadline = Date.now() + Number(env.PROBE_TIMEOUT_MS || 240000);
      let text = "";
      while (Date.now() < deadline) {
        for (const frame of page.frames()) {
          const body = await frame.evaluate(() => document.body && document.body.innerText).catch(() => "");
          if (body && body.includes("tclint probe:") && body.includes("Graph breaks")) text = body;
        }
        if (text) break;
        const failed = await page.$$eval(".notification-toast", (ts) => ts.map((t) => t.innerText).filter((t) => /probe of .* failed/.test(t)));
        if (failed.length) throw new Error(`the probe failed: ${failed[0].replace(/\s+/g, " ")}`);
        await page.waitForTimeout(500);
      }
      if (!text) throw new Error("the probe view did not appear");
      result.probeView = text;
      log("probe view shown");
      await page.screenshot({ path: path.join(OUT, "3-probe.png") });
    }
    result.ok = true;
  } catch (err) {
    result.ok = false;
    result.errors.push(String(err && err.stack ? err.stack : err));
    try {
      const pages = browser ? browser.contexts().flatMap((c) => c.pages()) : [];
      if (pages[0]) await pages[0].screenshot({ path: path.join(OUT, "failure.png") });
    } catch {
      /* best effort */
    }
  } finally {
    if (browser) await browser.close().catch(() => undefined);
    server.kill("SIGTERM");
    fs.writeFileSync(path.join(OUT, "result.json"), JSON.stringify(result, null, 2));
  }
  process.exit(result.ok ? 0 : 1);
}

main();
