mod cancel;
mod config_options;
mod errors;
mod exec;
mod handshake;
mod malformed;
mod streaming;
mod tools;
