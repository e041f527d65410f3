//! tandem-types, the bottom floor: plain data every crate shares (DESIGN.md §2, layer 1) — the
//! events and views the editor is shown, user message parts, tool specs and access kinds,
//! modes, finish and stop reasons, the permission answers — plus [`conversation`], the one
//! vocabulary of every wire API, and [`output_schema`], the check of `tandem exec`'s answers.
//!
//! It uses no other crate of tandem's; every other crate may use it.

mod answer;
mod child;
pub mod conversation;
mod effect;
mod events;
mod mode;
mod options;
pub mod output_schema;
mod parts;
mod prompt;
mod stop;
mod tool;

pub use answer::{PermissionAnswer, PermissionChoice};
pub use child::{ChildEnd, ChildState, ChildUpdate, Tokens};
pub use effect::{Effect, Intended, Intending, Journal, Ledger, pause};
pub use events::{
    CompactionStatus, EventSink, Location, PlanItem, Severity, ToolCallView, ToolContent,
    ToolStatus, TurnEvent,
};
pub use mode::Mode;
pub use options::{OptionCategory, OptionKind, OptionValue, OptionView};
pub use parts::{UserPart, context_text, folder_context_text, parse_context};
pub use prompt::{Prompt, PromptBlock};
pub use stop::{FinishReason, StopReason};
pub use tool::{Access, ToolKind, ToolSpec};
