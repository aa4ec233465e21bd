-- tclint for Neovim: the tclint language server on Python buffers, plus :TclintProbe.
--
--   require("tclint").setup({
--     python = nil,           -- interpreter that has tclint-torch[server]; default: $VIRTUAL_ENV,
--                             -- then <root>/.venv, then python3 on PATH
--     cmd = nil,              -- full server command; default: { <python's bin>/tclint, "server" }
--     settings = {},          -- the server's settings, e.g. { select = { "TC1" }, unsafeFixes = true }
--     root_markers = { "pyproject.toml", "tclint.toml", "setup.cfg", "setup.py", ".git" },
--     filetypes = { "python" },
--   })
--
-- Neovim 0.11+: vim.lsp.config + vim.lsp.enable.  0.8-0.10: vim.lsp.start from a FileType
-- autocommand.  0.7: vim.lsp.start_client + vim.lsp.buf_attach_client.  No plugin needed.

local M = {}

M.defaults = {
  python = nil,
  cmd = nil,
  settings = {},
  root_markers = { "pyproject.toml", "tclint.toml", "setup.cfg", "setup.py", ".git" },
  filetypes = { "python" },
  probe_timeout_ms = 300000,
}

M.config = vim.deepcopy(M.defaults)

local uv = vim.loop

local function exists(path)
  return path ~= nil and uv.fs_stat(path) ~= nil
end

local function dirname(path)
  return vim.fn.fnamemodify(path, ":h")
end

--- The nearest folder above `path` holding one of the root markers, or the file's own folder.
function M.find_root(path, markers)
  markers = markers or M.config.root_markers
  local dir = vim.fn.fnamemodify(path ~= "" and path or vim.fn.getcwd(), ":p")
  if vim.fn.isdirectory(dir) == 0 then
    dir = dirname(dir)
  end
  dir = dir:gsub("/$", "")
  local start = dir
  while dir ~= "" do
    for _, marker in ipairs(markers) do
      if exists(dir .. "/" .. marker) then
        return dir
      end
    end
    local parent = dirname(dir)
    if parent == dir then
      break
    end
    dir = parent
  end
  return start
end

--- The interpreter to run the server with: the `python` option, the active virtualenv, the
--- project's .venv, else python3 (the probe needs the project's own torch).
function M.python(root)
  if M.config.python then
    return M.config.python
  end
  local venv = os.getenv("VIRTUAL_ENV")
  if venv and exists(venv .. "/bin/python") then
    return venv .. "/bin/python"
  end
  for _, name in ipairs({ ".venv", "venv" }) do
    local candidate = (root or vim.fn.getcwd()) .. "/" .. name .. "/bin/python"
    if exists(candidate) then
      return candidate
    end
  end
  return "python3"
end

--- `python -c` with this instead of `python -m tclint.server`: `-m` (and `-c`) put the working
--- folder -- the workspace -- first on sys.path, so a workspace holding a `tclint/` package would
--- run its own code in place of the server.  The bootstrap drops that entry before any import.
M.BOOTSTRAP = "import sys; sys.path[:] = [p for p in sys.path if p]; "
  .. "from tclint.server.__main__ import main; sys.exit(main())"

--- The `tclint` console script of `python`'s environment (beside it in bin/ or Scripts\), or for
--- a bare `python3` the `tclint` on PATH; nil when there is none.
function M.server_script(python)
  local candidate
  if python:find("[/\\]") then
    candidate = dirname(python) .. "/tclint"
  else
    candidate = vim.fn.exepath("tclint")
  end
  if candidate ~= "" and vim.fn.executable(candidate) == 1 then
    return candidate
  end
  return nil
end

--- The server command: `cmd` when set; else the environment's console script (`tclint server`:
--- its sys.path starts at the script's folder, never the workspace); else the interpreter with
--- the bootstrap.  Never `python -m tclint.server`, which the workspace can shadow.
function M.cmd(root)
  if M.config.cmd then
    return M.config.cmd
  end
  local python = M.python(root)
  local script = M.server_script(python)
  if script then
    return { script, "server" }
  end
  return { python, "-c", M.BOOTSTRAP }
end

local function lsp_settings()
  return { tclint = M.config.settings }
end

