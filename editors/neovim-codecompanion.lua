-- CodeCompanion (olimorris/codecompanion.nvim): tandem as an ACP adapter.
-- Put this in your CodeCompanion setup; then pick the "tandem" adapter in a chat.
require("codecompanion").setup({
  adapters = {
    acp = {
      tandem = function()
        return require("codecompanion.adapters").extend("gemini_cli", {
          name = "tandem",
          formatted_name = "tandem",
          commands = {
            default = { "tandem", "--provider", "openai", "--model", "gpt-4o-mini" },
          },
          env = {
            OPENAI_API_KEY = "OPENAI_API_KEY", -- read from your environment
          },
        })
      end,
    },
  },
  strategies = {
    chat = { adapter = "tandem" },
  },
})
