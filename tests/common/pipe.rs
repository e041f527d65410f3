//! A child's output read on a thread of its own, so a test can wait for what it has printed
//! so far (with a deadline) and still get all of it at the end.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Reads `pipe` to its end on a thread of its own, into a buffer shared with the caller.
pub(crate) struct Pipe {
    bytes: Arc<Mutex<Vec<u8>>>,
    thread: JoinHandle<()>,
}

impl Pipe {
    /// Starts reading `pipe`.
    pub(crate) fn read(mut pipe: impl Read + Send + 'static) -> Pipe {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        let sink = bytes.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                sink.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Pipe { bytes, thread }
    }

    /// Waits until what was read starts with `text`; fails after `WAIT`.
    pub(crate) fn wait_for(&self, text: &str) {
        let deadline = Instant::now() + super::acp_client::WAIT;
        while !self.bytes.lock().unwrap().starts_with(text.as_bytes()) {
            assert!(Instant::now() < deadline, "`{text}` was never printed");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Everything, once the pipe is closed.
    pub(crate) fn join(self) -> Vec<u8> {
        self.thread.join().unwrap();
        std::mem::take(&mut self.bytes.lock().unwrap())
    }
}
