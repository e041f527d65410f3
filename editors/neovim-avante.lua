-- avante.nvim (yetone/avante.nvim): tandem as an ACP provider.
require("avante").setup({
  provider = "tandem",
  acp_providers = {
    ["tandem"] = {
      command = "tandem",
      args = { "--provider", "ollama", "--model", "qwen2.5-coder:7b" },
      env = {
        OPENAI_API_KEY = os.getenv("OPENAI_API_KEY"),
      },
    },
  },
})
