//! What a server without native tool calls needs, as adapters around any client: the tools
//! described in the prompt for a model the server cannot give them to (`prompted.rs`), and
//! the calls a model writes as text read back out of its answer (`text_calls/`).

pub(crate) mod prompted;
pub mod text_calls;
