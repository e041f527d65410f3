//! Why a call could not even be prepared: what the model reads, so it can fix the call.

/// A call the tool refuses before anything happens.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum ToolError {
    /// The arguments do not fit the tool's schema.
    #[error("invalid arguments for {tool}: {message}")]
    Arguments {
        /// The tool.
        tool: &'static str,
        /// What serde said.
        message: String,
    },
    /// The arguments parse, but ask for something the tool cannot do.
    #[error("{0}")]
    Refused(String),
}
