mod cancel;
mod config_options;
mod context;
mod editor_faults;
mod editors;
mod errors;
mod exec;
mod extensions;
mod fork;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod handshake;
mod help;
mod load;
mod malformed;
#[cfg(feature = "test-mcp-server")]
mod mcp;
mod model_faults;
mod permissions;
mod pipes;
mod protocol_edges;
mod real_model;
mod runaway;
mod secrets;
mod sessions;
mod streaming;
mod tool_loop;
mod tools;
