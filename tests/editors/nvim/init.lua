-- A user's init.lua, as editors/neovim/README.md tells them to write it: the packaged config
-- on the runtimepath, then setup().  The test passes the options as JSON in TCLINT_SETUP.
vim.opt.runtimepath:prepend(os.getenv("TCLINT_NVIM_DIR"))
require("tclint").setup(vim.fn.json_decode(os.getenv("TCLINT_SETUP") or "{}"))
-- The test's own addition: what the server shows (window/showMessage), kept for the drivers to
-- report (a settings warning would show here); Neovim's handler still runs.
_G.TCLINT_TEST_SHOWN = {}
local show = vim.lsp.handlers["window/showMessage"]
vim.lsp.handlers["window/showMessage"] = function(err, result, ctx, config)
  table.insert(_G.TCLINT_TEST_SHOWN, result and result.message or vim.inspect(err))
  return show(err, result, ctx, config)
end
