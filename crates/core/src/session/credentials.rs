//! The key sessions send, kept current while tandem runs.
//!
//! The editor's agent loads its configuration without asking the credential store, and asks
//! it on a thread of its own while `initialize` is answered (the store can take a D-Bus round
//! trip, or a keychain prompt); a session that needs the key waits for that lookup.
//!
//! A key can be missing when tandem starts, or be refused later (revoked, expired), or be
//! taken away: the user runs `tandem login` or `tandem logout` in a terminal, often from the
//! editor's own login button, while this process goes on. So the configuration and the
//! stored key are read again when it matters: when the editor calls `authenticate`; when a
//! login or logout renewed the login stamp (`credentials::stamp`, looked at before each
//! session opens and each model request); when a session opens or a request is to go out
//! without a key a server needs; and when the server refused a request for its key (401,
//! 403), which then goes once more if a key other than the one it carried was found. A setup
//! found that way serves new sessions and every open session that talks to the same server
//! (their model requests go through [`SessionModel`]), so a conversation goes on where it
//! failed, and a logout's missing key is missing for them too; a login that chose another
//! server serves new sessions only, as an open one's model may not be there. A server the
//! editor chose (`providers/set`) is the editor's: nothing read again replaces it.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use futures::future::BoxFuture;
use parking_lot::{Mutex, RwLock};

use super::{Backend, discovery, missing_key};
use crate::config::{ApiKey, Config, KeyFrom};
use crate::credentials::stamp;
use crate::model::{ErrorClass, EventStream, ModelClient, ModelError, ModelRequest};

/// The provider name of a server the editor chose (`providers/set`).
const EDITOR_PROVIDER: &str = "editor";

/// What the sessions of one manager share about the model server: the configuration new
/// sessions start from with its client, and the key the server last refused.
pub(super) struct Shared {
    /// Replaced whole when a login brings a usable setup.
    backend: RwLock<Arc<Backend>>,
    /// The refused key (a digest of it) and the server's answer, until a new key is found.
    refused: Mutex<Option<Refused>>,
    /// Held while the configuration is read again, so a session that needs the key waits
    /// for a lookup under way rather than making a second.
    reading: Mutex<()>,
    /// The login stamp when the configuration was last read: another one means a login or
    /// a logout since.
    seen: Mutex<Option<String>>,
    /// Set while the stored keys are looked up at start-up ([`Self::look_up_stored_keys`]).
    looking_up: std::sync::atomic::AtomicBool,
}

/// A key the server refused, and what it said.
struct Refused {
    key: Option<u64>,
    error: ModelError,
}

