//! The session modes: ids shared by ACP session modes and the `mode` config option
//! (DESIGN.md §3). What each mode allows is decided in `permission`.

/// One of the four modes; ids are shared by ACP session modes and the `mode` config option.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Reads inside the workspace are free; edits and commands ask.
    Ask,
    /// Edits inside the workspace are free; commands ask.
    AcceptEdits,
    /// Nothing is changed; mutating tools are refused without prompting.
    ReadOnly,
    /// Everything is allowed without asking.
    FullAccess,
}

impl Mode {
    /// Every mode, in the order the editor lists them.
    pub const ALL: [Mode; 4] = [
        Mode::Ask,
        Mode::AcceptEdits,
        Mode::ReadOnly,
        Mode::FullAccess,
    ];

    /// The wire id.
    pub fn id(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AcceptEdits => "accept-edits",
            Mode::ReadOnly => "read-only",
            Mode::FullAccess => "full-access",
        }
    }

    /// The label in the editor's mode picker.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Ask => "Ask",
            Mode::AcceptEdits => "Accept edits",
            Mode::ReadOnly => "Read only",
            Mode::FullAccess => "Full access",
        }
    }

    /// One sentence for the picker and for the model's system prompt.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Ask => {
                "Ask before every edit and command; reads inside the project are free; commands run sandboxed where the system allows."
            }
            Mode::AcceptEdits => {
                "Edit files inside the project without asking; ask before commands, which run sandboxed where the system allows."
            }
            Mode::ReadOnly => "Read and search only; edits and commands are refused.",
            Mode::FullAccess => "Read, edit and run commands without asking, outside the sandbox.",
        }
    }

    /// Parses a wire id.
    pub fn parse(id: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.id() == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for mode in Mode::ALL {
            assert_eq!(Mode::parse(mode.id()), Some(mode));
        }
        assert_eq!(Mode::parse("Ask"), None);
    }
}
