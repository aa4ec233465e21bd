-- Headless Neovim driver for tests/editors/test_neovim_fixes.py (Neovim 0.7 and 0.11 alike).
-- TCLINT_STEPS (JSON) lists steps, each on its own copy of the file so that no step sees another's
-- edit: { file, code, only?, pick } (or { file, code, command }: run that Ex command instead).  A step opens `file`, waits for the diagnostic `code`, puts the
-- cursor on it and asks for code actions the way a user does (vim.lsp.buf.code_action(), with
-- context.only for "fix all"); Neovim's vim.ui.select menu is answered with the first entry whose
-- title contains `pick`, and Neovim applies it.  Recorded per step: every action offered (title,
-- kind, isPreferred), the chosen one, and the buffer afterwards.  JSON to TCLINT_OUT.
local out_path = os.getenv("TCLINT_OUT")
local timeout = tonumber(os.getenv("TCLINT_TIMEOUT_MS") or "60000")
local steps = vim.fn.json_decode(os.getenv("TCLINT_STEPS"))
local result = { nvim = vim.version(), errors = {}, steps = {} }
local has_011 = vim.fn.has("nvim-0.11") == 1
vim.o.hidden = true -- each step leaves its buffer modified

local function finish(rc)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out_path)
  vim.cmd(rc == 0 and "qa!" or ("cquit " .. rc))
end

local function find(buf, code)
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    if d.code == code then return d end
  end
end

local function run(step)
  local rec = { file = step.file, code = step.code, offered = {} }
  table.insert(result.steps, rec)
  vim.cmd("edit " .. vim.fn.fnameescape(step.file))
  local buf = vim.api.nvim_get_current_buf()
  if not vim.wait(timeout, function() return find(buf, step.code) ~= nil end, 50) then
    error(step.file .. ": timeout waiting for " .. step.code)
  end
  local d = find(buf, step.code)
  vim.api.nvim_win_set_cursor(0, { d.lnum + 1, d.col })
  if step.command then -- a command of the packaged config (:TclintFixAll) instead of the menu
    vim.cmd(step.command)
    rec.chosen = step.command
    rec.buffer = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
    return
  end
  local done = false
  local original_select = vim.ui.select
  vim.ui.select = function(items, opts, on_choice)
    local chosen
    for _, item in ipairs(items) do
      local action = item.action or item[2] -- 0.11: {action, ctx}; 0.7: {client_id, action}
      table.insert(rec.offered, { title = action.title, kind = action.kind, preferred = action.isPreferred == true })
      if not chosen and action.title:find(step.pick, 1, true) then chosen = item end
    end
    vim.ui.select = original_select
    rec.chosen = chosen and (chosen.action or chosen[2]).title or nil
    on_choice(chosen) -- Neovim applies the edit (or does nothing for nil)
    done = true
  end
  local context = step.only and { only = step.only } or nil
  if has_011 then
    vim.lsp.buf.code_action({ context = context })
  else
    vim.lsp.buf.code_action(context)
  end
  if not vim.wait(timeout, function() return done end, 20) then
    vim.ui.select = original_select
    error(step.file .. ": no code action menu")
  end
  if not rec.chosen then error(step.file .. ": no action titled '" .. step.pick .. "'") end
  rec.buffer = table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\n") .. "\n"
end

local ok, err = pcall(function()
  for _, step in ipairs(steps) do run(step) end
end)
if not ok then table.insert(result.errors, tostring(err)) end
finish(ok and 0 or 1)
