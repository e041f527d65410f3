//! macOS: the same policy as a Seatbelt profile (SBPL, the Scheme-like language of
//! `sandbox-exec`), run through `/usr/bin/sandbox-exec -p <profile> -- <command>`.
//!
//! Everything is denied unless allowed: reading anywhere but the hidden paths, writing only
//! in the writable folders (not their protected paths), the temp folder and the terminal
//! devices, starting processes, signalling and inspecting only those in the same sandbox,
//! the system services ordinary tools look users, time zones and certificates up through,
//! Unix sockets only in the writable folders and those the user allowed, and the network
//! (addresses, never a socket elsewhere) only when the policy allows it. The profile is built here on every system
//! so its tests run everywhere; only macOS runs it.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use super::SandboxPolicy;

/// Where macOS keeps the program that applies a profile.
#[cfg(target_os = "macos")]
pub(crate) const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// System services (Mach names) that everyday command-line tools need: user and group
/// lookups, logging, notifications, the system's network configuration and certificate
/// trust (for tools that fetch when the network is on).
const SERVICES: [&str; 7] = [
    "com.apple.system.opendirectoryd.libinfo",
    "com.apple.system.opendirectoryd.membership",
    "com.apple.system.logger",
    "com.apple.system.notification_center",
    "com.apple.SystemConfiguration.configd",
    "com.apple.trustd.agent",
    "com.apple.diagnosticd",
];

/// Devices a command may write.
const DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/tty",
    "/dev/dtracehelper",
    "/dev/ptmx",
];

/// The Seatbelt profile for `policy`.
pub(crate) fn profile(policy: &SandboxPolicy) -> String {
    let mut out = String::from("(version 1)\n(deny default)\n");
    out.push_str(
        "(allow process-exec)\n(allow process-fork)\n\
         (allow signal (target same-sandbox))\n(allow process-info* (target same-sandbox))\n\
         (allow sysctl-read)\n(allow ipc-posix-shm)\n(allow ipc-posix-sem)\n(allow pseudo-tty)\n",
    );
    out.push_str("(allow mach-lookup");
    for service in SERVICES {
        let _ = write!(out, "\n  (global-name {})", quoted_str(service));
    }
    out.push_str(")\n");
    // Reading: everything but the hidden paths.
    out.push_str("(allow file-read*\n  (require-all (subpath \"/\")");
    for hidden in &policy.hidden {
        let _ = write!(out, "\n    (require-not (subpath {}))", quoted(hidden));
    }
    out.push_str("))\n");
    // Writing: each writable folder but its protected paths, the temp folder, the devices.
    out.push_str("(allow file-write*");
    for root in &policy.writable {
        let inside: Vec<&PathBuf> = policy
            .read_only
            .iter()
            .chain(&policy.hidden)
            .filter(|p| p.starts_with(root))
            .collect();
        let _ = write!(out, "\n  (require-all (subpath {})", quoted(root));
        for protected in inside {
            let _ = write!(out, "\n    (require-not (subpath {}))", quoted(protected));
        }
        if policy.no_repositories.contains(root) {
            // No `.git` of any kind is made in the workspace: a repository there would run
            // its config for the next git outside the sandbox.
            out.push_str("\n    (require-not (regex #\"/\\.git$\"))");
        }
        out.push(')');
    }
    let _ = write!(out, "\n  (subpath {})", quoted(&policy.temp));
    for device in DEVICES {
        let _ = write!(out, "\n  (literal {})", quoted_str(device));
    }
    out.push_str("\n  (regex #\"^/dev/ttys[0-9]+$\"))\n");
    out.push_str("(allow file-ioctl (literal \"/dev/tty\") (regex #\"^/dev/ttys[0-9]+$\"))\n");
    sockets(policy, &mut out);
    if policy.network {
        // Addresses only: `network*` would reach every Unix socket too.
        out.push_str(
            "(allow system-socket)\n(allow network-outbound (remote ip \"*:*\"))\n\
             (allow network-bind network-inbound (local ip \"*:*\"))\n\
             (allow network-outbound (remote unix-socket (path-literal \"/private/var/run/mDNSResponder\")))\n",
        );
    }
    out
}

/// Unix sockets: made anywhere (making one reaches nothing), bound and listened on only in
/// the writable folders and the temp folder, connected to only there and where the user
/// allowed (`[sandbox] unix_sockets`): a daemon's socket elsewhere (Docker Desktop's, a
/// desktop bus, a key agent's) cannot be reached.
fn sockets(policy: &SandboxPolicy, out: &mut String) {
    out.push_str("(allow system-socket (socket-domain AF_UNIX))\n");
    let own: Vec<&PathBuf> = policy.writable.iter().chain([&policy.temp]).collect();
    out.push_str("(allow network-bind network-inbound");
    for folder in &own {
        let _ = write!(out, "\n  (local unix-socket (subpath {}))", quoted(folder));
    }
    out.push_str(")\n(allow network-outbound");
    for path in own.iter().copied().chain(&policy.unix_sockets) {
        let _ = write!(out, "\n  (remote unix-socket (subpath {}))", quoted(path));
    }
    out.push_str(")\n");
}

