//! tandem's whole message path under libFuzzer: see `tandem::harness`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // A panic in any of tandem's tasks is a finding, even where tokio would catch it.
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        // libFuzzer's C main leaves SIGPIPE fatal, unlike a Rust binary's: tandem writing
        // to an MCP server that already exited must get EPIPE, as it does in production.
        // SAFETY: installing SIG_IGN runs no handler code.
        let _ = unsafe {
            nix::sys::signal::signal(nix::sys::signal::Signal::SIGPIPE, nix::sys::signal::SigHandler::SigIgn)
        };
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            default(info);
            std::process::abort();
        }));
    });
    let lines = tandem::harness::run(&tandem::harness::expand(data));
    for line in &lines {
        if let Some(problem) = tandem::harness::check_line(line) {
            panic!("{problem}");
        }
    }
});
