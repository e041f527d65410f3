//! Plain data every layer shares (DESIGN.md §2, layer 1): nothing here imports anything else
//! of tandem's, so any module may use it without tying itself to a higher one.

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
