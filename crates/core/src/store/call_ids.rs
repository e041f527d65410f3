//! The ids the editor sees for tool calls. ACP needs a tool call id to be unique for the
//! session's whole life, but model servers number calls per response (`call_0`, or
//! `functions.read_file:0`), or send none at all. The model keeps the id it gave; the editor
//! gets that id when it is new to the session, and the id with a `-N` suffix when it is not.
//!
//! The ids follow from the order of the calls alone, so a live turn ([`super::History`]) and
//! a `session/load` replay of its transcript (`session::playback`) give every call the same
//! id without storing a map.

use std::collections::HashSet;

use crate::conversation::ToolCall;

/// Gives out session-unique ids for the editor, in call order.
#[derive(Debug, Clone, Default)]
pub(crate) struct CallIds {
    /// Put before every id: a subagent's calls carry its `task` call's id, so they can never
    /// meet the session's own.
    prefix: String,
    used: HashSet<String>,
}

impl CallIds {
    /// Ids for a subagent run by the call the editor knows as `task_id`.
    pub(crate) fn nested(task_id: &str) -> Self {
        Self {
            prefix: format!("{task_id}/"),
            used: HashSet::new(),
        }
    }

    /// The editor's id for the next call the model made with `model_id`.
    pub(crate) fn issue(&mut self, model_id: &str) -> String {
        let base = format!("{}{model_id}", self.prefix);
        let mut id = base.clone();
        let mut n = 2;
        while self.used.contains(&id) {
            id = format!("{base}-{n}");
            n += 1;
        }
        self.used.insert(id.clone());
        id
    }

    /// Marks `ids` (editor ids, given out before) as taken.
    pub(crate) fn reserve(&mut self, ids: &[String]) {
        self.used.extend(ids.iter().cloned());
    }

    /// The editor's ids for one response's calls, in order.
    pub(crate) fn issue_all(&mut self, calls: &[ToolCall]) -> Vec<String> {
        calls.iter().map(|c| self.issue(&c.id)).collect()
    }

    /// Takes the ids a record a rewind took out of the conversation gave out (its calls,
    /// or calls cut off), so no later call gets them again.
    pub(crate) fn pass(&mut self, record: &super::Record) {
        match record {
            super::Record::Assistant { tool_calls, .. } => {
                self.issue_all(tool_calls);
            }
            super::Record::CutOff { call_ids } => self.reserve(call_ids),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_model_ids_get_a_suffix_and_new_ones_stay() {
        let mut ids = CallIds::default();
        assert_eq!(ids.issue("call_0"), "call_0");
        assert_eq!(ids.issue("call_1"), "call_1");
        assert_eq!(ids.issue("call_0"), "call_0-2");
        assert_eq!(ids.issue("call_0"), "call_0-3");
        assert_eq!(ids.issue("call_0-2x"), "call_0-2x");
        // A model id that looks like a suffixed one is still made unique.
        assert_eq!(ids.issue("call_0-2"), "call_0-2-2");
    }

    #[test]
    fn a_subagents_ids_carry_its_task() {
        let mut ids = CallIds::nested("call_3");
        assert_eq!(ids.issue("call_0"), "call_3/call_0");
        assert_eq!(ids.issue("call_0"), "call_3/call_0-2");
    }
}
