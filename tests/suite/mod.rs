mod approvals;
#[cfg(unix)]
mod background;
mod bracket_answers;
mod call_endings;
mod cancel;
mod command_permissions;
mod config_options;
mod context;
mod costs;
mod crashes;
mod doctor;
mod editor_answers;
mod editor_faults;
mod editor_instructions;
mod editors;
#[cfg(feature = "edit-corpus")]
mod edits;
mod errors;
mod exchanges;
mod exec;
#[cfg(target_os = "linux")]
mod exit_flush;
mod extensions;
mod fixes;
mod folders;
mod fork;
#[cfg(unix)]
mod fork_kills;
mod full_disk;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod git_attacks;
mod handshake;
mod help;
mod hooks;
mod hostile_model;
mod key_binding;
#[cfg(target_os = "linux")]
mod kills_mid_write;
mod large_files;
mod left_out;
mod live_output;
mod load;
mod local_models;
mod login;
mod login_servers;
mod malformed;
#[cfg(feature = "test-mcp-server")]
mod mcp;
#[cfg(feature = "test-mcp-server")]
mod mcp_questions;
#[cfg(feature = "test-mcp-server")]
mod mcp_restart;
#[cfg(feature = "test-mcp-server")]
mod mcp_sse;
mod mentions;
mod model_faults;
mod one_writer;
mod opening;
mod output_schema;
mod permissions;
mod pipes;
#[cfg(unix)]
mod planted_links;
#[cfg(unix)]
mod private_files;
#[cfg(feature = "test-mcp-server")]
mod project_trust;
mod prompt_words;
mod protocol_edges;
mod provider_details;
mod provider_state;
mod provider_switch;
#[cfg(feature = "acp-providers")]
mod providers;
mod questions;
mod real_local;
mod real_model;
mod real_wire;
mod reopen;
mod replay;
mod rewind;
mod runaway;
#[cfg(target_os = "linux")]
mod sandbox;
#[cfg(target_os = "linux")]
mod sandbox_folders;
#[cfg(target_os = "linux")]
mod sandbox_reach;
#[cfg(target_os = "linux")]
mod sandbox_ties;
mod secrets;
mod session_models;
mod sessions;
mod skills;
mod steering;
mod stream_retries;
mod streamed_calls;
mod streaming;
mod subagent_sessions;
mod subagents;
#[cfg(target_os = "linux")]
mod terminal_input;
mod tool_images;
mod tool_loop;
mod tools;
mod unused_sessions;
mod updates;
mod web;
mod windows;
mod wire_apis;
mod wire_mock;
mod wire_trace;
#[cfg(unix)]
mod write_ahead;
#[cfg(unix)]
mod zed_auth;
#[cfg(unix)]
mod zed_cards;
mod zed_client;
mod zed_tools;
