//! The `_tandem/*` methods, answered by the connection's [`Handlers`] like the ACP ones and
//! registered on a builder of their own that [`crate::acp::agent`] merges in.

use std::sync::Arc;

use agent_client_protocol::v1::{Builder, ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Error, HandleDispatchFrom};

use super::turns::{self, RewindRequest, RewindResponse, SteerRequest, SteerResponse};
use super::{
    ActionInfo, ActionsListRequest, ActionsListResponse, ActionsRunRequest, ActionsRunResponse,
    BackgroundStatus, ExportFormat, ExportRequest, ExportResponse, ForkRequest, ForkResponse,
    GrantStatus, McpServerStatus, ModelProfile, PermissionsStatus, PriceView, RuleStatus,
    SandboxStatus, SessionStatus, StatusRequest, StatusResponse, TrustStatus, UnsavedStatus,
    UsageRequest, UsageResponse, render,
};
use crate::acp::convert;
use crate::acp::handlers::Handlers;
use crate::acp::open::{Reopen, Stored};
use crate::acp::request;
use crate::session::{SessionError, SessionManager};
use crate::turn::Back;
use crate::types::UserPart;

/// The `_tandem/*` methods of `h`, ready to merge into the agent's builder.
pub(crate) fn methods(h: Arc<Handlers>) -> Builder<Agent, impl HandleDispatchFrom<Client>> {
    let ext = Agent.v1().name("tandem-ext");
    let ext = request!(ext, h, status);
    let ext = request!(ext, h, usage);
    let ext = request!(ext, h, export);
    let ext = request!(ext, h, fork);
    let ext = request!(ext, h, rewind);
    let ext = request!(ext, h, steer);
    let ext = request!(ext, h, actions_list);
    request!(ext, h, actions_run)
}

/// What a handler returns to the SDK (an error only when a response could not be sent).
type Handled = Result<(), Error>;

impl Handlers {
    /// `_tandem/status`: what tandem runs with, and its open sessions.
    pub(crate) async fn status(
        self: Arc<Self>,
        _req: StatusRequest,
        responder: Responder<StatusResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        if self.manager.config().sandbox.mode != crate::config::sandbox::SandboxMode::Off {
            // Whether this system can sandbox, checked once per process.
            let _ = crate::platform::sandbox::availability().await;
        }
        responder.respond(status(&self.manager))
    }

    /// `_tandem/usage`: one open session's token counts.
    pub(crate) async fn usage(
        self: Arc<Self>,
        req: UsageRequest,
        responder: Responder<UsageResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.clone();
        self.reply(&id, responder, move |manager| {
            usage(manager, &req.session_id).ok_or(SessionError::NotFound(req.session_id))
        })
        .await;
        Ok(())
    }

    /// `_tandem/session/export`: a stored session as Markdown or JSON records.
    pub(crate) async fn export(
        self: Arc<Self>,
        req: ExportRequest,
        responder: Responder<ExportResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.clone();
        let h = self.clone();
        self.reply_later(&id, responder, move |_| {
            Box::pin(async move {
                let lines = h.manager.records(&req.session_id).await?;
                let content = match req.format {
                    ExportFormat::Markdown => render(&lines),
                    ExportFormat::Json => serde_json::to_string_pretty(&lines).unwrap_or_default(),
                };
                Ok(ExportResponse {
                    format: req.format,
                    content,
                })
            })
        })
        .await;
        Ok(())
    }

    /// `_tandem/session/fork`: a new session with a copy of a session's history.
    pub(crate) async fn fork(
        self: Arc<Self>,
        req: ForkRequest,
        responder: Responder<ForkResponse>,
        cx: ConnectionTo<Client>,
    ) -> Handled {
        let stored = Stored {
            id: req.session_id,
            cwd: req.cwd,
            folders: None,
            servers: Vec::new(),
            turn: req.turn,
            system_prompt: None,
        };
        self.reopen(Reopen::Fork, stored, responder, cx).await;
        Ok(())
    }

    /// `_tandem/actions/list`: the session's custom actions.
    pub(crate) async fn actions_list(
        self: Arc<Self>,
        req: ActionsListRequest,
        responder: Responder<ActionsListResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.clone();
        self.reply(&id, responder, move |manager| {
            actions(manager, &req.session_id)
        })
        .await;
        Ok(())
    }

