//! `ask_user`: a question for the user in the middle of a turn, with optional choices or a
//! small form. An editor that advertised form elicitation gets `elicitation/create`; another
//! gets a question with choices as a permission-style request (one option per choice, and
//! "Don't answer"); a question it cannot show that way (free text, a form) is written into
//! the answer and the model is told to end its turn, so the reply comes as the next prompt.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::client::{Field, FieldKind, Question, Reply};
use crate::types::{Access, ToolCallView, ToolContent, ToolKind, ToolStatus, TurnEvent};

/// Most choices a question offers, and most fields a form has.
const MAX_CHOICES: usize = 20;
const MAX_FIELDS: usize = 10;
/// Longest question, in characters.
const MAX_QUESTION: usize = 4000;

/// The kind of a form field.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Kind {
    Text,
    Number,
    Integer,
    Boolean,
}

/// One field of a form.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FieldArg {
    /// The key its value has in the answer.
    pub(crate) name: String,
    /// What the user reads beside it.
    pub(crate) label: Option<String>,
    /// text (default), number, integer or boolean.
    #[serde(rename = "type")]
    pub(crate) kind: Option<Kind>,
    /// For text: the values to pick from.
    pub(crate) choices: Option<Vec<String>>,
    /// Whether it must be filled (default true).
    pub(crate) required: Option<bool>,
}

/// Arguments of `ask_user`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AskUserArgs {
    /// The question, as the user reads it.
    pub(crate) question: String,
    /// A few answers to pick from.
    pub(crate) choices: Option<Vec<String>>,
    /// A small form instead of one answer.
    pub(crate) fields: Option<Vec<FieldArg>>,
}

pub(crate) struct AskUser;

impl TypedTool for AskUser {
    type Args = AskUserArgs;
    const NAME: &'static str = "ask_user";
    const KIND: ToolKind = ToolKind::Other;
    const LABEL: &'static str = "Question";
    fn description(&self) -> &str {
        "Ask the user a question you cannot answer from the project (a preference, a missing fact); give choices when there are a few obvious ones."
    }
    fn prepare(&self, args: AskUserArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let question = question(args)?;
        Ok(Prepared {
            title: format!("Question: {}", one_line(&question.text)),
            locations: Vec::new(),
            access: Access::Free,
            call: Box::new(AskCall { question }),
        })
    }
}

/// The question the arguments describe, or what is wrong with them.
fn question(args: AskUserArgs) -> Result<Question, ToolError> {
    let bad = |message: String| ToolError::Arguments {
        tool: AskUser::NAME,
        message,
    };
    let text = args.question.trim().to_string();
    if text.is_empty() || text.chars().count() > MAX_QUESTION {
        return Err(bad(format!(
            "`question` must be between 1 and {MAX_QUESTION} characters"
        )));
    }
    let fields = match (args.fields, args.choices) {
        (Some(_), Some(_)) => {
            return Err(bad(
                "give `choices` or `fields`, not both (a field has its own choices)".into(),
            ));
        }
        (Some(fields), None) => fields.into_iter().map(field).collect(),
        (None, choices) => vec![Field {
            name: "answer".into(),
            title: None,
            kind: FieldKind::Text,
            choices: choices.unwrap_or_default(),
            required: true,
        }],
    };
    check(&fields).map_err(bad)?;
    Ok(Question { text, fields })
}

fn field(arg: FieldArg) -> Field {
    Field {
        name: arg.name.trim().to_string(),
        title: arg.label,
        kind: match arg.kind.unwrap_or(Kind::Text) {
            Kind::Text => FieldKind::Text,
            Kind::Number => FieldKind::Number,
            Kind::Integer => FieldKind::Integer,
            Kind::Boolean => FieldKind::Boolean,
        },
        choices: arg.choices.unwrap_or_default(),
        required: arg.required.unwrap_or(true),
    }
}

/// Field names present and unique, within the limits.
fn check(fields: &[Field]) -> Result<(), String> {
    if fields.is_empty() || fields.len() > MAX_FIELDS {
        return Err(format!("a form has 1 to {MAX_FIELDS} fields"));
    }
    for (i, f) in fields.iter().enumerate() {
        if f.name.is_empty() || fields[..i].iter().any(|g| g.name == f.name) {
            return Err("every field needs a name of its own".into());
        }
        if f.choices.len() > MAX_CHOICES || f.choices.iter().any(|c| c.trim().is_empty()) {
            return Err(format!("at most {MAX_CHOICES} choices, none empty"));
        }
        if !f.choices.is_empty() && !matches!(f.kind, FieldKind::Text) {
            return Err(format!("`{}`: only text fields have choices", f.name));
        }
    }
    Ok(())
}

/// The first line of `text`, shortened for a title.
fn one_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

struct AskCall {
    question: Question,
}

