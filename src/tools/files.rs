//! File reads and writes for tools: through the editor when it advertised the capability
//! (unsaved buffers are read, writes are reviewable), on disk otherwise.

use std::path::{Path, PathBuf};

use super::{Call, Place, Prepared, ToolEnv, text};
use crate::local;
use crate::types::{Access, Location};

/// The editor's "resource not found" code.
const NOT_FOUND: i32 = -32002;

/// Why a read failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// No such file.
    Missing,
    /// The file is binary; the size in bytes.
    Binary(usize),
    /// Anything else, in words.
    Other(String),
}

impl ReadError {
    /// A sentence for the model.
    pub fn describe(&self, shown: &str) -> String {
        match self {
            ReadError::Missing => format!("{shown} does not exist"),
            ReadError::Binary(n) => format!("{shown} is a binary file ({n} bytes); not shown"),
            ReadError::Other(e) => format!("cannot read {shown}: {e}"),
        }
    }
}

/// Reads a whole text file.
pub async fn read(env: &ToolEnv, path: &Path) -> Result<String, ReadError> {
    // Checked before the editor is asked too: it might block on a FIFO just as we would.
    if let Some(why) = local::unreadable(path).await {
        return Err(ReadError::Other(why.to_string()));
    }
    if env.caps.read_text_file {
        let error = match env
            .client
            .read_text_file(&env.session_id, path, None, None)
            .await
        {
            Ok(text) => return Ok(text),
            Err(error) => error,
        };
        return Err(match error.code {
            Some(NOT_FOUND) => ReadError::Missing,
            // Editors answer a missing file in their own words and codes (the Python SDK:
            // -32603 "No such file or directory"); the project is on the disk tandem shares
            // with the editor, so the disk says whether the file is there.
            Some(_) if missing_on_disk(path).await => ReadError::Missing,
            Some(_) => ReadError::Other(format!("the editor said: {}", error.message)),
            // No answer in time (the message says so) or an answer tandem cannot use.
            None => ReadError::Other(error.message),
        });
    }
    match local::read_text(path).await {
        Ok(bytes) if text::is_binary(&bytes) => Err(ReadError::Binary(bytes.len())),
        Ok(bytes) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(ReadError::Missing),
        Err(e) => Err(ReadError::Other(e.to_string())),
    }
}

/// Whether nothing at all is at `path` (not even a broken link).
async fn missing_on_disk(path: &Path) -> bool {
    matches!(
        tokio::fs::symlink_metadata(path).await,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound
    )
}

/// Writes a whole text file.
pub async fn write(env: &ToolEnv, path: &Path, content: &str) -> Result<(), String> {
    if env.caps.write_text_file {
        return env
            .client
            .write_text_file(&env.session_id, path, content)
            .await
            .map_err(|e| format!("the editor refused the write: {}", e.message));
    }
    local::write_atomic(path, content)
        .await
        .map_err(|e| e.to_string())
}

/// The file an edit or write changes, resolved at `place`: its path and how titles show it.
pub struct Target {
    /// The resolved path.
    pub path: PathBuf,
    /// The path as titles and messages show it.
    pub shown: String,
}

impl Target {
    /// The file `raw` names.
    pub fn new(place: &Place, raw: &str) -> Self {
        let path = place.resolve(raw);
        let shown = place.display(&path);
        Self { path, shown }
    }

    /// A call that changes this file, titled "`verb` <file>", judged as an edit of it.
    pub fn changing(&self, verb: &str, call: Box<dyn Call>) -> Prepared {
        Prepared {
            title: format!("{verb} {}", self.shown),
            locations: vec![Location {
                path: self.path.clone(),
                line: None,
            }],
            access: Access::Edit(self.path.clone()),
            call,
        }
    }
}
