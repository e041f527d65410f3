//! A tool call as the editor last saw it, shared by the code that runs calls and the code
//! that asks permission for them.

use super::context::TurnContext;
use crate::conversation::ToolResult;
use crate::types::{ToolCallView, ToolContent, ToolStatus, TurnEvent};

/// A call as the editor last saw it; every change goes through here so the final state can
/// be written to the transcript.
pub(super) struct Shown<'a> {
    ctx: &'a TurnContext,
    /// The call as shown last.
    pub(super) view: ToolCallView,
    announced: bool,
}

impl<'a> Shown<'a> {
    /// A call shown as `view` (`announced`: the editor was told of it).
    pub(super) fn new(ctx: &'a TurnContext, view: ToolCallView, announced: bool) -> Self {
        Shown {
            ctx,
            view,
            announced,
        }
    }

    /// Shows the call with a new `status` and `content` (`None`: unchanged). Content that
    /// names a released terminal is recorded but not sent: the editor already shows that
    /// terminal and may not be sent its id again.
    pub(super) fn update(&mut self, status: Option<ToolStatus>, content: Option<Vec<ToolContent>>) {
        if let Some(status) = status {
            self.view.status = status;
        }
        if let Some(content) = &content {
            self.view.content = content.clone();
        }
        let content = content.filter(|c| !c.iter().any(ToolContent::is_released_terminal));
        if self.announced && (status.is_some() || content.is_some()) {
            self.ctx.emit(TurnEvent::ToolCallUpdate {
                id: self.view.id.clone(),
                status,
                content,
                title: None,
            });
        }
    }

    /// Records that the call ended as `status` without sending that status, for a call whose
    /// work goes on (a background command: the editor keeps it in progress while it runs).
    /// `content`, when given, is still shown. Every other ending is sent with [`Self::update`].
    pub(super) fn leave(&mut self, status: ToolStatus, content: Option<Vec<ToolContent>>) {
        self.view.status = status;
        if content.is_some() {
            self.update(None, content);
        }
    }

    /// Gives the call a new title (an edit that matched leniently says how).
    pub(super) fn retitle(&mut self, title: String) {
        if title == self.view.title {
            return;
        }
        self.view.title = title.clone();
        if self.announced {
            self.ctx.emit(TurnEvent::ToolCallUpdate {
                id: self.view.id.clone(),
                status: None,
                content: None,
                title: Some(title),
            });
        }
    }

    pub(super) fn done(self, result: impl Into<ToolResult>) -> (ToolResult, Option<ToolCallView>) {
        (result.into(), self.announced.then_some(self.view))
    }
}