impl Shared {
    /// Sharing `backend`, with no key refused yet.
    pub(super) fn new(backend: Backend) -> Self {
        let seen = stamp::read(&backend.config.config_dir);
        Self {
            backend: RwLock::new(Arc::new(backend)),
            refused: Mutex::new(None),
            reading: Mutex::new(()),
            seen: Mutex::new(seen),
            looking_up: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Whether a login or a logout renewed the login stamp since the configuration was last
    /// read (one read of a small file).
    pub(super) fn store_changed(&self) -> bool {
        let now = stamp::read(&self.current().config.config_dir);
        *self.seen.lock() != now
    }

    /// Looks up the keys `tandem login` stored when loading left that for later
    /// ([`crate::config::Overrides::stored_keys_later`]), on a thread of its own: the editor's
    /// first answers do not wait for the credential store, and a session that needs the key
    /// waits for the lookup ([`Self::settled`]).
    pub(super) fn look_up_stored_keys(self: &Arc<Self>) {
        let config = self.current().config.clone();
        if !config.overrides.stored_keys_later || !config.wants_stored_keys() {
            return;
        }
        let shared = self.clone();
        self.looking_up
            .store(true, std::sync::atomic::Ordering::Release);
        let (locked, held) = std::sync::mpsc::channel();
        // The runtime's, so what the new setup starts (its discovery) runs there.
        let runtime = tokio::runtime::Handle::try_current().ok();
        let spawned = std::thread::Builder::new()
            .name("stored-keys".into())
            .spawn(move || {
                let _runtime = runtime.as_ref().map(tokio::runtime::Handle::enter);
                let _reading = shared.reading.lock();
                let _ = locked.send(());
                shared.reload();
                shared
                    .looking_up
                    .store(false, std::sync::atomic::Ordering::Release);
            });
        match spawned {
            // The lookup holds the lock before anyone can ask for the key.
            Ok(_) => {
                let _ = held.recv();
            }
            Err(e) => {
                tracing::warn!("cannot look up the stored keys in the background: {e}");
                let _reading = self.reading.lock();
                self.reload();
                self.looking_up
                    .store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }

    /// Returns once no lookup of the stored keys is under way.
    pub(super) fn settled(&self) {
        drop(self.reading.lock());
    }

    /// Whether the lookup of the stored keys at start-up is under way.
    pub(super) fn looking_up(&self) -> bool {
        self.looking_up.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The current configuration and client.
    pub(super) fn current(&self) -> Arc<Backend> {
        self.backend.read().clone()
    }

    /// Whether the server refused the key in use, and no other has been found since.
    pub(super) fn is_refused(&self) -> bool {
        self.refused.lock().is_some()
    }

    /// The server's answer when it refused the key in use.
    pub(super) fn refusal(&self) -> Option<ModelError> {
        self.refused.lock().as_ref().map(|r| r.error.clone())
    }

    /// Notes how the server answered a request with the key `config` sends: refused (an
    /// error of class `auth`), or taken (the refusal, if it was of this key, is over).
    fn note_answer(&self, config: &Config, answer: Result<(), &ModelError>) {
        let key = digest(config.endpoint.api_key.as_ref());
        let mut refused = self.refused.lock();
        match answer {
            Err(error) if error.class == ErrorClass::Auth => {
                *refused = Some(Refused {
                    key,
                    error: error.clone(),
                });
            }
            Err(_) => {}
            Ok(()) => {
                if refused.as_ref().is_some_and(|r| r.key == key) {
                    *refused = None;
                }
            }
        }
    }

    /// Reads the configuration and the stored key again; when that gives another setup, it
    /// becomes current (for new sessions, and for open ones on the same server) and is
    /// returned. Not a setup whose key is the one the server refused, nor one without the
    /// key its server needs unless it takes away a stored key (a logout: the current setup
    /// then has no key either).
    pub(super) fn reload(&self) -> Option<Arc<Config>> {
        let current = self.current().config.clone();
        // Before the configuration: a login made while it is read is seen next time.
        *self.seen.lock() = stamp::read(&current.config_dir);
        if current.replay.is_some() || current.endpoint.provider == EDITOR_PROVIDER {
            return None;
        }
        let mut overrides = current.overrides.clone();
        overrides.stored_keys_later = false;
        let config = match Config::load(&overrides) {
            Ok(config) => Arc::new(config),
            Err(e) => {
                tracing::warn!("cannot read the configuration again: {e}");
                return None;
            }
        };
        let nothing_to_take_away = !matches!(current.endpoint.key_from, KeyFrom::Stored(_));
        if (missing_key(&config).is_some() && nothing_to_take_away) || same_setup(&current, &config)
        {
            return None;
        }
        let refused = self
            .refused
            .lock()
            .as_ref()
            .is_some_and(|r| r.key == digest(config.endpoint.api_key.as_ref()));
        if refused {
            return None;
        }
        let client = match crate::model::client_for(&config) {
            Ok(client) => client,
            Err(e) => {
                tracing::warn!("cannot set up the model client: {e}");
                return None;
            }
        };
        config.protect_keys();
        match config.endpoint.api_key {
            Some(_) => {
                tracing::info!(provider = %config.endpoint.provider, base_url = %config.endpoint.base_url, model = %config.default_model, "credentials found; sessions use them")
            }
            None => {
                tracing::info!(provider = %config.endpoint.provider, base_url = %config.endpoint.base_url, model = %config.default_model, "the setup was read again; sessions send no key")
            }
        }
        *self.backend.write() = Arc::new(Backend {
            discovered: discovery::start(&config),
            config: config.clone(),
            client,
        });
        *self.refused.lock() = None;
        Some(config)
    }
}

impl Shared {
    /// ACP's `logout`: the key `tandem login` stored for the current server is removed, and
    /// new and open sessions on that server go on without a key (a hosted one then answers as
    /// when none was ever given). A key from the environment cannot be taken back: that is an
    /// error naming the variable, with the stored key removed all the same.
    pub(super) fn logout(&self) -> Result<(), LogoutError> {
        let current = self.current();
        let config = &current.config;
        let server = config.endpoint.base_url.clone();
        let store = config
            .credentials()
            .map_err(|e| LogoutError::Store(e.to_string()))?;
        let removed = store
            .remove(&server)
            .map_err(|e| LogoutError::Store(e.to_string()))?;
        // This process's own logout is no news to it.
        *self.seen.lock() = stamp::read(&config.config_dir);
        tracing::info!(%server, places = removed.len(), "logout: the stored key was removed");
        if let crate::config::KeyFrom::Env(var) = &config.endpoint.key_from {
            return Err(LogoutError::FromEnvironment(var.clone()));
        }
        if config.endpoint.api_key.is_none() {
            return Ok(());
        }
        let mut keyless = Config::clone(config);
        keyless.endpoint.api_key = None;
        keyless.endpoint.key_from = crate::config::KeyFrom::Nowhere;
        let client = crate::model::client_for(&keyless)
            .map_err(|e| LogoutError::Store(format!("cannot set up the model client: {e}")))?;
        *self.backend.write() = Arc::new(Backend {
            discovered: current.discovered.clone(),
            config: Arc::new(keyless),
            client,
        });
        *self.refused.lock() = None;
        Ok(())
    }
}

/// Why `logout` could not take the key away.
#[derive(Debug, thiserror::Error)]
pub enum LogoutError {
    /// The key comes from an environment variable.
    #[error(
        "the key comes from the environment variable {0}, which tandem cannot unset: remove it from the environment the editor starts tandem in (any key `tandem login` stored for this server was removed)"
    )]
    FromEnvironment(String),
    /// The credential store failed.
    #[error("the stored key could not be removed: {0}")]
    Store(String),
}

/// Whether `a` and `b` send the same requests the same way: the same servers, APIs and
/// keys, the same models, and the same web search with its key (the stored keys a reading
/// can bring). Reading a configuration that did not change makes nothing new.
fn same_setup(a: &Config, b: &Config) -> bool {
    a.endpoint == b.endpoint
        && a.providers == b.providers
        && a.default_model == b.default_model
        && a.models == b.models
        && a.web == b.web
}

/// Whether the server refused a request for its key (401 or 403), which a key stored since
/// may answer.
fn refuses_the_key(error: &ModelError) -> bool {
    matches!(error.class, ErrorClass::Auth | ErrorClass::AccessDenied)
}

/// A digest of `key`, to know it again without keeping another copy.
fn digest(key: Option<&ApiKey>) -> Option<u64> {
    key.map(|key| {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        key.expose().hash(&mut hasher);
        hasher.finish()
    })
}

/// The model client a session asks: the current one when it talks to the server the session
/// started with (so a new key counts at the next request), else the one it started with.
pub(super) struct SessionModel {
    shared: Arc<Shared>,
    started: Arc<Backend>,
}

impl SessionModel {
    /// For a session started from `started`.
    pub(super) fn new(shared: Arc<Shared>, started: Arc<Backend>) -> Self {
        Self { shared, started }
    }

    /// The backend this session's next request goes through.
    fn backend(&self) -> Arc<Backend> {
        let current = self.shared.current();
        if current.config.endpoint.base_url == self.started.config.endpoint.base_url {
            current
        } else {
            self.started.clone()
        }
    }
}

impl SessionModel {
    /// Reads the configuration and the stored key again, off the runtime's threads (files,
    /// the system's credential store).
    async fn read_again(&self) {
        let shared = self.shared.clone();
        if let Err(e) = tokio::task::spawn_blocking(move || shared.reload()).await {
            tracing::warn!("looking for a new key failed: {e}");
        }
    }

    /// After the server refused a request for its key (`error`): a login may have stored
    /// another since that this process has not heard of (nothing renewed the stamp), so the
    /// store is read again, and the request goes once more when that found a key other than
    /// the one `sent` carried.
    async fn again_with_a_new_key(
        &self,
        sent: &Backend,
        request: ModelRequest,
        error: ModelError,
    ) -> Result<EventStream, ModelError> {
        self.read_again().await;
        let renewed = self.backend();
        let key = |backend: &Backend| digest(backend.config.endpoint.api_key.as_ref());
        if key(&renewed) == key(sent) || missing_key(&renewed.config).is_some() {
            return Err(error);
        }
        tracing::info!(
            "the server refused the request; sending it again with the key stored since"
        );
        let opened = renewed.client.open(request).await;
        self.shared
            .note_answer(&renewed.config, opened.as_ref().map(|_| ()));
        opened
    }
}

impl ModelClient for SessionModel {
    fn open(&self, request: ModelRequest) -> BoxFuture<'_, Result<EventStream, ModelError>> {
        Box::pin(async move {
            // A login or logout in a terminal since, a key the server refused, or none where
            // one is needed: what the store holds now may be different.
            if self.shared.is_refused()
                || self.shared.store_changed()
                || missing_key(&self.backend().config).is_some()
            {
                self.read_again().await;
            }
            let backend = self.backend();
            // After a logout: no request goes out without the key a hosted server needs.
            if let Some(missing) = missing_key(&backend.config) {
                return Err(missing);
            }
            // The messages are shared, so keeping the request for a second try copies none.
            let opened = backend.client.open(request.clone()).await;
            self.shared
                .note_answer(&backend.config, opened.as_ref().map(|_| ()));
            match opened {
                Err(error) if refuses_the_key(&error) => {
                    self.again_with_a_new_key(&backend, request, error).await
                }
                opened => opened,
            }
        })
    }
}

/// An editor's choice of model server (ACP's `providers/set`).
#[derive(Debug, Clone)]
pub struct EndpointChange {
    /// The wire API.
    pub api: crate::conversation::Api,
    /// The server's base URL.
    pub base_url: String,
    /// The key, when the editor's headers carry one in the place the API reads it.
    pub key: Option<String>,
    /// Every other header the editor asked for.
    pub headers: Vec<(String, String)>,
}

impl Shared {
    /// ACP's `providers/set`: sessions opened from now on talk to the server `change` names,
    /// with its key and headers; open sessions keep the server they talk to. The key and the
    /// headers' values are redacted wherever tandem writes.
    pub(super) fn set_endpoint(&self, change: EndpointChange) -> Result<(), String> {
        let current = self.current();
        let mut config = Config::clone(&current.config);
        let endpoint = &mut config.endpoint;
        endpoint.provider = EDITOR_PROVIDER.into();
        endpoint.base_url = change.base_url.trim_end_matches('/').to_string();
        endpoint.api = change.api;
        endpoint.requires_key = change.key.is_some();
        endpoint.key_from = match change.key {
            Some(_) => crate::config::KeyFrom::Given,
            None => crate::config::KeyFrom::Nowhere,
        };
        endpoint.api_key = change.key.map(ApiKey::new);
        endpoint.headers = change.headers;
        let hidden = config.key_vars();
        for (_, value) in &config.endpoint.headers {
            crate::secrets::protect(value, hidden.clone());
        }
        config.protect_keys();
        let client = crate::model::client_for(&config)
            .map_err(|e| format!("cannot set up the model client: {e}"))?;
        tracing::info!(base_url = %config.endpoint.base_url, api = config.endpoint.api.name(), "the editor set the model server; new sessions use it");
        let config = Arc::new(config);
        *self.backend.write() = Arc::new(Backend {
            discovered: discovery::start(&config),
            config,
            client,
        });
        *self.refused.lock() = None;
        Ok(())
    }
}
