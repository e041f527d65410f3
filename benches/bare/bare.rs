//! The floor for start-up figures (benches/compare.py): a std-only program that answers each
//! JSON-RPC line on stdin with a result, the least any agent can do over ACP's stdio.
use std::io::{BufRead, Write};

fn main() {
    let mut out = std::io::stdout().lock();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let after = line.split("\"id\":").nth(1).unwrap_or("").trim_start();
        let id: String = after.chars().take_while(|c| c.is_ascii_digit()).collect();
        let _ = writeln!(
            out,
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"sessionId":"bare"}}}}"#
        );
        let _ = out.flush();
    }
}
