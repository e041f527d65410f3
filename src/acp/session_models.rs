//! ACP's older session-models API, which agent-shell (Emacs) still speaks: a `models` field
//! (`{currentModelId, availableModels}`) in the answers of `session/new`, `session/load` and
//! `session/resume`, and `session/set_model` to switch. ACP replaced it with the `model`
//! config option, which stays tandem's main path; both show the one setting, so a switch
//! through either is seen through both. ACP's current schema has neither, so their shapes
//! are defined here (with the `session/set_model` handler), and
//! `protocol/extensions/session-models.json` is generated from them.

use std::sync::Arc;

use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Client, Error, JsonRpcMessage, JsonRpcRequest, JsonRpcResponse, UntypedMessage,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ConnectionSink, Handlers};
use crate::types::{EventSink, OptionCategory, OptionView, TurnEvent};

/// The models a session offers, and the one it answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SessionModelState {
    /// The model the session uses now (the `model` option's value).
    pub(crate) current_model_id: String,
    /// Every model it can switch to.
    pub(crate) available_models: Vec<ModelInfo>,
}

/// One model a session can switch to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ModelInfo {
    /// What `session/set_model` takes.
    pub(crate) model_id: String,
    /// What the editor shows.
    pub(crate) name: String,
    /// More about it, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) description: Option<String>,
}

/// `session/set_model`: switches a session's model, like `session/set_config_option` with
/// `configId: "model"`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, JsonRpcRequest)]
#[request(method = "session/set_model", response = SetModelResponse)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SetModelRequest {
    /// The session.
    pub(crate) session_id: String,
    /// One of its `availableModels`.
    pub(crate) model_id: String,
}

/// The switch is made; a `config_option_update` with every option has gone out before it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, JsonRpcResponse)]
pub(crate) struct SetModelResponse {}

/// The `model` option among `views`, in the older shape.
pub(crate) fn model_state(views: &[OptionView]) -> Option<SessionModelState> {
    let model = views
        .iter()
        .find(|v| v.category == Some(OptionCategory::Model))?;
    Some(SessionModelState {
        current_model_id: model.current.clone(),
        available_models: model
            .values
            .iter()
            .map(|v| ModelInfo {
                model_id: v.id.clone(),
                name: v.name.clone(),
                description: v.description.clone(),
            })
            .collect(),
    })
}

/// A request that opens a session (`R`), answered with the older `models` field besides
/// ACP's own response: the SDK's response types carry only what ACP's schema has.
#[derive(Debug, Clone)]
pub(crate) struct WithModels<R>(pub R);

impl<R: JsonRpcMessage> JsonRpcMessage for WithModels<R> {
    fn matches_method(method: &str) -> bool {
        R::matches_method(method)
    }

    fn method(&self) -> &str {
        self.0.method()
    }

    fn to_untyped_message(&self) -> Result<UntypedMessage, Error> {
        self.0.to_untyped_message()
    }

    fn parse_message(method: &str, params: &Value) -> Result<Self, Error> {
        R::parse_message(method, params).map(WithModels)
    }
}

impl<R: JsonRpcRequest> JsonRpcRequest for WithModels<R> {
    type Response = WithModelList<R::Response>;
}

/// ACP's answer `response`, with `models` added at its top level.
#[derive(Debug, Clone)]
pub(crate) struct WithModelList<T> {
    /// What ACP's schema describes.
    pub(crate) response: T,
    /// The older field, absent when the session offers no model option.
    pub(crate) models: Option<SessionModelState>,
}

impl<T: JsonRpcResponse> JsonRpcResponse for WithModelList<T> {
    fn into_json(self, method: &str) -> Result<Value, Error> {
        let mut value = self.response.into_json(method)?;
        if let (Some(models), Some(fields)) = (self.models, value.as_object_mut()) {
            let models = serde_json::to_value(models).map_err(Error::into_internal_error)?;
            fields.insert("models".into(), models);
        }
        Ok(value)
    }

    fn from_json(method: &str, value: Value) -> Result<Self, Error> {
        let models = value
            .get("models")
            .and_then(|m| serde_json::from_value(m.clone()).ok());
        Ok(Self {
            response: T::from_json(method, value)?,
            models,
        })
    }
}

impl Handlers {
    /// `session/set_model`: the `model` option changes, and the editor is told every option
    /// as it now stands (clients that follow config options see the switch too).
    pub(crate) async fn set_model(
        self: Arc<Self>,
        req: SetModelRequest,
        responder: Responder<SetModelResponse>,
        cx: ConnectionTo<Client>,
    ) -> Result<(), Error> {
        let id = req.session_id.clone();
        let sink = ConnectionSink::new(cx, self.caps());
        self.reply_later(&id, responder, move |manager| {
            let set = manager.set_option(&req.session_id, "model", &req.model_id);
            Box::pin(async move {
                let views = set.await?;
                sink.emit(&req.session_id, TurnEvent::OptionsChanged(views));
                Ok(SetModelResponse {})
            })
        })
        .await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::NewSessionResponse;

    #[test]
    fn models_ride_beside_the_acp_answer_and_come_back() {
        let models = SessionModelState {
            current_model_id: "a".into(),
            available_models: vec![ModelInfo {
                model_id: "a".into(),
                name: "A".into(),
                description: None,
            }],
        };
        let answer = WithModelList {
            response: NewSessionResponse::new("s1"),
            models: Some(models.clone()),
        };
        let json = answer.into_json("session/new").unwrap();
        assert_eq!(json["sessionId"], "s1");
        assert_eq!(json["models"]["currentModelId"], "a");
        assert_eq!(json["models"]["availableModels"][0]["modelId"], "a");
        let back = WithModelList::<NewSessionResponse>::from_json("session/new", json).unwrap();
        assert_eq!(back.models, Some(models));
    }
}
