//! `web_fetch`: reads a web page for the model (web/fetch.rs): Markdown for HTML, JSON and
//! text as they are, capped with the cut said. Its permission is asked per host (the URL
//! carries data out), and it never reaches this machine's own addresses, the user's network
//! or any address that is not globally reachable (web/guard.rs) unless `[web] allow_private`
//! says it may.

use futures::future::BoxFuture;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Call, PathBase, Prepared, ToolEnv, ToolError, ToolOutput, TypedTool};
use crate::config::WebSettings;
use crate::types::{Access, ToolContent, ToolKind};
use crate::web::fetch::{self, Limits};

/// Arguments of `web_fetch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WebFetchArgs {
    /// The page's http(s) URL
    pub(crate) url: String,
    /// What you want from the page (shown with it)
    #[serde(default)]
    pub(crate) prompt: Option<String>,
}

/// The tool, bounded by the user's `[web]` settings.
pub(crate) struct WebFetch {
    settings: WebSettings,
}

impl WebFetch {
    /// The tool under `settings`.
    pub(crate) fn new(settings: WebSettings) -> Self {
        Self { settings }
    }
}

impl TypedTool for WebFetch {
    type Args = WebFetchArgs;
    const NAME: &'static str = "web_fetch";
    const KIND: ToolKind = ToolKind::Fetch;
    const LABEL: &'static str = "Fetch web page";

    fn description(&self) -> &str {
        "Read a web page (docs, an issue, an API reference): HTML comes back as Markdown, JSON and text as they are. The user is asked per site."
    }

    fn prepare(&self, args: WebFetchArgs, _place: &PathBase) -> Result<Prepared, ToolError> {
        let url = reqwest::Url::parse(args.url.trim())
            .ok()
            .filter(|u| matches!(u.scheme(), "http" | "https"))
            .ok_or_else(|| {
                ToolError::Refused(format!("`{}` is not an http or https URL", args.url))
            })?;
        let host = fetch::host_of(&url);
        Ok(Prepared {
            title: format!("Fetch {url}"),
            locations: Vec::new(),
            access: Access::Web { host },
            call: Box::new(FetchCall {
                url: url.to_string(),
                prompt: args.prompt,
                limits: Limits {
                    timeout: self.settings.timeout,
                    max_bytes: self.settings.max_bytes,
                    allow_private: self.settings.allow_private,
                },
                max_chars: self.settings.max_chars,
            }),
        })
    }
}

struct FetchCall {
    url: String,
    prompt: Option<String>,
    limits: Limits,
    max_chars: usize,
}

impl Call for FetchCall {
    fn run(self: Box<Self>, env: ToolEnv) -> BoxFuture<'static, ToolOutput> {
        Box::pin(async move {
            let page = tokio::select! {
                page = fetch::fetch(&self.url, self.limits) => page,
                () = env.cancel.cancelled() => return ToolOutput::error("cancelled"),
            };
            match page {
                Ok(page) => shown(
                    page,
                    self.prompt.as_deref(),
                    self.max_chars,
                    self.limits.max_bytes,
                ),
                Err(e) => ToolOutput::error(format!("cannot fetch {}: {e}", self.url)),
            }
        })
    }
}

/// What the model reads of `page`, and the editor a short account of it.
fn shown(
    page: fetch::Page,
    prompt: Option<&str>,
    max_chars: usize,
    max_bytes: usize,
) -> ToolOutput {
    let total = page.text.chars().count();
    let mut text: String = page.text.chars().take(max_chars).collect();
    let mut notes = Vec::new();
    if total > max_chars {
        notes.push(format!("cut at {max_chars} of {total} characters"));
    }
    if page.cut {
        notes.push(format!(
            "the page was longer than {} bytes; the rest was not read",
            max_bytes
        ));
    }
    if !notes.is_empty() {
        text.push_str(&format!("\n\n[{}]", notes.join("; ")));
    }
    let mut head = format!("URL: {}\nType: {}\n", page.url, page.media_type);
    if let Some(prompt) = prompt.filter(|p| !p.trim().is_empty()) {
        head.push_str(&format!("Looking for: {}\n", prompt.trim()));
    }
    let model = format!("{head}\n{text}");
    let summary = format!(
        "Read {} ({}, {} characters{})",
        page.url,
        page.media_type,
        total,
        if notes.is_empty() {
            String::new()
        } else {
            format!("; {}", notes.join("; "))
        }
    );
    ToolOutput {
        model,
        images: Vec::new(),
        content: vec![ToolContent::Text { text: summary }],
        failed: false,
        title: None,
        keeps_running: false,
    }
}
