//! Asking the model server about itself once per process (one endpoint each), in the
//! background, from the first session on: `initialize` never waits for it and does not pay
//! for it (for an `https` server, building the client reads and parses every system root
//! certificate, about 19 M instructions, three quarters of a start-up). It begins once a
//! session's answer has gone out, or before, when `session/new`'s model picker is to list a
//! local server's models, or with the first prompt. Sessions read the answer when they need it
//! (a model's window when a prompt runs, the server's models for the picker). When the
//! server could not be reached or was busy (the editor started before the model server, a
//! model still loading), the next prompt asks again, at most every [`ASK_AGAIN_AFTER`].

use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{Notify, watch};

use crate::config::Config;
use crate::model::discover::{BACKGROUND_PROBE_TIMEOUT, Discovered, discover};

/// The server's answer, once it came (`None` before, and always in replay mode).
pub(crate) type Discovering = watch::Receiver<Option<Arc<Discovered>>>;

/// What the server said about itself, and the way to have it asked (again).
#[derive(Clone)]
pub(crate) struct Discovery {
    answer: Discovering,
    again: Arc<Notify>,
    /// What the first ask needs, until it begins.
    pending: Arc<Mutex<Option<Pending>>>,
}

/// The first ask, not yet begun.
struct Pending {
    config: Arc<Config>,
    tx: watch::Sender<Option<Arc<Discovered>>>,
    runtime: tokio::runtime::Handle,
}

impl Discovery {
    /// Begins asking, unless it has begun.
    pub(crate) fn begin(&self) {
        if let Some(p) = self.pending.lock().take() {
            p.runtime
                .spawn(keep_asking(p.config, p.tx, self.again.clone()));
        }
    }

    /// The latest answer.
    pub(crate) fn borrow(&self) -> watch::Ref<'_, Option<Arc<Discovered>>> {
        self.answer.borrow()
    }

    /// The answer as it changes, for a session's requests.
    pub(crate) fn answer(&self) -> Discovering {
        self.answer.clone()
    }

    /// Begins asking if nobody has yet, and asks again when the last answer left out what a
    /// later ask may give (a prompt is about to need it); returns at once.
    pub(crate) fn ask_again_if_unanswered(&self) {
        self.begin();
        if self.borrow().as_ref().is_some_and(|found| found.ask_again) {
            self.again.notify_one();
        }
    }
}

/// How long after one ask the next may go out, however many prompts come.
const ASK_AGAIN_AFTER: Duration = Duration::from_secs(3);

/// How long `session/new` waits for a server on this machine or network to answer, when
/// the model picker depends on it: such a server answers in milliseconds.
const PICKER_WAIT: Duration = Duration::from_millis(500);

/// Ready to ask when [`Discovery::begin`] is called, unless answers come from a replay
/// fixture.
pub(super) fn start(config: &Arc<Config>) -> Discovery {
    let (tx, answer) = watch::channel(None);
    let pending = tokio::runtime::Handle::try_current()
        .ok()
        .filter(|_| config.replay.is_none())
        .map(|runtime| Pending {
            config: config.clone(),
            tx,
            runtime,
        });
    Discovery {
        answer,
        again: Arc::new(Notify::new()),
        pending: Arc::new(Mutex::new(pending)),
    }
}

/// Asks, and again each time a prompt wants it while the answer is incomplete.
async fn keep_asking(
    config: Arc<Config>,
    tx: watch::Sender<Option<Arc<Discovered>>>,
    again: Arc<Notify>,
) {
    // Models other providers serve are not the default server's to describe.
    let wanted: Vec<String> = config
        .models
        .iter()
        .filter(|m| m.provider.is_none())
        .map(|m| m.id.clone())
        .collect();
    loop {
        let asked = tokio::time::Instant::now();
        let found = discover(&config.endpoint, &wanted, BACKGROUND_PROBE_TIMEOUT).await;
        for (model, window) in &found.windows {
            tracing::info!(%model, tokens = window.tokens, source = %window.source, "context window reported by the server");
        }
        tracing::debug!(models = found.models.len(), failures = ?found.failures, ask_again = found.ask_again, "model server asked about itself");
        let ask_again = found.ask_again;
        tx.send_if_modified(|current| keep_better(current, found));
        if tx.is_closed() || !ask_again {
            return;
        }
        tokio::select! {
            () = again.notified() => {}
            () = tx.closed() => return,
        }
        tokio::time::sleep_until(asked + ASK_AGAIN_AFTER).await;
    }
}

/// Puts `found` in place of the current answer unless it knows nothing the current one
/// did not (a server gone away since): whether the answer changed.
fn keep_better(current: &mut Option<Arc<Discovered>>, found: Discovered) -> bool {
    let knew = current
        .as_ref()
        .is_some_and(|c| !c.models.is_empty() || !c.windows.is_empty());
    if knew && found.models.is_empty() && found.windows.is_empty() {
        return false;
    }
    *current = Some(Arc::new(found));
    true
}

/// Waits (briefly) for the answer when the picker is to list the server's models.
pub(super) async fn settle_for_picker(config: &Config, discovery: &Discovery) {
    if config.models_configured
        || config.replay.is_some()
        || !crate::model::discover::is_local(&config.endpoint.base_url)
    {
        return;
    }
    discovery.begin();
    let mut rx = discovery.answer();
    let _ = tokio::time::timeout(PICKER_WAIT, rx.wait_for(Option::is_some)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knowing(models: &[&str]) -> Discovered {
        Discovered {
            models: models.iter().map(|m| m.to_string()).collect(),
            ..Discovered::default()
        }
    }

    #[test]
    fn a_later_answer_replaces_one_unless_it_knows_nothing() {
        let mut current = None;
        assert!(keep_better(&mut current, Discovered::default()));
        assert!(keep_better(&mut current, knowing(&["a"])));
        assert!(!keep_better(&mut current, Discovered::default()));
        assert_eq!(current.as_ref().unwrap().models, ["a"]);
        assert!(keep_better(&mut current, knowing(&["b"])));
        assert_eq!(current.unwrap().models, ["b"]);
    }
}
