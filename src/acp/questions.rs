//! Questions to the user as ACP has them: an `elicitation/create` form (for an editor that
//! advertised form elicitation), or a `session/request_permission` whose options are the
//! choices (for others), and their answers back as a [`Reply`].

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationContentValue, ElicitationFormMode, ElicitationSchema, ElicitationSessionScope,
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, ToolCallId,
};
use serde_json::{Map, Value};

use crate::client::{Form, Reply};
use crate::types::ToolCallView;

/// The option id that declines a choice.
const DECLINE: &str = "decline";

/// The request that asks `form`, from the tool call `call_id` (if any) of `session`; `Err`
/// when its schema is not one ACP elicitation takes.
pub(super) fn form(
    session: &str,
    call_id: Option<&str>,
    form: &Form,
) -> Result<CreateElicitationRequest, String> {
    let schema: ElicitationSchema = serde_json::from_value(form.schema.clone())
        .map_err(|e| format!("the form's schema is not one an editor takes: {e}"))?;
    let mut scope = ElicitationSessionScope::new(session.to_string());
    if let Some(id) = call_id {
        scope = scope.tool_call_id(ToolCallId::new(id.to_string()));
    }
    Ok(CreateElicitationRequest::new(
        ElicitationFormMode::new(scope, schema),
        form.message.clone(),
    ))
}

/// What the editor's answer to a form says.
pub(super) fn form_reply(response: CreateElicitationResponse) -> Reply {
    match response.action {
        ElicitationAction::Accept(accepted) => Reply::Answered(
            accepted
                .content
                .unwrap_or_default()
                .into_iter()
                .map(|(name, value)| (name, content_value(value)))
                .collect(),
        ),
        ElicitationAction::Decline => Reply::Declined,
        _ => Reply::Cancelled,
    }
}

fn content_value(value: ElicitationContentValue) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A permission-style request whose options are `choices`, then one that declines.
pub(super) fn choice_request(
    session: &str,
    call: &ToolCallView,
    choices: &[String],
) -> RequestPermissionRequest {
    let mut options: Vec<PermissionOption> = choices
        .iter()
        .enumerate()
        .map(|(i, c)| {
            PermissionOption::new(
                format!("choice-{i}"),
                c.clone(),
                PermissionOptionKind::AllowOnce,
            )
        })
        .collect();
    options.push(PermissionOption::new(
        DECLINE,
        "Don't answer",
        PermissionOptionKind::RejectOnce,
    ));
    RequestPermissionRequest::new(
        session.to_string(),
        super::updates::tool_call_update(call),
        options,
    )
}

/// What the editor's answer to a choice says; `Err` for an option that was not offered.
pub(super) fn choice_reply(
    response: RequestPermissionResponse,
    choices: &[String],
) -> Result<Reply, String> {
    let selected = match response.outcome {
        RequestPermissionOutcome::Selected(selected) => selected.option_id.0.to_string(),
        _ => return Ok(Reply::Cancelled),
    };
    if selected == DECLINE {
        return Ok(Reply::Declined);
    }
    let chosen = selected
        .strip_prefix("choice-")
        .and_then(|n| n.parse::<usize>().ok())
        .and_then(|n| choices.get(n));
    match chosen {
        Some(choice) => {
            let mut answer = Map::new();
            answer.insert("answer".into(), Value::String(choice.clone()));
            Ok(Reply::Answered(answer))
        }
        None => Err(format!(
            "the editor chose an option tandem did not offer: `{selected}`"
        )),
    }
}
