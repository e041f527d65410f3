-- avante.nvim (yetone/avante.nvim): tandem as an ACP provider.
-- avante starts ACP agents with only PATH plus this `env` table, so HOME (and the XDG
-- directories, if you set them) must be passed for tandem to find its config and session
-- store. This one talks to a local Ollama, which needs no key. For a provider that does
-- (e.g. --provider openai), add OPENAI_API_KEY = os.getenv("OPENAI_API_KEY") to env and
-- auth_method = "api-key" next to `env`.
require("avante").setup({
  provider = "tandem",
  acp_providers = {
    ["tandem"] = {
      command = "tandem",
      args = { "--provider", "ollama", "--model", "qwen2.5-coder:7b" },
      env = {
        HOME = os.getenv("HOME"),
        XDG_CONFIG_HOME = os.getenv("XDG_CONFIG_HOME"), -- nil (left out) when unset
        XDG_DATA_HOME = os.getenv("XDG_DATA_HOME"),
      },
    },
  },
})
