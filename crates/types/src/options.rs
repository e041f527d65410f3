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

/// What kind of control an option is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptionKind {
    /// One of a list of values.
    Select,
    /// On or off: its values are `true` and `false` (ACP's boolean type, shown only to
    /// editors that advertised `session.configOptions.boolean`).
    Boolean,
}

/// One config option as the editor shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionView {
    /// Option id: `mode`, `model`, `reasoning_effort` or `auto_compact`.
    pub id: &'static str,
    /// Label.
    pub name: &'static str,
    /// One sentence about it.
    pub description: &'static str,
    /// Semantic group, when ACP has one for it.
    pub category: Option<OptionCategory>,
    /// A select or a switch.
    pub kind: OptionKind,
    /// The selected value's id.
    pub current: String,
    /// Every value that may be selected.
    pub values: Vec<OptionValue>,
}
