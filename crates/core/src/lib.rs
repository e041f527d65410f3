//! tandem's core: the editor seam and the local fallbacks, the tools and where their edits
//! land, the transcript store, MCP connections, one prompt's turn and the sessions that run
//! them. It knows nothing of JSON-RPC: a session is driven through [`session::SessionManager`],
//! it emits `TurnEvent`s and asks the editor through [`client::ClientOps`] (DESIGN.md §1).
//!
//! It may use every floor below it (types, platform, config, permission, model) and nothing
//! above it: the ACP layer and the binary (the `tandem` crate) use it.

// The floors below, by the names this crate's code reaches them with.
use tandem_config as config;
use tandem_config::credentials;
use tandem_config::secrets;
use tandem_model as model;
use tandem_permission as permission;
use tandem_platform as platform;
use tandem_types as types;
use tandem_types::conversation;
use tandem_types::output_schema;

pub mod client;
pub(crate) mod customize;
pub mod edit;
pub(crate) mod local;
pub mod mcp;
pub mod session;
pub mod store;
#[cfg(any(test, feature = "testkit"))]
pub mod testkit;
pub mod tools;
pub mod turn;
pub mod web;
