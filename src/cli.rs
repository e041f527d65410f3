//! The command line: `tandem` (stdio agent) and `tandem exec` (one headless prompt).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Overrides;

/// What `tandem --help` ends with.
const ENVIRONMENT_AND_EXAMPLES: &str = "Environment:
  OPENAI_API_KEY            the model server's key (or the preset's own variable, e.g.
                            OPENROUTER_API_KEY); without one, the key `{tandem} login` stored
  OPENAI_BASE_URL           the server's base URL (like --base-url)
  TANDEM_PROVIDER           a provider preset (like --provider)
  TANDEM_API                the wire API: chat-completions, responses or anthropic-messages
                            (like --api)
  TANDEM_MODEL              the model new sessions start with (like --model)
  TANDEM_MODELS             the models offered to the editor, comma-separated
  TANDEM_MODE               the mode sessions start in (like --mode)
  TANDEM_SANDBOX            how commands are sandboxed: workspace-write (default), read-only
                            or off (like [sandbox] mode in the config file)
  TANDEM_CONFIG             the config file (default $XDG_CONFIG_HOME/tandem/config.toml,
                            else ~/.config/tandem/config.toml)
  TANDEM_HOME               where sessions are stored (default $XDG_DATA_HOME/tandem, else
                            ~/.local/share/tandem)
  TANDEM_CREDENTIAL_STORE   where `{tandem} login` keeps keys: keyring or file (default: the
                            system store, else a file only you can read)
  TANDEM_TRACE_WIRE         record the protocol lines in this file (like --trace-wire)
  TANDEM_EOF_GRACE_SECS     how long prompts may run after stdin closes (default 300)
  TANDEM_MAX_MESSAGE_BYTES  longest JSON-RPC line accepted from the editor
  TANDEM_INVOKED_AS         how a launcher started tandem (e.g. `npx tandem-acp`), so the
                            commands tandem suggests are spelled that way
  RUST_LOG                  log filter for stderr, e.g. debug or tandem=trace (default:
                            warnings; -v for tandem's progress)

Examples:
  {tandem} demo
  {tandem} login
  {tandem} doctor
  {tandem} exec \"Summarize this project in three lines\"
  {tandem} --provider ollama --model qwen2.5-coder:7b
  OPENAI_API_KEY=sk-... {tandem} --model gpt-4o-mini";

/// The one-line summary, the same in `tandem -h` and the first line of `tandem --help`.
const ABOUT: &str = "A fast, small, vendor-neutral Agent Client Protocol (ACP) coding agent for \
                     the model you choose, hosted or on your own machine.";

/// What `tandem --help` says: the summary, then how tandem is run.
const LONG_ABOUT: &str = "A fast, small, vendor-neutral Agent Client Protocol (ACP) coding agent \
                          for the model you choose, hosted or on your own machine.\n\nWith no \
                          subcommand, tandem speaks ACP \
                          (newline-delimited JSON-RPC) on stdin/stdout: this is how editors such \
                          as Zed launch it. Logs go to stderr: warnings and errors, more with -v \
                          or RUST_LOG=debug. To set up a model server and its key, run \
                          `{tandem} login`; to try a prompt from the shell, `{tandem} exec`; to \
                          watch it work offline first, `{tandem} demo`.";

/// What `tandem exec --help` ends with.
const EXEC_AFTER: &str = "Sessions started by exec are read-only unless --mode says otherwise: \
                          the model may read and search, but edits and commands are refused. \
                          A mode from TANDEM_MODE or the config file does not apply to exec. \
                          MCP servers that the project's .tandem/config.toml declares are not \
                          started unless --trust-project is given.\n\n\
                          Exit status: 0 when the model finished its answer, 1 on a model or tool \
                          error, 2 on a usage or configuration error (a missing API key or a \
                          replay fixture that cannot be read among them), 3 when the model \
                          refused, 4 when it hit its output limit or --max-turns, 5 when \
                          --timeout expired, 6 when the answer does not validate against \
                          --output-schema, 130 when interrupted.\n\nExamples:\n  \
                          {tandem} exec \"Explain what src/main.rs does\"\n  \
                          echo \"List the TODOs in this project\" | {tandem} exec --model gpt-4o-mini\n  \
                          {tandem} exec --mode full-access --max-turns 20 --timeout 600 \"Fix the failing test\"\n  \
                          {tandem} exec --output json --session 7f3c... \"Now add a changelog entry\"";

/// What `tandem doctor --help` ends with.
const DOCTOR_AFTER: &str = "Exit status: 0 when every check passes, 1 otherwise. The API key is \
                            never printed.\n\nExamples:\n  \
                            {tandem} doctor\n  \
                            {tandem} doctor --provider ollama --model qwen2.5-coder:7b";

/// What `tandem login --help` ends with.
const LOGIN_AFTER: &str = "The key is kept in the system credential store (macOS Keychain, \
                           Windows Credential Manager, the Secret Service on Linux), or where none \
                           answers in credentials.toml in the config directory, readable only by \
                           you. The provider and model go into the config file. Nothing is saved \
                           until a one-token test request works.\n\n\
                           An editor's login button runs tandem's command line as the editor \
                           starts it, with `login` after it: the flags the editor gives tandem \
                           (--model, --mode, …) are taken before `login` too, and --model there \
                           chooses the model as it does after it.\n\n\
                           Exit status: 0 when saved, 1 when the server refused the key or failed, \
                           2 on a usage error, 130 when stopped at a prompt.\n\nExamples:\n  \
                           {tandem} login\n  \
                           {tandem} login --provider ollama\n  \
                           printf %s \"$OPENROUTER_API_KEY\" | {tandem} login --provider openrouter --key-stdin --model qwen/qwen3-coder\n  \
                           printf %s \"$KEY\" | {tandem} login --base-url http://gpu-box:8000/v1 --key-stdin --model my-model";

/// What `tandem logout --help` ends with.
const LOGOUT_AFTER: &str = "Examples:\n  {tandem} logout\n  {tandem} logout --provider openrouter";

/// The command line ([`ABOUT`]).
///
/// Each subcommand takes only the flags it uses: the server flags (`--config`, `--provider`,
/// `--base-url`, `--api`, `-v`) go anywhere, except with `demo` and `sandbox`, which use none
/// of them but `-v` ([`Command::takes`]); the agent's (`--model`, `--mode`, `--replay`,
/// `--trace-wire`) belong to the stdio agent. Before `login` and `logout` they are taken too,
/// as an editor runs its login as the agent's command line with the login method's arguments
/// after it ([`Command::follows_the_agents_flags`]); before another subcommand they are
/// refused ([`Cli::parse_checked`]).
#[derive(Debug, Parser)]
#[command(
    name = "tandem",
    bin_name = crate::config::invocation::command(),
    version,
    about = ABOUT,
    long_about = crate::config::invocation::spell(LONG_ABOUT),
    after_help = crate::config::invocation::spell(ENVIRONMENT_AND_EXAMPLES)
)]
pub struct Cli {
    /// The model server, shared by every subcommand.
    #[command(flatten)]
    pub common: CommonArgs,
    /// The stdio agent's settings.
    #[command(flatten)]
    pub(crate) agent: AgentArgs,
    /// What to do; the stdio agent when absent.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The model server and the logging, for every subcommand.
#[derive(Debug, Args)]
pub struct CommonArgs {
    /// Config file (default: $XDG_CONFIG_HOME/tandem/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Provider preset: openai, anthropic, gemini, ollama, openrouter, vllm, llamacpp, lmstudio,
    /// deepseek, groq.
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) provider: Option<String>,
    /// OpenAI-compatible base URL (overrides OPENAI_BASE_URL and the preset).
    #[arg(long, global = true, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Wire API: chat-completions, responses or anthropic-messages (overrides TANDEM_API
    /// and the preset's).
    #[arg(long, global = true, value_name = "API")]
    pub(crate) api: Option<String>,
    /// Log tandem's progress to stderr (-v), or more (-vv, -vvv); without it, and without
    /// RUST_LOG, only warnings and errors.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}

impl CommonArgs {
    /// The server and logging flags that were given, as typed.
    fn given(&self) -> impl Iterator<Item = &'static str> {
        [
            (self.config.is_some(), "--config"),
            (self.provider.is_some(), "--provider"),
            (self.base_url.is_some(), "--base-url"),
            (self.api.is_some(), "--api"),
            (self.verbose > 0, "--verbose"),
        ]
        .into_iter()
        .filter_map(|(given, flag)| given.then_some(flag))
    }
}