    /// `_tandem/actions/run`: runs a custom action as its slash command would.
    pub(crate) async fn actions_run(
        self: Arc<Self>,
        req: ActionsRunRequest,
        responder: Responder<ActionsRunResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.clone();
        self.reply_later(&id, responder, move |manager| {
            let known = actions(manager, &req.session_id)
                .map(|list| list.actions.iter().any(|a| a.name == req.name));
            let ran = match known {
                Ok(true) => {
                    let slash = format!("/{} {}", req.name, req.arguments);
                    manager.run(&req.session_id, vec![UserPart::Text(slash)], None)
                }
                Ok(false) => {
                    let unknown = SessionError::InvalidParams(format!(
                        "no custom action `{}` in this session; _tandem/actions/list shows them",
                        req.name
                    ));
                    return Box::pin(async move { Err(unknown) });
                }
                Err(e) => return Box::pin(async move { Err(e) }),
            };
            Box::pin(async move {
                let ran = ran.await?;
                Ok(ActionsRunResponse {
                    stop_reason: ran.stop.as_str().to_string(),
                    output: ran.output,
                })
            })
        })
        .await;
        Ok(())
    }
}

impl Handlers {
    /// `_tandem/session/rewind`.
    pub(crate) async fn rewind(
        self: Arc<Self>,
        req: RewindRequest,
        responder: Responder<RewindResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let id = req.session_id.clone();
        self.reply_later(&id, responder, move |manager| {
            let back = req.turn.map_or(Back::List, Back::Turn);
            let ran = manager.rewind(&req.session_id, back, req.conflicts.into());
            Box::pin(async move {
                let report = ran.await?.rewound.unwrap_or_default();
                match (report.problem.clone(), report.failure.clone()) {
                    (Some(problem), _) => Err(SessionError::InvalidParams(problem)),
                    (_, Some(failure)) => Err(SessionError::Internal(failure)),
                    _ => Ok(turns::response(report)),
                }
            })
        })
        .await;
        Ok(())
    }

    /// `_tandem/session/steer`.
    pub(crate) async fn steer(
        self: Arc<Self>,
        req: SteerRequest,
        responder: Responder<SteerResponse>,
        _cx: ConnectionTo<Client>,
    ) -> Handled {
        let prompt = match convert::prompt(req.prompt) {
            Ok(prompt) => prompt,
            Err(message) => {
                return responder.respond_with_error(crate::acp::errors::invalid_params(message));
            }
        };
        let id = req.session_id.clone();
        self.reply_later(&id, responder, move |manager| {
            let landed = manager.steer(&req.session_id, prompt);
            Box::pin(async move {
                landed.await?;
                Ok::<_, SessionError>(SteerResponse {})
            })
        })
        .await;
        Ok(())
    }
}

/// `_tandem/actions/list`.
fn actions(
    manager: &SessionManager,
    session_id: &str,
) -> Result<ActionsListResponse, crate::session::SessionError> {
    use crate::session::commands::Action;
    let actions = manager
        .commands(session_id)?
        .into_iter()
        .filter(|c| c.configured)
        .map(|c| ActionInfo {
            takes_arguments: c.hint.is_some(),
            kind: if matches!(c.action, Action::Command { .. }) {
                "command"
            } else {
                "prompt"
            }
            .into(),
            name: c.name,
            description: c.description,
        })
        .collect();
    Ok(ActionsListResponse { actions })
}

