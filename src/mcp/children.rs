//! Every MCP server process tandem starts leads its own process group; [`Children`] keeps
//! those groups so that they are killed when their session closes and when the connection
//! ends, and no server (nor anything a server started, such as `npx`'s node) outlives tandem.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::platform;

/// The process groups of the MCP servers started for one connection's sessions; cheap to
/// clone (the clones share one list). The session manager owns it and kills what is left
/// when the connection ends.
#[derive(Debug, Clone, Default)]
pub struct Children {
    groups: Arc<Mutex<Vec<u32>>>,
}

impl Children {
    /// Remembers a server's process group.
    pub fn register(&self, pgid: u32) {
        self.groups.lock().push(pgid);
    }

    /// Kills one server's process group and forgets it.
    pub fn kill(&self, pgid: u32) {
        self.groups.lock().retain(|p| *p != pgid);
        platform::kill_group(pgid);
    }

    /// Kills every server process group still running (when the connection ends).
    pub fn kill_all(&self) {
        let groups: Vec<u32> = self.groups.lock().drain(..).collect();
        for pgid in groups {
            platform::kill_group(pgid);
        }
    }
}
