//! Thin entry point: parse flags, set up logging, load configuration, hand over to the library.

use std::io::Write;
use std::process::ExitCode;

use tandem::cli::{Cli, Command};
use tandem::demo::Demo;
use tandem::logging::Audience;
use tandem_config::Config;

fn main() -> ExitCode {
    // A command tandem starts in its sandbox: nothing else of tandem's start is needed.
    if let Some(code) = tandem_platform::sandbox::run_early() {
        return code;
    }
    // A command tandem starts outside the sandbox, tied to tandem's life (Linux).
    #[cfg(target_os = "linux")]
    {
        if let Some(code) = tandem_platform::ties::run_early() {
            return code;
        }
        tandem_platform::ties::enable();
    }
    tandem_platform::tune_allocator();
    let cli = Cli::parse_checked();
    // `tandem demo` is a `tandem exec` on a copy of a built-in project.
    let (cli, demo) = match cli.command {
        Some(Command::Demo) => match demo(cli.common.verbose) {
            Ok((cli, demo)) => (cli, Some(demo)),
            Err(code) => return code,
        },
        _ => (cli, None),
    };
    // Before anything else: the process becomes the command, single-threaded, with no
    // configuration, key or logging of its own (and dumpable, so it may map its user into
    // the sandbox's namespace).
    if let Some(Command::Sandbox(args)) = &cli.command {
        return tandem_platform::sandbox::run(
            args.policy.as_deref().unwrap_or_default(),
            &args.command,
        );
    }
    // However this process ends from here on (returning, or a panic unwinding), the sandbox
    // folders it still has go with it.
    let _folders = RemoveFolders;
    // Before the key is read: commands tandem starts cannot read it out of tandem (Linux).
    tandem_platform::close_to_inspection();
    // Warnings only unless -v or RUST_LOG asks for more: editors may show every stderr line.
    let audience = match &cli.command {
        None => Audience::Editor,
        // Only a login that asks questions keeps log lines out; a scripted one logs warnings.
        Some(Command::Login(args))
            if !args.key_stdin
                && std::io::IsTerminal::is_terminal(&std::io::stdin())
                && std::io::IsTerminal::is_terminal(&std::io::stderr()) =>
        {
            Audience::Prompted
        }
        Some(_) => Audience::Command,
    };
    tandem::logging::init(audience, cli.common.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run(cli, demo.as_ref()));
    if let Some(demo) = demo {
        if code == ExitCode::SUCCESS {
            let _ = write!(std::io::stderr(), "{}", demo.after());
        } else {
            let _ = demo.remove();
            let _ = writeln!(
                std::io::stderr(),
                "tandem demo: the tour did not finish (see above); its folder was removed"
            );
        }
    }
    // After a stop signal, a read of stdin may still be blocked in the runtime's thread pool
    // (the editor keeps its end open); waiting for it would keep tandem alive.
    runtime.shutdown_background();
    code
}

/// The tour made ready, and the `tandem exec` command line it runs as; the exit status when
/// it cannot be made ready.
fn demo(verbose: u8) -> Result<(Cli, Demo), ExitCode> {
    let ready = Demo::prepare().map_err(|e| {
        let _ = writeln!(
            std::io::stderr(),
            "tandem: error: cannot make the demo's folder in the temp folder: {e}"
        );
        ExitCode::FAILURE
    })?;
    let cli = ready.exec_command(verbose > 0).map_err(|e| {
        let _ = ready.remove();
        let _ = writeln!(std::io::stderr(), "tandem: error: {e}");
        ExitCode::FAILURE
    })?;
    let _ = write!(std::io::stderr(), "{}", ready.before());
    Ok((cli, ready))
}

/// Removes the sandbox's private folders this process still has when dropped: the last thing
/// `main` does, after the runtime was left with whatever tasks never ended (their folders
/// among them). A process killed outright leaves its folders to the next tandem, which
/// reclaims them.
struct RemoveFolders;

impl Drop for RemoveFolders {
    fn drop(&mut self) {
        tandem_platform::sandbox::folders::remove_all();
    }
}

