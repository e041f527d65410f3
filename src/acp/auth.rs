//! Logging in from the editor: the login methods tandem offers, `authenticate`, and the
//! errors that name those methods ("authentication required").

use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    AuthMethod, AuthenticateRequest, AuthenticateResponse, LogoutRequest, LogoutResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};

use super::handlers::{Handled, Handlers};
use super::{capabilities, errors};
use crate::session::{LogoutError, SessionError};

impl Handlers {
    /// The login methods to name in an "authentication required" error.
    pub(super) fn auth_methods(&self) -> Vec<AuthMethod> {
        capabilities::auth_methods(
            &self.manager.config(),
            *self.auth.lock(),
            self.manager.looking_up_stored_keys(),
        )
    }

    /// `e` as its JSON-RPC error; "authentication required" (a key missing or refused by the
    /// model server, whichever request met it) names the login methods, so the editor can
    /// offer them where the request failed.
    pub(super) fn error_for(&self, e: SessionError) -> Error {
        let error = errors::session_error(e);
        if error.code == Error::auth_required().code {
            errors::with_auth_methods(error, &self.auth_methods())
        } else {
            error
        }
    }

    /// `authenticate`: succeeds when a key can be used now: one in the environment, or one
    /// `tandem login` stored (looked for again, so a login in a terminal counts at once), and
    /// not the key the model server last refused.
    pub(crate) async fn authenticate(
        self: Arc<Self>,
        req: AuthenticateRequest,
        responder: Responder<AuthenticateResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = capabilities::AUTH_METHOD_ID;
        if req.method_id.0.as_ref() != id {
            return responder.respond_with_error(errors::invalid_params(format!(
                "unknown authentication method `{}`; tandem offers `{id}`",
                req.method_id.0
            )));
        }
        let manager = self.manager.clone();
        let checked = tokio::task::spawn_blocking(move || manager.authenticate()).await;
        match checked {
            Ok(Ok(())) => responder.respond(AuthenticateResponse::new()),
            Ok(Err(e)) => responder.respond_with_error(errors::with_auth_methods(
                errors::model_error(&e),
                &self.auth_methods(),
            )),
            Err(e) => responder.respond_with_error(Error::new(
                Error::internal_error().code,
                format!("the credential check failed: {e}"),
            )),
        }
    }

    /// `logout`: the key `tandem login` stored for the current server is removed, and
    /// sessions go on as when no key exists (`tandem logout` does the same from a terminal).
    pub(crate) async fn logout(
        self: Arc<Self>,
        _req: LogoutRequest,
        responder: Responder<LogoutResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let manager = self.manager.clone();
        // The system's credential store and the key file are blocking calls.
        match tokio::task::spawn_blocking(move || manager.logout()).await {
            Ok(Ok(())) => responder.respond(LogoutResponse::new()),
            Ok(Err(e @ LogoutError::FromEnvironment(_))) => responder
                .respond_with_error(Error::new(Error::invalid_request().code, e.to_string())),
            Ok(Err(e)) => responder
                .respond_with_error(Error::new(Error::internal_error().code, e.to_string())),
            Err(e) => responder.respond_with_error(Error::new(
                Error::internal_error().code,
                format!("the logout failed: {e}"),
            )),
        }
    }
}
