-- Headless Neovim (0.7 and 0.11) as a real tclint client.
-- Env: TCLINT_CMD (JSON array), TCLINT_ROOT, TCLINT_FILE, TCLINT_CODE (the finding to act on),
--      TCLINT_OUT (JSON result), TCLINT_TIMEOUT_MS.
-- Opens the file, waits for tclint's diagnostics, asks for code actions on the first finding with
-- TCLINT_CODE, applies "Disable <code> for this line", and waits for the finding to go.
local cmd = vim.fn.json_decode(os.getenv("TCLINT_CMD"))
local root = os.getenv("TCLINT_ROOT")
local file = os.getenv("TCLINT_FILE")
local code = os.getenv("TCLINT_CODE")
local out = os.getenv("TCLINT_OUT")
local timeout = tonumber(os.getenv("TCLINT_TIMEOUT_MS") or "60000")
local result = { nvim = vim.version(), errors = {} }

local function finish(status)
  result.status = status
  vim.fn.writefile({ vim.fn.json_encode(result) }, out)
  vim.cmd(status == 0 and "qa!" or ("cquit " .. status))
end

local function dump(buf)
  local list = {}
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    table.insert(list, { lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
                         message = d.message, source = d.source, code = d.code, severity = d.severity })
  end
  return list
end

local client_id = vim.lsp.start_client({
  name = "tclint",
  cmd = cmd,
  root_dir = root,
  workspace_folders = { { uri = vim.uri_from_fname(root), name = "root" } },
})
if not client_id then
  table.insert(result.errors, "start_client failed")
  return finish(2)
end
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
vim.lsp.buf_attach_client(buf, client_id)

local function find(buf_)
  for _, d in ipairs(vim.diagnostic.get(buf_)) do
    if d.code == code then return d end
  end
end

if not vim.wait(timeout, function() return find(buf) ~= nil end, 50) then
  result.before = dump(buf)
  table.insert(result.errors, "timeout waiting for " .. code)
  return finish(3)
end
result.before = dump(buf)

-- 0.7 keeps only the extra fields in user_data.lsp: rebuild the LSP diagnostic from vim's fields
local d = find(buf)
local lsp_diag = {
  range = { start = { line = d.lnum, character = d.col }, ["end"] = { line = d.end_lnum, character = d.end_col } },
  message = d.message, severity = d.severity, source = d.source, code = d.code,
}
local client = vim.lsp.get_client_by_id(client_id)
local resp, err = client.request_sync("textDocument/codeAction", {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = lsp_diag.range,
  context = { diagnostics = { lsp_diag } },
}, timeout, buf)
if not resp or resp.err then
  table.insert(result.errors, "codeAction: " .. vim.inspect(err or (resp and resp.err)))
  return finish(4)
end
result.actions = {}
local chosen
for _, action in ipairs(resp.result or {}) do
  table.insert(result.actions, action.title)
  if action.title == "Disable " .. code .. " for this line" then chosen = action end
end
if not chosen then
  table.insert(result.errors, "no 'Disable " .. code .. " for this line' action")
  return finish(5)
end
vim.lsp.util.apply_workspace_edit(chosen.edit, client.offset_encoding or "utf-16")
result.line_after = vim.api.nvim_buf_get_lines(buf, d.lnum, d.lnum + 1, false)[1]

-- the edit goes to the server as didChange; the finding must go, the others stay
if not vim.wait(timeout, function() return find(buf) == nil end, 50) then
  table.insert(result.errors, "the finding did not go after the edit")
  result.after = dump(buf)
  return finish(6)
end
result.after = dump(buf)
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.get_client_by_id(client_id) == nil end, 50)
finish(0)
