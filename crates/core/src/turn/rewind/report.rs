//! What a rewind (or its listing) did, as the session and the extension methods report it.

use std::path::PathBuf;

use crate::store::timeline::TurnSummary;

/// What to do with a file changed since tandem last wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conflicts {
    /// Ask the user, file by file.
    #[default]
    Ask,
    /// Leave every such file as it is.
    Keep,
    /// Put every such file back all the same.
    Overwrite,
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileResult {
    /// Its earlier text was written back.
    Restored,
    /// tandem had deleted it: written back.
    Recreated,
    /// tandem had created it: removed.
    Removed,
    /// tandem had created it; only the editor has it, so it was emptied for the user to
    /// delete.
    Emptied,
    /// It already held what it held before the turn.
    AlreadyBack,
    /// It changed since tandem wrote it, and was left as it is (`diff`: from what tandem
    /// wrote to what is there now).
    LeftChanged {
        /// A short unified diff.
        diff: String,
    },
    /// It changed since tandem wrote it, and the user had it put back all the same.
    Overwritten {
        /// A short unified diff of what was discarded.
        diff: String,
    },
    /// It could not be put back.
    Failed {
        /// Why, in words.
        why: String,
    },
}

/// One file of a rewind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileOutcome {
    /// The file.
    pub path: PathBuf,
    /// What happened to it.
    pub result: FileResult,
}

/// What a rewind (or a listing) did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RewindReport {
    /// The turn gone back to before, when one was.
    pub turn: Option<usize>,
    /// The turns taken back.
    pub taken_back: Vec<TurnSummary>,
    /// The files tandem changed in them (or since), and what happened to each.
    pub files: Vec<FileOutcome>,
    /// The command lines that ran in the turns taken back.
    pub commands: Vec<String>,
    /// Whether files were written through the editor.
    pub through_editor: bool,
    /// The turns the conversation holds now.
    pub turns: Vec<TurnSummary>,
    /// The same in words (Markdown), as `/rewind` answers.
    pub message: String,
    /// Why nothing was done, when the request could not be followed (no such turn).
    pub problem: Option<String>,
    /// Why nothing was done, when tandem failed (its transcript could not be read).
    pub failure: Option<String>,
}
