//! Plain data every layer shares (DESIGN.md §2, layer 1): nothing here imports anything else
//! of tandem's, so any module may use it without tying itself to a higher one.

mod mode;

pub use mode::Mode;
