//! The mode table (DESIGN.md §3): what each mode does with a call before rules and
//! remembered answers are consulted.

use super::workspace::Workspace;
use super::{Decision, Subject};
use crate::config::permissions::PathAccess;
use crate::types::Mode;

/// Whether `subject` may happen in `mode` in `workspace`.
pub(crate) fn decide(mode: Mode, subject: &Subject, workspace: &Workspace) -> Decision {
    use Decision::{Allow, Ask, Refuse};
    match subject {
        Subject::Free | Subject::Tool { read_only: true, .. } => Allow,
        Subject::Path {
            access: PathAccess::Read,
            path,
        } => {
            if mode == Mode::FullAccess || workspace.contains(path) {
                Allow
            } else {
                Ask
            }
        }
        Subject::Path {
            access: PathAccess::Edit,
            path,
        } => match mode {
            Mode::ReadOnly => Refuse(
                "Refused: the session is in read-only mode, so files cannot be changed. Tell the user what you would change instead.".into(),
            ),
            Mode::FullAccess => Allow,
            Mode::AcceptEdits if workspace.contains(path) => Allow,
            Mode::AcceptEdits | Mode::Ask => Ask,
        },
        // Reading the web is a read, but the URL or the query carries data out: asked in every
        // mode but `full-access`, `read-only` included.
        Subject::Web { .. } => match mode {
            Mode::FullAccess => Allow,
            Mode::ReadOnly | Mode::Ask | Mode::AcceptEdits => Ask,
        },
        Subject::Command { .. } | Subject::Tool { .. } => match mode {
            Mode::ReadOnly => Refuse(
                "Refused: the session is in read-only mode, so commands and tools that may change things cannot run. Tell the user what you would run instead.".into(),
            ),
            Mode::FullAccess => Allow,
            Mode::Ask | Mode::AcceptEdits => Ask,
        },
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;
    use crate::shell;

    #[test]
    fn the_design_table() {
        let ws = Workspace::new(PathBuf::from("/ws"), Vec::new(), Some(Path::new("/home/u")));
        let path = |access, p: &'static str| Subject::Path {
            access,
            path: Path::new(p),
        };
        let read_in = path(PathAccess::Read, "/ws/a");
        let read_out = path(PathAccess::Read, "/etc/passwd");
        let edit_in = path(PathAccess::Edit, "/ws/a");
        let edit_out = path(PathAccess::Edit, "/tmp/a");
        let run = Subject::Command {
            line: "ls",
            parsed: shell::parse("ls"),
            cwd: Path::new("/ws"),
        };
        let tool = |read_only| Subject::Tool {
            name: "mcp__s__t",
            read_only,
        };
        use Decision::{Allow, Ask};
        let refuse = |d: Decision| matches!(d, Decision::Refuse(_));
        for mode in Mode::ALL {
            assert_eq!(decide(mode, &read_in, &ws), Allow);
            assert_eq!(decide(mode, &tool(true), &ws), Allow);
            assert_eq!(decide(mode, &Subject::Free, &ws), Allow);
        }
        assert_eq!(decide(Mode::Ask, &read_out, &ws), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &read_out, &ws), Ask);
        assert_eq!(decide(Mode::ReadOnly, &read_out, &ws), Ask);
        assert_eq!(decide(Mode::FullAccess, &read_out, &ws), Allow);
        assert_eq!(decide(Mode::Ask, &edit_in, &ws), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &edit_in, &ws), Allow);
        assert!(refuse(decide(Mode::ReadOnly, &edit_in, &ws)));
        assert_eq!(decide(Mode::FullAccess, &edit_in, &ws), Allow);
        assert_eq!(decide(Mode::Ask, &edit_out, &ws), Ask);
        assert_eq!(decide(Mode::AcceptEdits, &edit_out, &ws), Ask);
        assert!(refuse(decide(Mode::ReadOnly, &edit_out, &ws)));
        assert_eq!(decide(Mode::FullAccess, &edit_out, &ws), Allow);
        for subject in [run, tool(false)] {
            assert_eq!(decide(Mode::Ask, &subject, &ws), Ask);
            assert_eq!(decide(Mode::AcceptEdits, &subject, &ws), Ask);
            assert!(refuse(decide(Mode::ReadOnly, &subject, &ws)));
            assert_eq!(decide(Mode::FullAccess, &subject, &ws), Allow);
        }
    }

    #[test]
    fn a_home_folder_session_has_no_inside() {
        let ws = Workspace::new(
            PathBuf::from("/home/u"),
            Vec::new(),
            Some(Path::new("/home/u")),
        );
        let read = Subject::Path {
            access: PathAccess::Read,
            path: Path::new("/home/u/notes.txt"),
        };
        let edit = Subject::Path {
            access: PathAccess::Edit,
            path: Path::new("/home/u/notes.txt"),
        };
        assert_eq!(decide(Mode::Ask, &read, &ws), Decision::Ask);
        assert_eq!(decide(Mode::AcceptEdits, &edit, &ws), Decision::Ask);
        assert_eq!(decide(Mode::FullAccess, &edit, &ws), Decision::Allow);
    }
}
