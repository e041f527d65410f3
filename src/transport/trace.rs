//! The wire trace (`--trace-wire FILE`, `TANDEM_TRACE_WIRE`): every line that comes in on
//! stdin and goes out on stdout, one per trace line, with the time and the direction
//! (`<-` in, `->` out). Secrets are redacted, a line over [`MAX_LINE`] bytes keeps its start
//! and its size, and when the file passes [`MAX_FILE`] bytes it moves to `FILE.1` (the one
//! before is dropped) and a new one starts, so a long session cannot fill the disk. The file
//! is the user's alone (0600), whatever the umask.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

/// Longest protocol line kept whole in the trace.
const MAX_LINE: usize = 64 * 1024;
/// Size at which the trace file is rotated.
const MAX_FILE: u64 = 32 * 1024 * 1024;

/// Which way a line went.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Dir {
    /// From the editor.
    In,
    /// To the editor.
    Out,
}

/// An open wire trace.
#[derive(Debug)]
pub(crate) struct WireTrace {
    path: PathBuf,
    file: Mutex<(File, u64)>,
}

impl WireTrace {
    /// Starts a trace at `path` (appending to what is there).
    pub(crate) fn open(path: &Path) -> std::io::Result<Self> {
        let file = open(path)?;
        let size = file.metadata()?.len();
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new((file, size)),
        })
    }

    /// Records one protocol line. A failure to write is logged once per rotation, never
    /// fatal: the trace is for debugging, the protocol goes on.
    pub(crate) fn record(&self, dir: Dir, line: &str) {
        let arrow = match dir {
            Dir::In => "<-",
            Dir::Out => "->",
        };
        let line = line.trim_end_matches(['\r', '\n']);
        let shown = crate::secrets::redact(line);
        let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
        let mut entry = format!("{now} {arrow} ");
        if shown.len() > MAX_LINE {
            let mut end = MAX_LINE;
            while !shown.is_char_boundary(end) {
                end -= 1;
            }
            entry.push_str(&shown[..end]);
            entry.push_str(&format!(" … [{} bytes in all]", shown.len()));
        } else {
            entry.push_str(&shown);
        }
        entry.push('\n');
        let mut held = self.file.lock();
        if held.1 + entry.len() as u64 > MAX_FILE
            && let Ok(fresh) = self.rotate()
        {
            *held = (fresh, 0);
        }
        match held.0.write_all(entry.as_bytes()) {
            Ok(()) => held.1 += entry.len() as u64,
            Err(e) => {
                tracing::warn!(path = %self.path.display(), "cannot write the wire trace: {e}")
            }
        }
    }

    /// Moves the full trace to `FILE.1` and opens a new one.
    fn rotate(&self) -> std::io::Result<File> {
        let mut old = self.path.clone().into_os_string();
        old.push(".1");
        std::fs::rename(&self.path, PathBuf::from(old))?;
        open(&self.path)
    }
}

/// The trace file, the user's alone (0600; one found open to others is tightened): it holds
/// their code and conversations.
fn open(path: &Path) -> std::io::Result<File> {
    let file = crate::platform::private::file_options(OpenOptions::new().create(true).append(true))
        .open(path)?;
    if let Err(e) = crate::platform::private::tighten(&file) {
        tracing::warn!(path = %path.display(), "cannot make the wire trace private (0600): {e}");
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_timed_directed_capped_and_rotated() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wire.log");
        let trace = WireTrace::open(&path).unwrap();
        trace.record(Dir::In, "{\"id\":1}\n");
        trace.record(Dir::Out, &"x".repeat(MAX_LINE + 10));
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].ends_with(" <- {\"id\":1}"), "{}", lines[0]);
        assert!(
            lines[1].contains(" -> xxx")
                && lines[1].ends_with(&format!("[{} bytes in all]", MAX_LINE + 10))
        );
        // Past the size limit the file moves aside.
        trace.file.lock().1 = MAX_FILE;
        trace.record(Dir::In, "next");
        assert!(dir.path().join("wire.log.1").exists());
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .ends_with("<- next\n")
        );
    }
}
