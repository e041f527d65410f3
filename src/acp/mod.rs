//! The ACP side: [`Handlers`] has one async method per ACP method, registered here on the
//! SDK's v1 agent builder; the `_tandem/*` extension methods register in [`ext`]. Everything
//! else (sessions, turns, tools) knows nothing of JSON-RPC: conversions live in
//! [`convert`] (events in `updates.rs`, sent by `sink.rs` with their message ids), errors in
//! [`errors`], and [`client`] is what the core asks of the editor. A load's replay
//! (replay.rs) is written as lines straight to a transport that takes them.
//! `auth` answers `authenticate` and shapes the login methods per client; `sent` keeps the
//! prompt blocks as the editor sent them for replay; [`session_models`] carries the older
//! `models` field and `session/set_model` beside `configOptions`.
//!
//! The connection's life lives here too: [`lifecycle::serve`] runs these handlers over any
//! transport until the editor's side closes or the caller asks to stop (the end of input,
//! signals and exec's Ctrl-C all take that one path), with the relay (relay.rs, compat.rs)
//! between the transport and the SDK.

mod auth;
mod capabilities;
mod children;
pub(crate) mod client;
mod compat;
pub(crate) mod convert;
pub(crate) mod errors;
pub mod ext;
mod handlers;
pub(crate) mod lifecycle;
mod open;
mod order;
#[cfg(feature = "acp-providers")]
mod providers;
mod questions;
mod relay;
mod replay;
mod sent;
pub(crate) mod session_models;
mod sink;
mod updates;

use std::sync::Arc;

use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::{Agent, Channel, Client};

pub(crate) use handlers::Handlers;
pub(crate) use lifecycle::serve;

use sink::ConnectionSink;

/// Registers `method` of the shared handlers `h` for requests.
macro_rules! request {
    ($builder:expr, $h:expr, $method:ident) => {{
        let h = $h.clone();
        $builder.on_receive_request(
            async move |req, responder, cx| h.clone().$method(req, responder, cx).await,
            agent_client_protocol::on_receive_request!(),
        )
    }};
}
pub(crate) use request;

/// Runs the ACP agent of `h` over `protocol` (the SDK's end of the relay) until `main`, which
/// owns the connection's life (lifecycle.rs), returns.
async fn connect(
    h: Arc<Handlers>,
    protocol: Channel,
    main: impl AsyncFnOnce(ConnectionTo<Client>) -> Result<(), agent_client_protocol::Error>,
) -> Result<(), agent_client_protocol::Error> {
    let agent = Agent.v1().name("tandem");
    let agent = request!(agent, h, initialize);
    let agent = request!(agent, h, authenticate);
    let agent = request!(agent, h, logout);
    let agent = request!(agent, h, new_session);
    let agent = request!(agent, h, load_session);
    let agent = request!(agent, h, resume_session);
    let agent = request!(agent, h, list_sessions);
    let agent = request!(agent, h, close_session);
    let agent = request!(agent, h, delete_session);
    let agent = request!(agent, h, prompt);
    let agent = request!(agent, h, set_mode);
    let agent = request!(agent, h, set_config_option);
    // The older way to switch models, still sent by agent-shell.
    let agent = request!(agent, h, set_model);
    // ACP's own `session/fork` is still unstable in the protocol: only built on request.
    #[cfg(feature = "acp-session-fork")]
    let agent = request!(agent, h, fork_session);
    // ACP's `providers/*` are unstable too.
    #[cfg(feature = "acp-providers")]
    let agent = request!(agent, h, list_providers);
    #[cfg(feature = "acp-providers")]
    let agent = request!(agent, h, set_provider);
    #[cfg(feature = "acp-providers")]
    let agent = request!(agent, h, disable_provider);
    let cancel = h.clone();
    agent
        .on_receive_notification(
            async move |note, cx| cancel.clone().cancel(note, cx).await,
            agent_client_protocol::on_receive_notification!(),
        )
        .with_connection_builder(ext::methods(h))
        .connect_with(protocol, main)
        .await
}