/// Runs the command; `demo` is the tour's folder when the command is `tandem demo`'s exec.
async fn run(cli: Cli, demo: Option<&Demo>) -> ExitCode {
    let mut overrides = cli.overrides();
    // The editor's agent looks up stored keys beside its first answers (session/credentials.rs).
    overrides.stored_keys_later = cli.command.is_none();
    if let Some(Command::Exec(args)) = &cli.command {
        // Nobody can answer a permission prompt in a headless run: read-only unless the
        // command line itself says otherwise (a mode in the config or TANDEM_MODE is for
        // editor sessions).
        overrides.fallback_mode = Some(tandem_types::Mode::ReadOnly);
        overrides.mode_from_flag_only = true;
        overrides.max_turn_requests = args.max_turns;
    }
    let doctor = matches!(cli.command, Some(Command::Doctor(_)));
    let loaded = match demo {
        Some(demo) => demo.config(&overrides).map(|config| (config, None)),
        None => load(&overrides, doctor),
    };
    let (config, broken) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            // The same form as every other error a command reports (`tandem: error: …`),
            // not a log line: it is the answer to what the user typed.
            let _ = writeln!(std::io::stderr(), "tandem: error: {e}");
            return ExitCode::from(2);
        }
    };
    // From here on, the key is redacted from everything tandem writes and kept from children.
    config.protect_keys();
    // Keys stored for other servers are kept from the model too (read at its first request).
    tandem_config::secrets::watch_key_file(tandem_config::credentials::KeyFile::new(
        &config.config_dir,
    ));
    match cli.command {
        None => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                // Someone typed `tandem` in a shell: say what it is waiting for.
                let _ = writeln!(
                    std::io::stderr(),
                    "tandem speaks the Agent Client Protocol on stdin/stdout, for an editor to start. Try a prompt here with `{} exec \"…\"`; set up a model server with `{} login`. Ctrl-D quits.",
                    tandem_config::invocation::command(),
                    tandem_config::invocation::command()
                );
            }
            serve(config).await
        }
        Some(Command::Exec(args)) => tandem::exec::run(config, args).await,
        Some(Command::Login(args)) => {
            let search = args
                .search
                .as_deref()
                .map(|provider| (provider, args.search_url.as_deref()));
            tandem::login::login(&config, args.key_stdin, search).await
        }
        Some(Command::Logout) => tandem::login::logout(&config),
        // Made an `exec` in `main`.
        Some(Command::Demo) => ExitCode::FAILURE,
        // Handled in `main`, before the runtime starts.
        Some(Command::Sandbox(args)) => {
            tandem_platform::sandbox::run(args.policy.as_deref().unwrap_or_default(), &args.command)
        }
        Some(Command::Doctor(_)) => {
            if tandem::doctor::run(&config, broken.as_ref()).await {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

/// The configuration; for `tandem doctor` (`checking`), one loaded without the config file
/// when the file is what fails, with the file's error, so the other checks still run.
fn load(
    overrides: &tandem_config::Overrides,
    checking: bool,
) -> Result<(Config, Option<tandem::doctor::BrokenFile>), tandem_config::ConfigError> {
    match Config::load(overrides) {
        Ok(config) => Ok((config, None)),
        Err(error) if checking => {
            let without = tandem_config::Overrides {
                without_config_file: true,
                ..overrides.clone()
            };
            // As the configuration reads them: a blank variable is not set.
            let named = |var: &str| std::env::var(var).is_ok_and(|v| !v.trim().is_empty());
            let server_given = overrides.base_url.is_some()
                || overrides.provider.is_some()
                || named("OPENAI_BASE_URL")
                || named("TANDEM_PROVIDER");
            match Config::load(&without) {
                Ok(config) => Ok((
                    config,
                    Some(tandem::doctor::BrokenFile {
                        error,
                        server_given,
                    }),
                )),
                Err(_) => Err(error),
            }
        }
        Err(e) => Err(e),
    }
}

async fn serve(config: Config) -> ExitCode {
    // SIGTERM or SIGINT: how a terminal, a process manager or an editor asks tandem to stop.
    let shutdown = async {
        let name = tandem_platform::stop_requested().await;
        tracing::info!(signal = name, "stop requested");
    };
    match tandem::run_stdio(config, shutdown).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            ExitCode::FAILURE
        }
    }
}