/// The model a run starts with (the stdio agent, exec, login, doctor).
#[derive(Debug, Args, Default)]
pub(crate) struct ModelArg {
    /// Model id for new sessions (overrides TANDEM_MODEL).
    #[arg(long, value_name = "ID")]
    pub(crate) model: Option<String>,
}

/// How sessions run: the stdio agent's and exec's.
#[derive(Debug, Args, Default)]
pub(crate) struct SessionArgs {
    #[command(flatten)]
    pub(crate) model: ModelArg,
    /// Mode new sessions start in: ask, accept-edits, read-only, full-access.
    #[arg(long, value_name = "MODE")]
    pub(crate) mode: Option<String>,
    /// Serve scripted model turns from a fixture file instead of a model server (offline).
    #[arg(long, value_name = "FILE")]
    pub(crate) replay: Option<PathBuf>,
}

/// The stdio agent's settings.
#[derive(Debug, Args, Default)]
pub(crate) struct AgentArgs {
    #[command(flatten)]
    pub(crate) session: SessionArgs,
    /// Record every protocol line in and out, timed and redacted, in FILE (also
    /// TANDEM_TRACE_WIRE); for bug reports.
    #[arg(long, value_name = "FILE")]
    pub(crate) trace_wire: Option<PathBuf>,
}

