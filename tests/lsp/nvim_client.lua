-- Neovim (0.7+) headless as a real LSP client of `devicelint lsp`: open the file, attach the built-in
-- client, wait for diagnostics, write them as JSON, quit. Driven by tests/lsp/test_neovim.py through
-- environment variables: DEVICELINT_NVIM_CMD (JSON list), DEVICELINT_NVIM_FILE, DEVICELINT_NVIM_OUT.
local cmd = vim.fn.json_decode(os.getenv("DEVICELINT_NVIM_CMD"))
local file = os.getenv("DEVICELINT_NVIM_FILE")
local out = os.getenv("DEVICELINT_NVIM_OUT")

local function finish(result)
  vim.fn.writefile({ vim.fn.json_encode(result) }, out)
  vim.cmd("qa!")
end

vim.cmd("edit " .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "devicelint",
  cmd = cmd,
  root_dir = vim.fn.fnamemodify(file, ":h"),
  on_error = function(code, err)
    finish({ error = "client error " .. tostring(code) .. ": " .. vim.inspect(err) })
  end,
})
if client_id == nil then
  finish({ error = "vim.lsp.start_client failed" })
  return
end
vim.lsp.buf_attach_client(bufnr, client_id)

local got = vim.wait(60000, function()
  return #vim.diagnostic.get(bufnr) > 0
end, 50)

local items = {}
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  local lsp = (d.user_data or {}).lsp or {}
  table.insert(items, {
    lnum = d.lnum, col = d.col, end_lnum = d.end_lnum, end_col = d.end_col,
    severity = d.severity, message = d.message, source = d.source, code = lsp.code,
  })
end
local client = vim.lsp.get_client_by_id(client_id)
local name = client and client.name or vim.NIL
vim.lsp.stop_client(client_id)
vim.wait(5000, function() return vim.lsp.client_is_stopped(client_id) end, 50)
finish({ waited = got, client = name, diagnostics = items })
