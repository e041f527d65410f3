//! tree-sitter's bash grammar, driven for the judge: one parser per thread, and a time
//! budget per line, because the grammar's error recovery can take seconds on a long broken
//! line and a line it has not parsed in time is one tandem does not judge (the caller
//! names it [`super::Hazard::Unparsable`]).

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser, Tree};

/// Longest tree-sitter may take over one line.
const MAX_PARSE_TIME: Duration = Duration::from_millis(100);

thread_local! {
    /// One parser per thread, made once: a command line is judged on every `run_command`.
    static PARSER: RefCell<Option<Parser>> = RefCell::new({
        let mut parser = Parser::new();
        parser
            .set_language(&tree_sitter_bash::LANGUAGE.into())
            .ok()
            .map(|()| parser)
    });
}

/// The syntax tree of `source`, or `None` when the grammar could not be loaded or the
/// parse ran out of time.
pub(super) fn tree(source: &str) -> Option<Tree> {
    PARSER.with_borrow_mut(|parser| {
        let parser = parser.as_mut()?;
        let bytes = source.as_bytes();
        let started = Instant::now();
        let mut in_time = |_: &ParseState| {
            if started.elapsed() > MAX_PARSE_TIME {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let options = ParseOptions::new().progress_callback(&mut in_time);
        let tree = parser.parse_with_options(
            &mut |at, _| bytes.get(at..).unwrap_or_default(),
            None,
            Some(options),
        );
        if tree.is_none() {
            // A cancelled parse leaves state behind that the next line must not resume.
            parser.reset();
        }
        tree
    })
}
