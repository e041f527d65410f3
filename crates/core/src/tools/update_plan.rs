//! `update_plan`: the agent's task list, shown in the editor as an ACP `plan`.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::types::Access;
use crate::types::{PlanItem, ToolKind, TurnEvent};

/// A plan entry's status.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Status {
    Pending,
    InProgress,
    Completed,
}

/// A plan entry's priority.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Priority {
    High,
    Medium,
    Low,
}

/// One entry.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    /// What to do, in a few words.
    pub(crate) content: String,
    /// Where it stands.
    pub(crate) status: Status,
    /// How much it matters (default medium).
    pub(crate) priority: Option<Priority>,
}

/// Arguments of `update_plan`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct UpdatePlanArgs {
    /// The whole plan, in order; it replaces the previous one.
    pub(crate) entries: Vec<Entry>,
}

pub(crate) struct UpdatePlan;

impl TypedTool for UpdatePlan {
    type Args = UpdatePlanArgs;
    const NAME: &'static str = "update_plan";
    const KIND: ToolKind = ToolKind::Think;
    const LABEL: &'static str = "Update plan";
    fn description(&self) -> &str {
        "Show the user your plan for multi-step work; send the whole list each time, updating statuses as you go."
    }
    fn announced(&self) -> bool {
        false
    }
    fn prepare(&self, args: UpdatePlanArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let items = args
            .entries
            .into_iter()
            .map(|e| PlanItem {
                content: e.content,
                status: match e.status {
                    Status::Pending => "pending",
                    Status::InProgress => "in_progress",
                    Status::Completed => "completed",
                }
                .into(),
                priority: match e.priority.unwrap_or(Priority::Medium) {
                    Priority::High => "high",
                    Priority::Medium => "medium",
                    Priority::Low => "low",
                }
                .into(),
            })
            .collect();
        Ok(Prepared {
            title: "Update plan".into(),
            locations: Vec::new(),
            access: Access::Free,
            call: Box::new(PlanCall { items }),
        })
    }
}

struct PlanCall {
    items: Vec<PlanItem>,
}

impl Call for PlanCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let n = self.items.len();
            env.scope
                .sink
                .emit(&env.scope.session_id, TurnEvent::Plan(self.items));
            ToolOutput::text(format!("Plan updated ({n} entries)."))
        })
    }
}