local function init_options()
  return { settings = M.config.settings, workspaceTrusted = true }
end

--- The running tclint client attached to `buf` (or any tclint client).
function M.client(buf)
  local all = (vim.lsp.get_clients or vim.lsp.get_active_clients)() -- 0.7 takes no filter
  local fallback
  for _, client in ipairs(all) do
    if client.name == "tclint" then
      if buf == nil or vim.lsp.buf_is_attached(buf, client.id) then
        return client
      end
      fallback = fallback or client
    end
  end
  return fallback
end

--- client:request_sync / client.request_sync: methods since 0.11 (the `.` form is deprecated).
local has_011 = vim.fn.has("nvim-0.11") == 1

function M.request_sync(client, method, params, timeout_ms, buf)
  if has_011 then
    return client:request_sync(method, params, timeout_ms, buf)
  end
  return client.request_sync(method, params, timeout_ms, buf)
end

function M.request(client, method, params, handler, buf)
  if has_011 then
    return client:request(method, params, handler, buf)
  end
  return client.request(method, params, handler, buf)
end

-- ---------------------------------------------------------------------------------------------
-- the probe: run the function at the cursor (or the file) under TorchDynamo via the server

local function text(value)
  if value == nil or value == vim.NIL then
    return nil
  end
  if type(value) == "table" then
    return vim.fn.json_encode(value)
  end
  return tostring(value)
end

local function first(tbl, keys)
  if type(tbl) ~= "table" then
    return nil
  end
  for _, key in ipairs(keys) do
    if tbl[key] ~= nil and tbl[key] ~= vim.NIL then
      return tbl[key]
    end
  end
  return nil
end

local function where(item)
  local loc = first(item, { "location", "loc", "user_frame" })
  if loc == nil and type(item.frame) == "table" then
    loc = item.frame
  end
  loc = loc or item
  local path = first(loc, { "path", "filename", "file", "uri" })
  local line = first(loc, { "line", "lineno", "row" })
  if path and line then
    return string.format("%s:%s", vim.fn.fnamemodify((tostring(path):gsub("^file://", "")), ":t"), line)
  end
  return nil
end

local function frame_name(c)
  local frame = first(c, { "frame", "function", "name" })
  if type(frame) == "table" then
    return text(first(frame, { "qualname", "function", "name", "code_name" }))
  end
  return text(frame)
end

--- What "no graph break" means for this report: only a completed run that produced graphs and
--- had no error compiled into whole graphs.
local function no_break_text(report, completed, compiles, errors)
  if completed == false then
    return "No graph break was seen before the run stopped (see above): this is not a clean result."
  end
  if #compiles == 0 then
    return "No graph break, and nothing was compiled: the probe saw no compiled code."
  end
  local graphs = tonumber(text(report.graphs))
  if graphs == nil then
    graphs = 0
    for _, c in ipairs(compiles) do
      graphs = graphs + (tonumber(text(c.graphs)) or 0)
    end
  end
  if graphs == 0 then
    return "No graph break, but no graph was produced either: nothing ran compiled."
  end
  if #errors > 0 then
    return "No graph break, but the run had errors (see Errors)."
  end
  return "No graph break: the code compiled into whole graphs."
end

local function failed_guard(c)
  if c.kind ~= nil and c.kind ~= "recompile" then
    return nil
  end
  local guard = first(c, { "failed_guard", "failedGuard", "guard_failure", "guard" })
  if type(guard) == "table" then
    return text(first(guard, { "guard", "text" }))
  end
  return text(guard)
end

