//! `tandem doctor`'s web checks: the search provider answers a query (when one is
//! configured), and what `web_fetch` may reach.

use super::{Check, bad, ok};
use crate::config::Config;

/// The web lines: one for fetching, one for the search provider when configured.
pub(crate) async fn checks(config: &Config) -> Vec<Check> {
    let web = &config.web;
    let mut checks = vec![ok(match (web.fetch, web.allow_private) {
        (false, _) => "web_fetch is off ([web] fetch = false)".to_string(),
        (true, false) => "web_fetch is offered; it does not reach this machine or its network".to_string(),
        (true, true) => "web_fetch is offered and may reach this machine and its network ([web] allow_private = true)".to_string(),
    })];
    let Some(search) = &web.search else {
        checks.push(ok(
            "web_search is not configured (add [web.search] to offer it)".to_string(),
        ));
        return checks;
    };
    let name = search.provider.name();
    checks.push(
        match crate::web::search::search(search, "tandem", 1, web.timeout).await {
            Ok(_) => ok(format!("web_search: {name} at {} answers", search.url)),
            Err(e) => bad(
                format!("web_search: {name} at {} does not answer: {e}", search.url),
                match search.provider {
                    crate::config::SearchProvider::Brave => {
                        "check the key (BRAVE_API_KEY or [web.search] api_key_env) and the network"
                    }
                    crate::config::SearchProvider::Searxng => {
                        "check [web.search] url and that `json` is among SearXNG's search.formats"
                    }
                },
            ),
        },
    );
    checks
}