impl AgentArgs {
    /// The first of the agent's flags that was given, as typed.
    fn first_given(&self) -> Option<&'static str> {
        let session = &self.session;
        [
            (session.model.model.is_some(), "--model"),
            (session.mode.is_some(), "--mode"),
            (session.replay.is_some(), "--replay"),
            (self.trace_wire.is_some(), "--trace-wire"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one prompt headless and print the streamed answer to stdout.
    #[command(after_help = crate::config::invocation::spell(EXEC_AFTER))]
    Exec(ExecArgs),
    /// Check the configuration, data directory, API key, hooks and model server, and say what
    /// to fix.
    #[command(after_help = crate::config::invocation::spell(DOCTOR_AFTER))]
    Doctor(DoctorArgs),
    /// Set up a model server in the terminal: choose a provider or URL, enter its API key
    /// (not echoed), pick a model, test it, and save.
    #[command(after_help = crate::config::invocation::spell(LOGIN_AFTER))]
    Login(LoginArgs),
    /// Remove the API key `tandem login` stored for the configured model server.
    #[command(after_help = crate::config::invocation::spell(LOGOUT_AFTER))]
    Logout,
    /// Watch tandem work, offline: a scripted model (no server, no key) adds a test to a copy
    /// of a small project built into tandem, in a new temp folder.
    Demo,
    /// Run a command in tandem's sandbox: what tandem starts in an editor's terminal (and
    /// runs locally) so the operating system holds the command to the session's policy.
    /// Internal: not listed in `tandem --help`, and it takes none of the model server's flags.
    #[command(hide = true, after_help = SANDBOX_AFTER)]
    Sandbox(SandboxArgs),
}

/// `tandem sandbox` arguments.
#[derive(Debug, Args)]
pub struct SandboxArgs {
    /// The policy: a JSON file tandem wrote for the session, or the JSON itself.
    #[arg(long, value_name = "FILE|JSON", required = true)]
    pub policy: Option<String>,
    /// The program and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND", required = true)]
    pub command: Vec<std::ffi::OsString>,
}

const SANDBOX_AFTER: &str = "The policy is JSON: {\"writable\": [folders], \"readOnly\": [paths inside them], \"hidden\": [paths], \"network\": bool, \"temp\": folder}. \
Linux: user, mount and network namespaces with Landlock; macOS: Seatbelt through sandbox-exec; Windows: not available. \
Exit status: the command's own, or 125 when the sandbox could not be entered (the reason on stderr); the command never runs unconfined.";

impl Command {
    /// Whether the stdio agent's own flags may come before it: an editor runs a `terminal`
    /// login method as the agent's configured command and arguments followed by the method's
    /// (Zed's `terminal_auth_task`: `get_command(terminal.args, …)`), so `tandem --mode ask
    /// login` is what the login button runs for an agent configured with `--mode ask`.
    pub(crate) fn follows_the_agents_flags(&self) -> bool {
        matches!(self, Command::Login(_) | Command::Logout)
    }

    /// Whether the subcommand takes this server or logging flag ([`CommonArgs`], global to
    /// the parser): `sandbox` becomes the command it is given and reads no configuration,
    /// and `demo` talks to no server (it keeps `-v`).
    fn takes(&self, flag: &str) -> bool {
        match self {
            Command::Sandbox(_) => false,
            Command::Demo => flag == "--verbose",
            _ => true,
        }
    }

    /// The subcommand's name, as typed.
    pub(crate) fn name(&self) -> &'static str {
        match self {
            Command::Exec(_) => "exec",
            Command::Doctor(_) => "doctor",
            Command::Login(_) => "login",
            Command::Logout => "logout",
            Command::Demo => "demo",
            Command::Sandbox(_) => "sandbox",
        }
    }
}

/// `tandem doctor` arguments.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    #[command(flatten)]
    pub(crate) model: ModelArg,
    /// Check this replay fixture instead of a model server.
    #[arg(long, value_name = "FILE")]
    pub(crate) replay: Option<PathBuf>,
}

