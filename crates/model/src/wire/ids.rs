//! The ids of the calls in one answer: every result must answer exactly one call, whatever
//! the server sent.

use crate::ToolCall;

/// Gives a call without an id, or with one an earlier call of the response already has (each
/// result must answer one call), `call_N` from its position.
pub(crate) fn unique_ids(calls: &mut [ToolCall]) {
    let mut seen = std::collections::HashSet::new();
    for (n, call) in calls.iter_mut().enumerate() {
        if call.id.is_empty() || seen.contains(&call.id) {
            call.id = format!("call_{n}");
            while seen.contains(&call.id) {
                call.id.push('_');
            }
        }
        seen.insert(call.id.clone());
    }
}
