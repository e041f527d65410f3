//! The keys `tandem login` stored: which servers want one, and looking them up while the
//! configuration loads (or later, for the editor's agent: `Overrides::stored_keys_later`).

use super::{Config, ConfigError, Endpoint, KeyFrom, SearchProvider, checked_key};

impl Config {
    /// The keys `tandem login` stored, for the servers (and the search provider) that have
    /// none from anywhere else.
    pub(super) fn look_up_stored_keys(&mut self) -> Result<(), ConfigError> {
        self.stored_search_key()?;
        if !self.endpoints_want_stored_keys() {
            return Ok(());
        }
        let store = self.credentials()?;
        let wants = Self::wants_stored_key;
        let default = std::iter::once((&mut self.endpoint, true));
        for (endpoint, is_default) in default.chain(self.providers.iter_mut().map(|e| (e, false))) {
            if !wants(endpoint, is_default) {
                continue;
            }
            match store.lookup(&endpoint.base_url) {
                Ok(Some((key, place))) => {
                    endpoint.api_key = Some(checked_key("tandem login's store", &key)?);
                    endpoint.key_from = KeyFrom::Stored(place);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("cannot read the stored API key: {e}"),
            }
        }
        Ok(())
    }

    /// Whether loading would look anything up in `tandem login`'s store: a model server's or
    /// the search provider's key that nothing else gave.
    pub fn wants_stored_keys(&self) -> bool {
        self.replay.is_none()
            && (self.search_wants_stored_key() || self.endpoints_want_stored_keys())
    }

    /// A provider that needs no key (a local server) is not looked up: the store may be
    /// slow to answer, and its key would have a variable of its own.
    fn wants_stored_key(endpoint: &Endpoint, is_default: bool) -> bool {
        endpoint.api_key.is_none() && (is_default || endpoint.requires_key)
    }

    fn endpoints_want_stored_keys(&self) -> bool {
        Self::wants_stored_key(&self.endpoint, true)
            || self
                .providers
                .iter()
                .any(|e| Self::wants_stored_key(e, false))
    }

    fn search_wants_stored_key(&self) -> bool {
        self.web
            .search
            .as_ref()
            .is_some_and(|s| s.provider == SearchProvider::Brave && s.api_key().is_none())
    }

    /// The search provider's key `tandem login --search` stored, when none is in the
    /// environment.
    fn stored_search_key(&mut self) -> Result<(), ConfigError> {
        let Some(search) = self
            .web
            .search
            .as_ref()
            .filter(|s| s.provider == SearchProvider::Brave && s.api_key().is_none())
        else {
            return Ok(());
        };
        let url = search.url.clone();
        match self.credentials()?.lookup(&url) {
            Ok(Some((key, _))) => {
                if let Some(search) = self.web.search.as_mut() {
                    search.api_key = Some(key);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!("cannot read the stored search key: {e}"),
        }
        Ok(())
    }
}