/// `_tandem/status`.
fn status(manager: &SessionManager) -> StatusResponse {
    let config = manager.config();
    let sessions = manager.live();
    // Read once, and only when there is a session to report it for.
    let trust = if sessions.is_empty() {
        Vec::new()
    } else {
        crate::permission::trust::TrustStore::new(&config.home).entries()
    };
    StatusResponse {
        version: env!("CARGO_PKG_VERSION").to_string(),
        provider: config.endpoint.provider.clone(),
        base_url: config.endpoint.base_url.clone(),
        default_model: config.default_model.clone(),
        models: config.models.iter().map(|m| m.id.clone()).collect(),
        data_dir: config.home.display().to_string(),
        sessions: sessions
            .into_iter()
            .map(|s| SessionStatus {
                project_trust: trust
                    .iter()
                    .filter(|t| t.project == s.cwd)
                    .map(|t| TrustStatus {
                        kind: t.kind.clone(),
                        name: t.name.clone(),
                        command: t.command.clone(),
                        verdict: t.verdict.name().into(),
                        fingerprint: t.fingerprint.clone(),
                        decided_at: t.at.clone(),
                    })
                    .collect(),
                profile: profile_view(&config, &s.profile),
                unsaved: s.unsaved.map(|u| UnsavedStatus {
                    records: u.records,
                    error: u.error,
                }),
                background_commands: s.background.into_iter().map(background_status).collect(),
                session_id: s.id,
                cwd: s.cwd.display().to_string(),
                model: s.settings.model,
                mode: s.settings.mode.id().to_string(),
                mcp_servers: s
                    .mcp
                    .into_iter()
                    .map(|(name, state, error)| McpServerStatus {
                        name,
                        state: state.to_string(),
                        error,
                    })
                    .collect(),
                permissions: PermissionsStatus {
                    sandbox: sandbox_status(s.permissions.sandbox_in(s.settings.mode)),
                    rules: s
                        .permissions
                        .rules
                        .into_iter()
                        .map(|r| RuleStatus {
                            effect: r.effect.into(),
                            rule: r.rule,
                            source: r.source,
                        })
                        .collect(),
                    grants: s
                        .permissions
                        .grants
                        .into_iter()
                        .map(|g| GrantStatus {
                            answer: g.answer.into(),
                            tool: g.tool,
                            scope: g.scope,
                        })
                        .collect(),
                    no_project: s.permissions.no_project,
                },
            })
            .collect(),
    }
}

/// A background command as `_tandem/status` reports it.
fn background_status(j: crate::tools::background::Listed) -> BackgroundStatus {
    BackgroundStatus {
        id: j.id,
        command: j.command,
        running: j.running,
        exit_code: j.exit_code,
    }
}

/// A session's command sandbox as `_tandem/status` reports it.
fn sandbox_status(view: crate::platform::sandbox::View) -> SandboxStatus {
    SandboxStatus {
        state: view.state.to_string(),
        backend: view.backend.map(str::to_string),
        summary: view.summary,
        network: view.network,
        writable: view
            .writable
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
    }
}

/// `_tandem/usage`; `None` for a session not open here.
fn usage(manager: &SessionManager, session_id: &str) -> Option<UsageResponse> {
    let s = manager.live().into_iter().find(|s| s.id == session_id)?;
    Some(UsageResponse {
        session_id: s.id,
        requests: s.totals.requests,
        input_tokens: s.totals.input,
        cached_tokens: s.totals.cached,
        output_tokens: s.totals.output,
        reasoning_tokens: s.totals.reasoning,
        context_used: s.context_used,
        context_window: s.context_window,
        repeats_blocked: s.totals.repeats_blocked,
        tools_withdrawn: s.totals.tools_withdrawn,
        budget_refusals: s.totals.budget_refusals,
        cost_usd: s.totals.cost(),
        unpriced_requests: s.totals.requests.saturating_sub(s.totals.priced),
    })
}

/// A model's profile as `_tandem/status` shows it.
fn profile_view(config: &crate::config::Config, spec: &crate::config::ModelSpec) -> ModelProfile {
    let endpoint = config.endpoint_for(&spec.id);
    ModelProfile {
        api: spec.api.name().to_string(),
        provider: endpoint.provider.clone(),
        base_url: endpoint.base_url.clone(),
        context_window: spec.context_window,
        max_output_tokens: spec.max_output_tokens,
        reasoning_effort: spec.reasoning_effort,
        images: spec.images,
        edit_tool: match spec.edit_tool {
            crate::config::EditTool::ApplyPatch => "apply_patch",
            crate::config::EditTool::EditFile => "edit_file",
        }
        .to_string(),
        state_kept: crate::model::profile::state_kept(spec.api).to_string(),
        price: spec.price.map(|p| PriceView {
            input: p.input,
            cached_input: p.cached_input.unwrap_or(p.input),
            output: p.output,
            source: p.source.name(),
        }),
    }
}
