-- CodeCompanion (olimorris/codecompanion.nvim): tandem as a custom ACP adapter.
-- Put this in your CodeCompanion setup; then pick the "tandem" adapter in a chat.
--
-- This is a standalone adapter, the shape CodeCompanion documents for custom ACP agents.
-- Do not extend a preset such as gemini_cli: it would bring that agent's auth method
-- ("oauth-personal"), which tandem does not offer, and CodeCompanion refuses to connect.
-- Run `tandem login` once first: tandem then uses the server, model and key it saved, so
-- the command needs no flags (--provider, --model … would override what the login saved).
-- tandem offers one auth method, "api-key" (a key from `tandem login` or the environment),
-- and only when the provider needs a key; with a keyless server (ollama, llamacpp, a local
-- vLLM) CodeCompanion skips authentication. Slash commands are typed with a backslash in
-- CodeCompanion's chat: \undo, \rewind 2, \compact.
require("codecompanion").setup({
  adapters = {
    acp = {
      tandem = function()
        local helpers = require("codecompanion.adapters.acp.helpers")
        return {
          name = "tandem",
          formatted_name = "tandem",
          type = "acp",
          roles = {
            llm = "assistant",
            user = "user",
          },
          opts = {
            -- tandem passes images on to models that take them: those it knows, and any other
            -- once its [[models]] entry in tandem's config says `images = true`.
            vision = true,
            -- Only with this on does CodeCompanion show a finished tool call's result (what a
            -- command printed, an edit's summary) beside its one-line label.
            verbose_output = true,
          },
          commands = {
            default = { "tandem" },
          },
          defaults = {
            auth_method = "api-key",
            mcpServers = {},
            timeout = 20000, -- 20 seconds
          },
          -- No `env` table: tandem inherits Neovim's environment, so a key set in your
          -- shell (OPENAI_API_KEY) reaches it too. (CodeCompanion passes an unset variable's *name* as its
          -- value, which would hide a missing key until the first prompt.)
          parameters = {
            protocolVersion = 1,
            clientCapabilities = {
              fs = { readTextFile = true, writeTextFile = true },
            },
            clientInfo = {
              name = "CodeCompanion.nvim",
              version = "1.0.0",
            },
          },
          handlers = {
            setup = function(self)
              return true
            end,
            -- No `auth` handler: CodeCompanion then authenticates with defaults.auth_method.
            form_messages = function(self, messages, capabilities)
              return helpers.form_messages(self, messages, capabilities)
            end,
            on_exit = function(self, code) end,
          },
        }
      end,
    },
  },
  interactions = {
    chat = { adapter = "tandem" },
  },
})
