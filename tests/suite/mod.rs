mod cancel;
mod config_options;
mod context;
mod editors;
mod errors;
mod exec;
mod extensions;
mod handshake;
mod help;
mod malformed;
#[cfg(feature = "test-mcp-server")]
mod mcp;
mod permissions;
mod pipes;
mod sessions;
mod streaming;
mod tool_loop;
mod tools;
