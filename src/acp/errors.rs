//! Core errors to JSON-RPC errors, in one place.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema as acp;
use serde_json::json;

use crate::model::ModelError;
use crate::session::SessionError;

/// The JSON-RPC error for a failed session request.
pub fn session_error(error: SessionError) -> Error {
    match error {
        SessionError::NotFound(id) => {
            let e: Error = acp::Error::session_not_found(id.clone()).into();
            Error::new(e.code, format!("unknown session `{id}`")).data(e.data)
        }
        SessionError::Busy(_) => Error::new(Error::invalid_request().code, error.to_string()),
        SessionError::InvalidParams(message) => invalid_params(message),
        SessionError::Option(e) => invalid_params(e.to_string()),
        SessionError::Model(e) => model_error(&e),
        SessionError::Internal(message) => Error::new(Error::internal_error().code, message),
        SessionError::Store(e) => Error::new(Error::internal_error().code, e.to_string()),
    }
}

/// `-32602` with a message that says what is wrong.
pub fn invalid_params(message: impl Into<String>) -> Error {
    Error::new(Error::invalid_params().code, message)
}

/// A model failure: `-32000` when credentials must be fixed, `-32603` otherwise, with the
/// class (and HTTP details when known) in `data`.
pub fn model_error(e: &ModelError) -> Error {
    let code = if e.class.is_auth() {
        Error::auth_required().code
    } else {
        Error::internal_error().code
    };
    let mut data = json!({ "class": e.class.as_str(), "attempts": e.attempts });
    if let Some(status) = e.status {
        data["status"] = json!(status);
    }
    if let Some(after) = e.retry_after {
        data["retryAfterSecs"] = json!(after.as_secs_f64());
    }
    Error::new(code, e.message.clone()).data(data)
}

/// `error` with the login methods in its `data.authMethods` when it is "authentication
/// required" (`-32000`), so an editor can offer them right where the request failed.
pub fn with_auth_methods(error: Error, methods: &[acp::AuthMethod]) -> Error {
    if error.code != Error::auth_required().code || methods.is_empty() {
        return error;
    }
    let mut data = error.data.clone().unwrap_or_else(|| json!({}));
    if let Some(object) = data.as_object_mut() {
        object.insert("authMethods".into(), json!(methods));
    }
    error.data(data)
}