--- Lines of a readable report (the runtime probe's JSON report, bare or as {report = ...}):
--- per compilation its trigger and failed guard, per graph break its GB id, hits, link and place.
function M.format_probe(result, title)
  local report = first(result, { "report", "result" }) or result or {}
  local head = vim.fn.fnamemodify(text(first(report, { "title", "target", "function", "program" })) or title, ":t")
  local lines = { "# tclint probe: " .. head }
  local env = type(report.environment) == "table" and report.environment or {}
  local status = text(report.status)
  local message = text(first(report, { "message", "summary" }))
  if env.torch or message then
    table.insert(lines, string.format("torch %s · %s", text(env.torch) or "?", message or ""))
  end
  table.insert(lines, "")
  local err = first(result, { "error" }) or first(report, { "error" })
  local completed = nil
  if status then
    completed = status == "ok" or status == "stopped"
  end
  if err then
    table.insert(lines, "Probe failed: " .. (text(first(err, { "message" })) or text(err)))
    table.insert(lines, "")
  elseif completed == false and message then
    table.insert(lines, "Probe failed: " .. message)
    table.insert(lines, "")
  end
  local verdict = text(report.verdict)
  if verdict and verdict ~= "" then
    table.insert(lines, "Verdict: " .. verdict)
    table.insert(lines, "")
  end
  -- errors first: compilations and "no graph break" above them would read as a success
  local errors = first(report, { "errors" }) or {}
  if #errors > 0 then
    table.insert(lines, string.format("## Errors (%d)", #errors))
    for _, e in ipairs(errors) do
      local etype = (text(e.type) or ""):gsub("^.*%.", "")
      table.insert(lines, string.format("! %s: %s %s%s", text(e.kind) or "error", etype, text(e.message) or "",
        where(e) and ("  at " .. where(e)) or ""))
    end
    table.insert(lines, "")
  end
  local compiles = first(report, { "compiles", "compilations" }) or {}
  table.insert(lines, string.format("## Compilations (%d)", #compiles))
  for i, c in ipairs(compiles) do
    local guard = failed_guard(c)
    local trigger = guard and "guard failed" or text(first(c, { "trigger", "reason" })) or "first call"
    local cause = guard and type(c.cause) == "table" and text(c.cause.text) or nil
    table.insert(lines, string.format("%d. %s%s  trigger: %s%s", i, frame_name(c) or "?",
      where(c) and (" (" .. where(c) .. ")") or "", trigger,
      cause and (": " .. cause .. " [Dynamo: " .. guard .. "]") or (guard and (": " .. guard) or "")))
    if c.dropped == true then
      table.insert(lines, string.format("   DROPPED by Dynamo: the whole frame runs eagerly on every call (%s: %s)",
        text(c.fail_type) or "failed", text(c.fail_reason) or ""))
    end
  end
  table.insert(lines, "")
  local breaks = first(report, { "graph_breaks", "breaks", "graphBreaks" }) or {}
  table.insert(lines, string.format("## Graph breaks (%d)", #breaks))
  if #breaks == 0 then
    table.insert(lines, no_break_text(report, completed, compiles, errors))
  end
  for _, b in ipairs(breaks) do
    local gb = text(first(b, { "gb_id", "gbId", "gb" })) or "?"
    local url = text(first(b, { "url", "link" }))
    if not url and gb:match("^GB%d+$") then
      url = "https://meta-pytorch.github.io/compile-graph-break-site/gb/" .. gb:lower() .. ".html"
    end
    local reason = text(b.gb_type) or text(first(b, { "reason", "message" })) or ""
    local hits = text(first(b, { "hits", "count" }))
    if hits == nil then
      -- a dropped frame's break runs eagerly: its hits are not counted (never shown as 1 or 0)
      hits = b.hits_counted == false and "? (hits not counted)" or (text(b.events) or "1")
    end
    table.insert(lines, string.format("- %s ×%s %s%s", gb, hits, reason, where(b) and ("  at " .. where(b)) or ""))
    if b.frame_dropped == true then
      table.insert(lines, "  DROPPED by Dynamo: the frame around it runs eagerly on every call (hits not counted)")
    end
    if url then
      table.insert(lines, "  " .. url)
    end
  end
  return lines
end

local function show(lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(buf, "filetype", "markdown")
  vim.api.nvim_buf_set_option(buf, "modifiable", false)
  if #vim.api.nvim_list_uis() > 0 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, buf)
  end
  M.last_probe_buf = buf
  return buf
end

local function position_params(buf, client)
  local win = vim.api.nvim_get_current_win()
  local ok, params = pcall(vim.lsp.util.make_position_params, win, client and client.offset_encoding or "utf-16")
  if not ok then
    params = vim.lsp.util.make_position_params()
  end
  params.textDocument = params.textDocument or { uri = vim.uri_from_bufnr(buf) }
  return params
end

--- :TclintProbe (function at the cursor) / :TclintProbeFile (the file as a program).
--- Returns the server's result (also shown in a scratch markdown buffer).
function M.probe(kind, opts)
  opts = opts or {}
  local buf = vim.api.nvim_get_current_buf()
  local client = M.client(buf)
  if not client then
    vim.notify("tclint: the server is not running for this buffer", vim.log.levels.WARN)
    return nil
  end
  if vim.bo[buf].modified then
    vim.cmd("silent write")
  end
  local uri = vim.uri_from_bufnr(buf)
  local command, arguments
  if kind == "file" then
    command, arguments = "tclint.probeFile", { { uri = uri } }
  else
    local params = position_params(buf, client)
    command, arguments = "tclint.probe", { { uri = uri, position = params.position } }
  end
  local title = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(buf), ":t")
  local function handle(err, result)
    if err then
      vim.notify("tclint probe failed: " .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.last_probe = result
    show(M.format_probe(result, title))
  end
  local params = { command = command, arguments = arguments }
  if opts.sync then
    local resp, err = M.request_sync(client, "workspace/executeCommand", params, opts.timeout_ms or M.config.probe_timeout_ms, buf)
    if not resp then
      handle({ message = err or "timeout" })
      return nil
    end
    handle(resp.err, resp.result)
    return resp.result, resp.err
  end
  vim.notify("tclint: probing " .. title .. " …")
  M.request(client, "workspace/executeCommand", params, function(err, result)
    handle(err, result)
  end, buf)
  return nil
end

-- ---------------------------------------------------------------------------------------------
-- related locations: Neovim keeps a diagnostic's LSP relatedInformation (in user_data.lsp) but
-- shows it nowhere (0.7 - 0.11), so TC312's library sites, and the "called from" places of
-- other findings, are listed by :TclintRelated in the location list, where a jump opens the file

local function line_of(fname, lnum)
  local bufnr = vim.fn.bufnr(fname)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return vim.api.nvim_buf_get_lines(bufnr, lnum, lnum + 1, false)[1]
  end
  local ok, lines = pcall(vim.fn.readfile, fname, "", lnum + 1)
  return ok and lines[lnum + 1] or nil
end

--- The 1-based byte column of an LSP position's character on `line` (the client's encoding).
local function byte_col(line, character, encoding)
  if not line or character == 0 then
    return character + 1
  end
  local ok, col
  if has_011 then
    ok, col = pcall(vim.str_byteindex, line, encoding or "utf-16", character, false)
  else
    ok, col = pcall(vim.str_byteindex, line, character, encoding ~= "utf-8")
  end
  return (ok and col or character) + 1
end

--- Location-list items for the related locations of the tclint diagnostics of `buf` on the
--- 0-based line `lnum` (every line when nil), in the server's order: file, line, column and the
--- location's message (for TC312: rule, GB id, heat and the chain from your call).
function M.related_items(buf, lnum)
  buf = (buf == nil or buf == 0) and vim.api.nvim_get_current_buf() or buf
  local client = M.client(buf)
  local encoding = client and client.offset_encoding or "utf-16"
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(buf, lnum and { lnum = lnum } or nil)) do
    local lsp = type(d.user_data) == "table" and type(d.user_data.lsp) == "table" and d.user_data.lsp or {}
    local related = lsp.relatedInformation
    if (d.source == "tclint" or d.source == "tclint-probe") and type(related) == "table" then
      for _, rel in ipairs(related) do
        local loc = rel.location
        local fname = vim.uri_to_fname(loc.uri)
        local start = loc.range.start
        table.insert(items, {
          filename = fname,
          lnum = start.line + 1,
          col = byte_col(line_of(fname, start.line), start.character, encoding),
          text = (tostring(rel.message or ""):gsub("\n.*", "")),
        })
      end
    end
  end
  return items
end

--- :TclintRelated: the related locations of the findings on the cursor line (with `!`, or when
--- that line has none, of the whole buffer) in the window's location list; `:ll N` (or <CR> in
--- the list) jumps there, into the installed library's file for TC312.  Returns the items.
function M.related(opts)
  opts = opts or {}
  local buf = vim.api.nvim_get_current_buf()
  local items = {}
  if not opts.all then
    items = M.related_items(buf, vim.api.nvim_win_get_cursor(0)[1] - 1)
  end
  if #items == 0 then
    items = M.related_items(buf, nil)
  end
  if #items == 0 then
    vim.notify("tclint: no related locations here", vim.log.levels.INFO)
    return items
  end
  vim.fn.setloclist(0, {}, " ", { title = "tclint: related locations", items = items })
  if #vim.api.nvim_list_uis() > 0 then
    vim.cmd("lopen")
  end
  return items
end

--- :TclintFixAll: the server's "fix all" action (source.fixAll.tclint: every finding's preferred
--- safe fix, never an unsafe one) applied to the current buffer, without a menu; usable from a
--- BufWritePre autocommand.  Returns true when it changed the buffer.
function M.fix_all(opts)
  opts = opts or {}
  local buf = vim.api.nvim_get_current_buf()
  local client = M.client(buf)
  if not client then
    vim.notify("tclint: the server is not running for this buffer", vim.log.levels.WARN)
    return false
  end
  local last = math.max(vim.api.nvim_buf_line_count(buf) - 1, 0)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = 0, character = 0 }, ["end"] = { line = last, character = 0 } },
    context = { diagnostics = {}, only = { "source.fixAll.tclint" } },
  }
  local resp, err = M.request_sync(client, "textDocument/codeAction", params, opts.timeout_ms or 5000, buf)
  if not resp or resp.err then
    vim.notify("tclint: fix all failed: " .. vim.inspect(err or resp.err), vim.log.levels.ERROR)
    return false
  end
  for _, action in ipairs(resp.result or {}) do
    if action.kind == "source.fixAll.tclint" and action.edit then
      vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or "utf-16")
      return true
    end
  end
  return false
