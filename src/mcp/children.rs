//! Every MCP server process tandem starts leads its own process group; the groups are
//! killed when their session closes and when tandem exits, so no server (nor anything a
//! server started, such as `npx`'s node) outlives tandem.

use parking_lot::Mutex;

static GROUPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Remembers a server's process group.
pub fn register(pgid: u32) {
    GROUPS.lock().push(pgid);
}

/// Kills one server's process group and forgets it.
pub fn kill(pgid: u32) {
    GROUPS.lock().retain(|p| *p != pgid);
    crate::platform::kill_group(pgid);
}

/// Kills every server process group still running (at exit).
pub fn kill_all() {
    let groups: Vec<u32> = GROUPS.lock().drain(..).collect();
    for pgid in groups {
        crate::platform::kill_group(pgid);
    }
}
