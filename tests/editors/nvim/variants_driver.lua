-- Headless Neovim driver for tests/editors/test_neovim_variants.py (Neovim 0.7 and 0.11 alike).
-- The file given on the command line is open and the packaged tclint config (init.lua) attached
-- the server.  Steps: wait for diagnostics, hover on the compile site (TCLINT_SITE_LINE/COL,
-- 1-based line, 0-based column) the way `K` asks it, then Neovim's own code lens machinery
-- (vim.lsp.codelens.refresh / get), and write what was shown as JSON to TCLINT_OUT.
local out_path = os.getenv("TCLINT_OUT")
local timeout = tonumber(os.getenv("TCLINT_TIMEOUT_MS") or "60000")
local line = tonumber(os.getenv("TCLINT_SITE_LINE"))
local col = tonumber(os.getenv("TCLINT_SITE_COL") or "0")
local result = { nvim = vim.version(), errors = {} }
local buf = vim.api.nvim_get_current_buf()

local function finish(code)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd(code == 0 and "qa!" or ("cquit " .. code))
end

local ok, err = pcall(function()
  local tclint = require("tclint")
  if not vim.wait(timeout, function() return #vim.diagnostic.get(buf) > 0 end, 50) then
    error("timeout waiting for diagnostics")
  end
  result.codes = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(result.codes, { code = d.code, lnum = d.lnum + 1, message = d.message })
  end
  local client = tclint.client(buf)
  -- hover, with the params vim.lsp.buf.hover() sends
  vim.api.nvim_win_set_cursor(0, { line, col })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
  local resp, rerr = tclint.request_sync(client, "textDocument/hover", params, timeout, buf)
  if not resp or resp.err then error("hover: " .. vim.inspect(rerr or (resp and resp.err))) end
  local contents = resp.result and resp.result.contents
  result.hover = type(contents) == "table" and (contents.value or vim.inspect(contents)) or tostring(contents)
  -- the code lenses, through Neovim's codelens module (what a user's refresh autocmd shows)
  vim.lsp.codelens.refresh()
  vim.wait(timeout, function() return #(vim.lsp.codelens.get(buf) or {}) > 0 end, 50)
  result.lenses = {}
  for _, lens in ipairs(vim.lsp.codelens.get(buf) or {}) do
    table.insert(result.lenses, { line = lens.range.start.line + 1, title = lens.command and lens.command.title or "" })
  end
end)
if not ok then table.insert(result.errors, tostring(err)) end
finish(ok and 0 or 1)
