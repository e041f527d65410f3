//! What tandem does on this machine itself, where an editor does not do it: files read and
//! written on disk through one layer that no planted link can redirect (`files.rs`), and
//! commands run as child processes with a timeout, bounded output and kill on cancel
//! (`command.rs`).

mod command;
mod files;

pub(crate) use command::{LIVE_EVERY, head_and_tail, run_command};
pub(crate) use files::{
    PathWatch, is_file, list, open, read_now, read_text, remove, unreadable, write_atomic,
};
