-- avante.nvim (yetone/avante.nvim): tandem as an ACP provider.
-- Run `tandem login` once first: tandem then uses the server, model and key it saved, so
-- `args` needs no flags (--provider, --model … would override what the login saved).
-- avante starts ACP agents with only PATH plus this `env` table, so HOME (and the XDG
-- directories, if you set them) must be passed for tandem to find its config, its login and
-- its session store; on Linux a key the login kept in the system keyring is reached over the
-- session bus. To give the key in the environment instead, add
-- OPENAI_API_KEY = os.getenv("OPENAI_API_KEY") to env and auth_method = "api-key" next to it.
require("avante").setup({
  provider = "tandem",
  acp_providers = {
    ["tandem"] = {
      command = "tandem",
      args = {},
      env = {
        HOME = os.getenv("HOME"),
        XDG_CONFIG_HOME = os.getenv("XDG_CONFIG_HOME"), -- nil (left out) when unset
        XDG_DATA_HOME = os.getenv("XDG_DATA_HOME"),
        DBUS_SESSION_BUS_ADDRESS = os.getenv("DBUS_SESSION_BUS_ADDRESS"),
      },
    },
  },
})
