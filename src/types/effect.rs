//! What a tool call did to the world beyond the conversation: the files it wrote or removed
//! (with their text before and after, so a rewind can put them back) and the commands it
//! started (whose effects nothing can put back). Tools note them in their call's journal; the
//! turn records them with the call's result.

use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;

/// One thing a call did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Effect {
    /// A file tandem changed.
    File {
        /// The file (absolute).
        path: PathBuf,
        /// Its whole text before (with any byte order mark); `None`: it did not exist.
        before: Option<String>,
        /// Its whole text after; `None`: tandem removed it.
        after: Option<String>,
    },
    /// A command line that started.
    Command {
        /// The line as it ran.
        line: String,
    },
}

/// What one call did, noted as it happened (shared by the call's clones of its environment).
#[derive(Debug, Clone, Default)]
pub struct Journal(Arc<Mutex<Vec<Effect>>>);

impl Journal {
    /// Notes one effect.
    pub fn note(&self, effect: Effect) {
        self.0.lock().push(effect);
    }

    /// Everything noted so far, in order; the journal is empty afterwards.
    pub fn take(&self) -> Vec<Effect> {
        std::mem::take(&mut *self.0.lock())
    }
}
