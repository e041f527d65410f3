//! A point in a scripted stream that waits for the test: the mock holds the rest of the
//! answer until the test opens the gate, so a test can act in a known state (everything
//! before the gate has reached the editor, nothing after it has been sent).

use std::sync::Arc;

use tokio::sync::Semaphore;

/// Closed when made; once opened, every stream waiting on it (and any later) goes on.
#[derive(Clone, Debug)]
pub(crate) struct Gate(Arc<Semaphore>);

impl Gate {
    /// A closed gate.
    pub(crate) fn new() -> Gate {
        Gate(Arc::new(Semaphore::new(0)))
    }

    /// Lets every stream waiting here go on, for good.
    pub(crate) fn open(&self) {
        self.0.add_permits(1);
    }

    /// Waits until the gate is open (the permit goes back, so it stays open).
    pub(crate) async fn pass(&self) {
        let _ = self.0.acquire().await;
    }
}

impl Default for Gate {
    fn default() -> Gate {
        Gate::new()
    }
}
