// A fake `vscode` module and a fake `vscode-languageclient/node`, recording what the extension
// does with them.  Only what the extension uses is here.
"use strict";

const { EventEmitter } = require("node:events");

function fakeVscode(options = {}) {
  const calls = { commands: {}, executed: [], warnings: [], errors: [], infos: [], webviews: [], statusItems: [], shownDocs: [] };
  const config = { ...(options.config || {}) };
  const events = new EventEmitter();
  const answers = [...(options.answers || [])]; // what the user clicks in each message, in order

  const message = (list) => (msg, ...items) => {
    list.push({ msg, items });
    return Promise.resolve(answers.length ? answers.shift() : undefined);
  };

  class Uri {
    constructor(scheme, fsPath) {
      this.scheme = scheme;
      this.fsPath = fsPath;
      this.path = fsPath;
    }
    static file(p) {
      return new Uri("file", p);
    }
    static parse(s) {
      const m = /^([a-z-]+):(?:\/\/)?(.*)$/.exec(s);
      return m ? new Uri(m[1], decodeURIComponent(m[2])) : new Uri("file", s);
    }
    toString() {
      return `${this.scheme}://${this.fsPath}`;
    }
  }
  class Position {
    constructor(line, character) {
      this.line = line;
      this.character = character;
    }
  }
  class Range {
    constructor(start, end) {
      this.start = start;
      this.end = end;
    }
  }
  class ThemeColor {
    constructor(id) {
      this.id = id;
    }
  }

  const folder = options.folder ? { uri: Uri.file(options.folder), name: "ws", index: 0 } : undefined;
  const vscode = {
    Uri,
    Position,
    Range,
    ThemeColor,
    StatusBarAlignment: { Left: 1, Right: 2 },
    ViewColumn: { One: 1, Beside: -2 },
    ProgressLocation: { Notification: 15 },
    window: {
      activeTextEditor: options.editor,
      createOutputChannel: (name) => {
        const lines = [];
        const log = (level) => (m) => lines.push(`[${level}] ${m}`);
        return { name, lines, info: log("info"), warn: log("warn"), error: log("error"), debug: log("debug"), trace: log("trace"), appendLine: log("line"), append: log("raw"), show: () => (calls.logShown = true), dispose() {} };
      },
      createStatusBarItem: (id) => {
        const item = { id, text: "", show() { this.visible = true; }, dispose() {} };
        calls.statusItems.push(item);
        return item;
      },
      showWarningMessage: message(calls.warnings),
      showErrorMessage: message(calls.errors),
      showInformationMessage: message(calls.infos),
      withProgress: (_opts, task) => task({ report() {} }, { isCancellationRequested: false, onCancellationRequested() {} }),
      createWebviewPanel: (viewType, title) => {
        const panel = { viewType, title, webview: { html: "", cspSource: "vscode-resource:" }, reveal() {}, onDidDispose() {} };
        calls.webviews.push(panel);
        return panel;
      },
      showTextDocument: (doc, opts) => calls.shownDocs.push({ doc, opts }),
    },
    workspace: {
      isTrusted: options.trusted !== false,
      workspaceFolders: folder ? [folder] : undefined,
      getWorkspaceFolder: () => folder,
      getConfiguration: (section) => ({
        get: (key, fallback) => (Object.prototype.hasOwnProperty.call(config, `${section}.${key}`) ? config[`${section}.${key}`] : fallback),
      }),
      onDidChangeConfiguration: (fn) => (events.on("config", fn), { dispose() {} }),
      onDidGrantWorkspaceTrust: (fn) => (events.on("trust", fn), { dispose() {} }),
      asRelativePath: (uri) => String(uri.fsPath || uri).split("/").pop(),
      openTextDocument: async (uri) => ({ uri }),
    },
    extensions: {
      getExtension: (id) => (options.extensions || {})[id],
    },
    commands: {
      registerCommand: (id, fn) => {
        if (calls.commands[id]) throw new Error(`command ${id} already exists`);
        calls.commands[id] = fn;
        return { dispose() {} };
      },
      executeCommand: async (id, ...args) => {
        calls.executed.push({ id, args });
        return calls.commands[id] ? calls.commands[id](...args) : undefined;
      },
    },
  };
  return { vscode, calls, config, events };
}

function fakeLanguageClient(options = {}) {
  const instances = [];
  const State = { Stopped: 1, Starting: 3, Running: 2 };
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, requests: [], state: State.Starting, stopped: false });
      instances.push(this);
    }
    onDidChangeState() {
      return { dispose() {} };
    }
    async start() {
      if (options.failStart) throw new Error(options.failStart);
      this.state = State.Running;
    }
    async stop() {
      this.state = State.Stopped;
      this.stopped = true;
    }
    async dispose() {}
    async sendRequest(type, params) {
      this.requests.push({ method: type.method || type, params });
      return options.reply ? options.reply(type.method || type, params) : null;
    }
  }
  const module = { LanguageClient, State, RevealOutputChannelOn: { Never: 4 }, ExecuteCommandRequest: { type: { method: "workspace/executeCommand" } } };
  return { module, instances, State };
}

module.exports = { fakeVscode, fakeLanguageClient };