/// `path` as an SBPL string.
fn quoted(path: &Path) -> String {
    quoted_str(&path.to_string_lossy())
}

/// `text` as an SBPL string: in double quotes, with backslashes and quotes escaped (SBPL
/// strings read escapes as Scheme's do), so no path can end the string and add a rule.
fn quoted_str(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(network: bool) -> SandboxPolicy {
        SandboxPolicy {
            writable: vec![PathBuf::from("/Users/u/ws")],
            read_only: vec![
                PathBuf::from("/Users/u/ws/.git/hooks"),
                PathBuf::from("/Users/u/ws/.tandem"),
            ],
            hidden: vec![
                PathBuf::from("/Users/u/.ssh"),
                PathBuf::from("/Users/u/Library/Application Support/tandem"),
            ],
            network,
            unix_sockets: Vec::new(),
            no_repositories: Vec::new(),
            temp: PathBuf::from("/private/var/folders/x/T/tandem-sandbox-1"),
        }
    }

    /// The profile's parentheses balance outside strings, so sandbox-exec reads it whole.
    fn balanced(profile: &str) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0i32, false, false);
        for c in profile.chars() {
            match (in_string, escaped, c) {
                (true, true, _) => escaped = false,
                (true, false, '\\') => escaped = true,
                (true, false, '"') => in_string = false,
                (false, _, '"') => in_string = true,
                (false, _, '(') => depth += 1,
                (false, _, ')') => depth -= 1,
                _ => {}
            }
            if depth < 0 {
                return false;
            }
        }
        depth == 0 && !in_string
    }

    #[test]
    fn everything_is_denied_unless_the_policy_allows_it() {
        let text = profile(&policy(false));
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(balanced(&text), "{text}");
        assert!(text.contains("(require-not (subpath \"/Users/u/.ssh\"))"));
        assert!(
            text.contains(
                "(require-not (subpath \"/Users/u/Library/Application Support/tandem\"))"
            )
        );
        let writes = &text[text.find("(allow file-write*").unwrap()..];
        assert!(writes.contains("(require-all (subpath \"/Users/u/ws\")"));
        assert!(writes.contains("(require-not (subpath \"/Users/u/ws/.git/hooks\"))"));
        assert!(writes.contains("(require-not (subpath \"/Users/u/ws/.tandem\"))"));
        assert!(writes.contains("(subpath \"/private/var/folders/x/T/tandem-sandbox-1\")"));
        assert!(!text.contains("(remote ip"));
        assert!(!text.contains("(allow file-write* (subpath \"/\")"));
    }

    #[test]
    fn the_network_is_allowed_only_when_the_policy_says_so() {
        let on = profile(&policy(true));
        assert!(
            on.contains("(allow network-outbound (remote ip \"*:*\"))"),
            "{on}"
        );
        assert!(!on.contains("(allow network*"), "{on}");
        assert!(!profile(&policy(false)).contains("(remote ip"));
    }

    #[test]
    fn no_git_repository_can_be_made_in_the_workspace() {
        let mut p = policy(false);
        p.no_repositories = p.writable.clone();
        let text = profile(&p);
        assert!(balanced(&text), "{text}");
        let writes = &text[text.find("(allow file-write*").unwrap()..];
        let workspace = &writes[..writes.find("(subpath \"/private/var").unwrap()];
        assert!(
            workspace.contains("(require-not (regex #\"/\\.git$\"))"),
            "{workspace}"
        );
        assert!(!profile(&policy(false)).contains("regex #\"/\\.git$\""));
    }

    #[test]
    fn unix_sockets_are_reached_only_in_the_workspace_and_where_allowed() {
        let mut p = policy(true);
        p.unix_sockets = vec![PathBuf::from("/Users/u/.docker/run/docker.sock")];
        let text = profile(&p);
        assert!(balanced(&text), "{text}");
        let outbound = &text[text.find("(allow network-outbound\n").unwrap()..];
        let outbound = &outbound[..outbound.find(")\n(").unwrap()];
        assert!(outbound.contains("(remote unix-socket (subpath \"/Users/u/ws\"))"));
        assert!(
            outbound
                .contains("(remote unix-socket (subpath \"/Users/u/.docker/run/docker.sock\"))")
        );
        assert!(!outbound.contains("/Users/u/.docker/desktop"));
        assert!(text.contains("(allow system-socket (socket-domain AF_UNIX))"));
        assert!(!text.contains("(remote unix-socket (subpath \"/\"))"));
    }

    #[test]
    fn a_path_cannot_end_its_string_and_add_a_rule() {
        let mut p = policy(false);
        p.writable = vec![PathBuf::from("/ws\") (allow file-write* (subpath \"/")];
        let text = profile(&p);
        assert!(balanced(&text), "{text}");
        assert!(text.contains("(subpath \"/ws\\\") (allow file-write* (subpath \\\"/\")"));
        let rules = text.lines().filter(|l| l.starts_with("(allow file-write*"));
        assert_eq!(rules.count(), 1);
    }
}
