"""How each agent is started and pointed at the endpoint and model from the command line.

`--agent NAME[=COMMAND]`:
  tandem[=PATH]      tandem with --base-url, --model and --api; its home, config and
                     credential store in the run's scratch folder (nothing of the user's).
                     Without PATH: the newer of target/release/tandem and target/debug/tandem
                     in this checkout, else `tandem` on PATH.
  codex-acp[=PATH]   Zed's codex adapter with a CODEX_HOME whose config.toml names the endpoint
                     as a model provider; installed from npm into the cache when no PATH.
  opencode[=PATH]    `opencode acp` with a config naming the endpoint as an OpenAI-compatible
                     provider; installed from npm into the cache when no PATH.
  NAME=COMMAND       any other agent: COMMAND is split like a shell line, and {base_url},
                     {model}, {api_key} and {home} in it are filled in; the environment also
                     carries OPENAI_BASE_URL, OPENAI_API_KEY and OPENAI_MODEL.
Every agent gets HOME (and XDG folders) in the run's scratch folder, so a user's own config
cannot change the measurement.
"""

import json
import os
import shlex
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
# Where the peer agents and Node are installed and reused (.ci/run keeps it in its cache).
CACHE = os.environ.get("TANDEM_BENCH_CACHE") or os.path.join(
    os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tandem-bench")
NPM_PEERS = {
    "codex-acp": ("@zed-industries/codex-acp@0.16.0", "codex-acp"),
    "opencode": ("opencode-ai@1.18.33", "opencode"),
}


class Endpoint:
    """What every agent is pointed at."""

    def __init__(self, base_url, model, api_key, api):
        self.base_url = base_url
        self.model = model
        self.api_key = api_key
        self.api = api


class Agent:
    """A resolved agent: how to start it for one task."""

    def __init__(self, name, argv, env, auth_method=None, version=None):
        self.name = name
        self.argv = argv
        self.env = env
        self.auth_method = auth_method
        self.version = version


def base_env(home):
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "XDG_CONFIG_HOME": os.path.join(home, ".config"),
        "XDG_DATA_HOME": os.path.join(home, ".local/share"),
        "XDG_STATE_HOME": os.path.join(home, ".local/state"),
        "XDG_CACHE_HOME": os.path.join(home, ".cache"),
        "LANG": "C.UTF-8",
    }
    for key in ("RUSTUP_HOME", "CARGO_HOME", "TMPDIR", "RUST_LOG"):
        if key in os.environ:
            env[key] = os.environ[key]
    # Toolchains found through HOME (rustup's default) must survive the scratch HOME.
    real_home = os.path.expanduser("~")
    env.setdefault("RUSTUP_HOME", os.path.join(real_home, ".rustup"))
    env.setdefault("CARGO_HOME", os.path.join(real_home, ".cargo"))
    for path in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        os.makedirs(env[path], exist_ok=True)
    return env


def resolve(spec, endpoint, home):
    """An `Agent` for `spec` (NAME[=COMMAND]) with its scratch `home`."""
    name, _, command = spec.partition("=")
    env = base_env(home)
    if name in ("tandem", "codex-acp", "opencode") and command:
        # The agent starts in the task's folder: a path relative to here must still name it.
        command = os.path.abspath(os.path.expanduser(command))
    if name == "tandem":
        return _tandem(command, endpoint, env, home)
    if name == "codex-acp":
        return _codex(command, endpoint, env, home)
    if name == "opencode":
        return _opencode(command, endpoint, env, home)
    if not command:
        raise SystemExit(f"run.py: unknown agent {name!r}: give its command as {name}=COMMAND")
    fill = {"base_url": endpoint.base_url, "model": endpoint.model,
            "api_key": endpoint.api_key, "home": home}
    argv = [part.format(**fill) for part in shlex.split(command)]
    if os.sep in argv[0] and not os.path.isabs(argv[0]):
        argv[0] = os.path.abspath(argv[0])
    env.update(OPENAI_BASE_URL=endpoint.base_url, OPENAI_API_KEY=endpoint.api_key,
               OPENAI_MODEL=endpoint.model)
    return Agent(name, argv, env)


def _tandem(path, endpoint, env, home):
    binary = path or _newest([os.path.join(ROOT, "target/release/tandem"),
                              os.path.join(ROOT, "target/debug/tandem")]) \
        or shutil.which("tandem")
    if not binary:
        raise SystemExit("run.py: no tandem binary: build it (cargo build --release) "
                         "or give --agent tandem=PATH")
    env.update(OPENAI_API_KEY=endpoint.api_key, TANDEM_HOME=os.path.join(home, "tandem"),
               TANDEM_CREDENTIAL_STORE="file")
    if endpoint.api == "anthropic-messages":
        env["ANTHROPIC_API_KEY"] = endpoint.api_key
    argv = [binary, "--base-url", endpoint.base_url, "--model", endpoint.model,
            "--api", endpoint.api]
    return Agent("tandem", argv, env, version=_version([binary, "--version"]))


def _codex(path, endpoint, env, home):
    binary = path or _from_npm("codex-acp")
    if endpoint.api != "responses":
        raise SystemExit("run.py: codex (from 0.5x) speaks only the Responses API to a custom "
                         "provider: add --api responses (tandem speaks it too)")
    codex_home = os.path.join(home, ".codex")
    os.makedirs(codex_home, exist_ok=True)
    with open(os.path.join(codex_home, "config.toml"), "w") as f:
        f.write(f'model = {json.dumps(endpoint.model)}\n'
                f'model_provider = "bench"\n'
                f'[model_providers.bench]\n'
                f'name = "bench"\n'
                f'base_url = {json.dumps(endpoint.base_url)}\n'
                f'env_key = "OPENAI_API_KEY"\n'
                f'wire_api = "responses"\n')
    env.update(CODEX_HOME=codex_home, OPENAI_API_KEY=endpoint.api_key)
    return Agent("codex-acp", [binary], env, auth_method="openai-api-key",
                 version=NPM_PEERS["codex-acp"][0] if not path else None)


def _opencode(path, endpoint, env, home):
    binary = path or _from_npm("opencode")
    if endpoint.api != "chat-completions":
        raise SystemExit("run.py: the opencode profile points it at chat completions only")
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": f"bench/{endpoint.model}",
        "provider": {"bench": {
            "npm": "@ai-sdk/openai-compatible", "name": "bench",
            "options": {"baseURL": endpoint.base_url, "apiKey": endpoint.api_key},
            "models": {endpoint.model: {"name": endpoint.model}},
        }},
    }
    config_path = os.path.join(home, "opencode.json")
    with open(config_path, "w") as f:
        json.dump(config, f)
    env.update(OPENCODE_CONFIG=config_path, OPENAI_API_KEY=endpoint.api_key)
    return Agent("opencode", [binary, "acp"], env,
                 version=NPM_PEERS["opencode"][0] if not path else None)


def _newest(paths):
    """The most recently built of `paths` (a stale release build must not stand in for today's
    debug build), or None."""
    built = [p for p in paths if os.path.exists(p)]
    return max(built, key=os.path.getmtime) if built else None


def _from_npm(name):
    package, binary = NPM_PEERS[name]
    where = os.path.join(CACHE, package.replace("/", "+"))
    path = os.path.join(where, "node_modules/.bin", binary)
    if not os.path.exists(path):
        if not shutil.which("npm"):
            raise SystemExit(f"run.py: {name} is not installed and npm is missing: "
                             f"give --agent {name}=PATH")
        os.makedirs(where, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", where, package],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def _version(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=20)
        return out.stdout.strip() or None
    except (OSError, subprocess.TimeoutExpired):
        return None
