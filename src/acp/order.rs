//! Requests about a session that is still opening wait for it, in the order they came.
//!
//! Opening a session (new with a chosen id, load, resume) runs off the dispatch loop, so the
//! loop stays free meanwhile; but an editor may send `session/prompt`, `session/cancel` or
//! `session/set_mode` for a session it is loading without waiting for the answer. Such
//! requests are queued per session and run, one after another, when the opening is over.

use std::collections::{HashMap, VecDeque};

use futures::future::BoxFuture;
use parking_lot::Mutex;

/// Work about one session: a short future (long work, like a prompt, spawns its own task).
pub(crate) type SessionWork = Box<dyn FnOnce() -> BoxFuture<'static, ()> + Send>;

/// The sessions being opened, and what waits for each.
#[derive(Default)]
pub(crate) struct Order {
    opening: Mutex<HashMap<String, VecDeque<SessionWork>>>,
}

impl Order {
    /// An opening of `id`: handed back to run now (in a task of its own, then
    /// [`Order::finish`]) and from now on requests about `id` wait for it; or, when `id` is
    /// already opening, queued behind that opening like any other request (`None`).
    pub(crate) fn open(&self, id: &str, job: SessionWork) -> Option<SessionWork> {
        let mut opening = self.opening.lock();
        match opening.get_mut(id) {
            Some(queue) => {
                queue.push_back(job);
                None
            }
            None => {
                opening.insert(id.to_string(), VecDeque::new());
                Some(job)
            }
        }
    }

    /// A request about `id`: handed back to run now, or queued until `id` has opened
    /// (`None`). Called on the dispatch loop, so requests keep the order they came in.
    pub(crate) fn enqueue(&self, id: &str, job: SessionWork) -> Option<SessionWork> {
        match self.opening.lock().get_mut(id) {
            Some(queue) => {
                queue.push_back(job);
                None
            }
            None => Some(job),
        }
    }

    /// The opening of `id` is over: runs what waited for it, in the order it came, then lets
    /// new requests through.
    pub(crate) async fn finish(&self, id: &str) {
        loop {
            let next = {
                let mut opening = self.opening.lock();
                match opening.get_mut(id).map(VecDeque::pop_front) {
                    Some(Some(job)) => job,
                    Some(None) => {
                        opening.remove(id);
                        return;
                    }
                    None => return,
                }
            };
            next().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn job(log: &Arc<Mutex<Vec<&'static str>>>, what: &'static str) -> SessionWork {
        let log = log.clone();
        Box::new(move || {
            Box::pin(async move {
                log.lock().push(what);
            })
        })
    }

    async fn now(job: Option<SessionWork>) {
        if let Some(job) = job {
            job().await;
        }
    }

    #[tokio::test]
    async fn requests_wait_for_the_opening_in_order() {
        let order = Order::default();
        let log = Arc::new(Mutex::new(Vec::new()));
        now(order.open("s", job(&log, "load"))).await;
        now(order.enqueue("s", job(&log, "prompt"))).await;
        now(order.open("s", job(&log, "load again"))).await;
        now(order.enqueue("s", job(&log, "cancel"))).await;
        now(order.enqueue("other", job(&log, "elsewhere"))).await;
        assert_eq!(*log.lock(), ["load", "elsewhere"]);
        order.finish("s").await;
        assert_eq!(
            *log.lock(),
            ["load", "elsewhere", "prompt", "load again", "cancel"]
        );
        now(order.enqueue("s", job(&log, "later"))).await;
        assert_eq!(log.lock().last(), Some(&"later"));
    }
}
