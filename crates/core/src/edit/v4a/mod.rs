//! The V4A patch format GPT models are trained on (`*** Begin Patch` … `*** End Patch`),
//! parsed from its published description, and applied with the same tiered matcher as
//! `edit_file`: every file or none.

mod apply;
mod parse;

#[cfg(feature = "edit-corpus")]
pub(crate) use apply::PatchError;
pub(crate) use apply::{Change, Outcome, apply};
pub(crate) use parse::{FileOp, Patch, parse};
