//! Every MCP server process tandem starts leads its own process group (a Job Object on
//! Windows); [`Children`] keeps those groups so that they are killed when their session
//! closes and when the connection ends, and no server (nor anything a server started, such
//! as `npx`'s node) outlives tandem.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::platform::Group;

/// The process groups of the MCP servers started for one connection's sessions; cheap to
/// clone (the clones share one list). The session manager owns it and kills what is left
/// when the connection ends.
#[derive(Debug, Clone, Default)]
pub(crate) struct Children {
    groups: Arc<Mutex<Groups>>,
}

#[derive(Debug, Default)]
struct Groups {
    next: u32,
    running: Vec<(u32, Group)>,
}

impl Children {
    /// Keeps a server's process group; the number returned names it to [`Children::kill`].
    pub(crate) fn register(&self, group: Group) -> u32 {
        let mut groups = self.groups.lock();
        groups.next += 1;
        let key = groups.next;
        groups.running.push((key, group));
        key
    }

    /// Kills one server's process group and forgets it.
    pub(crate) fn kill(&self, key: u32) {
        let found = {
            let mut groups = self.groups.lock();
            let at = groups.running.iter().position(|(k, _)| *k == key);
            at.map(|at| groups.running.swap_remove(at))
        };
        if let Some((_, mut group)) = found {
            group.kill();
        }
    }

    /// Kills every server process group still running (when the connection ends).
    pub(crate) fn kill_all(&self) {
        let running = std::mem::take(&mut self.groups.lock().running);
        for (_, mut group) in running {
            group.kill();
        }
    }
}
