//! A child's stdout and stderr through one pipe, read in the order they were written, as a
//! terminal shows them. Shell-independent: POSIX shells could merge them with `2>&1`, but
//! PowerShell and `cmd` have no such prefix for a whole line.

use std::io::Read;
use std::process::Stdio;

use tokio::sync::mpsc;

/// How many chunks may wait for the reader before the child's writes block.
const QUEUED: usize = 16;

/// The reading end of a merged stdout and stderr.
pub struct Merged {
    chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
}

impl Merged {
    /// Sets `command`'s stdout and stderr to one new pipe and starts reading it on a thread
    /// of its own (an anonymous pipe cannot be read asynchronously on every system). The
    /// thread ends at the pipe's end, or at its next read once this is dropped.
    pub fn attach(command: &mut tokio::process::Command) -> std::io::Result<Merged> {
        let (mut reader, writer) = std::io::pipe()?;
        command
            .stdout(Stdio::from(writer.try_clone()?))
            .stderr(Stdio::from(writer));
        let (tx, chunks) = mpsc::channel(QUEUED);
        std::thread::Builder::new()
            .name("tandem-output".into())
            .spawn(move || {
                let mut buf = vec![0u8; 8192];
                loop {
                    let read = match reader.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => Ok(buf[..n].to_vec()),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let failed = read.is_err();
                    if tx.blocking_send(read).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(Merged { chunks })
    }

    /// The next chunk of output; `None` once every writer closed the pipe.
    pub async fn next(&mut self) -> Option<std::io::Result<Vec<u8>>> {
        self.chunks.recv().await
    }
}