end

local function commands()
  local function define(name, fn, desc, extra)
    vim.api.nvim_create_user_command(name, fn, vim.tbl_extend("force", { desc = desc, force = true }, extra or {}))
  end
  define("TclintRelated", function(args) M.related({ all = args.bang }) end,
    "tclint: the finding's related locations (TC312: the library sites) in the location list", { bang = true })
  define("TclintFixAll", function() M.fix_all() end, "tclint: apply every safe fix to the buffer")
  define("TclintProbe", function() M.probe("function") end, "tclint: probe the function at the cursor under TorchDynamo")
  define("TclintProbeFile", function() M.probe("file") end, "tclint: probe the current file as a program")
  define("TclintRestart", function()
    local client = M.client(0)
    if client then
      if has_011 then client:stop() else client.stop() end
    end
    vim.defer_fn(function()
      vim.cmd("edit")
    end, 500)
  end, "tclint: restart the language server")
  define("TclintLog", function()
    vim.cmd("edit " .. vim.fn.fnameescape(vim.lsp.get_log_path()))
  end, "tclint: open the LSP log")
end

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  commands()
  if vim.lsp.config and vim.lsp.enable then
    -- Neovim 0.11+
    vim.lsp.config("tclint", {
      cmd = M.cmd(M.find_root(vim.fn.getcwd())),
      filetypes = M.config.filetypes,
      root_markers = M.config.root_markers,
      settings = lsp_settings(),
      init_options = init_options(),
    })
    vim.lsp.enable("tclint")
    return M
  end
  local group = vim.api.nvim_create_augroup("tclint", { clear = true })
  local client_ids = {} -- 0.7: one client per root, attached to each buffer
  vim.api.nvim_create_autocmd("FileType", {
    group = group,
    pattern = M.config.filetypes,
    callback = function(args)
      local name = vim.api.nvim_buf_get_name(args.buf)
      if name == "" or vim.bo[args.buf].buftype ~= "" then
        return
      end
      local root = M.find_root(name)
      local config = {
        name = "tclint",
        cmd = M.cmd(root),
        root_dir = root,
        settings = lsp_settings(),
        init_options = init_options(),
      }
      if vim.lsp.start then
        -- Neovim 0.8-0.10: reuses a running client with the same name and root
        vim.lsp.start(config)
      else
        -- Neovim 0.7
        client_ids[root] = client_ids[root] or vim.lsp.start_client(config)
        vim.lsp.buf_attach_client(args.buf, client_ids[root])
      end
    end,
  })
  return M
end

return M
