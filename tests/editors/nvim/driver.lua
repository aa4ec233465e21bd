-- Headless Neovim driver for tests/editors/test_neovim.py (Neovim 0.7 and 0.11 alike).
-- The file given on the command line is open, and the packaged tclint config (init.lua) has
-- attached the server.  Steps: wait for diagnostics, apply the quick fix for FIX_CODE, wait
-- for it to go, run :TclintProbe on PROBE_LINE, write everything as JSON to TCLINT_OUT, quit.
local out_path = os.getenv("TCLINT_OUT")
local timeout = tonumber(os.getenv("TCLINT_TIMEOUT_MS") or "60000")
local fix_code = os.getenv("TCLINT_FIX_CODE")
local probe_line = tonumber(os.getenv("TCLINT_PROBE_LINE") or "0")
local result = { nvim = vim.version(), errors = {} }
local buf = vim.api.nvim_get_current_buf()

local function finish(code)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd(code == 0 and "qa!" or ("cquit " .. code))
end

local function snapshot()
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
                         code = d.code, message = d.message, source = d.source, severity = d.severity })
  end
  table.sort(list, function(a, b) return a.lnum < b.lnum end)
  return list
end

local ok, err = pcall(function()
  result.filetype = vim.bo[buf].filetype
  result.api = (vim.lsp.config and vim.lsp.enable) and "vim.lsp.config/enable"
    or (vim.lsp.start and "vim.lsp.start") or "vim.lsp.start_client"
  local tclint = require("tclint")
  if not vim.wait(timeout, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
    result.client_attached = tclint.client(buf) ~= nil
    error("timeout waiting for diagnostics")
  end
  local client = tclint.client(buf)
  result.client = { name = client.name, cmd = client.config.cmd, root_dir = client.config.root_dir }
  result.diagnostics = snapshot()

  -- the quick fix, the way a user gets it: codeAction for the diagnostic's range, apply its edit
  if fix_code then
    local target
    for _, d in ipairs(vim.diagnostic.get(buf)) do
      if d.code == fix_code then target = d end
    end
    if not target then error("no " .. fix_code .. " diagnostic") end
    -- rebuild the LSP diagnostic (0.7's user_data.lsp lacks range/message)
    local lsp_diag = (target.user_data and target.user_data.lsp) or {}
    lsp_diag = vim.tbl_extend("force", lsp_diag, {
      range = { start = { line = target.lnum, character = target.col },
                ["end"] = { line = target.end_lnum, character = target.end_col } },
      message = target.message, severity = target.severity, code = target.code, source = target.source,
    })
    local params = { textDocument = { uri = vim.uri_from_bufnr(buf) }, range = lsp_diag.range,
                     context = { diagnostics = { lsp_diag } } }
    local resp, rerr = tclint.request_sync(client, "textDocument/codeAction", params, timeout, buf)
    if not resp or resp.err then error("codeAction: " .. vim.inspect(rerr or resp.err)) end
    result.code_actions = {}
    local chosen
    for _, action in ipairs(resp.result or {}) do
      table.insert(result.code_actions, { title = action.title, kind = action.kind })
      if not chosen and action.edit and action.kind and action.kind:match("^quickfix") then chosen = action end
    end
    if not chosen then error("no quick fix with an edit among " .. vim.inspect(result.code_actions)) end
    result.applied = chosen.title
    vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding or "utf-16")
    result.fixed_gone = vim.wait(timeout, function()
      for _, d in ipairs(vim.diagnostic.get(buf)) do
        if d.code == fix_code then return false end
      end
      return true
    end, 50)
    result.after_fix = snapshot()
    result.buffer = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
  end

  -- :TclintProbe on a line of the compiled function
  if probe_line > 0 then
    vim.api.nvim_win_set_cursor(0, { probe_line, 4 })
    local res, perr = tclint.probe("function", { sync = true, timeout_ms = timeout })
    if perr then error("probe: " .. vim.inspect(perr)) end
    result.probe = res
    result.probe_text = tclint.last_probe_buf and vim.api.nvim_buf_get_lines(tclint.last_probe_buf, 0, -1, false) or {}
  end
end)
if not ok then
  table.insert(result.errors, tostring(err))
  result.diagnostics = result.diagnostics or snapshot()
  return finish(3)
end
finish(0)
