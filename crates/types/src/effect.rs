//! What a tool call did to the world beyond the conversation: the files it wrote or removed
//! (with their text before and after, so a rewind can put them back) and the commands it
//! started (whose effects nothing can put back). Tools note them in their call's journal.
//!
//! A file change is write-ahead when the journal has a [`Ledger`] (every call the turn runs):
//! [`Journal::intend`] records the change as intended, and waits until that record is
//! written, before the file is touched, and [`Journal::settle`] records its outcome after,
//! so a kill at any instant leaves a transcript a load can finish (it looks at the file). A
//! change whose intent cannot be recorded is not made. Without a ledger (a tool run outside
//! a turn, a unit test), a change is noted once made and recorded with the call's result.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
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

/// What the ledger's [`Ledger::intend`] returns.
pub type Intending<'a> = Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>>;

/// Where file changes are recorded write-ahead (the session's transcript).
pub trait Ledger: Send + Sync {
    /// Records the [`Effect::File`] `change` as intended and waits until that record is
    /// written: the id its outcome names, or why it could not be recorded (then the change
    /// must not be made).
    fn intend<'a>(&'a self, change: &'a Effect) -> Intending<'a>;

    /// Records how the [`Effect::File`] `change` intended as `id` ended: made, or not (why,
    /// in words).
    fn settle(&self, id: &str, change: &Effect, made: Result<(), &str>);
}

/// A file change recorded as intended and not settled yet (see [`Journal::intend`]).
#[derive(Debug)]
#[must_use = "a change that was intended is settled once it is made or failed"]
pub struct Intended {
    /// Its id in the ledger; `None` without one.
    id: Option<String>,
    change: Effect,
}

/// What one call did, noted as it happened (shared by the call's clones of its environment).
#[derive(Clone, Default)]
pub struct Journal {
    effects: Arc<Mutex<Vec<Effect>>>,
    /// Where file changes are recorded before they are made.
    ledger: Option<Arc<dyn Ledger>>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("effects", &self.effects)
            .field("write_ahead", &self.ledger.is_some())
            .finish()
    }
}

impl Journal {
    /// A journal whose file changes are recorded in `ledger` before they are made.
    pub fn write_ahead(ledger: Arc<dyn Ledger>) -> Self {
        Self {
            effects: Arc::default(),
            ledger: Some(ledger),
        }
    }

    /// Notes one effect.
    pub fn note(&self, effect: Effect) {
        self.effects.lock().push(effect);
    }

    /// Everything noted so far, in order; the journal is empty afterwards. File changes
    /// recorded write-ahead are not among them: they are in the ledger already.
    pub fn take(&self) -> Vec<Effect> {
        std::mem::take(&mut *self.effects.lock())
    }

    /// Before a file is touched: records the [`Effect::File`] `change` as intended, once the
    /// ledger has written it; `Err` (why, for the model and the user) when it cannot be
    /// recorded, and then the file must be left alone.
    pub async fn intend(&self, change: Effect) -> Result<Intended, String> {
        let Some(ledger) = &self.ledger else {
            return Ok(Intended { id: None, change });
        };
        match ledger.intend(&change).await {
            Ok(id) => Ok(Intended {
                id: Some(id),
                change,
            }),
            Err(why) => Err(format!(
                "tandem left it unchanged: it records every change before making it, so that /undo can take it back, and {why}"
            )),
        }
    }

    /// After the change: records whether it was `made`.
    pub fn settle(&self, intended: Intended, made: &Result<(), String>) {
        match (&self.ledger, intended.id) {
            (Some(ledger), Some(id)) => {
                let made = made.as_ref().map(|_| ()).map_err(String::as_str);
                ledger.settle(&id, &intended.change, made);
            }
            _ if made.is_ok() => self.note(intended.change),
            _ => {}
        }
    }
}

/// Test builds only (the `test-pauses` feature, which release builds never have): stops
/// the task for good at `point` when `TANDEM_TEST_PAUSE` names it (`point`, or `point#N`
/// for its N-th time), after saying so on stderr, so a test can kill tandem exactly there.
/// The one place besides config/ that reads the environment, and only in such builds.
#[cfg(feature = "test-pauses")]
pub async fn pause(point: &str) {
    use std::collections::HashMap;
    use std::sync::LazyLock;
    static WANTED: LazyLock<Option<String>> =
        LazyLock::new(|| std::env::var("TANDEM_TEST_PAUSE").ok());
    static SEEN: LazyLock<Mutex<HashMap<String, usize>>> = LazyLock::new(Mutex::default);
    let Some(wanted) = WANTED.as_deref() else {
        return;
    };
    let n = {
        let mut seen = SEEN.lock();
        let n = seen.entry(point.to_string()).or_default();
        *n += 1;
        *n
    };
    let (name, nth) = match wanted.split_once('#') {
        Some((name, nth)) => (name, nth.parse().unwrap_or(1)),
        None => (wanted, 1),
    };
    if name == point && nth == n {
        tracing::warn!("test pause reached: {wanted}");
        std::future::pending::<()>().await;
    }
}

/// Test builds only (see the `test-pauses` feature): here, nothing.
#[cfg(not(feature = "test-pauses"))]
#[inline]
pub async fn pause(_point: &str) {}
