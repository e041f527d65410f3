//! The subagent sessions (children) at work right now, by id, each with its parent and its
//! own cancel: `session/cancel` naming a child stops that child's work alone (its `task` call
//! then tells the parent model so), and any other request naming one is refused plainly.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

/// The children of every session of a connection that are working.
#[derive(Clone, Default)]
pub(crate) struct ChildSessions(Arc<Mutex<HashMap<String, Child>>>);

/// One working child.
struct Child {
    parent: String,
    cancel: CancellationToken,
}

impl ChildSessions {
    /// Records the child `id` of `parent`, stopped by `cancel`, until the guard is dropped.
    pub(crate) fn enter(&self, id: &str, parent: &str, cancel: CancellationToken) -> Working {
        self.0.lock().insert(
            id.to_string(),
            Child {
                parent: parent.to_string(),
                cancel,
            },
        );
        Working {
            all: self.clone(),
            id: id.to_string(),
        }
    }

    /// Stops the work of the child `id`; false when no child of that id is working.
    pub(crate) fn cancel(&self, id: &str) -> bool {
        match self.0.lock().get(id) {
            Some(child) => {
                child.cancel.cancel();
                true
            }
            None => false,
        }
    }

    /// The parent of the working child `id`.
    pub(crate) fn parent_of(&self, id: &str) -> Option<String> {
        self.0.lock().get(id).map(|c| c.parent.clone())
    }
}

/// A child at work; it is forgotten when this is dropped.
pub(crate) struct Working {
    all: ChildSessions,
    id: String,
}

impl Drop for Working {
    fn drop(&mut self) {
        self.all.0.lock().remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_is_cancelled_alone_and_forgotten_when_its_work_ends() {
        let children = ChildSessions::default();
        let parent = CancellationToken::new();
        let token = parent.child_token();
        let working = children.enter("c1", "p1", token.clone());
        assert_eq!(children.parent_of("c1").as_deref(), Some("p1"));
        assert!(children.cancel("c1"));
        assert!(token.is_cancelled() && !parent.is_cancelled());
        drop(working);
        assert!(!children.cancel("c1"));
        assert_eq!(children.parent_of("c1"), None);
    }
}
