//! Fuzzes the permission layer's shell parser (tandem_permission::shell): any text a model
//! may send as a command must be judged without a crash, a hang or a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(line) = std::str::from_utf8(data) {
        let parsed = tandem_permission::shell::parse(line);
        let _ = tandem_permission::shell::reachable(&parsed);
        for command in &parsed.commands {
            let _ = tandem_permission::CommandScope::of(command).label();
        }
    }
});