/// `tandem login` arguments (the server comes from --provider and --base-url).
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The model to test and save for new sessions; without it, login lists the server's
    /// models to pick from.
    #[arg(long, value_name = "ID")]
    pub(crate) model: Option<String>,
    /// Read the API key from stdin instead of asking (for scripts); no prompts are shown.
    #[arg(long)]
    pub key_stdin: bool,
    /// Set up web search instead: `searxng` (with --search-url) or `brave` (its key with
    /// --key-stdin, typed, or BRAVE_API_KEY).
    #[arg(long, value_name = "PROVIDER")]
    pub search: Option<String>,
    /// The search provider's address (SearXNG's; Brave's API by default).
    #[arg(long, value_name = "URL", requires = "search")]
    pub search_url: Option<String>,
}

/// What `tandem exec` prints on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Output {
    /// The answer as it streams; progress, reasoning and tool calls on stderr.
    Text,
    /// One JSON object at the end: sessionId, stopReason, answer, usage, toolCalls (id,
    /// title, status), and structuredOutput with --output-schema.
    Json,
    /// Every `session/update` as it happens, one JSON object per line.
    Ndjson,
}

/// What `tandem exec` reads on stdin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Input {
    /// The prompt, when it is not an argument (all of stdin).
    Text,
    /// One JSON object per line, `{"prompt": "…"}`: the first is the prompt when it is not
    /// an argument; each later one steers the running turn (the model reads it at its next
    /// request).
    Ndjson,
}

/// `tandem exec` arguments.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// The model, mode and replay fixture of the session.
    #[command(flatten)]
    pub(crate) run: SessionArgs,
    /// Working directory of the session (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<PathBuf>,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
    /// What stdin carries: the prompt (`text`), or JSON lines (`ndjson`) whose later lines
    /// steer the running turn.
    #[arg(long, value_enum, default_value_t = Input::Text)]
    pub(crate) input: Input,
    /// Most model requests the prompt may make (tool loops included).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Cancel the prompt after this many seconds (exit status 5).
    #[arg(long, value_name = "SECS", value_parser = positive_seconds)]
    pub(crate) timeout: Option<f64>,
    /// Continue a stored session (the id from an earlier run or session/list), or start one
    /// with this id.
    #[arg(long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// The final answer must be one JSON value valid against the JSON Schema in FILE: it is
    /// printed alone on stdout (the streamed answer goes to stderr); exit status 6 if it still
    /// does not validate after one repair.
    #[arg(long, value_name = "FILE")]
    pub(crate) output_schema: Option<PathBuf>,
    /// Start the MCP servers the project's .tandem/config.toml declares (without it, exec
    /// starts none: a cloned repository must not run its code unasked). Nothing is remembered.
    #[arg(long)]
    pub(crate) trust_project: bool,
    /// The prompt; read from stdin when absent or `-`.
    #[arg(value_name = "PROMPT")]
    pub(crate) prompt: Vec<String>,
}

fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => Ok(secs),
        _ => Err(format!("`{text}` is not a positive number of seconds")),
    }
}

impl Cli {
    /// The command line, parsed; the agent's flags before a subcommand other than `login`
    /// and `logout` are a usage error (exit status 2), as clap would say it.
    pub fn parse_checked() -> Self {
        let cli = Self::parse();
        if let Some(command) = &cli.command
            && let Some(flag) = cli.common.given().find(|flag| !command.takes(flag))
        {
            let name = command.name();
            let message = format!(
                "the argument '{flag}' cannot be used with '{name}': {name} does not use it"
            );
            <Self as clap::CommandFactory>::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit();
        }
        let refused = cli
            .command
            .as_ref()
            .filter(|command| !command.follows_the_agents_flags());
        if let (Some(command), Some(flag)) = (refused, cli.agent.first_given()) {
            let name = command.name();
            let message = format!(
                "the argument '{flag}' cannot be used before the subcommand '{name}': it belongs to the stdio agent (`{tandem} {name} --help` lists what {name} takes, after its name)",
                tandem = crate::config::invocation::command()
            );
            <Self as clap::CommandFactory>::command()
                .error(clap::error::ErrorKind::ArgumentConflict, message)
                .exit();
        }
        cli
    }

    /// The flags as configuration overrides: the server's from anywhere, the rest from the
    /// subcommand that takes them. Before `login` and `logout`, the agent's `--model` and
    /// `--mode` mean what they mean to the agent (a login's `--model` after its name wins);
    /// its `--replay` and `--trace-wire` concern only its own run and change nothing there.
    pub fn overrides(&self) -> Overrides {
        let common = &self.common;
        let mut overrides = Overrides {
            config_file: common.config.clone(),
            provider: common.provider.clone(),
            base_url: common.base_url.clone(),
            api: common.api.clone(),
            ..Overrides::default()
        };
        let (session, model) = match &self.command {
            None => {
                overrides.trace_wire = self.agent.trace_wire.clone();
                (Some(&self.agent.session), None)
            }
            Some(Command::Exec(args)) => (Some(&args.run), None),
            Some(Command::Doctor(args)) => {
                overrides.replay = args.replay.clone();
                (None, args.model.model.as_ref())
            }
            Some(Command::Login(args)) => (None, args.model.as_ref()),
            Some(Command::Logout | Command::Sandbox(_) | Command::Demo) => (None, None),
        };
        if let Some(session) = session {
            overrides.model = session.model.model.clone();
            overrides.mode = session.mode.clone();
            overrides.replay = session.replay.clone();
        }
        if self
            .command
            .as_ref()
            .is_some_and(Command::follows_the_agents_flags)
        {
            let agent = &self.agent.session;
            overrides.model = agent.model.model.clone();
            overrides.mode = agent.mode.clone();
        }
        if let Some(model) = model {
            overrides.model = Some(model.clone());
        }
        overrides
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(args: &[&str]) -> Cli {
        Cli::try_parse_from(std::iter::once("tandem").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn the_agents_flags_before_login_and_logout_mean_what_they_mean_to_the_agent() {
        let cli = parsed(&["--mode", "ask", "--model", "m1", "login"]);
        assert!(cli.command.as_ref().unwrap().follows_the_agents_flags());
        let overrides = cli.overrides();
        assert_eq!(overrides.model.as_deref(), Some("m1"));
        assert_eq!(overrides.mode.as_deref(), Some("ask"));
        // The login's own --model, after its name, wins.
        let cli = parsed(&["--model", "m1", "login", "--model", "m2"]);
        assert_eq!(cli.overrides().model.as_deref(), Some("m2"));
        // The agent's own run: nothing of a login's or logout's.
        let cli = parsed(&["--replay", "f.json", "--trace-wire", "t", "logout"]);
        let overrides = cli.overrides();
        assert_eq!((overrides.replay, overrides.trace_wire), (None, None));
        assert!(
            !parsed(&["exec", "hi"])
                .command
                .unwrap()
                .follows_the_agents_flags()
        );
    }
}