impl Call for AskCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let asked = tokio::select! {
                asked = ask(&env, &self.question) => asked,
                () = env.cancel.cancelled() => Ok(Some(Reply::Cancelled)),
            };
            match asked {
                Ok(Some(reply)) => told(reply, &self.question),
                Ok(None) => {
                    shown_in_answer(&env, &self.question);
                    ToolOutput::text(
                        "This editor cannot show the question, so it was written into your answer. End your turn now: the user's reply comes as their next message.",
                    )
                }
                Err(e) => ToolOutput::error(format!("The question could not be asked: {e}")),
            }
        })
    }
}

/// Asks the way the editor can; `None` when it can show the question only as text.
async fn ask(
    env: &ToolEnv,
    question: &Question,
) -> Result<Option<Reply>, crate::client::ClientError> {
    let scope = &env.scope;
    if scope.caps.elicitation {
        return scope
            .client
            .elicit(&scope.session_id, Some(&env.call_id), &labelled(question))
            .await
            .map(Some);
    }
    let [only] = question.fields.as_slice() else {
        return Ok(None);
    };
    if only.choices.is_empty() {
        return Ok(None);
    }
    let view = ToolCallView {
        id: env.call_id.clone(),
        title: format!("Question: {}", one_line(&question.text)),
        kind: ToolKind::Other,
        status: ToolStatus::Pending,
        locations: Vec::new(),
        raw_input: None,
        content: vec![ToolContent::Text {
            text: question.text.clone(),
        }],
    };
    scope
        .client
        .choose(&scope.session_id, &view, &only.choices)
        .await
        .map(Some)
}

/// The question as a form whose message says it is the model's: a prompt-injected model's
/// question must not pass for tandem's own.
fn labelled(question: &Question) -> crate::client::Form {
    let mut form = question.form();
    form.message = format!("The model asks: {}", question.text);
    form
}

/// The question as part of the answer, for an editor that can show it no other way.
fn shown_in_answer(env: &ToolEnv, question: &Question) {
    let mut text = format!("\n\n**Question:** {}\n", question.text);
    for field in &question.fields {
        if field.name != "answer" {
            let label = field.title.as_deref().unwrap_or(&field.name);
            text.push_str(&format!("- {label}\n"));
        }
    }
    env.scope
        .sink
        .emit(&env.scope.session_id, TurnEvent::Text(text));
}

/// What the model reads of the user's reply.
fn told(reply: Reply, question: &Question) -> ToolOutput {
    match reply {
        Reply::Answered(answer) => {
            let plain = question.fields.len() == 1 && question.fields[0].name == "answer";
            match answer.get("answer") {
                Some(Value::String(said)) if plain => {
                    ToolOutput::text(format!("The user answered: {said}"))
                }
                _ => ToolOutput::text(format!(
                    "The user answered:\n{}",
                    serde_json::to_string_pretty(&answer).unwrap_or_default()
                )),
            }
        }
        Reply::Declined => ToolOutput::text("The user chose not to answer."),
        Reply::Cancelled => ToolOutput::text("The user dismissed the question without answering."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: Value) -> AskUserArgs {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn a_plain_question_is_one_text_answer_and_a_form_its_fields() {
        let q = question(args(
            serde_json::json!({"question": "Which?", "choices": ["a", "b"]}),
        ))
        .unwrap();
        assert_eq!(q.fields.len(), 1);
        assert_eq!(q.fields[0].name, "answer");
        assert_eq!(q.fields[0].choices, ["a", "b"]);
        let q = question(args(serde_json::json!({"question": "Setup?", "fields": [
            {"name": "port", "type": "integer"}, {"name": "tls", "type": "boolean", "required": false}
        ]})))
        .unwrap();
        assert_eq!(q.fields[0].kind, FieldKind::Integer);
        assert!(!q.fields[1].required);
    }

    #[test]
    fn bad_questions_say_what_is_wrong() {
        for bad in [
            serde_json::json!({"question": "  "}),
            serde_json::json!({"question": "q", "choices": ["a"], "fields": [{"name": "x"}]}),
            serde_json::json!({"question": "q", "fields": []}),
            serde_json::json!({"question": "q", "fields": [{"name": "x"}, {"name": "x"}]}),
            serde_json::json!({"question": "q", "fields": [{"name": "n", "type": "number", "choices": ["1"]}]}),
            serde_json::json!({"question": "q", "choices": [""]}),
        ] {
            assert!(question(args(bad.clone())).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_model_reads_the_reply() {
        let q = question(args(serde_json::json!({"question": "Which?"}))).unwrap();
        let mut answer = serde_json::Map::new();
        answer.insert("answer".into(), Value::String("blue".into()));
        assert_eq!(
            told(Reply::Answered(answer), &q).model,
            "The user answered: blue"
        );
        assert_eq!(
            told(Reply::Declined, &q).model,
            "The user chose not to answer."
        );
    }
}
