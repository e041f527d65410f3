//! Asking the model server about itself once per process (one endpoint each), in the
//! background: `initialize` never waits for it. Sessions read the answer when they need it
//! (a model's window when a prompt runs, the server's models for the picker).

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::Config;
use crate::model::discover::{Discovered, discover};

/// The server's answer, once it came (`None` before, and always in replay mode).
pub type Discovery = watch::Receiver<Option<Arc<Discovered>>>;

/// How long `session/new` waits for a server on this machine or network to answer, when
/// the model picker depends on it: such a server answers in milliseconds.
const PICKER_WAIT: Duration = Duration::from_millis(500);

/// Starts asking, unless answers come from a replay fixture.
pub(super) fn start(config: &Arc<Config>) -> Discovery {
    let (tx, rx) = watch::channel(None);
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return rx;
    };
    if config.replay.is_some() {
        return rx;
    }
    let config = config.clone();
    runtime.spawn(async move {
        // Models other providers serve are not the default server's to describe.
        let wanted: Vec<String> = config
            .models
            .iter()
            .filter(|m| m.provider.is_none())
            .map(|m| m.id.clone())
            .collect();
        let found = discover(&config.endpoint, &wanted).await;
        for (model, window) in &found.windows {
            tracing::info!(%model, tokens = window.tokens, source = %window.source, "context window reported by the server");
        }
        tracing::debug!(models = found.models.len(), failures = ?found.failures, "model server asked about itself");
        let _ = tx.send(Some(Arc::new(found)));
    });
    rx
}

/// Waits (briefly) for the answer when the picker is to list the server's models.
pub(super) async fn settle_for_picker(config: &Config, discovery: &Discovery) {
    if config.models_configured
        || config.replay.is_some()
        || !crate::model::discover::is_local(&config.endpoint.base_url)
    {
        return;
    }
    let mut rx = discovery.clone();
    let _ = tokio::time::timeout(PICKER_WAIT, rx.wait_for(Option::is_some)).await;
}
