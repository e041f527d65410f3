//! Models on different servers side by side (`[[providers]]`): each request goes to the
//! client of the server its model names, made on first use; models without a provider go to
//! the default server.

use std::collections::HashMap;
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::Mutex;

use super::{EventStream, ModelClient, ModelError, ModelRequest};
use crate::config::Config;

/// A [`ModelClient`] that picks the server by the request's model.
pub(crate) struct Router {
    config: Config,
    default: Arc<dyn ModelClient>,
    /// One client per provider, by name.
    clients: Mutex<HashMap<String, Arc<dyn ModelClient>>>,
}

impl Router {
    /// Routes `config`'s models; `default` serves those without a provider.
    pub(crate) fn new(config: &Config, default: Arc<dyn ModelClient>) -> Self {
        Self {
            config: config.clone(),
            default,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// The client for `model`'s server.
    fn client(&self, model: &str) -> Arc<dyn ModelClient> {
        let Some(name) = self.config.model(model).and_then(|m| m.provider.clone()) else {
            return self.default.clone();
        };
        let mut clients = self.clients.lock();
        if let Some(client) = clients.get(&name) {
            return client.clone();
        }
        let mut config = self.config.clone();
        config.endpoint = self.config.endpoint_for(model).clone();
        let client = super::endpoint_client(&config);
        clients.insert(name, client.clone());
        client
    }
}

impl ModelClient for Router {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        let client = self.client(&request.model);
        Box::pin(async move { client.open(request).await })
    }
}
