//! Servers that cut a prompt to their window without saying so (Ollama keeps the start and
//! the end of a conversation that passes its `num_ctx`): the server's own count of what it
//! read gives it away. When the count is far below tandem's estimate of what it sent, and
//! far above what was new since the last request (so it is not a server that counts only
//! uncached tokens), the user is told once, with the fix, and the session keeps within the
//! window the server really uses.

use super::context::TurnContext;
use crate::model::Usage;

/// Smallest request (estimated tokens) a cut is looked for in: below it the estimate is too
/// rough to tell.
const SMALLEST: u64 = 2048;

/// Looks at one request's usage: `sent` is the estimate of its messages, `before` the
/// estimate of the conversation at the previous request. Returns what to tell the user the
/// first time a cut is seen in the session.
pub(super) fn check(ctx: &TurnContext, sent: u64, before: u64, usage: &Usage) -> Option<String> {
    let counted = usage.prompt_tokens + usage.cached_tokens;
    let new = sent.saturating_sub(before);
    if !is_cut(sent, new, counted) {
        return None;
    }
    let first = ctx.meters.window_cut.borrow().is_none();
    ctx.meters
        .window_cut
        .send_modify(|w| *w = Some(w.map_or(counted, |w| w.min(counted))));
    tracing::warn!(session = %ctx.facts.session_id, sent, counted, "the server read far less than it was sent: it cut the prompt to its window");
    first.then(|| note(ctx, sent, counted))
}

/// Whether a server that counted `counted` tokens of about `sent` (of which `new` since the
/// last request) cut the prompt.
fn is_cut(sent: u64, new: u64, counted: u64) -> bool {
    sent >= SMALLEST && counted > 0 && counted * 2 < sent && counted > 2 * new + 256
}

/// What the user reads, with the fix for their server.
fn note(ctx: &TurnContext, sent: u64, counted: u64) -> String {
    let endpoint = &ctx.facts.config.endpoint;
    let fix = match endpoint.provider.as_str() {
        "ollama" => {
            "Ollama uses a small window unless told otherwise: restart it with a larger one, e.g. `OLLAMA_CONTEXT_LENGTH=32768 ollama serve`, or set `num_ctx` in the model's Modelfile."
        }
        "llamacpp" => "Start llama-server with a larger `--ctx-size` (`-c`).",
        "lmstudio" => "Load the model in LM Studio with a larger context length.",
        "vllm" => "Start vLLM with a larger `--max-model-len`.",
        _ if endpoint.base_url.contains(":11434") => {
            "This looks like Ollama: restart it with a larger window, e.g. `OLLAMA_CONTEXT_LENGTH=32768 ollama serve`, or set `num_ctx` in the model's Modelfile."
        }
        _ => {
            "Raise the server's context window (Ollama: `OLLAMA_CONTEXT_LENGTH`; llama.cpp: `--ctx-size`; vLLM: `--max-model-len`), or set `context_window` for this model in tandem's config."
        }
    };
    format!(
        "The model server read only {counted} of the about {sent} tokens tandem sent: it cut the conversation to fit a smaller context window, without an error, so the model did not see all of it. {fix} Until then tandem keeps this session within about {counted} tokens and compacts sooner."
    )
}

#[cfg(test)]
mod tests {
    use super::is_cut;

    #[test]
    fn a_cut_is_a_count_far_below_what_was_sent_and_far_above_what_was_new() {
        // Ollama at 4096 with a 10k conversation, a small question added.
        assert!(is_cut(10_000, 50, 4_000));
        // The first request of a session that is already too long.
        assert!(!is_cut(9_000, 9_000, 4_090));
        // A server that counts only what it did not have cached.
        assert!(!is_cut(10_000, 1_500, 1_600));
        // Counts near the estimate, small requests and no count at all.
        assert!(!is_cut(10_000, 50, 9_000));
        assert!(!is_cut(1_500, 50, 200));
        assert!(!is_cut(10_000, 50, 0));
    }
}
