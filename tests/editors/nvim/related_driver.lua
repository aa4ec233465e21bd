-- Headless Neovim driver for tests/editors/test_neovim_related.py (Neovim 0.7 and 0.11 alike).
-- The user script given on the command line is open and the packaged tclint config (init.lua)
-- attached the server.  Steps: wait for the diagnostic TCLINT_CODE (TC312, the library summary),
-- record the relatedInformation Neovim kept for it and K's hover there, run :TclintRelated on its
-- line, jump to the location list's entry TCLINT_JUMP (:ll N, as a user does), and record which
-- file and line the jump opened; everything goes as JSON to TCLINT_OUT.
local out_path = os.getenv("TCLINT_OUT")
local timeout = tonumber(os.getenv("TCLINT_TIMEOUT_MS") or "60000")
local code = os.getenv("TCLINT_CODE") or "TC312"
local jump = tonumber(os.getenv("TCLINT_JUMP") or "1")
local result = { nvim = vim.version(), errors = {} }
local buf = vim.api.nvim_get_current_buf()

local function finish(rc)
  result.shown = _G.TCLINT_TEST_SHOWN or {}
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd(rc == 0 and "qa!" or ("cquit " .. rc))
end

local function find()
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then return d end
  end
end

local ok, err = pcall(function()
  local tclint = require("tclint")
  if not vim.wait(timeout, function() return find() ~= nil end, 100) then
    result.codes = vim.tbl_map(function(d) return d.code end, vim.diagnostic.get(buf))
    error("timeout waiting for " .. code)
  end
  local d = find()
  result.diagnostic = { lnum = d.lnum + 1, col = d.col, message = d.message, severity = d.severity }
  -- what Neovim itself kept of the LSP diagnostic's relatedInformation
  local lsp = (d.user_data and d.user_data.lsp) or {}
  result.related = lsp.relatedInformation or {}
  -- K's hover on the compile site (the params vim.lsp.buf.hover() sends): the library part of the chain
  local client = tclint.client(buf)
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding or "utf-16")
  local resp, rerr = tclint.request_sync(client, "textDocument/hover", params, timeout, buf)
  if not resp or resp.err then error("hover: " .. vim.inspect(rerr or (resp and resp.err))) end
  local contents = resp.result and resp.result.contents
  result.hover = type(contents) == "table" and (contents.value or vim.inspect(contents)) or tostring(contents)
  -- :TclintRelated on the diagnostic's line, from another column of it
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, 0 })
  vim.cmd("TclintRelated")
  result.loclist_title = vim.fn.getloclist(0, { title = 1 }).title
  result.loclist = {}
  for _, item in ipairs(vim.fn.getloclist(0)) do
    table.insert(result.loclist, { filename = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum,
                                   col = item.col, text = item.text })
  end
  result.items = tclint.related_items(buf, d.lnum)
  -- the jump a user makes from the list
  vim.cmd("ll " .. jump)
  local cursor = vim.api.nvim_win_get_cursor(0)
  result.jumped = { file = vim.api.nvim_buf_get_name(0), lnum = cursor[1], col = cursor[2] + 1,
                    line = vim.api.nvim_get_current_line() }
end)
if not ok then table.insert(result.errors, tostring(err)) end
finish(ok and 0 or 1)
