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
        SessionError::Busy(_) | SessionError::InUse(_) => {
            Error::new(Error::invalid_request().code, error.to_string())
        }
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

/// A model failure: `-32000` when credentials must be fixed, `-32603` otherwise. What kind
/// of failure it was (`class`, `attempts`, and `status` and `retryAfterSecs` when the server
/// gave them) goes in `_meta.tandem`, for scripts; `data` keeps only what clients show (its
/// `details`, added on the way out): Zed shows a `-32603`'s details only when `data` is
/// exactly `{"details": …}` (a struct that denies unknown fields), and the raw error
/// otherwise. The SDK's error type has no `_meta` of its own, so it travels as `data._meta`
/// and the transport lifts it onto the error object (`transport/details.rs`).
pub fn model_error(e: &ModelError) -> Error {
    let code = if e.class.is_auth() {
        Error::auth_required().code
    } else {
        Error::internal_error().code
    };
    let mut about = json!({ "class": e.class.as_str(), "attempts": e.attempts });
    if let Some(status) = e.status {
        about["status"] = json!(status);
    }
    if let Some(after) = e.retry_after {
        about["retryAfterSecs"] = json!(after.as_secs_f64());
    }
    Error::new(code, e.message.clone()).data(json!({ "_meta": { "tandem": about } }))
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
