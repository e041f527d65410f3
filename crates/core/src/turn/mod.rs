//! One prompt's work. This file is the folder's face: what the session layer may call, and
//! where each part lives.
//!
//! - `prompt.rs` runs a user's prompt: mentions, `user_prompt_submit` and `stop` hooks, the
//!   size check, then the loop.
//! - `loop.rs` is the turn loop: model request, streamed answer (`stream.rs`), tool calls
//!   (`calls.rs`, through `permit.rs` and `hooks.rs`), again until the model stops; it
//!   compacts (`compact.rs`, which also answers `/compact`) and guards against runaway
//!   models (`guard.rs`).
//! - `context.rs` is what a turn runs with: the session's facts, services and meters as
//!   small handles, the [`Role`] (the session's own turn or a subagent's, `role.rs`), and one
//!   `Step` per model request (the settings and the model's profile, resolved once).
//! - `subagent.rs` runs a `task` call's subagent through the same loop, handed in by it.
//! - `actions.rs` runs the user's custom actions, a command line as a turn of its own;
//!   `permissions_command.rs` answers `/permissions`; `held_servers.rs` asks about the
//!   project's MCP servers held back until the user trusts them; `outcome.rs` is how every
//!   turn ends.
//! - `rewind/` takes turns back (`/rewind`, `/undo`, `_tandem/session/rewind`): the
//!   conversation goes back and the files tandem changed since are put back, through the
//!   editor when it writes files (`files.rs`), and what it did is reported (`report.rs`).
//!   `steer.rs` carries messages the user sends to a running turn, which the loop takes at
//!   its next request boundary.
//!
//! Children import one another, never this file: it only declares and re-exports.

mod actions;
mod calls;
mod child_session;
mod children;
mod coalesce;
mod compact;
mod context;
mod delegated;
mod estimate;
mod frame;
mod guard;
mod held_servers;
mod hooks;
#[path = "loop.rs"]
mod r#loop;
mod mentions;
mod outcome;
mod permissions_command;
mod permit;
mod prompt;
mod repeats;
mod rewind;
mod role;
mod shown;
mod steer;
mod stream;
mod subagent;
mod truncation;

pub(crate) use actions::{Invoked, run_action};
pub(crate) use children::ChildSessions;
pub(crate) use compact::compact_now;
pub use context::{Facts, Meters, Services, Totals, TurnContext};
pub(crate) use outcome::TurnOutcome;
pub(crate) use permissions_command::permissions;
pub(crate) use prompt::run_prompt;
pub use rewind::Back;
pub use rewind::report::{Conflicts, FileOutcome, FileResult, RewindReport};
pub(crate) use rewind::rewind;
pub(crate) use steer::{Landed, Steering};
