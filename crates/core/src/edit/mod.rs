//! Where an edit lands, and what it writes there: the tiered matcher shared by `edit_file`
//! and `apply_patch`, the file conventions an edit keeps, and the V4A patch format.
//!
//! The matcher tries [`Tier`]s in order (exact; line endings and trailing whitespace
//! ignored; indentation ignored; Unicode punctuation folded). A tier runs only when the ones
//! before it found nothing, and a tier that finds more than one place refuses and names the
//! lines; there is no similarity score, so an edit never lands on a nearby, different block.
//!
//! Everything here works on text in memory; the tools read and write through the editor.

#[cfg(feature = "edit-corpus")]
pub mod corpus;
mod document;
mod fold;
mod indent;
mod lines;
mod matcher;
mod replace;
mod splice;
pub(crate) mod v4a;

pub(crate) use document::Document;
pub use matcher::{Candidates, Tier};
pub use replace::Replacement;
pub(crate) use replace::{Applied, EditError, apply_edits};
