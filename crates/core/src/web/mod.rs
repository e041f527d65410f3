//! The web for the model's `web_fetch` and `web_search` tools (tools/web_fetch.rs,
//! tools/web_search.rs): reading a page (fetch.rs) within the bounds a prompt-injected model
//! must not cross (guard.rs: not this machine's own addresses, not the user's network, not a
//! special-purpose block that is not globally reachable (special.rs), every hop checked, no
//! key in a URL), HTML as Markdown (markdown.rs), and search through the provider the user
//! configured (search.rs). Timeouts, byte caps and the environment's proxies as for the model
//! server.

pub(crate) mod fetch;
pub(crate) mod guard;
pub(crate) mod markdown;
pub mod search;
pub(crate) mod special;
