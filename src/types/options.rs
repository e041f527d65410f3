//! The config options a session shows the editor (ACP `SessionConfigOption`), as plain data.

/// The semantic group of an option (ACP `category`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionCategory {
    /// The permission mode.
    Mode,
    /// The model.
    Model,
    /// How hard the model thinks.
    ThoughtLevel,
}

/// One selectable value.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionValue {
    /// Wire id.
    pub id: String,
    /// Label.
    pub name: String,
    /// Longer text, when useful.
    pub description: Option<String>,
}

/// One config option as the editor shows it (a select).
#[derive(Debug, Clone, PartialEq)]
pub struct OptionView {
    /// Option id: `mode`, `model` or `reasoning_effort`.
    pub id: &'static str,
    /// Label.
    pub name: &'static str,
    /// One sentence about it.
    pub description: &'static str,
    /// Semantic group.
    pub category: OptionCategory,
    /// The selected value's id.
    pub current: String,
    /// Every value that may be selected.
    pub values: Vec<OptionValue>,
}
