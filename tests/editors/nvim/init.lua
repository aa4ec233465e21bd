-- A user's init.lua, as editors/neovim/README.md tells them to write it: the packaged config
-- on the runtimepath, then setup().  The test passes the options as JSON in TCLINT_SETUP.
vim.opt.runtimepath:prepend(os.getenv("TCLINT_NVIM_DIR"))
require("tclint").setup(vim.fn.json_decode(os.getenv("TCLINT_SETUP") or "{}"))
