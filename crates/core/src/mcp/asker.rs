//! An MCP server's own questions: the `elicitation/create` a server sends while one of its
//! tools runs goes to the editor as ACP form elicitation (scoped to the session and, when
//! one of this session's MCP calls is running, that call), and the user's answer goes back.
//! A server is told tandem takes form questions only when the editor advertised them; a URL
//! question, or one the editor cannot show, is declined.

use std::sync::Arc;

use parking_lot::Mutex;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, FormElicitationCapability,
};
use rmcp::service::{RequestContext, RoleClient};

use crate::client::{ClientCaps, ClientOps, Form, Reply};

/// Where a session's servers' questions go: its editor. Cloned into every connection.
#[derive(Clone)]
pub(crate) struct Asker {
    route: Option<Arc<Route>>,
    /// The server this clone serves, named to the user with each of its questions.
    server: Option<String>,
    /// The MCP calls of this session running now (their tool call ids), oldest first.
    calls: Arc<Mutex<Vec<String>>>,
}

/// The editor a session talks to.
struct Route {
    editor: Arc<dyn ClientOps>,
    session: String,
    caps: ClientCaps,
}

impl Asker {
    /// Questions from `session`'s servers go to `editor`, which advertised `caps`.
    pub(crate) fn new(editor: Arc<dyn ClientOps>, session: &str, caps: ClientCaps) -> Self {
        Self {
            route: Some(Arc::new(Route {
                editor,
                session: session.to_string(),
                caps,
            })),
            server: None,
            calls: Arc::default(),
        }
    }

    /// Nobody to ask (servers started outside a session).
    #[cfg(test)]
    pub(crate) fn nobody() -> Self {
        Self {
            route: None,
            server: None,
            calls: Arc::default(),
        }
    }

    /// This asker for the server `name`: its questions say who asks.
    pub(crate) fn for_server(&self, name: &str) -> Self {
        Self {
            server: Some(name.to_string()),
            ..self.clone()
        }
    }

    /// Marks the tool call `id` as running until the guard drops.
    pub(crate) fn calling(&self, id: &str) -> Calling {
        self.calls.lock().push(id.to_string());
        Calling {
            calls: self.calls.clone(),
            id: id.to_string(),
        }
    }

    /// Whether the editor can show a form.
    fn forms(&self) -> bool {
        self.route.as_ref().is_some_and(|r| r.caps.elicitation)
    }

    /// Asks `form` through the editor; declined when it cannot.
    async fn ask(&self, form: Form) -> ElicitResult {
        let Some(route) = self.route.as_ref().filter(|_| self.forms()) else {
            return ElicitResult::new(ElicitationAction::Decline);
        };
        // The call it came from, when exactly one of this session's MCP calls is running.
        let call = match self.calls.lock().as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        };
        let reply = route
            .editor
            .elicit(&route.session, call.as_deref(), &form)
            .await;
        match reply {
            Ok(Reply::Answered(content)) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(serde_json::Value::Object(content)),
            Ok(Reply::Declined) => ElicitResult::new(ElicitationAction::Decline),
            Ok(Reply::Cancelled) => ElicitResult::new(ElicitationAction::Cancel),
            Err(e) => {
                tracing::warn!(session = %route.session, "an MCP server's question could not be asked: {e}");
                ElicitResult::new(ElicitationAction::Decline)
            }
        }
    }
}

/// While alive, a running MCP call this session's servers may ask about.
pub(crate) struct Calling {
    calls: Arc<Mutex<Vec<String>>>,
    id: String,
}

impl Drop for Calling {
    fn drop(&mut self) {
        let mut calls = self.calls.lock();
        if let Some(at) = calls.iter().position(|c| *c == self.id) {
            calls.remove(at);
        }
    }
}

impl ClientHandler for Asker {
    fn get_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        if self.forms() {
            let mut elicitation = ElicitationCapability::new();
            elicitation.form = Some(FormElicitationCapability::new());
            capabilities.elicitation = Some(elicitation);
        }
        let mut info = ClientConfig::default();
        info.capabilities = capabilities;
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        match request {
            ElicitRequestParams::FormElicitationParams {
                message,
                requested_schema,
                ..
            } => {
                let schema = serde_json::to_value(requested_schema).unwrap_or_default();
                // The user sees who asks: a server's words are not tandem's.
                let who = self.server.as_deref().unwrap_or("an MCP server");
                let message = format!("MCP server `{who}` asks: {message}");
                Ok(self.ask(Form { message, schema }).await)
            }
            // A URL to open (or a kind of question MCP adds later): not taken.
            _ => Ok(ElicitResult::new(ElicitationAction::Decline)),
        }
    }
}
