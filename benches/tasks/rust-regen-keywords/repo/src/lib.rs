//! The lexer for Pebble, a small embeddable scripting language.

pub mod keywords;
mod lexer;

pub use lexer::{tokenize, LexError, Token};
