//! `tandem exec --input ndjson`: stdin is a stream of JSON lines, each `{"prompt": "…"}`.
//! Without a prompt argument the first line is the prompt; every later line is sent to the
//! running turn as `_tandem/session/steer`, so a script can add to what the model does while
//! it works. A line that arrives after the turn ended is not sent (stderr says so); the end
//! of stdin ends nothing.

use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ContentBlock, SessionId, TextContent};
use tokio::io::{AsyncBufReadExt, BufReader, Lines, Stdin};

use super::display::Display;
use crate::acp::ext::SteerRequest;

/// stdin's lines.
pub(super) struct Steering(Lines<BufReader<Stdin>>);

impl Steering {
    /// Reads stdin from now on.
    pub(super) fn stdin() -> Self {
        Self(BufReader::new(tokio::io::stdin()).lines())
    }

    /// The next message: a line's `prompt` (blank lines are skipped); `Ok(None)` at the end
    /// of stdin.
    pub(super) async fn next(&mut self) -> anyhow::Result<Option<String>> {
        while let Some(line) = self.0.next_line().await? {
            if line.trim().is_empty() {
                continue;
            }
            return parse(&line).map(Some);
        }
        Ok(None)
    }

    /// Sends every later line to the running turn of `session_id`, until stdin ends; what
    /// did not land is said on stderr.
    pub(super) async fn steer(
        &mut self,
        cx: &ConnectionTo<Agent>,
        session_id: &SessionId,
        display: &Display,
    ) {
        loop {
            let text = match self.next().await {
                Ok(Some(text)) => text,
                Ok(None) => return,
                Err(e) => {
                    display.progress(&format!("stdin: {e:#}; the line was not sent"));
                    continue;
                }
            };
            let request = SteerRequest {
                session_id: session_id.0.to_string(),
                prompt: vec![ContentBlock::Text(TextContent::new(text))],
            };
            // Waiting for each to land keeps them in order.
            if let Err(e) = cx.send_request(request).block_task().await {
                display.progress(&format!("a steering message was not sent: {}", e.message));
            }
        }
    }
}

/// The prompt of one input line.
fn parse(line: &str) -> anyhow::Result<String> {
    let value: serde_json::Value = serde_json::from_str(line)
        .map_err(|e| anyhow::anyhow!("an input line is not JSON ({e}): {line}"))?;
    match value.get("prompt").and_then(serde_json::Value::as_str) {
        Some(text) if !text.trim().is_empty() => Ok(text.to_string()),
        _ => anyhow::bail!("an input line needs a non-empty string \"prompt\": {line}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_carry_a_prompt() {
        assert_eq!(
            parse(r#"{"prompt": "also check b.rs"}"#).unwrap(),
            "also check b.rs"
        );
        assert!(parse("also check").is_err());
        assert!(parse(r#"{"prompt": ""}"#).is_err());
        assert!(parse(r#"{"text": "x"}"#).is_err());
    }
}
