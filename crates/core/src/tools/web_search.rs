//! `web_search`: searches the web through the provider the user configured (web/search.rs);
//! offered only when `[web.search]` names one. Asked like a fetch from the provider's host:
//! the query leaves the machine.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::config::SearchSettings;
use crate::types::{Access, ToolKind};
use crate::web::search;

/// Results given.
const RESULTS: usize = 8;

/// Arguments of `web_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebSearchArgs {
    /// What to search for
    pub(crate) query: String,
}

/// The tool over the configured provider.
pub(crate) struct WebSearch {
    settings: SearchSettings,
    timeout: std::time::Duration,
}

impl WebSearch {
    /// The tool over `settings`, each search bounded by `timeout`.
    pub(crate) fn new(settings: SearchSettings, timeout: std::time::Duration) -> Self {
        Self { settings, timeout }
    }
}

impl TypedTool for WebSearch {
    type Args = WebSearchArgs;
    const NAME: &'static str = "web_search";
    const KIND: ToolKind = ToolKind::Search;
    const LABEL: &'static str = "Search the web";

    fn description(&self) -> &str {
        "Search the web; returns titles, URLs and snippets (read a result with web_fetch)."
    }

    fn prepare(&self, args: WebSearchArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let query = args.query.trim().to_string();
        if query.is_empty() {
            return Err(ToolError::Refused("the query is empty".into()));
        }
        if crate::secrets::holds_key(&query) {
            return Err(ToolError::Refused(
                "the query holds one of the user's secrets; it is not sent".into(),
            ));
        }
        Ok(Prepared {
            title: format!("Search the web: {query}"),
            locations: Vec::new(),
            access: Access::Web {
                host: self.settings.host(),
            },
            call: Box::new(SearchCall {
                query,
                settings: self.settings.clone(),
                timeout: self.timeout,
            }),
        })
    }
}

struct SearchCall {
    query: String,
    settings: SearchSettings,
    timeout: std::time::Duration,
}

impl Call for SearchCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let found = tokio::select! {
                found = search::search(&self.settings, &self.query, RESULTS, self.timeout) => found,
                () = env.cancel.cancelled() => return ToolOutput::error("cancelled"),
            };
            match found {
                Ok(hits) => ToolOutput::text(search::render(&self.query, &hits)),
                Err(e) => ToolOutput::error(format!("the search failed: {e}")),
            }
        })
    }
}
